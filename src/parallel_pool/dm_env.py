"""The dm_env front-end: batched ``dm_env.TimeStep``s over a native pool.

A step that ends an episode is ``LAST`` (discount 0 when terminated, 1 when only truncated); the
env's next step resets it and returns ``FIRST``. ``observation`` is a named tuple holding the
observation (``obs``, or one entry per key of a Dict observation) and every info entry, so async
users find ``env_id`` there, as in EnvPool (with ``episode_stats``: ``episode_r``, ``episode_l``,
``episode_t`` and ``episode_mask``, Gymnasium's ``_episode``, in every step).
"""

from __future__ import annotations

import collections
from typing import Any

import dm_env
import gymnasium
import numpy as np

from parallel_pool.base import BasePoolEnv


class DmEnv(BasePoolEnv, dm_env.Environment):
    """A batch of envs with dm_env's API (batched ``TimeStep``s): a ``dm_env.Environment``, as
    EnvPool's ``make_dm`` pools are.

    Example:
        >>> import numpy as np, parallel_pool
        >>> env = parallel_pool.make_dm("CartPole-v1", num_envs=2, seed=0)
        >>> ts = env.reset()
        >>> ts.step_type
        array([0, 0], dtype=int32)
        >>> ts = env.step(np.array([0, 1]))
        >>> ts.observation.obs.shape, ts.observation.env_id
        ((2, 4), array([0, 1], dtype=int32))
        >>> env.close()
    """

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        super().__init__(task_id, **kwargs)
        if self.autoreset_mode != "next_step":
            raise ValueError(
                "the dm_env front-end resets an env on the step after LAST; it needs autoreset_mode='next_step', "
                f"got {self.autoreset_mode!r}"
            )
        if self.spec.max_num_players > 1:
            raise ValueError("the dm_env front-end is for single-player tasks; use the Gymnasium front-end")
        # A Dict observation's keys, in its fields' order (a Python env's may nest: its space's
        # top-level keys), else "obs". A native task's come from its fields (a spec subclass may
        # give another space: the EnvPool layout's).
        if self.workers is not None:
            space = self.spec.observation_space
            names = list(space.spaces) if isinstance(space, gymnasium.spaces.Dict) else ["obs"]
        elif self.spec.tuple_obs or [f.name for f in self.spec.obs_fields] == ["obs"]:
            names = ["obs"]
        else:
            names = [f.key for f in self.spec.obs_fields]
        self._obs_names = tuple(names)
        # Every info field follows, in every TimeStep (nested keys joined by "_"; episode_stats'
        # entries too, zeros where no episode ended). A named tuple's fields cannot start with "_":
        # the "_episode" mask is "episode_mask".
        self._info_fields: list[int] = []
        for i, field in enumerate(self._native.field_names):
            key = field[5:].replace(".", "_")
            if field.startswith("info:") and key not in names:
                names.append(f"{key[1:]}_mask" if key.startswith("_") else key)
                self._info_fields.append(i)
        self._observation_type = collections.namedtuple("Observation", names)  # type: ignore[misc]
        self._observation_spec = self._make_observation_spec()

    def observation_spec(self) -> Any:
        """The single-env spec of ``TimeStep.observation``, as EnvPool's: the same named tuple, of
        dm_env specs, the observation's (``obs``, or one per key of a Dict observation, with its
        bounds) then each info entry's (``spec.observation_spec()`` has the observation's alone)."""
        return self._observation_spec

    def _make_observation_spec(self) -> Any:
        obs = self.spec.obs_specs()
        values: list[Any] = []
        for name in self._obs_names:
            if len(self._obs_names) == 1 and name == "obs":
                values.append(obs)
            elif name in obs:
                values.append(obs[name])
            else:  # a Python env's nested Dict entry: its fields' specs
                values.append({key[len(name) + 1:]: s for key, s in obs.items() if key.startswith(name + ".")})
        layout = {name: (dtype, shape) for name, dtype, shape, _ in self._native.field_layout}
        for i in self._info_fields:
            field = self._native.field_names[i]
            dtype, shape = layout[field]
            values.append(dm_env.specs.Array(tuple(shape), np.dtype(dtype), name=field[5:].replace(".", "_")))
        return self._observation_type(*values)

    def action_spec(self) -> Any:
        return self.spec.action_spec()

    def reward_spec(self) -> Any:
        return dm_env.specs.Array((), np.float64, name="reward")

    def discount_spec(self) -> Any:
        return dm_env.specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount")

    def _time_step(self, arrays: tuple, xp: Any = np) -> dm_env.TimeStep:
        """The batch's TimeStep, computed with the array module ``xp``: NumPy, or jax.numpy for
        xla()'s traced arrays (then with the keys of ``Unpacker.unpack_traced``)."""
        unpack = self._unpacker.unpack if xp is np else self._unpacker.unpack_traced
        obs, reward, terminated, truncated, info = unpack(arrays)
        first, mid, last = int(dm_env.StepType.FIRST), int(dm_env.StepType.MID), int(dm_env.StepType.LAST)
        step_type = xp.where(info["elapsed_step"] == 0, first, mid)
        step_type = xp.where(terminated | truncated, last, step_type).astype(xp.int32)
        discount = (~terminated).astype(xp.float32)
        # Envs that write info["life_loss"] (Atari with zero_discount_on_life_loss) want discount 0 on
        # a lost life even when the episode goes on (EnvPool's dm_env behaviour).
        if "life_loss" in info:
            discount = xp.where(info["life_loss"].astype(bool), xp.float32(0.0), discount)
        values = [obs] if not isinstance(obs, dict) else [obs[name] for name in self._obs_names]
        values += [arrays[i] for i in self._info_fields]
        return dm_env.TimeStep(step_type, reward, discount, self._observation_type(*values))

    def _convert(self, arrays: tuple, reset: bool) -> Any:
        return self._time_step(arrays)

    def _xla_result(self, arrays: tuple) -> dm_env.TimeStep:
        import jax.numpy as jnp  # xla() only; importing parallel_pool does not import jax

        return self._time_step(arrays, jnp)

    def reset(self, env_id: Any = None, *, seed: Any = None) -> dm_env.TimeStep:
        """Resets every env (or those in ``env_id``); every row is ``FIRST``."""
        return self._time_step(self._reset_arrays(env_id, seed, None))

    def step(self, action: Any, env_id: Any = None) -> dm_env.TimeStep:
        """Steps the envs in ``env_id`` (all if None); in async mode ``send`` and ``recv`` in one
        call. A step that cannot complete a batch is a ``ValueError`` before anything is queued."""
        return self._time_step(self._step_arrays(action, env_id))

    def recv(self, timeout: float | None = None) -> dm_env.TimeStep:
        return self._time_step(self._recv_arrays(timeout))
