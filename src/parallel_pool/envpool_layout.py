"""EnvPool's module layout over parallel_pool, for code that imports more of EnvPool than its
top-level functions.

``parallel_pool.as_envpool()`` makes ``import envpool`` (and ``envpool.<module>``) give the modules
below, built on parallel_pool's tasks and pools; a real EnvPool installed beside it is not imported
after that, in this process. What each module holds:

- ``envpool``, ``envpool.registration``: ``make`` (``env_type`` required), ``make_gym``,
  ``make_dm``, ``make_gymnasium``, ``make_spec``, ``list_all_envs``, ``registry``
  (``registry.specs[task_id]`` is ``(import_path, spec_cls, kwargs)``) and the pool and spec types.
  The pools are the package's with EnvPool's ways where they differ: ``seed=42`` by default,
  float32 rewards, ``info["players"]["env_id"]`` (``observation.players`` in dm_env), a ``seed()``
  that warns, EnvPool's action forms (its dict of ``env_id``, ``players.env_id`` and ``action``
  arrays), no gym ``TimeLimit.truncated``, and MiniGrid's mission as a byte buffer with
  ``_debug_states()``; ``make_spec``'s ``observation_spec()`` is EnvPool's ``State`` tuple.
- One module per family EnvPool also has, under EnvPool's path (``envpool.atari``,
  ``envpool.box2d``, ``envpool.classic_control``, ``envpool.toy_text``, ``envpool.minigrid``,
  ``envpool.mujoco.gym``, ``envpool.mujoco.dmc``, ``envpool.vizdoom``), each with its
  ``registration`` module holding EnvPool's family table where EnvPool has one
  (``atari_game_list``, ``gym_mujoco_envs``, ``dmc_mujoco_envs``, ``_vizdoom_game_list()``), computed
  from the tasks built here.
- Atari's spec and pool classes: ``AtariEnvSpec`` (``AtariEnvSpec(AtariEnvSpec.gen_config(task="pong",
  ...))``), ``AtariGymnasiumEnvPool``, ``AtariGymEnvPool``, ``AtariDMEnvPool``, and the raw pair in
  ``envpool.atari.atari_envpool`` (``_AtariEnvSpec(values)``, ``_AtariEnvPool(spec)`` with
  ``_reset``, ``_send``, ``_recv`` and ``_state_keys``).
- MiniGrid's: ``decode_mission``, ``MiniGridEnvSpec`` (EnvPool's config of a minigrid env, chosen by
  its ``env_name``), ``MiniGridGymnasiumEnvPool``, ``MiniGridGymEnvPool``, ``MiniGridDMEnvPool``.
- ``envpool.python.protocol`` (the pool and spec types) and ``envpool.python.glfw_context``
  (``preload_windows_gl_dlls``, which has nothing to do on Linux, as in EnvPool).

Example:
    >>> import parallel_pool
    >>> parallel_pool.as_envpool()
    >>> import envpool.atari.registration as reg
    >>> "pong" in reg.atari_game_list
    True
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import sys
import types
import warnings
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any, cast

import dm_env
import gymnasium
import numpy as np

from parallel_pool import factory, tasks
from parallel_pool.base import BasePoolEnv
from parallel_pool.dm_env import DmEnv
from parallel_pool.envpool_ids import envpool_assets_dir
from parallel_pool.gymnasium_env import GymnasiumEnv
from parallel_pool.spec import ArraySpec, EnvSpec

__all__ = ["ENVPOOL_SEED", "as_envpool", "build_modules", "make", "make_dm", "make_gym", "make_gymnasium", "make_spec"]

# Our family -> EnvPool's import path of the same family.
_FAMILY_PATHS = {
    "atari": "envpool.atari",
    "box2d": "envpool.box2d",
    "classic_control": "envpool.classic_control",
    "toy_text": "envpool.toy_text",
    "minigrid": "envpool.minigrid",
    "mujoco": "envpool.mujoco.gym",
    "dm_control": "envpool.mujoco.dmc",
    "vizdoom": "envpool.vizdoom",
}
# The env-id arrays of EnvPool's dict action form, before the action's own.
_ENV_ID_KEYS = ("env_id", "players.env_id")
# EnvPool's default seed: the layout's pools and specs take it where no seed is given (the package's
# own make functions default to None, a random seed).
ENVPOOL_SEED = 42


class _ObsForm:
    """A task's observation as EnvPool gives it, where the package's differs: per observation field
    (``"obs"``, or a Dict observation's key), a batch converter, EnvPool's single-env space and its
    dm_env spec; ``dm_names`` EnvPool's name of a field in dm_env's observation where it differs
    (MuJoCo's pixel ``obs`` is ``pixels``); ``unwrap`` names the one key of a Dict observation that
    EnvPool gives bare (dm_control's ``pixels``)."""

    def __init__(self) -> None:
        self.convert: dict[str, Callable[[Any], Any]] = {}
        self.spaces: dict[str, gymnasium.spaces.Box] = {}
        self.specs: dict[str, Any] = {}
        self.dm_names: dict[str, str] = {}
        # The converters by dm_env's field names (dm_obs runs at every step).
        self.dm_convert: dict[str, Callable[[Any], Any]] = {}
        self.unwrap: str | None = None

    def add(self, name: str, convert: Callable[[Any], Any], space: gymnasium.spaces.Box, dm_name: str = "") -> None:
        self.convert[name] = convert
        self.spaces[name] = space
        if dm_name:
            self.dm_names[name] = dm_name
        self.dm_convert[dm_name or name] = convert
        self.specs[name] = dm_env.specs.BoundedArray(
            space.shape, space.dtype, space.low.flat[0], space.high.flat[0], name=dm_name or name
        )

    def space(self, space: gymnasium.Space) -> gymnasium.Space:
        if isinstance(space, gymnasium.spaces.Dict):
            space = gymnasium.spaces.Dict({k: self.spaces.get(k, v) for k, v in space.spaces.items()})
            return space[self.unwrap] if self.unwrap else space
        return self.spaces.get("obs", space)

    def obs_specs(self, specs: Any) -> Any:
        if isinstance(specs, dict):
            return type(specs)({k: self.specs.get(k, v) for k, v in specs.items()})
        return self.specs.get("obs", specs)

    def obs(self, obs: Any) -> Any:
        """A Gymnasium batch observation, converted."""
        if isinstance(obs, dict):
            obs = {k: self.convert[k](v) if k in self.convert else v for k, v in obs.items()}
            return obs[self.unwrap] if self.unwrap else obs
        return self.convert["obs"](obs) if "obs" in self.convert else obs

    def dm_obs(self, observation: Any) -> Any:
        """A dm_env batch observation (named tuple), converted."""
        fields = observation._fields
        return observation._replace(
            **{k: convert(getattr(observation, k)) for k, convert in self.dm_convert.items() if k in fields}
        )


def _obs_form(spec: EnvSpec) -> _ObsForm | None:
    """EnvPool's observation form of ``spec``'s task, or None where it is the package's:
    MiniGrid's mission as a zero-padded byte buffer; Blackjack's three values as one ``Box(0, 31,
    (3,), int32)``; MuJoCo's and dm_control's pixel frames channels first, ``(3 * k, H, W)`` for a
    stack of ``k`` (each frame as 3 planes, oldest first)."""
    form = _ObsForm()
    family = tasks.task_info(spec.task_id)["family"]
    mission = next((f for f in spec.obs_fields if f.key == "mission" and f.space == "text"), None)
    if family == "minigrid" and mission is not None:
        size = int(mission.shape[0])
        form.add("mission", lambda m: _mission_bytes(m, size), gymnasium.spaces.Box(0, 255, (size,), np.uint8))
    elif family == "toy_text" and tasks.lookup(spec.task_id)[0] == "Blackjack-v1":
        form.add(
            "obs",
            lambda t: np.stack(t, axis=1).astype(np.int32),
            gymnasium.spaces.Box(0, 31, (3,), np.int32),
        )
    elif family in ("mujoco", "dm_control") and spec.config.get("from_pixels"):
        for field in spec.obs_fields:
            if field.dtype == np.uint8 and field.shape[-1:] == (3,):
                *stack, height, width, _ = field.shape
                channels = 3 * (stack[0] if stack else 1)
                space = gymnasium.spaces.Box(0, 255, (channels, height, width), np.uint8)
                form.add(field.key, _channels_first, space, dm_name="pixels")
        if [f.key for f in spec.obs_fields] == ["pixels"]:
            form.unwrap = "pixels"
    return form if form.convert else None


def _channels_first(frames: np.ndarray) -> np.ndarray:
    """``(n, [k,] H, W, 3)`` frames as EnvPool's ``(n, 3 * k, H, W)``."""
    n, *stack, height, width, _ = frames.shape
    planes = np.moveaxis(frames, -1, -3)  # (n, [k,] 3, H, W)
    return np.ascontiguousarray(planes).reshape(n, 3 * (stack[0] if stack else 1), height, width)


class EnvPoolSpec(EnvSpec):
    """The layout's spec: ``observation_spec()`` is EnvPool's ``State`` named tuple, the
    observation's specs (``obs``, or one per key) then each info entry's, as ``make_dm``'s pools'
    ``observation_spec()``; the observation's space and specs are EnvPool's (``_obs_form``);
    ``state_array_spec`` and ``action_array_spec`` give shapes as lists, and a discrete action as
    int32, as EnvPool's."""

    @property
    def observation_space(self) -> gymnasium.Space:
        form = _obs_form(self)
        space = super().observation_space
        return space if form is None else form.space(space)

    @property
    def gymnasium_observation_space(self) -> gymnasium.Space:
        """EnvPool's other name of ``observation_space``."""
        return self.observation_space

    def obs_specs(self) -> Any:
        form = _obs_form(self)
        specs = super().obs_specs()
        return specs if form is None else form.obs_specs(specs)

    def observation_spec(self) -> Any:
        base = self.obs_specs()
        form = _obs_form(self)
        entries = list(base.items()) if isinstance(base, dict) else [("obs", base)]
        entries = [(form.dm_names.get(name, name) if form else name, spec) for name, spec in entries]
        names = {name for name, _ in entries}
        for key, array in self.state_array_spec.items():
            name = key[len("info:") :].replace(".", "_")
            if key.startswith("info:") and name not in names:
                entries.append((name, dm_env.specs.Array(array.shape, array.dtype, name=name)))
        state = namedtuple("State", [name for name, _ in entries])  # type: ignore[misc]  # noqa: PYI024
        return state(*(spec for _, spec in entries))

    @property
    def state_array_spec(self) -> dict[str, ArraySpec]:
        form = _obs_form(self)
        out = {}
        for name, array in super().state_array_spec.items():
            space = form.spaces.get(name.split(":", 1)[-1]) if form and name.startswith("obs") else None
            if space is not None:  # an observation field EnvPool gives in another form
                array = ArraySpec(np.dtype(space.dtype), tuple(space.shape), space.low.flat[0], space.high.flat[0])
            out[name] = _listed(array)
        return out

    @property
    def action_array_spec(self) -> dict[str, ArraySpec]:
        out = {name: _listed(array) for name, array in super().action_array_spec.items()}
        for name, array in out.items():
            if name not in _ENV_ID_KEYS and np.issubdtype(array.dtype, np.integer):
                out[name] = dataclasses.replace(array, dtype=np.dtype(np.int32))
        return out


def _listed(array: ArraySpec) -> ArraySpec:
    """An array spec with its shape as a list, as EnvPool's specs give it (``[128]``)."""
    return dataclasses.replace(array, shape=cast(Any, list(array.shape)))


def decode_mission(mission: Any) -> str | np.ndarray:
    """EnvPool's ``envpool.minigrid.decode_mission``: a mission byte buffer (one row, or a batch of
    rows) as its str (an object array of them), each up to its first zero byte."""
    arr = np.asarray(mission, dtype=np.uint8)
    if arr.ndim == 1:
        return _decode_row(arr)
    rows = arr.reshape(-1, arr.shape[-1])
    return np.asarray([_decode_row(row) for row in rows], dtype=object).reshape(arr.shape[:-1])


def _decode_row(row: np.ndarray) -> str:
    zeros = np.flatnonzero(row == 0)
    return row[: int(zeros[0]) if zeros.size else row.size].tobytes().decode("utf-8")


def _mission_bytes(missions: np.ndarray, size: int) -> np.ndarray:
    """A batch of mission strs as EnvPool's byte buffers: ``(n, size)`` uint8, zero-padded."""
    encoded = np.char.encode(np.asarray(missions), "utf-8").astype(f"S{size}")
    return np.frombuffer(encoded.tobytes(), dtype=np.uint8).reshape(len(encoded), size)


def _debug_states(pool: BasePoolEnv, env_ids: Any) -> list[types.SimpleNamespace]:
    """``pool.debug_states`` as EnvPool's: attributes, the grids as uint8 arrays, positions as tuples."""
    states = []
    for raw in pool.debug_states(np.arange(pool.num_envs) if env_ids is None else np.asarray(env_ids)):
        state = types.SimpleNamespace(**raw)
        state.grid = np.asarray(raw["grid"], dtype=np.uint8)
        state.grid_contains = np.asarray(raw["grid_contains"], dtype=np.uint8)
        for key, value in raw.items():
            if key.endswith("_pos"):
                setattr(state, key, tuple(int(v) for v in value))
            elif key.endswith("_positions"):
                setattr(state, key, np.asarray(value, dtype=np.int32))
        states.append(state)
    return states


class _EnvPoolMixin:
    """What each of the layout's pools takes from EnvPool: its spec class, a ``seed()`` that warns
    (and still seeds the next ``reset()``, as the package's), and its action forms.

    An action is EnvPool's either way: a dict of the arrays ``spec.action_array_spec`` names
    (``{"env_id", "players.env_id", "action"}``), each of that spec's dtype exactly, or else a
    ``RuntimeError`` as EnvPool's C++ raises; or the action alone, cast to that dtype as EnvPool's
    Python side casts it (``np.ones(n)`` is the discrete action 1)."""

    _spec_class: type[EnvSpec] = EnvPoolSpec
    # The observation as EnvPool gives it, where the package's differs (None: it does not).
    _obs_form: _ObsForm | None = None
    decode_mission = staticmethod(decode_mission)

    def _setup_envpool(self) -> None:
        spec = cast(BasePoolEnv, self).spec
        self._obs_form = _obs_form(spec)
        # Read at every step: built once (the spec builds a new dict at each read).
        self._action_specs = spec.action_array_spec
        action = self._action_specs.get("action")
        # The dtype a float array is cast to, as EnvPool's Python side casts it: a discrete action's.
        self._cast_floats_to: np.dtype | None = None
        if action is not None and len(self._action_specs) == len(_ENV_ID_KEYS) + 1:
            if np.issubdtype(action.dtype, np.integer):
                self._cast_floats_to = action.dtype

    def _debug_states(self, env_ids: Any = None) -> list[types.SimpleNamespace]:
        """EnvPool's MiniGrid ``_debug_states``: ``debug_states()`` with EnvPool's attribute access,
        one per env id (all if None)."""
        return _debug_states(cast(BasePoolEnv, self), env_ids)

    def seed(self, seed: Any = None) -> list[int]:
        warnings.warn(
            "EnvPool's seed() does nothing but warn; this pool seeds the next reset() with it. Pass seed= to "
            "make() or reset() instead.",
            UserWarning,
            stacklevel=2,
        )
        return super().seed(seed)  # type: ignore[misc]

    def step(self, action: Any, env_id: Any = None) -> Any:
        return super().step(*self._envpool_action(action, env_id))  # type: ignore[misc]

    def send(self, action: Any, env_id: Any = None) -> None:
        super().send(*self._envpool_action(action, env_id))  # type: ignore[misc]

    def _envpool_action(self, action: Any, env_id: Any) -> tuple[Any, Any]:
        if not (isinstance(action, dict) and "env_id" in action):
            if self._cast_floats_to is not None and isinstance(action, np.ndarray) and action.dtype.kind == "f":
                action = action.astype(self._cast_floats_to)
            return action, env_id
        specs = self._action_specs
        if set(action) != set(specs):
            raise ValueError(f"EnvPool's dict action takes the keys {sorted(specs)}, got {sorted(action)}")
        for name, array in specs.items():
            dtype = np.asarray(action[name]).dtype
            if dtype != array.dtype:
                raise RuntimeError(f"action[{name!r}] must be {array.dtype} (spec.action_array_spec), got {dtype}")
        if env_id is not None:
            raise ValueError("a dict action names its envs in action['env_id']: pass env_id=None")
        ids = np.asarray(action["env_id"])
        if not np.array_equal(np.asarray(action["players.env_id"]), ids):
            raise ValueError(
                "action['players.env_id'] must equal action['env_id'] (one player per env: the layout "
                "takes multi-player actions in the package's form)"
            )
        fields = {name: value for name, value in action.items() if name not in _ENV_ID_KEYS}
        if list(fields) == ["action"]:
            return fields["action"], ids
        return {name.removeprefix("action:"): value for name, value in fields.items()}, ids


def _envpool_rows(unpack: Callable[[tuple], tuple], form: _ObsForm | None) -> Callable[[tuple], tuple]:
    """A step's rows as EnvPool gives them: float32 rewards, ``info["players"]["env_id"]``, and
    the observation in EnvPool's form (``_obs_form``)."""

    def unpack_as_envpool(arrays: tuple) -> tuple:
        obs, reward, terminated, truncated, info = unpack(arrays)
        info["players"] = {"env_id": info["env_id"]}
        if form is not None:
            obs = form.obs(obs)
        return obs, reward.astype(np.float32), terminated, truncated, info

    return unpack_as_envpool


def _envpool_kwargs(task_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The pool kwargs with EnvPool's defaults where they differ from ours: seed 42, MiniGrid's
    frames without the highlight of the agent's view, Blackjack-v1's Sutton and Barto rules
    (``sab=True``, as EnvPool registers it), a MuJoCo ``xml_file`` Gymnasium lacks read from
    EnvPool's own models (``envpool-assets``, where installed), Atari's ``episodic_life`` rule (the
    last life lost does not end the episode: ``last_life_ends_episode=False``), and BipedalWalker's frames without
    the lidar ray (``render_lidar=False``: a repeated ``render()`` gives the same frame)."""
    out = {"seed": ENVPOOL_SEED, **kwargs}
    info = tasks.task_info(task_id)
    if info["family"] == "minigrid":
        out.setdefault("highlight", False)
    if tasks.lookup(task_id)[0] == "Blackjack-v1":
        out.setdefault("sab", True)
    xml_file, assets_dir = out.get("xml_file"), info["defaults"].get("assets_dir")
    if isinstance(xml_file, str) and isinstance(assets_dir, str) and "assets_dir" not in kwargs:
        # A model file name Gymnasium's assets lack (EnvPool's "half_cheetah_envpool.xml"): EnvPool's
        # own models, where its data wheel envpool-assets is installed.
        envpool_models = envpool_assets_dir("mujoco", "assets_gym")
        bare = os.path.basename(xml_file) == xml_file
        if bare and envpool_models and not os.path.exists(os.path.join(assets_dir, xml_file)):
            if os.path.exists(os.path.join(envpool_models, xml_file)):
                out["assets_dir"] = envpool_models
    if info["family"] == "atari":
        out.setdefault("last_life_ends_episode", False)
    if "render_lidar" in info["defaults"]:
        out.setdefault("render_lidar", False)
    return out


class GymnasiumEnvPool(_EnvPoolMixin, GymnasiumEnv):  # type: ignore[misc]  # as GymnasiumEnv's bases
    """The layout's Gymnasium pool: ``GymnasiumEnv`` with EnvPool's float32 rewards,
    ``info["players"]`` and ``seed()``."""

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        super().__init__(task_id, **_envpool_kwargs(task_id, kwargs))
        self._setup_envpool()
        self._unpack = _envpool_rows(self._unpack, self._obs_form)

    def reset(
        self, env_id: Any = None, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = super().reset(env_id, seed=seed, options=options)
        info["players"] = {"env_id": info["env_id"]}
        return (obs if self._obs_form is None else self._obs_form.obs(obs)), info


class GymEnvPool(GymnasiumEnvPool):
    """The layout's gym pool: EnvPool's ``make_gym`` gives its Gymnasium pool, which this is (its
    info has no gym ``TimeLimit.truncated``, unlike the package's ``GymEnv``)."""


_Players = namedtuple("_Players", ["env_id"])  # noqa: PYI024


class DMEnvPool(_EnvPoolMixin, DmEnv):
    """The layout's dm_env pool: ``DmEnv`` with EnvPool's float32 rewards, ``seed()``, and
    ``observation.players.env_id``."""

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        super().__init__(task_id, **_envpool_kwargs(task_id, kwargs))
        self._setup_envpool()
        fields = cast(Any, self._observation_type)._fields
        if self._obs_form is not None:
            fields = [self._obs_form.dm_names.get(name, name) for name in fields]
        state = cast(Any, namedtuple)("State", [*fields, "players"])  # fields known only at run time
        self._envpool_observation = state
        players_spec = _Players(dm_env.specs.Array((), np.int32, name="env_id"))
        self._observation_spec = state(*cast(Any, self._observation_spec), players_spec)

    def reward_spec(self) -> Any:
        return dm_env.specs.Array((), np.float32, name="reward")

    def _time_step(self, arrays: tuple, xp: Any = np) -> dm_env.TimeStep:
        step = super()._time_step(arrays, xp)
        observation = self._envpool_observation(*step.observation, _Players(step.observation.env_id))
        if self._obs_form is not None:
            observation = self._obs_form.dm_obs(observation)
        return step._replace(reward=step.reward.astype(xp.float32), observation=observation)


EnvPool = BasePoolEnv


def make(task_id: str, env_type: str, **kwargs: Any) -> GymnasiumEnvPool | DMEnvPool:
    """EnvPool's ``make``: ``env_type`` ("gymnasium", "gym" or "dm") is required, as in EnvPool."""
    makers: dict[str, Callable[..., Any]] = {"gymnasium": make_gymnasium, "gym": make_gym, "dm": make_dm}
    if env_type not in makers:
        raise ValueError(f"env_type must be one of {sorted(makers)}, got {env_type!r}")
    result: GymnasiumEnvPool | DMEnvPool = makers[env_type](task_id, **kwargs)
    return result


def make_gymnasium(task_id: str, **kwargs: Any) -> GymnasiumEnvPool:
    """A Gymnasium pool of ``task_id``, seeded with EnvPool's 42 unless ``seed`` is given."""
    return GymnasiumEnvPool(task_id, **kwargs)


def make_gym(task_id: str, **kwargs: Any) -> GymnasiumEnvPool:
    """A gym-style pool of ``task_id`` (a Gymnasium pool, as EnvPool's), seeded as ``make_gymnasium``."""
    return GymEnvPool(task_id, **kwargs)


def make_dm(task_id: str, **kwargs: Any) -> DMEnvPool:
    """A dm_env pool of ``task_id``, seeded as ``make_gymnasium``."""
    return DMEnvPool(task_id, **kwargs)


def make_spec(task_id: str, **kwargs: Any) -> EnvSpec:
    """``parallel_pool.make_spec`` with EnvPool's default seed and ``observation_spec()``."""
    return factory.make_spec(task_id, spec_class=EnvPoolSpec, **_envpool_kwargs(task_id, kwargs))


def _family_tasks() -> dict[str, list[str]]:
    """Our family -> its task ids (aliases included), for the families EnvPool also has."""
    out: dict[str, list[str]] = {family: [] for family in _FAMILY_PATHS}
    for task_id in tasks.list_all_envs():
        family = tasks.task_info(task_id)["family"]
        if family in out:
            out[family].append(task_id)
    return out


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _atari_game(task_id: str) -> str:
    """EnvPool's Atari ``task`` of an id: the ROM's name (Pong-v5 -> "pong")."""
    return os.path.splitext(os.path.basename(tasks.task_info(task_id)["defaults"]["rom_path"]))[0]


def _gym_mujoco_envs(ids: list[str]) -> list[tuple[str, tuple[str, ...], int]]:
    """EnvPool's ``gym_mujoco_envs``: (task, its versions, max_episode_steps)."""
    versions: dict[str, list[str]] = {}
    for task_id in ids:
        name, version = task_id.rsplit("-", 1)
        versions.setdefault(name, []).append(version)
    return [
        (name, tuple(sorted(v)), int(tasks.task_info(f"{name}-{max(v)}")["defaults"]["max_episode_steps"]))
        for name, v in sorted(versions.items())
    ]


def _dmc_mujoco_envs(ids: list[str]) -> list[tuple[str, str, int]]:
    """EnvPool's ``dmc_mujoco_envs``: (domain, task, steps per episode), domain and task in
    dm_control's snake case; the domain is the suite module the id starts with."""
    out: list[tuple[str, str, int]] = []
    if not ids:
        return out
    suite = tasks.task_info(ids[0])["defaults"]["suite_dir"]
    domains = sorted((f[:-3] for f in os.listdir(suite) if f.endswith(".py")), key=len, reverse=True)
    for task_id in sorted(ids):
        info = tasks.task_info(task_id)["defaults"]
        camel = task_id.rsplit("-", 1)[0]
        domain = next((d for d in domains if camel.startswith(_camel(d))), None)
        if domain is None:
            continue
        rest = camel[len(_camel(domain)) :]
        task = "".join(("_" + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(rest))
        control = info["control_timestep"] or 0.0
        steps = int(round(info["time_limit"] / control)) if control else 1000
        out.append((domain, task, steps))
    return out


class EnvRegistry:
    """EnvPool's registry, read-only: ``specs`` maps each task id to ``(import_path, spec_cls,
    kwargs)``, ``kwargs`` being the task's config defaults; ``make*`` and ``list_all_envs`` are the
    package's."""

    def __init__(self, family_tasks: dict[str, list[str]]) -> None:
        self.specs: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for family, ids in family_tasks.items():
            path = _FAMILY_PATHS[family]
            for task_id in ids:
                spec_cls = f"{_camel(family)}EnvSpec" if family != "mujoco" else f"Gym{task_id.split('-')[0]}EnvSpec"
                self.specs[task_id] = (path, spec_cls, dict(tasks.task_info(task_id)["defaults"]))

    make = staticmethod(make)
    make_gym = staticmethod(make_gym)
    make_dm = staticmethod(make_dm)
    make_gymnasium = staticmethod(make_gymnasium)
    make_spec = staticmethod(make_spec)
    list_all_envs = staticmethod(tasks.list_all_envs)


class _FamilySpec:
    """EnvPool's ``<Family>EnvSpec``: built from a config tuple in ``_config_keys`` order
    (``gen_config(**kwargs)`` makes one, the rest at their defaults); the task is chosen by the
    family's task key (Atari's ``task``, a ROM name; MiniGrid's ``env_name``). It reads as the
    ``EnvSpec`` of ``make_spec(task_id, **kwargs)``, the kwargs being the changed keys (``_resolve``
    of a family may say otherwise)."""

    _task_key = ""
    _config_keys: list[str] = []
    _default_config_values: tuple[Any, ...] = ()

    def __init__(self, config: Sequence[Any]) -> None:
        values = dict(zip(self._config_keys, tuple(config), strict=True))
        task = values.pop(self._task_key)
        task = task.decode() if isinstance(task, bytes) else str(task)
        task_id = self._task_ids().get(task)
        if task_id is None:
            raise ValueError(f"{type(self).__name__}: unknown {self._task_key} {task!r}")
        self.task_id: str = task_id
        defaults = dict(zip(self._config_keys, self._default_config_values, strict=True))
        changed = {k: v for k, v in values.items() if k not in _SPEC_ONLY and v != defaults[k]}
        self.kwargs = self._resolve(task, changed, values)
        if values["batch_size"] > values["num_envs"]:
            raise ValueError(f"batch_size ({values['batch_size']}) exceeds num_envs ({values['num_envs']})")
        self._spec = make_spec(self.task_id, **self.kwargs)

    @classmethod
    def _task_ids(cls) -> dict[str, str]:
        raise NotImplementedError

    def _resolve(self, task: str, changed: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
        """The task's kwargs: the keys changed from their defaults."""
        return changed

    @classmethod
    def gen_config(cls, **kwargs: Any) -> tuple:
        unknown = sorted(set(kwargs) - set(cls._config_keys))
        if unknown:
            raise ValueError(f"unknown config key(s) {', '.join(unknown)}; valid ones: {', '.join(cls._config_keys)}")
        config = namedtuple("Config", cls._config_keys)  # type: ignore[misc]  # noqa: PYI024
        return config(**{**dict(zip(cls._config_keys, cls._default_config_values, strict=True)), **kwargs})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_spec"], name)


# Keys a config tuple carries that are EnvPool's spec bookkeeping, not options of ours.
_SPEC_ONLY = frozenset({"max_num_players"})


def _atari_spec_class(games: dict[str, str]) -> type[_FamilySpec]:
    """``AtariEnvSpec`` over ``games`` (ROM name -> task id), with Pong-v5's config as its defaults."""
    pong = make_spec("Pong-v5").config
    keys = [k for k in pong if k not in ("rom_path", "env_kwargs")]
    defaults = [pong[k] for k in keys]
    return type(
        "AtariEnvSpec",
        (_FamilySpec,),
        {
            "_task_key": "task",
            "_config_keys": [*keys, "max_num_players", "task"],
            "_default_config_values": (*defaults, 1, "pong"),
            "_task_ids": classmethod(lambda cls: games),
            "__module__": "envpool.atari",
        },
    )


# EnvPool's MiniGrid config (1.2.5's MiniGridEnvSpec): the pool keys, then the family's, with their
# defaults (BabyAI's keys are not taken: a BabyAI level is its task id, made with make_*).
_MINIGRID_CONFIG: dict[str, Any] = {
    "num_envs": 1, "batch_size": 0, "num_threads": 0, "max_num_players": 1, "thread_affinity_offset": -1,
    "base_path": "envpool", "seed": ENVPOOL_SEED, "env_seed": [], "gym_reset_return_info": True,
    "max_episode_steps": 2**31 - 1, "env_name": "empty", "size": 8, "width": 9, "height": 7,
    "agent_start_pos": (1, 1), "agent_start_dir": 0, "agent_view_size": 7, "mission_bytes": 96, "action_max": 6,
    "num_crossings": 1, "obstacle_type": "lava", "strip2_row": 2, "n_obstacles": 4, "num_objs": 3,
    "random_length": False, "room_size": 6, "num_rows": 3, "num_cols": 3, "obj_type": "ball",
    "min_num_rooms": 2, "max_num_rooms": 6, "max_room_size": 10, "key_in_box": True, "blocked": True,
    "agent_room": (1, 1), "num_quarters": 4, "num_rooms_visited": 25,
}
# EnvPool's env_name -> a task of ours of that minigrid env, and the keys of EnvPool's config that
# env reads (under our kwarg names where they differ: _MINIGRID_NAMES).
_MINIGRID_ENVS: dict[str, tuple[str, tuple[str, ...]]] = {
    "empty": ("MiniGrid-Empty-5x5-v0", ("size", "agent_start_pos", "agent_start_dir")),
    "doorkey": ("MiniGrid-DoorKey-5x5-v0", ("size",)),
    "four_rooms": ("MiniGrid-FourRooms-v0", ()),
    "multi_room": ("MiniGrid-MultiRoom-N2-S4-v0", ("min_num_rooms", "max_num_rooms", "max_room_size")),
    "lava_gap": ("MiniGrid-LavaGapS5-v0", ("size", "obstacle_type")),
    "crossing": ("MiniGrid-LavaCrossingS9N1-v0", ("size", "num_crossings", "obstacle_type")),
    "distshift": ("MiniGrid-DistShift1-v0", ("width", "height", "agent_start_pos", "agent_start_dir", "strip2_row")),
    "memory": ("MiniGrid-MemoryS7-v0", ("size", "random_length")),
    "dynamic_obstacles": ("MiniGrid-Dynamic-Obstacles-5x5-v0", ("size", "agent_start_pos", "agent_start_dir",
                                                                "n_obstacles")),
    "goto_door": ("MiniGrid-GoToDoor-5x5-v0", ("size",)),
    "goto_object": ("MiniGrid-GoToObject-6x6-N2-v0", ("size", "num_objs")),
    "put_near": ("MiniGrid-PutNear-6x6-N2-v0", ("size", "num_objs")),
    "fetch": ("MiniGrid-Fetch-5x5-N2-v0", ("size", "num_objs")),
    "red_blue_door": ("MiniGrid-RedBlueDoors-6x6-v0", ("size",)),
    "locked_room": ("MiniGrid-LockedRoom-v0", ("size",)),
    "playground": ("MiniGrid-Playground-v0", ()),
    "key_corridor": ("MiniGrid-KeyCorridorS3R1-v0", ("room_size", "num_rows", "obj_type")),
    "unlock": ("MiniGrid-Unlock-v0", ()),
    "unlock_pickup": ("MiniGrid-UnlockPickup-v0", ()),
    "blocked_unlock_pickup": ("MiniGrid-BlockedUnlockPickup-v0", ()),
    "obstructed_maze_1dlhb": ("MiniGrid-ObstructedMaze-1Dlhb-v0", ("key_in_box", "blocked")),
    "obstructed_maze_full": ("MiniGrid-ObstructedMaze-Full-v0", ("agent_room", "key_in_box", "blocked", "num_quarters",
                                                                 "num_rooms_visited")),
    "obstructed_maze_full_v1": ("MiniGrid-ObstructedMaze-Full-v1", ("agent_room", "key_in_box", "blocked",
                                                                    "num_quarters", "num_rooms_visited")),
}
_MINIGRID_NAMES = {"num_objs": "numObjs", "min_num_rooms": "minNumRooms", "max_num_rooms": "maxNumRooms",
                   "max_room_size": "maxRoomSize"}
# The pool keys of EnvPool's config that are ours too (make's kwargs).
_POOL_KEYS = ("num_envs", "batch_size", "num_threads", "thread_affinity_offset", "seed", "max_episode_steps")


class MiniGridEnvSpec(_FamilySpec):
    """EnvPool's ``MiniGridEnvSpec``: its config names a minigrid env (``env_name``, EnvPool's name:
    ``"empty"``, ``"doorkey"``, ``"crossing"``, ...) and that env's keys (``size``, ...); the spec is
    our task of that env made with those keys, every key the env reads (EnvPool's defaults
    included) and ``max_episode_steps``. A changed key the env does not read is a ``ValueError``."""

    _task_key = "env_name"
    _config_keys = list(_MINIGRID_CONFIG)
    _default_config_values = tuple(_MINIGRID_CONFIG.values())

    @classmethod
    def _task_ids(cls) -> dict[str, str]:
        return {name: task_id for name, (task_id, _) in _MINIGRID_ENVS.items()}

    def _resolve(self, task: str, changed: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
        reads = _MINIGRID_ENVS[task][1]
        reads = (*reads, "agent_view_size")
        unread = sorted(k for k in changed if k not in reads and k not in _POOL_KEYS)
        if unread:
            raise ValueError(f"MiniGridEnvSpec: env_name {task!r} does not read {', '.join(unread)}")
        kwargs = {k: v for k, v in changed.items() if k in _POOL_KEYS}
        kwargs["max_episode_steps"] = values["max_episode_steps"]
        for key in reads:
            kwargs[_MINIGRID_NAMES.get(key, key)] = values[key]
        if tuple(kwargs.get("agent_start_pos", ())) == (-1, -1):  # EnvPool's random start
            kwargs["agent_start_pos"] = []
            kwargs.pop("agent_start_dir", None)
        return kwargs


def _pool_class(name: str, maker: Callable[..., BasePoolEnv], module: str) -> type:
    """``<Family><Front>EnvPool(spec)``: the pool ``make_*`` gives for the spec's task and config."""

    def __new__(cls: type, spec: _FamilySpec) -> BasePoolEnv:  # noqa: N807
        return maker(spec.task_id, **spec.kwargs)

    return type(name, (), {"__new__": __new__, "__module__": module})


class _RawPool:
    """EnvPool's raw pool (``_<Family>EnvPool(spec)``): ``_reset(env_ids)`` and ``_send(values)``
    start work, ``_recv()`` returns the next batch as a list in ``_state_keys`` order, and
    ``_send`` takes its values in ``_action_keys`` order (``env_id``, ``players.env_id``, then the
    action fields)."""

    def __init__(self, spec: _FamilySpec) -> None:
        self._pool = make_gymnasium(spec.task_id, **spec.kwargs)
        self._state_keys = list(spec.state_array_spec)
        self._action_keys = list(spec.action_array_spec)

    def _reset(self, env_ids: Any) -> None:
        self._pool.async_reset(env_id=np.asarray(env_ids))

    def _send(self, values: Sequence[Any]) -> None:
        named = dict(zip(self._action_keys, values, strict=True))
        env_id = named.pop("env_id")
        named.pop("players.env_id", None)
        action = named["action"] if list(named) == ["action"] else {k.split(":", 1)[1]: v for k, v in named.items()}
        self._pool.send(action, env_id)

    def _recv(self) -> list[np.ndarray]:
        obs, reward, terminated, truncated, info = self._pool.recv()
        engine = {"reward": reward, "terminated": terminated, "truncated": truncated}
        out = []
        for key in self._state_keys:
            if key in engine:
                out.append(engine[key])
            elif key == "obs":
                out.append(obs)
            elif key.startswith("obs:"):
                out.append(obs[key[4:]])
            elif key == "info:players.env_id":
                out.append(info["env_id"])
            else:
                out.append(info[key[5:]])
        return out

    def close(self) -> None:
        self._pool.close()


def _module(name: str, doc: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(attrs)
    module.__path__ = []  # a package: its submodules come from this layout alone
    return module


def build_modules() -> dict[str, types.ModuleType]:
    """EnvPool's modules, by name, over the tasks built here (what ``as_envpool`` installs)."""
    family_tasks = _family_tasks()
    registry = EnvRegistry(family_tasks)
    top = {
        "make": make,
        "make_gym": make_gym,
        "make_dm": make_dm,
        "make_gymnasium": make_gymnasium,
        "make_spec": make_spec,
        "list_all_envs": tasks.list_all_envs,
    }
    protocol = {
        "EnvSpec": EnvSpec,
        "EnvPool": EnvPool,
        "DMEnvPool": DMEnvPool,
        "GymEnvPool": GymEnvPool,
        "GymnasiumEnvPool": GymnasiumEnvPool,
    }
    modules = {
        "envpool": _module(
            "envpool",
            "EnvPool's layout over parallel_pool.",
            **top,
            **protocol,
            __all__=[*top, "EnvSpec", "EnvPool", "DMEnvPool", "GymnasiumEnvPool"],
            __version__=importlib.metadata.version("parallel_pool"),
            __file__=os.path.join(os.path.dirname(__file__), "__init__.py"),
        ),
        "envpool.registration": _module(
            "envpool.registration", "EnvPool's registry.", **top, registry=registry, EnvRegistry=EnvRegistry
        ),
        "envpool.python": _module("envpool.python", "EnvPool's Python layer."),
        "envpool.python.protocol": _module(
            "envpool.python.protocol",
            "EnvPool's pool and spec types.",
            **protocol,
        ),
        "envpool.python.glfw_context": _module(
            "envpool.python.glfw_context",
            "GLFW set-up; nothing to do on Linux.",
            preload_windows_gl_dlls=lambda *args, **kwargs: None,
        ),
        "envpool.mujoco": _module("envpool.mujoco", "MuJoCo families."),
    }
    # ROM name -> its native id (EnvPool's spellings are aliases of those).
    games = {_atari_game(t): t for t in family_tasks["atari"] if t.endswith("-v5") and tasks.lookup(t)[0] == t}
    tables: dict[str, dict[str, Any]] = {
        "atari": {"atari_game_list": sorted(games)},
        "mujoco": {"gym_mujoco_envs": _gym_mujoco_envs(family_tasks["mujoco"])},
        "dm_control": {"dmc_mujoco_envs": _dmc_mujoco_envs(family_tasks["dm_control"])},
        "vizdoom": {
            "_vizdoom_game_list": lambda: sorted(
                os.path.splitext(os.path.basename(tasks.task_info(t)["defaults"]["cfg_path"]))[0]
                for t in family_tasks["vizdoom"]
            )
        },
    }
    for family, path in _FAMILY_PATHS.items():
        modules[path] = _module(path, f"EnvPool's {family} family.")
        modules[f"{path}.registration"] = _module(
            f"{path}.registration", f"EnvPool's {family} registration.", **tables.get(family, {})
        )
    atari_spec = _atari_spec_class(games)
    modules["envpool.atari"].__dict__.update(
        AtariEnvSpec=atari_spec,
        AtariGymnasiumEnvPool=_pool_class("AtariGymnasiumEnvPool", make_gymnasium, "envpool.atari"),
        AtariGymEnvPool=_pool_class("AtariGymEnvPool", make_gym, "envpool.atari"),
        AtariDMEnvPool=_pool_class("AtariDMEnvPool", make_dm, "envpool.atari"),
    )
    modules["envpool.minigrid"].__dict__.update(
        decode_mission=decode_mission,
        MiniGridEnvSpec=MiniGridEnvSpec,
        MiniGridGymnasiumEnvPool=_pool_class("MiniGridGymnasiumEnvPool", make_gymnasium, "envpool.minigrid"),
        MiniGridGymEnvPool=_pool_class("MiniGridGymEnvPool", make_gym, "envpool.minigrid"),
        MiniGridDMEnvPool=_pool_class("MiniGridDMEnvPool", make_dm, "envpool.minigrid"),
    )
    modules["envpool.atari.atari_envpool"] = _module(
        "envpool.atari.atari_envpool", "EnvPool's raw Atari pool.", _AtariEnvSpec=atari_spec, _AtariEnvPool=_RawPool
    )
    return modules


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, modules: dict[str, types.ModuleType]) -> None:
        self.modules = modules

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        # A name the layout lacks is left to the next finders, which look in the parent module's
        # __path__ (empty unless the caller extends it), so it is a ModuleNotFoundError and never a
        # real EnvPool's module loaded under this package.
        if fullname in self.modules:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.modules[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def as_envpool() -> None:
    """Makes ``import envpool`` and ``import envpool.<module>`` give EnvPool's layout over
    parallel_pool (this module's docstring lists it) in this process. Call it before the first
    ``import envpool``; calling it again does nothing. An ``envpool`` already imported is a
    ``RuntimeError``: the two cannot share the name."""
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    if "envpool" in sys.modules:
        raise RuntimeError(
            "envpool is already imported in this process; call parallel_pool.as_envpool() "
            "before the first `import envpool`"
        )
    sys.meta_path.insert(0, _Finder(build_modules()))
