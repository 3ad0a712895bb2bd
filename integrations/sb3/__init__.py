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
        batch_size = make_kwargs.pop("batch_size", None)
        if batch_size not in (None, num_envs):
            raise ValueError(f"an SB3 VecEnv steps every env at once: batch_size must equal num_envs ({num_envs})")
        make_kwargs.setdefault("episode_stats", True)
        self.pool = parallel_pool.make(
            task_id, num_envs=num_envs, seed=seed, autoreset_mode="same_step", **make_kwargs
        )
        if self.pool.spec.max_num_players > 1:
            self.pool.close()
            raise ValueError(f"{task_id} is multi-player; an SB3 VecEnv has one row per env")
        self.task_id = task_id
        self._episode_stats: bool = self.pool.config["episode_stats"]
        self._info_keys = [f.key for f in self.pool.spec.info_fields if not f.per_player]
        self._user_attrs: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._waiting = False
        # VecMonitor's "t" is the time since the wrapper was made.
        self._t_start = time.time()
        super().__init__(num_envs, self.pool.observation_space, self.pool.action_space)

    # --- stepping ---
    def reset(self) -> VecEnvObs:
        if any(self._options):
            raise ValueError(f"native envs take no reset options, got {self._options!r}")
        self._finish_pending_step()
        seeds = None
        if any(s is not None for s in self._seeds):
            fresh = np.random.SeedSequence().generate_state(self.num_envs, dtype=np.uint32)
            seeds = [int(s) if s is not None else int(f) for s, f in zip(self._seeds, fresh)]
        obs, info = self.pool.reset(seed=seeds)
        self.reset_infos = [self._row_info(info, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self.pool.send(np.asarray(actions))
        self._waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        self._waiting = False
        obs, reward, terminated, truncated, info = self.pool.recv()
        dones = terminated | truncated
        infos = [self._row_info(info, i) for i in range(self.num_envs)]
        time_limit = truncated & ~terminated
        for i in range(self.num_envs):
            infos[i]["TimeLimit.truncated"] = bool(time_limit[i])
        if dones.any():
            final_obs, final_info = info["final_obs"], info["final_info"]
            episode = info.get("episode")
            ended = info.get("_episode")
            t = round(time.time() - self._t_start, 6)
            for i in np.flatnonzero(dones):
                self.reset_infos[i] = infos[i]
                row = {key: final_info[key][i] for key in self._info_keys if key in final_info}
                row["TimeLimit.truncated"] = bool(time_limit[i])
                row["terminal_observation"] = final_obs[i]
                if ended is not None and ended[i]:
                    row["episode"] = {"r": np.float32(episode["r"][i]), "l": np.int32(episode["l"][i]), "t": t}
                infos[i] = row
        return obs, reward, dones, infos

    def close(self) -> None:
        self.pool.close()

    def _finish_pending_step(self) -> None:
        # SB3: a reset while step_async is in flight cancels that step; the pool must still deliver it.
        if self._waiting:
            self._waiting = False
            self.pool.recv()

    def _row_info(self, info: dict[str, Any], i: int) -> dict[str, Any]:
        return {key: info[key][i] for key in self._info_keys if key in info}

    # --- per-env attributes and methods, answered by the pool ---
    def _env_attr(self, name: str, i: int) -> Any:
        if name in self._user_attrs[i]:
            return self._user_attrs[i][name]
        if name == "render_mode":
            return self.pool.render_mode
        config = self.pool.config
        if name in config:
            return config[name]
        if not name.startswith("_") and hasattr(self.pool, name):
            return getattr(self.pool, name)
        raise AttributeError(f"the native {self.task_id} envs have no attribute {name!r}")

    def _is_fixed(self, name: str) -> bool:
        return name == "render_mode" or name in self.pool.config or hasattr(self.pool, name)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [self._env_attr(attr_name, i) for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if self._is_fixed(attr_name):
            raise AttributeError(
                f"{attr_name!r} is fixed when the native pool is built; pass it to ParallelPoolVecEnv(...) instead"
            )
        for i in self._get_indices(indices):
            self._user_attrs[i][attr_name] = value

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        ids = list(self._get_indices(indices))
        if ids and all(callable(self._user_attrs[i].get(method_name)) for i in ids):
            return [self._user_attrs[i][method_name](*method_args, **method_kwargs) for i in ids]
        if method_name == "get_wrapper_attr":
            return [self._env_attr(method_args[0], i) for i in ids]
        if method_name == "has_wrapper_attr":
            return [_has(self._env_attr, method_args[0], i) for i in ids]
        if method_name == "render":
            if self.pool.render_mode is None:
                return [None for _ in ids]
            return list(self.pool.render(np.asarray(ids, dtype=np.int64)))
        if method_name == "reset":
            return self._reset_some(ids, method_kwargs.get("seed"), method_kwargs.get("options"))
        raise AttributeError(
            f"the native {self.task_id} envs have no method {method_name!r}; env_method supports "
            f"{', '.join(_ENV_METHODS)} and callables stored with set_attr"
        )

    def _reset_some(self, ids: list[int], seed: Any, options: Any) -> list[tuple[Any, dict[str, Any]]]:
        """Resets some envs now (as ``env.reset(seed=seed)`` on each); returns ``(obs, info)`` per env."""
        if options:
            raise ValueError(f"native envs take no reset options, got {options!r}")
        self._finish_pending_step()
        seeds = None
        if seed is not None:
            # Every listed env gets this seed, as calling reset(seed=seed) on each env would.
            seeds = [0] * self.num_envs
            for i in ids:
                seeds[i] = int(seed)
        obs, info = self.pool.reset(env_id=np.asarray(ids, dtype=np.int64), seed=seeds)
        out = []
        for row, i in enumerate(ids):
            row_obs = {k: v[row] for k, v in obs.items()} if isinstance(obs, dict) else obs[row]
            self.reset_infos[i] = self._row_info(info, row)
            out.append((row_obs, self.reset_infos[i]))
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
            return [None for _ in range(self.num_envs)]
        return list(self.pool.render())

    def __repr__(self) -> str:
        return f"ParallelPoolVecEnv({self.task_id!r}, num_envs={self.num_envs})"


def _has(getter: Any, name: str, i: int) -> bool:
    try:
        getter(name, i)
    except AttributeError:
        return False
    return True
