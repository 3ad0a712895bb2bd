"""Stable-Baselines3: ``ParallelPoolVecEnv``, an SB3 ``VecEnv`` over one native pool.

Replacing ``SubprocVecEnv`` is a one-line change::

    # envs = SubprocVecEnv([lambda: Monitor(gym.make("CartPole-v1")) for _ in range(8)])
    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=0)

The pool runs in same-step autoreset mode, which is what SB3 expects: the step that ends an
episode returns the next episode's first observation, with the last one in
``infos[i]["terminal_observation"]``; ``infos[i]["TimeLimit.truncated"]`` is ``truncated and not
terminated``; ``infos[i]["episode"]`` holds ``{"r", "l", "t"}`` exactly as ``VecMonitor`` writes
them (``np.float32`` return, ``np.int32`` length, seconds since this VecEnv was made), counted by
the native pool, so no ``Monitor``/``VecMonitor`` is needed (adding a ``VecMonitor`` still works:
it overwrites them with its own count, as it does over ``Monitor``-wrapped envs).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

import parallel_pool
from parallel_pool.errors import EnvError
from parallel_pool.integrations.common import (
    EnvAttributes,
    check_no_reset_options,
    check_sync_batch_size,
    fill_seeds,
    render_frames,
    require_single_player,
    row_info,
    row_info_keys,
    take_rows,
)

__all__ = ["ParallelPoolVecEnv"]

# Methods env_method can call on a native env (there is no Python env object to look them up on).
_ENV_METHODS = ("get_wrapper_attr", "has_wrapper_attr", "render", "reset")


class ParallelPoolVecEnv(VecEnv):
    """``num_envs`` envs of ``task_id`` as a Stable-Baselines3 ``VecEnv``, stepped by a native pool.

    ``step_async`` sends the whole batch of actions to the pool and returns at once; ``step_wait``
    receives the batch. ``make_kwargs`` go to ``parallel_pool.make`` (``num_threads``,
    ``max_episode_steps``, the task's own config, ...); ``episode_stats=False`` drops
    ``infos[i]["episode"]``. ``autoreset_mode`` is always ``"same_step"``.

    Over a native pool there are no per-env Python objects, so the per-env calls answer as follows:

    - ``get_attr(name)``: an attribute set with ``set_attr``; else the pool's config value
      (``max_episode_steps``, the task's kwargs, ...); else the pool's attribute
      (``observation_space``, ``action_space``, ``metadata``, ``spec``); ``render_mode`` is the
      pool's (``"rgb_array"`` for tasks that render, such as Atari; else None).
    - ``set_attr(name, value)``: stores a per-env Python attribute that ``get_attr`` returns and that
      callbacks may use; the native env never reads it. Config and pool attributes are fixed when
      the pool is built: setting one is an ``AttributeError``.
    - ``env_method``: ``reset`` (resets those envs now; returns ``(obs, info)`` per env),
      ``render`` (each env's RGB frame; None for tasks that do not render),
      ``get_wrapper_attr``/``has_wrapper_attr``,
      or a callable stored with ``set_attr``.
    - ``env_is_wrapped(cls)``: True for ``Monitor`` and Gymnasium's ``RecordEpisodeStatistics``
      when episode statistics are on (the pool records them as those do) and for ``TimeLimit``
      when the task has a time limit; False otherwise.
    - ``seed(seed)``: env ``i`` gets ``seed + i`` at the next ``reset()`` (as SB3's VecEnvs do); the
      native pool re-seeds there.
    - ``render()`` / ``get_images()``: SB3's, over the pool's frames (``render("rgb_array")`` tiles
      them); for a task that does not render it warns and returns None, as SB3 does for envs made
      without a ``render_mode``.

    Faults: an exception inside an env is raised from ``step``/``step_wait`` (and ``reset``) as
    ``parallel_pool.EnvError`` naming the env ids and messages; its ``result`` is the whole batch in
    SB3's form (``(obs, rewards, dones, infos)``; ``obs`` from ``reset``), where each failed env's
    row holds zeros, reward 0 and ``done=False``. A failed env starts a new episode on its next
    step (first observation, reward 0, not done: the failed episode has no ``done`` of its own).
    NaN in an env's observation or reward passes through unchanged (SB3's ``VecCheckNan`` catches
    it), and makes that episode's ``infos[i]["episode"]["r"]`` NaN.

    Example:
        >>> import numpy as np
        >>> from parallel_pool.integrations.sb3 import ParallelPoolVecEnv
        >>> envs = ParallelPoolVecEnv("CartPole-v1", num_envs=4, seed=0)
        >>> obs = envs.reset()
        >>> obs.shape
        (4, 4)
        >>> obs, rewards, dones, infos = envs.step(np.zeros(4, dtype=np.int64))
        >>> infos[0]["TimeLimit.truncated"]
        False
        >>> envs.close()
    """

    def __init__(self, task_id: str, num_envs: int = 1, seed: Any = None, **make_kwargs: Any) -> None:
        mode = make_kwargs.pop("autoreset_mode", "same_step")
        if mode not in ("same_step", gym.vector.AutoresetMode.SAME_STEP):
            raise ValueError(f"SB3 VecEnvs reset in the step that ends an episode: autoreset_mode must be "
                             f"'same_step', got {mode!r}")
        check_sync_batch_size(
            make_kwargs, num_envs, f"an SB3 VecEnv steps every env at once: batch_size must equal num_envs ({num_envs})"
        )
        make_kwargs.setdefault("episode_stats", True)
        self.pool = parallel_pool.make_gymnasium(
            task_id, num_envs=num_envs, seed=seed, autoreset_mode="same_step", **make_kwargs
        )
        require_single_player(self.pool, "an SB3 VecEnv")
        self.task_id = task_id
        self._episode_stats: bool = self.pool.config["episode_stats"]
        self._info_keys = row_info_keys(self.pool.spec)
        self._attrs = EnvAttributes(self.pool, "ParallelPoolVecEnv")
        self._waiting = False
        # VecMonitor's "t" is the time since the wrapper was made.
        self._t_start = time.time()
        super().__init__(num_envs, self.pool.observation_space, self.pool.action_space)

    # --- stepping ---
    def reset(self) -> VecEnvObs:
        check_no_reset_options(self._options)
        self._finish_pending_step()
        try:
            obs, info = self.pool.reset(seed=fill_seeds(self._seeds))
            error = None
        except EnvError as e:  # the rest of the batch is in e.result; finish the reset's bookkeeping
            (obs, info), error = e.result, e
        self.reset_infos = [row_info(info, self._info_keys, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        if error is not None:
            raise EnvError(error.errors, obs) from None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self.pool.send(np.asarray(actions))
        self._waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        self._waiting = False
        try:
            batch = self.pool.recv()
        except EnvError as e:
            # The same error with the batch in SB3's form: the failed envs' rows are the pool's
            # (zeros, not done) and each starts a new episode on its next step.
            raise EnvError(e.errors, self._step_return(*e.result)) from None
        return self._step_return(*batch)

    def _step_return(self, obs: Any, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                     info: dict[str, Any]) -> VecEnvStepReturn:
        dones = terminated | truncated
        infos = [row_info(info, self._info_keys, i) for i in range(self.num_envs)]
        time_limit = truncated & ~terminated
        for i in range(self.num_envs):
            infos[i]["TimeLimit.truncated"] = bool(time_limit[i])
        if dones.any():
            final_obs, final_info = info["final_obs"], info["final_info"]
            episode = info.get("episode")
            ended = info.get("_episode")
            t = round(time.time() - self._t_start, 6)
            for k in np.flatnonzero(dones):
                self.reset_infos[k] = infos[k]
                row = row_info(final_info, self._info_keys, k)
                row["TimeLimit.truncated"] = bool(time_limit[k])
                row["terminal_observation"] = final_obs[k]
                if ended is not None and episode is not None and ended[k]:
                    row["episode"] = {"r": np.float32(episode["r"][k]), "l": np.int32(episode["l"][k]), "t": t}
                infos[k] = row
        return obs, reward, dones, infos

    def close(self) -> None:
        self.pool.close()

    def _finish_pending_step(self) -> None:
        # SB3: a reset while step_async is in flight cancels that step; the pool must still deliver it.
        if self._waiting:
            self._waiting = False
            self.pool.recv()

    # --- per-env attributes and methods, answered by the pool ---
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [self._attrs.get(attr_name, i) for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._attrs.set(attr_name, value, self._get_indices(indices))

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        ids = list(self._get_indices(indices))
        stored = [self._attrs.stored(method_name, i) for i in ids]
        if ids and all(callable(method) for method in stored):
            return [method(*method_args, **method_kwargs) for method in stored]
        if method_name == "get_wrapper_attr":
            return [self._attrs.get(method_args[0], i) for i in ids]
        if method_name == "has_wrapper_attr":
            return [self._attrs.has(method_args[0], i) for i in ids]
        if method_name == "render":
            return render_frames(self.pool, ids)
        if method_name == "reset":
            return self._reset_some(ids, method_kwargs.get("seed"), method_kwargs.get("options"))
        raise AttributeError(
            f"the native {self.task_id} envs have no method {method_name!r}; env_method supports "
            f"{', '.join(_ENV_METHODS)} and callables stored with set_attr"
        )

    def _reset_some(self, ids: list[int], seed: Any, options: Any) -> list[tuple[Any, dict[str, Any]]]:
        """Resets some envs now (as ``env.reset(seed=seed)`` on each); returns ``(obs, info)`` per env."""
        check_no_reset_options(options)
        self._finish_pending_step()
        seeds = None
        if seed is not None:
            # Every listed env gets this seed, as calling reset(seed=seed) on each env would.
            seeds = [0] * self.num_envs
            for i in ids:
                seeds[i] = int(seed)
        try:
            obs, info = self.pool.reset(env_id=np.asarray(ids, dtype=np.int64), seed=seeds)
            error = None
        except EnvError as e:
            (obs, info), error = e.result, e
        out = []
        for row, i in enumerate(ids):
            self.reset_infos[i] = row_info(info, self._info_keys, row)
            out.append((take_rows(obs, row), self.reset_infos[i]))
        if error is not None:
            raise EnvError(error.errors, out) from None
        return out

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        from stable_baselines3.common.monitor import Monitor

        virtual: list[type] = []
        if self._episode_stats:
            virtual += [Monitor, gym.wrappers.RecordEpisodeStatistics]
        if self.pool.spec.max_episode_steps > 0:
            virtual.append(gym.wrappers.TimeLimit)
        wrapped = any(issubclass(w, wrapper_class) for w in virtual)
        return [wrapped for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.pool.render_mode is None:
            warnings.warn(f"{self.task_id} does not render", stacklevel=2)
        return render_frames(self.pool)

    def __repr__(self) -> str:
        return f"ParallelPoolVecEnv({self.task_id!r}, num_envs={self.num_envs})"
