"""Stable-Baselines3: ``ParallelPoolVecEnv``, an SB3 ``VecEnv`` over one native pool.

Replacing ``SubprocVecEnv`` is a one-line change::

    # envs = SubprocVecEnv([lambda: Monitor(gym.make("CartPole-v1")) for _ in range(8)])
    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=0)
    # or, for any Python envs, the same factories in worker processes:
    envs = ParallelPoolVecEnv([lambda: Monitor(MyEnv()) for _ in range(8)])

The pool runs in same-step autoreset mode, which is what SB3 expects: the step that ends an
episode returns the next episode's first observation, with the last one in
``infos[i]["terminal_observation"]``; ``infos[i]["TimeLimit.truncated"]`` is ``truncated and not
terminated``; ``infos[i]["episode"]`` holds ``{"r", "l", "t"}`` exactly as ``VecMonitor`` writes
them (``np.float32`` return, ``np.int32`` length, seconds since this VecEnv was made), counted by
the native pool, so no ``Monitor``/``VecMonitor`` is needed (adding a ``VecMonitor`` still works:
it overwrites them with its own count, as it does over ``Monitor``-wrapped envs).
"""

from __future__ import annotations

import multiprocessing
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import concatenate, create_empty_array
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

__all__ = ["EnvProxy", "ParallelPoolVecEnv"]

# Methods env_method can call on a native env (there is no Python env object to look them up on).
_ENV_METHODS = ("get_wrapper_attr", "has_wrapper_attr", "render", "reset")


