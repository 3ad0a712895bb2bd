"""Python view of a task's spec: config, fields, and the spaces and dm_env specs built from them.

Everything here is derived from the one spec each env declares in C++; nothing is declared twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from dm_env import specs as dm_specs

# The characters a text field (e.g. MiniGrid's mission) may hold: printable ASCII.
TEXT_CHARSET = "".join(chr(c) for c in range(32, 127))


@dataclass(frozen=True)
class FieldInfo:
    """One array field of a spec: a row's shape and dtype, and the space it becomes."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    space: str  # "box", "discrete" or "text" (a str of at most shape[0] bytes, stored uint8)
    low: tuple[float, ...]
    high: tuple[float, ...]
    per_player: bool
    allow_nan: bool
    # An info field's place in the reference env's info (native/core/spec.h, InfoPresence): "always",
    # "step" (not in a reset's), "where_true" (a flag, only in rows where set), "extra" (not the reference's).
    presence: str = "always"

    @classmethod
    def from_native(cls, d: dict[str, Any]) -> FieldInfo:
        return cls(
            name=d["name"],
            dtype=np.dtype(d["dtype"]),
            shape=tuple(d["shape"]),
            space=d["space"],
            low=tuple(d["low"]),
            high=tuple(d["high"]),
            per_player=d["per_player"],
            allow_nan=d["allow_nan"],
            presence=d.get("presence", "always"),
        )

    @property
    def key(self) -> str:
        """The name without its "obs:"/"info:"/"action:" prefix."""
        return self.name.split(":", 1)[1] if ":" in self.name else self.name

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Low and high as arrays of the field's shape and dtype (the dtype's range when unbounded)."""
        if self.dtype.kind == "f":
            default_low, default_high = -np.inf, np.inf
        elif self.dtype.kind == "b":
            default_low, default_high = 0, 1
        else:
            info = np.iinfo(self.dtype)
            default_low, default_high = info.min, info.max

        def expand(values: tuple[float, ...], default: float) -> np.ndarray:
            arr = np.asarray(values if values else (default,), dtype=np.float64)
            if arr.size == 1:
                arr = np.full(self.shape, arr.item())
            return arr.reshape(self.shape).astype(self.dtype)

        return expand(self.low, default_low), expand(self.high, default_high)

    def gymnasium_space(self) -> gymnasium.Space:
        if self.space == "text":
            return gymnasium.spaces.Text(max_length=self.shape[0], min_length=0, charset=TEXT_CHARSET)
        if self.space == "discrete":
            start = int(self.low[0])
            return gymnasium.spaces.Discrete(int(self.high[0]) - start + 1, start=start)
        low, high = self.bounds()
        # Box takes any NumPy dtype (bool included); its annotation names only float and int types.
        return gymnasium.spaces.Box(low=low, high=high, shape=self.shape, dtype=self.dtype)  # type: ignore[arg-type]

    def dm_spec(self, name: str | None = None, scalar_bounds: bool = False) -> dm_specs.Array:
        """The field's dm_env spec. ``scalar_bounds``: uniform bounds as scalars, as EnvPool's
        observation specs give them (``spec.obs.maximum == 255``)."""
        name = name or self.key
        if self.space == "text":
            return dm_specs.StringArray((), string_type=str, name=name)
        if self.space == "discrete":
            start = int(self.low[0])
            if start == 0:
                return dm_specs.DiscreteArray(int(self.high[0]) + 1, dtype=self.dtype, name=name)
            return dm_specs.BoundedArray((), self.dtype, start, int(self.high[0]), name=name)
        low, high = self.bounds()
        if self.low or self.high:
            if scalar_bounds and _uniform(low, high):
                low, high = low.flat[0], high.flat[0]
            return dm_specs.BoundedArray(self.shape, self.dtype, low, high, name=name)
        return dm_specs.Array(self.shape, self.dtype, name=name)


class _AttrDict(dict[str, Any]):
    """A dict whose keys are also attributes, where EnvPool returns a named tuple; ``_asdict`` too."""

    _what = "dict"

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{self._what} has no key {name!r}; its keys: {', '.join(sorted(self))}") from None

    def _asdict(self) -> dict[str, Any]:
        """A plain dict (a named tuple has ``_asdict``)."""
        return dict(self)


class Config(_AttrDict):
    """A spec's config: a dict (``config["max_episode_steps"]``) whose keys are also attributes
    (``config.max_episode_steps``), as EnvPool's ``spec.config`` reads."""

    _what = "config"


