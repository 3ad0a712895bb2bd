"""The Ray actor that owns one native pool on one node.

Its methods mirror the pool's calls with env ids made global (``offset + local id``) on the way out
and local on the way in, and return the pool's own arrays, which Ray serializes into the object
store as they are: the actor adds no copy of its own.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import parallel_pool
from parallel_pool.errors import EnvError


class PoolActor:
    """One native pool of ``num_envs`` envs whose global ids are ``offset .. offset + num_envs - 1``.

    Used through ``ray.remote``; ``make_distributed`` places one per node. ``send`` and
    ``async_reset`` return at once, so their errors (a bad action, a busy env) are kept and
    reported by the next ``recv``, which then returns ``(None, (message, global_env_ids))``
    instead of waiting.

    Example:
        >>> import ray
        >>> from parallel_pool.integrations.ray import PoolActor
        >>> actor = ray.remote(PoolActor).remote("CartPole-v1", 0, {"num_envs": 4, "seed": 0})  # doctest: +SKIP
        >>> obs, reward, terminated, truncated, info = ray.get(actor.reset.remote())  # doctest: +SKIP
    """

    def __init__(self, task_id: str, offset: int, make_kwargs: dict[str, Any]) -> None:
        self._env = parallel_pool.make_gymnasium(task_id, **make_kwargs)
        self._offset = offset
        self._deferred_error: tuple[str, list[int]] | None = None

    def describe(self) -> dict[str, Any]:
        """Where this actor runs and what its pool is."""
        import ray

        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "num_envs": self._env.num_envs,
            "batch_size": self._env.batch_size,
            "num_threads": self._env.spec.config["num_threads"],
            "observation_space": self._env.observation_space,
            "action_space": self._env.action_space,
            "metadata": self._env.metadata,
        }

    # --- sync ---
    def reset(self, seed: Any = None) -> tuple:
        """Resets every env; returns the reset rows as a step would (reward 0, not done)."""
        try:
            return self._globalize(self._env.reset_as_step(seed=seed))
        except EnvError as e:
            raise self._global_env_error(e) from None

    def step(self, actions: Any) -> tuple:
        try:
            return self._globalize(self._env.step(actions))
        except EnvError as e:
            raise self._global_env_error(e) from None

    # --- async ---
    def async_reset(self, seed: Any = None) -> None:
        try:
            self._env.async_reset(seed)
        except (ValueError, TypeError, RuntimeError) as e:
            self._defer(e, np.arange(self._env.num_envs))

    def send(self, actions: Any, env_id: np.ndarray) -> None:
        """Queues one step for each of the global ``env_id``."""
        try:
            self._env.send(actions, env_id - self._offset)
        except (ValueError, TypeError, RuntimeError) as e:
            self._defer(e, env_id - self._offset)

    def recv(self, timeout: float | None) -> tuple[tuple | None, tuple[str, list[int]] | None]:
        """``(batch, None)``, or ``(None, (message, global env ids))`` if a send failed since."""
        if self._deferred_error is not None:
            error, self._deferred_error = self._deferred_error, None
            return None, error
        try:
            return self._globalize(self._env.recv(timeout)), None
        except EnvError as e:
            raise self._global_env_error(e) from None

    def close(self) -> None:
        self._env.close()

    # --- helpers ---
    def _defer(self, error: Exception, local_ids: np.ndarray) -> None:
        if self._deferred_error is None:  # the first error is the one that explains the others
            ids = [int(i) + self._offset for i in np.asarray(local_ids).reshape(-1)]
            self._deferred_error = (f"{type(error).__name__}: {error}", ids)

    def _global_env_error(self, error: EnvError) -> EnvError:
        """The same error with global env ids, and the rest of the batch as a step returns it."""
        errors = [(env_id + self._offset, message) for env_id, message in error.errors]
        result = self._globalize(error.result) if error.result is not None else None
        return EnvError(errors, result)

    def _globalize(self, result: tuple) -> tuple:
        if self._offset:
            info = result[4]
            info["env_id"] = info["env_id"] + self._offset
            players = info.get("players")
            if isinstance(players, dict) and "env_id" in players:
                players["env_id"] = players["env_id"] + self._offset
        return result
