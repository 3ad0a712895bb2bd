"""A strict ``gymnasium.vector.VectorEnv`` over a native pool, for ``gymnasium.make_vec``.

Batched spaces, ``metadata["autoreset_mode"]``, Gymnasium's ``reset(seed, options)`` including
``reset_mask``: code written for ``SyncVectorEnv``/``AsyncVectorEnv`` runs on it unchanged.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from gymnasium.error import Error as GymnasiumError
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from parallel_pool.errors import EnvError
from parallel_pool.gymnasium_env import GymnasiumEnv
from parallel_pool.options import gymnasium_autoreset_mode


class ParallelPoolVectorEnv(VectorEnv):
    """``num_envs`` envs of one task as a Gymnasium ``VectorEnv`` (sync: every step steps all).

    An exception inside an env is raised from ``step``/``reset`` as ``parallel_pool.EnvError`` with
    ``result`` the 5-tuple (or ``(obs, info)``) the call would have returned, as ``make()``'s pools
    do; the failed env's row holds zeros, and the env starts a new episode on its next step.

    Example:
        >>> import gymnasium, parallel_pool
        >>> envs = gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=3)
        >>> envs.observation_space.shape
        (3, 4)
        >>> obs, info = envs.reset(seed=0)
        >>> obs, rew, terminated, truncated, info = envs.step(envs.action_space.sample())
        >>> envs.close()
    """

    def __init__(self, task_id: str, num_envs: int = 1, **kwargs: Any) -> None:
        if "batch_size" in kwargs and kwargs["batch_size"] not in (None, num_envs):
            raise ValueError("a VectorEnv steps every env at once: batch_size must equal num_envs")
        self._env = GymnasiumEnv(task_id, num_envs=num_envs, **kwargs)
        if self._env.spec.max_num_players > 1:
            self._env.close()
            raise ValueError(f"{task_id} is multi-player; use parallel_pool.make() for per-player rows")
        self.num_envs = num_envs
        self.single_observation_space = self._env.observation_space
        self.single_action_space = self._env.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = self._env.render_mode
        self.metadata = {
            "autoreset_mode": gymnasium_autoreset_mode(self._env.autoreset_mode),
            "render_modes": [] if self.render_mode is None else [self.render_mode],
        }
        self.spec = None
        self._last_obs: Any = None

    @property
    def pool(self) -> GymnasiumEnv:
        """The native pool behind this view."""
        return self._env

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        options = dict(options) if options else None
        if options and "reset_mask" in options:
            mask = options["reset_mask"]
            try:
                obs, info = self._env.reset(seed=seed, options={"reset_mask": mask})
                error = None
            except EnvError as e:
                (obs, info), error = e.result, e
            merged = _merge_rows(self._last_obs, obs, np.flatnonzero(mask), self.num_envs)
            self._last_obs = merged
            if error is not None:
                raise EnvError(error.errors, (merged, info)) from None
            return merged, info
        try:
            obs, info = self._env.reset(seed=seed)
        except EnvError as e:
            self._last_obs = e.result[0]
            raise
        self._last_obs = obs
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        try:
            result = self._env.step(actions)
        except EnvError as e:
            self._last_obs = e.result[0]
            raise
        self._last_obs = result[0]
        return result

    def render(self) -> tuple[Any, ...] | None:
        """Every env's current RGB frame (Gymnasium's vector convention: a tuple, one per env)."""
        if self.render_mode is None:
            return None
        return tuple(self._env.render())

    def close_extras(self, **kwargs: Any) -> None:
        self._env.close()

    def __repr__(self) -> str:
        return f"ParallelPoolVectorEnv({self._env.task_id}, num_envs={self.num_envs})"


def _merge_rows(previous: Any, rows: Any, ids: np.ndarray, num_envs: int) -> Any:
    """A full batch: the rows just reset at ``ids``, the previous observation elsewhere."""
    if isinstance(rows, dict):
        prev = previous if previous is not None else {k: None for k in rows}
        return {k: _merge_rows(prev[k], rows[k], ids, num_envs) for k in rows}
    if isinstance(rows, tuple):
        prev_items = previous if previous is not None else (None,) * len(rows)
        return tuple(_merge_rows(p, r, ids, num_envs) for p, r in zip(prev_items, rows))
    if previous is None:
        out = np.zeros((num_envs, *rows.shape[1:]), dtype=rows.dtype)
    else:
        out = np.array(previous, copy=True)
    out[ids] = rows
    return out


def make_vector_env(num_envs: int = 1, task_id: str = "", **kwargs: Any) -> ParallelPoolVectorEnv:
    """Gymnasium's ``vector_entry_point`` for ``parallel_pool/<task_id>``."""
    return ParallelPoolVectorEnv(task_id, num_envs=num_envs, **kwargs)


def make_single_env(task_id: str = "", **kwargs: Any) -> NoReturn:
    """Gymnasium's ``entry_point`` for ``parallel_pool/<task_id>``: a pool has no single-env form, so
    ``gymnasium.make`` says what to call instead (rather than Gymnasium's "entry_point is not specified")."""
    raise GymnasiumError(
        f"parallel_pool/{task_id} is a batch of envs stepped by a native pool, and has no single-env form: "
        f"use gymnasium.make_vec('parallel_pool/{task_id}', num_envs=...) or "
        f"parallel_pool.make('{task_id}', num_envs=...) (num_envs=1 for one env)"
    )