class ObservationSpec(_AttrDict):
    """A Dict observation's dm_env specs, in its fields' order: a dict (``spec["orientations"]``,
    as dm_control's ``observation_spec()``) whose keys are also attributes
    (``spec.orientations``, as EnvPool's named tuple reads)."""

    _what = "observation spec"


@dataclass(frozen=True)
class ArraySpec:
    """One array of a spec in EnvPool's form (``spec.state_array_spec["obs"]``): the dtype, a row's
    shape and the bounds (scalars, or arrays of that shape)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    minimum: Any
    maximum: Any


# The fields the engine adds to every env's declared ones, in EnvPool's names (a row each).
_ENGINE_STATE: tuple[tuple[str, type], ...] = (
    ("info:env_id", np.int32), ("info:players.env_id", np.int32), ("info:elapsed_step", np.int32),
    ("reward", np.float64), ("terminated", np.bool_), ("truncated", np.bool_),
)


# The state field of a pool of Python envs that holds each row's pickled info entries
# (python_envs.py, ``info_pickle``); neither an observation nor an info field itself.
PICKLED_INFO = "side:pickled_info"


class EnvSpec:
    """A task's resolved spec: its config (pool options and env config) and its fields.

    Example:
        >>> import parallel_pool
        >>> spec = parallel_pool.make_spec("CartPole-v1", num_envs=8)
        >>> spec.observation_space
        Box([-4.8 ...], [4.8 ...], (4,), float32)
        >>> spec.config["max_episode_steps"]
        500
    """

    def __init__(self, task_id: str, native: dict[str, Any], pool_config: dict[str, Any]) -> None:
        self.task_id = task_id
        self.env_config: dict[str, Any] = dict(native["config"])
        self.config: Config = Config({**pool_config, **self.env_config})
        # The pool options render_width/render_height (apply_render_size); a family's own keys of
        # those names (ViZDoom's) are its config and size its frames itself.
        self._render_size_option = (int(pool_config.get("render_width", 0)), int(pool_config.get("render_height", 0)))
        self.state_fields = [FieldInfo.from_native(d) for d in native["state"]]
        self.action_fields = [FieldInfo.from_native(d) for d in native["action"]]
        self.max_num_players: int = native["max_num_players"]
        self.max_episode_steps: int = native["max_episode_steps"]
        self.reward_threshold: float | None = native["reward_threshold"]
        # (height, width, 3) of the frames ``render()`` returns; None: the task does not render.
        self.render_shape: tuple[int, ...] | None = native.get("render_shape")
        # The reference env's metadata["render_fps"]; None: it declares none.
        self.render_fps: float | None = native.get("render_fps")
        self.obs_fields = [f for f in self.state_fields if f.name == "obs" or f.name.startswith("obs:")]
        self.info_fields = [f for f in self.state_fields if f.name.startswith("info:")]
        # Info keys that a row may lack (a Python env's info, python_envs.py): each has a "_<key>"
        # mask field, and appears in a batch's info only where some row has it (Gymnasium's form).
        self.masked_info_keys: tuple[str, ...] = ()
        # A Tuple observation (Blackjack's) is declared as the fields obs:0, obs:1, ..., in order.
        self.tuple_obs = len(self.obs_fields) > 1 and [f.key for f in self.obs_fields] == [
            str(i) for i in range(len(self.obs_fields))
        ]
        # Named tables a task derives from its config, e.g. toy text's transition table "P".
        self.tables: dict[str, np.ndarray] = {k: np.asarray(v) for k, v in native.get("tables", {}).items()}

    # --- hooks for specs whose values are not their fields as they are (python_envs.PythonEnvSpec) ---
    def obs_readers(self, index: dict[str, int], prefix: str = "") -> tuple[Callable, Callable] | None:
        """``(read_batch(arrays), read_row(arrays, row))``: a batch's (or one row's) observation from
        the arrays of a native result (``index``: field name -> position; ``prefix`` "final:" for the
        final observations); None when the obs fields are the observation."""
        return None

    def action_flattener(self, num_envs: int) -> Callable[[Any], Any] | None:
        """``flatten(action)``: a batch of actions as the native pool takes them; None when it takes
        them as they are."""
        return None

    def apply_render_size(self) -> tuple[int, int] | None:
        """Applies the pool options render_width/render_height (0: the frame's own) to
        ``render_shape``; returns the (height, width) that render() shrinks the task's frames to,
        or None when they keep their size. ValueError when the task does not render RGB frames or
        a size exceeds its frame: INTER_AREA, the method used, only shrinks."""
        width, height = self._render_size_option
        if not width and not height:
            return None
        shape = self.render_shape
        if shape is None:
            raise ValueError(f"{self.task_id} does not render; render_width/render_height need a task that "
                             "does (a Python env: one made with render_mode='rgb_array')")
        dtype = getattr(self, "render_dtype", np.dtype(np.uint8))  # a Python env's frames: their own
        if len(shape) != 3 or shape[2] != 3 or dtype is None or np.dtype(dtype) != np.uint8:
            raise ValueError(f"render_width/render_height need RGB uint8 frames; {self.task_id} renders "
                             f"{shape} {dtype}")
        h, w = height or shape[0], width or shape[1]
        if h > shape[0] or w > shape[1]:
            raise ValueError(f"render_height x render_width ({h} x {w}) must be at most {self.task_id}'s frame, "
                             f"{shape[0]} x {shape[1]}: render() shrinks it with INTER_AREA")
        self.render_shape = (h, w, 3)
        return None if (h, w) == tuple(shape[:2]) else (h, w)

    def decode_frames(self, frames: np.ndarray) -> Any:
        """The native pool's rendered frames as ``render()`` returns them."""
        return frames

    @property
    def id(self) -> str:  # noqa: A003 (Gymnasium's EnvSpec names it so; wrappers read spec.id)
        """The task id, as Gymnasium's ``EnvSpec.id``."""
        return self.task_id

    @property
    def state_array_spec(self) -> dict[str, ArraySpec]:
        """Every array a step writes per env, in EnvPool's form: the env's observation and info
        fields (``"obs"``, ``"obs:<key>"``, ``"info:<key>"``) and the engine's (``"info:env_id"``,
        ``"info:elapsed_step"``, ``"reward"``, ``"terminated"``, ``"truncated"``)."""
        out = {f.name: _array_spec(f) for f in self.state_fields if f.name != PICKLED_INFO}
        for name, dtype in _ENGINE_STATE:
            field = FieldInfo(name, np.dtype(dtype), (), "box", (), (), False, False)
            out.setdefault(name, _array_spec(field))
        return out

    @property
    def action_array_spec(self) -> dict[str, ArraySpec]:
        """Every array a send takes, in EnvPool's form: the env ids (``"env_id"``, and
        ``"players.env_id"``, each player's env), then the action (``"action"`` or
        ``"action:<key>"``)."""
        bounds = np.iinfo(np.int32)
        ids = {name: ArraySpec(np.dtype(np.int32), shape, bounds.min, bounds.max)
               for name, shape in (("env_id", ()), ("players.env_id", (-1,)))}
        return {**ids, **{f.name: _array_spec(f) for f in self.action_fields}}

    @property
    def observation_space(self) -> gymnasium.Space:
        """The single-env observation space."""
        if len(self.obs_fields) == 1 and self.obs_fields[0].name == "obs":
            return self.obs_fields[0].gymnasium_space()
        if self.tuple_obs:
            return gymnasium.spaces.Tuple(tuple(f.gymnasium_space() for f in self.obs_fields))
        return gymnasium.spaces.Dict({f.key: f.gymnasium_space() for f in self.obs_fields})

    @property
    def action_space(self) -> gymnasium.Space:
        """The single-env action space (per player, for multi-player tasks)."""
        if len(self.action_fields) == 1 and self.action_fields[0].name == "action":
            return self.action_fields[0].gymnasium_space()
        return gymnasium.spaces.Dict({f.key: f.gymnasium_space() for f in self.action_fields})

    def observation_spec(self) -> Any:
        """The single-env dm_env observation spec (uniform bounds as scalars, as EnvPool's)."""
        return self.obs_specs()

    def obs_specs(self) -> Any:
        """The observation's dm_env specs: one spec, a tuple, or a mapping by key, as the observation
        is (``observation_spec()`` in this class; a subclass may give more there)."""
        if len(self.obs_fields) == 1 and self.obs_fields[0].name == "obs":
            return self.obs_fields[0].dm_spec("obs", scalar_bounds=True)
        if self.tuple_obs:
            return tuple(f.dm_spec(f"obs_{f.key}", scalar_bounds=True) for f in self.obs_fields)
        return ObservationSpec((f.key, f.dm_spec(scalar_bounds=True)) for f in self.obs_fields)

    def action_spec(self) -> Any:
        """The single-env dm_env action spec."""
        if len(self.action_fields) == 1 and self.action_fields[0].name == "action":
            return self.action_fields[0].dm_spec("action")
        return {f.key: f.dm_spec() for f in self.action_fields}

    def transition_table(self) -> dict[int, dict[int, list[tuple[float, int, float, bool]]]]:
        """The task's transition table as Gymnasium's toy-text envs hold it in ``env.unwrapped.P``:
        ``P[state][action]`` is a list of ``(prob, next_state, reward, terminated)``.

        Example:
            >>> import parallel_pool
            >>> parallel_pool.make_spec("FrozenLake-v1", is_slippery=False).transition_table()[0][2]
            [(1.0, 1, 0.0, False)]
        """
        if "P" not in self.tables:
            raise AttributeError(
                f"{self.task_id} has no task-wide transition table P"
                + (
                    " (desc=None with map_name=None draws a random map per env: pass desc=generate_random_map(...))"
                    if self.task_id.startswith("FrozenLake")
                    else ""
                )
            )
        rows = self.tables["P"].reshape(-1, 6)
        num_states = int(self.obs_fields[0].high[0]) + 1
        num_actions = int(self.action_fields[0].high[0]) + 1
        table: dict[int, dict[int, list[tuple[float, int, float, bool]]]] = {
            s: {a: [] for a in range(num_actions)} for s in range(num_states)
        }
        for state, action, prob, next_state, reward, terminated in rows.tolist():
            table[int(state)][int(action)].append((prob, int(next_state), reward, bool(terminated)))
        return table

    def __repr__(self) -> str:
        return f"EnvSpec({self.task_id!r}, config={self.config!r})"


def _uniform(low: np.ndarray, high: np.ndarray) -> bool:
    """Whether a field's bounds are one value each (EnvPool gives those as scalars)."""
    return bool(low.size) and bool((low == low.flat[0]).all()) and bool((high == high.flat[0]).all())


def _array_spec(field: FieldInfo) -> ArraySpec:
    low, high = field.bounds()
    if field.space == "discrete" or _uniform(low, high):
        return ArraySpec(field.dtype, field.shape, low.flat[0] if low.size else 0, high.flat[0] if high.size else 0)
    return ArraySpec(field.dtype, field.shape, low, high)