class ParallelPoolVecEnv(VecEnv):
    """``num_envs`` envs of ``task_id`` as a Stable-Baselines3 ``VecEnv``, stepped by a native pool.

    ``step_async`` sends the whole batch of actions to the pool and returns at once; ``step_wait``
    receives the batch. ``make_kwargs`` go to ``parallel_pool.make`` (``num_threads``,
    ``max_episode_steps``, the task's own config, ...); ``episode_stats=False`` drops
    ``infos[i]["episode"]``. ``autoreset_mode`` is always ``"same_step"``.

    ``task_id`` may also be a list of env factories, as ``SubprocVecEnv`` takes them (a pool of
    Python envs, ``parallel_pool.make_python``; ``start_method`` is accepted, the workers always
    spawn). Over Python envs (factories or ``"gymnasium:<id>"``) the per-env calls are
    ``SubprocVecEnv``'s, run in the workers between steps: ``env_method`` (but ``reset``, which goes
    through the pool), ``get_attr``, ``set_attr`` (``setattr`` on the outermost wrapper),
    ``env_is_wrapped``, ``get_images`` (each env's ``render()``); ``set_options`` reaches the next
    reset; a list of one Dict or Tuple action per env is batched for the pool.

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

    def __init__(self, task_id: str | Sequence[Callable[[], gym.Env]], num_envs: int | None = None, seed: Any = None,
                 start_method: str | None = None, **make_kwargs: Any) -> None:
        # SubprocVecEnv's start_method: a valid name is accepted, but the workers always start with
        # "spawn" (the pool's threads make fork unsafe); an unknown name fails as it does there.
        if start_method is not None:
            multiprocessing.get_context(start_method)
        mode = make_kwargs.pop("autoreset_mode", "same_step")
        if mode not in ("same_step", gym.vector.AutoresetMode.SAME_STEP):
            raise ValueError(f"SB3 VecEnvs reset in the step that ends an episode: autoreset_mode must be "
                             f"'same_step', got {mode!r}")
        make_kwargs.setdefault("episode_stats", True)
        if isinstance(task_id, str):
            num_envs = 1 if num_envs is None else num_envs
            check_sync_batch_size(make_kwargs, num_envs, f"an SB3 VecEnv steps every env at once: batch_size must "
                                  f"equal num_envs ({num_envs})")
            self.pool = parallel_pool.make_gymnasium(
                task_id, num_envs=num_envs, seed=seed, autoreset_mode="same_step", **make_kwargs
            )
            self.task_id = task_id
        else:  # env factories, as SubprocVecEnv takes them: a pool of Python envs
            env_fns = list(task_id)
            if num_envs not in (None, len(env_fns)):
                raise ValueError(f"num_envs ({num_envs}) must equal the number of env factories ({len(env_fns)})")
            num_envs = len(env_fns)
            check_sync_batch_size(make_kwargs, num_envs, f"an SB3 VecEnv steps every env at once: batch_size must "
                                  f"equal num_envs ({num_envs})")
            self.pool = parallel_pool.make_python(  # type: ignore[assignment]  # env_type="gymnasium"
                env_fns, seed=seed, autoreset_mode="same_step", **make_kwargs)
            self.task_id = self.pool.task_id
        require_single_player(self.pool, "an SB3 VecEnv")
        # The Python envs themselves (make_python, "gymnasium:<id>"), which answer the per-env calls.
        self._workers = self.pool.workers
        self._episode_stats: bool = self.pool.config["episode_stats"]
        self._info_keys = row_info_keys(self.pool.spec)
        self._attrs = EnvAttributes(self.pool, "ParallelPoolVecEnv")
        self._waiting = False
        # An integer Box action space: SB3 may hand float actions (SubprocVecEnv gives the env what it
        # gets), which the pool refuses for an integer field: they are cast to the space's dtype.
        space = self.pool.action_space
        self._integer_box = np.dtype(space.dtype) if isinstance(space, gym.spaces.Box) and np.dtype(
            space.dtype).kind in "iub" else None
        # VecMonitor's "t" is the time since the wrapper was made.
        self._t_start = time.time()
        super().__init__(num_envs, self.pool.observation_space, self.pool.action_space)

    # --- stepping ---
    def reset(self) -> VecEnvObs:
        if self._workers is None:
            check_no_reset_options(self._options)
        self._finish_pending_step()
        if self._workers is not None and any(self._options):
            # SubprocVecEnv's: env i's reset gets options=self._options[i] when it is not empty.
            self.pool.set_reset_options([o or None for o in self._options])
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
        self.pool.send(_batch_actions(self.action_space, actions, self._integer_box))
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
                row = row_info(final_info, self._info_keys, int(k))
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

    # --- per-env attributes and methods: the Python envs' own, or answered by the native pool ---
    def _run(self, op: str, indices: VecEnvIndices, args: Any, what: str) -> list[Any]:
        """``op`` on each Python env of ``indices`` in its worker (``WorkerGroup.run``); ``args``
        is one argument tuple for every env, or a function of the env id giving it."""
        workers = self.pool._require_workers(what)  # a closed pool: PoolClosedError
        ids = self.pool._env_ids(list(self._get_indices(indices)))
        return workers.run(op, [(i, args(i) if callable(args) else args) for i in ids], what)

    @property
    def envs(self) -> list[EnvProxy]:
        """DummyVecEnv's ``envs``: one stand-in per env, whose attributes read and write that env's
        (``get_attr``/``set_attr``) and whose methods call it (``env_method``); the env objects
        themselves live in the worker processes (or are C++ envs)."""
        return [EnvProxy(self, i) for i in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if self._workers is not None:  # SubprocVecEnv's: env.get_wrapper_attr(name)
            return self._run("get", indices, (attr_name,), f"get_attr({attr_name!r})")
        return [self._attrs.get(attr_name, i) for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if self._workers is not None:  # SubprocVecEnv's: setattr(env, name, value) on the outermost wrapper
            self._run("setattr", indices, (attr_name, value), f"set_attr({attr_name!r})")
            return
        self._attrs.set(attr_name, value, self._get_indices(indices))

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        if self._workers is not None and method_name != "reset":
            # SubprocVecEnv's: env.get_wrapper_attr(name)(*args, **kwargs). A reset goes through the
            # pool (below), which must know the env started a new episode.
            return self._run("method", indices, (method_name, method_args, method_kwargs),
                             f"env_method({method_name!r})")
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
        """Resets some envs now (as ``env.reset(seed=seed, options=options)`` on each); returns
        ``(obs, info)`` per env."""
        if self._workers is None:
            check_no_reset_options(options)
        self._finish_pending_step()
        ids = self.pool._env_ids(ids)
        if options:
            self.pool.set_reset_options([options] * len(ids), ids)
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
        if self._workers is not None:  # SB3's is_wrapped, on each Python env
            return self._run("is_wrapped", indices, (wrapper_class,), f"env_is_wrapped({wrapper_class.__name__})")
        from stable_baselines3.common.monitor import Monitor

        virtual: list[type] = []
        if self._episode_stats:
            virtual += [Monitor, gym.wrappers.RecordEpisodeStatistics]
        if self.pool.spec.max_episode_steps > 0:
            virtual.append(gym.wrappers.TimeLimit)
        wrapped = any(issubclass(w, wrapper_class) for w in virtual)
        return [wrapped for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self._workers is not None:
            # SubprocVecEnv's: each env's own render() (any frame, even before a reset), or None
            # per env with a warning when the envs do not render rgb_array frames.
            if self.render_mode != "rgb_array":
                warnings.warn(f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` "
                              "to obtain images.", stacklevel=2)
                return [None] * self.num_envs
            return self._run("method", None, ("render", (), {}), "get_images()")
        if self.pool.render_mode is None:
            warnings.warn(f"{self.task_id} does not render", stacklevel=2)
        return render_frames(self.pool)

    def __repr__(self) -> str:
        return f"ParallelPoolVecEnv({self.task_id!r}, num_envs={self.num_envs})"


def _batch_actions(space: gym.Space, actions: Any, integer_box: np.dtype | None) -> Any:
    """SB3's actions as the pool takes them: a list (or object array) of one Dict or Tuple action
    per env, as SB3's VecEnvs step each env with ``actions[i]``, is batched as Gymnasium batches
    the space; an array or an already batched dict/tuple goes as it is, but float actions of an
    integer Box space (``integer_box``), which are cast to it."""
    if isinstance(space, (gym.spaces.Dict, gym.spaces.Tuple)):
        if isinstance(actions, (list, np.ndarray)) and len(actions) and isinstance(actions[0], (dict, tuple)):
            items = list(actions)
            return concatenate(space, items, create_empty_array(space, len(items)))
        return actions
    actions = np.asarray(actions)
    if integer_box is not None and actions.dtype.kind == "f":
        actions = actions.astype(integer_box)
    return actions


class EnvProxy:
    """Env ``index`` of a ``ParallelPoolVecEnv``, as ``DummyVecEnv.envs[index]`` is used: attribute
    reads (``get_attr``), writes (``set_attr``) and method calls (``env_method``) on that env."""

    def __init__(self, vec_env: ParallelPoolVecEnv, index: int) -> None:
        object.__setattr__(self, "_vec_env", vec_env)
        object.__setattr__(self, "_index", index)

    def __getattr__(self, name: str) -> Any:
        value = self._vec_env.get_attr(name, indices=[self._index])[0]
        if not callable(value):
            return value
        # A method: call it on the env itself, not on a copy that crossed from the worker.
        return lambda *args, **kwargs: self._vec_env.env_method(name, *args, indices=[self._index], **kwargs)[0]

    def __setattr__(self, name: str, value: Any) -> None:
        self._vec_env.set_attr(name, value, indices=[self._index])

    def __repr__(self) -> str:
        return f"EnvProxy(env {self._index} of {self._vec_env!r})"
