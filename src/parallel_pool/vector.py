"""A strict ``gymnasium.vector.VectorEnv`` over a native pool, for ``gymnasium.make_vec``.

Batched spaces, ``metadata["autoreset_mode"]``, Gymnasium's ``reset(seed, options)`` including
``reset_mask``: code written for ``SyncVectorEnv``/``AsyncVectorEnv`` runs on it unchanged.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from gymnasium.error import AlreadyPendingCallError, ClosedEnvironmentError, NoAsyncCallError
from gymnasium.error import Error as GymnasiumError
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from parallel_pool.errors import EnvError
from parallel_pool.gymnasium_env import GymnasiumEnv
from parallel_pool.options import gymnasium_autoreset_mode
from parallel_pool.python_envs import PythonEnvSource


class WaitTimeout(TimeoutError, multiprocessing.TimeoutError):
    """``reset_wait``/``step_wait`` ran out of time: the builtin ``TimeoutError`` our pools raise, and
    the ``multiprocessing.TimeoutError`` that code written for ``AsyncVectorEnv`` catches."""


# The info keys the engine adds to every row (EnvPool's): the strict view leaves them out unless
# asked for (engine_info=True), so that its info is the reference env's own.
_ENGINE_ROW_KEYS = ("env_id", "elapsed_step")


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

    # None until __init__ has made the pool: the finalizer of a view whose __init__ raised closes nothing.
    _env: GymnasiumEnv | None = None

    def __init__(self, task_id: str | PythonEnvSource, num_envs: int = 1, *, engine_info: bool = False,
                 **kwargs: Any) -> None:
        """``task_id``: a task id, or a ``PythonEnvSource`` (``from_env_fns`` makes one). ``engine_info``:
        also return the engine's own info keys, ``env_id`` and ``elapsed_step``; other kwargs are
        ``parallel_pool.make``'s."""
        if "batch_size" in kwargs and kwargs["batch_size"] not in (None, num_envs):
            raise ValueError("a VectorEnv steps every env at once: batch_size must equal num_envs")
        if isinstance(task_id, PythonEnvSource):
            kwargs.setdefault("num_envs", len(task_id.env_fns or ()) or num_envs)
            env = GymnasiumEnv(task_id, **kwargs)
        else:
            env = GymnasiumEnv(task_id, num_envs=num_envs, **kwargs)
        if env.spec.max_num_players > 1:
            env.close()
            raise ValueError(f"{task_id} is multi-player; use parallel_pool.make() for per-player rows")
        self._env = env
        self.num_envs = env.num_envs
        self.single_observation_space = env.observation_space
        self.single_action_space = env.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = env.render_mode
        # The info keys that are not the reference env's (dropped unless engine_info), those its
        # reset's info lacks, and flags it has only where they are set (native/core/spec.h, InfoPresence).
        fields = env.spec.info_fields
        self._extra_keys = () if engine_info else (*_ENGINE_ROW_KEYS, *(f.key for f in fields if f.presence == "extra"))
        self._step_keys = tuple(f.key for f in fields if f.presence == "step")
        self._flag_keys = tuple(f.key for f in fields if f.presence == "where_true")
        self.metadata = self._metadata()
        self.spec = None
        self._last_obs: Any = None

    @classmethod
    def from_env_fns(cls, env_fns: Sequence[Callable[[], Any]], **kwargs: Any) -> ParallelPoolVectorEnv:
        """The view over a pool of Python envs, one per factory (as ``AsyncVectorEnv(env_fns)``);
        kwargs as ``parallel_pool.make_python``'s."""
        return cls(PythonEnvSource(env_fns=list(env_fns)), **kwargs)

    def _metadata(self) -> dict[str, Any]:
        """Gymnasium's vector metadata: the env's own (a Python env's ``metadata``, or a native
        task's render modes and ``render_fps``) with the pool's ``autoreset_mode``."""
        env = self.pool
        if env.workers is not None:
            metadata = dict(env.get_attr("metadata")[0])
        else:
            metadata = {"render_modes": [] if self.render_mode is None else [self.render_mode]}
            if env.spec.render_fps is not None:
                metadata["render_fps"] = env.spec.render_fps
        metadata["autoreset_mode"] = gymnasium_autoreset_mode(env.autoreset_mode)
        return metadata

    @property
    def pool(self) -> GymnasiumEnv:
        """The native pool behind this view."""
        assert self._env is not None  # set by __init__ before anything can call this
        return self._env

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]  # Sync/AsyncVectorEnv's form
        """Each env's seed, as ``SyncVectorEnv.np_random_seed``: the one it was last given."""
        return self.pool.np_random_seed

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls method ``name`` of every env (or returns attribute ``name``), in env order, as
        ``SyncVectorEnv.call``; ``BasePoolEnv.call`` says what a native env has."""
        return self.pool.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every env, in env order."""
        return self.pool.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Sets attribute ``name`` of every env: one value per env (a list or tuple) or one for all."""
        self.pool.set_attr(name, values)

    def _strip(self, info: dict[str, Any], reset: bool = False) -> dict[str, Any]:
        """The info in Gymnasium's vector form, with the reference env's keys only: no extra keys
        (unless ``engine_info``), no step-only keys after a reset, a flag only in rows where it is
        set, and each key's ``_key`` mask (a native env's fields are in every row; a Python env's keys
        that some rows lack come with their masks already)."""
        elapsed = info.get("elapsed_step")
        for key in self._extra_keys:
            info.pop(key, None)
        if reset:
            for key in self._step_keys:
                info.pop(key, None)
        elif self._step_keys and elapsed is not None and (elapsed == 0).any():
            # Rows an autoreset reset in this step have the reset's info, as Gymnasium's vector envs give it.
            reset_rows = elapsed == 0
            for key in self._step_keys:
                if key in info:
                    if reset_rows.all():
                        del info[key]
                    else:
                        info[key] = np.where(_rows_mask(reset_rows, info[key]), 0, info[key])
                        info["_" + key] = ~reset_rows
        for key in self._flag_keys:
            if key in info and "_" + key not in info:
                flags = np.asarray(info.pop(key), dtype=bool)
                if flags.any():
                    info[key], info["_" + key] = flags, flags.copy()
        for key in [k for k in info if not k.startswith("_") and "_" + k not in info]:
            rows = self.num_envs if isinstance(info[key], dict) else len(info[key])
            info["_" + key] = np.ones(rows, dtype=bool)
        if "final_info" in info:
            final = info["final_info"]
            for key in self._extra_keys:
                final.pop(key, None)
                final.pop("_" + key, None)
        return info

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self._check_running("reset")
        options = dict(options) if options else None
        if options and "reset_mask" in options:
            mask = options["reset_mask"]
            try:
                obs, info = self.pool.reset(seed=seed, options=options)
                error = None
            except EnvError as e:
                (obs, info), error = e.result, e
            merged = _overlay_rows(self._last_obs, obs, np.flatnonzero(mask), self.num_envs)
            self._last_obs = merged
            if error is not None:
                raise EnvError(error.errors, (merged, self._strip(info, reset=True))) from None
            return merged, self._strip(info, reset=True)
        try:
            obs, info = self.pool.reset(seed=seed, options=options)
        except EnvError as e:
            self._last_obs = e.result[0]
            e.result = (e.result[0], self._strip(e.result[1], reset=True))
            raise
        self._last_obs = obs
        return obs, self._strip(info, reset=True)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        self._check_running("step")
        try:
            result = self.pool.step(actions)
        except EnvError as e:
            self._last_obs = e.result[0]
            e.result = (*e.result[:4], self._strip(e.result[4]))
            raise
        self._last_obs = result[0]
        self._strip(result[4])
        return result

    # --- AsyncVectorEnv's split calls: the pool's send and recv ---
    _pending: str | None = None  # "reset" or "step" while a split call waits for its *_wait
    _pending_reset: tuple[Any, Any] | None = None  # a masked reset's (seed, options), run by reset_wait

    def reset_async(self, seed: Any = None, options: dict[str, Any] | None = None) -> None:
        """Starts a reset of every env (``AsyncVectorEnv.reset_async``); ``reset_wait`` returns it.
        A reset with ``options["reset_mask"]`` runs in ``reset_wait``."""
        self._check_running("reset_async")
        if options and "reset_mask" in options:
            self._pending_reset = (seed, options)
        else:
            self.pool.async_reset(seed=seed, options=options)
        self._pending = "reset"

    def reset_wait(self, timeout: float | None = None, seed: Any = None,
                   options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """The batch ``reset_async`` started; ``WaitTimeout`` after ``timeout`` seconds."""
        self._check_wait("reset")
        self._pending = None
        if self._pending_reset is not None:
            (seed, options), self._pending_reset = self._pending_reset, None
            return self.reset(seed=seed, options=options)
        obs, _, _, _, info = self._recv(timeout, "reset_wait")
        self._last_obs = obs
        return obs, self._strip(info, reset=True)

    def step_async(self, actions: Any) -> None:
        """Sends every env its action (``AsyncVectorEnv.step_async``); ``step_wait`` returns the batch."""
        self._check_running("step_async")
        self.pool.send(actions)
        self._pending = "step"

    def step_wait(self, timeout: float | None = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The batch ``step_async`` started; ``WaitTimeout`` after ``timeout`` seconds."""
        self._check_wait("step")
        self._pending = None
        result = self._recv(timeout, "step_wait")
        self._last_obs = result[0]
        self._strip(result[4])
        return result

    def _recv(self, timeout: float | None, what: str) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        try:
            return self.pool.recv(timeout=timeout)
        except TimeoutError:
            raise WaitTimeout(f"The call to `{what}` has timed out after {timeout} second(s).") from None
        except EnvError as e:
            self._last_obs = e.result[0]
            e.result = (*e.result[:4], self._strip(e.result[4], reset=what == "reset_wait"))
            raise

    def _check_open(self) -> None:
        if self.closed or self._env is None or self._env.closed:
            raise ClosedEnvironmentError(f"Trying to operate on `{type(self).__name__}`, after a call to `close()`.")

    def _check_running(self, what: str) -> None:
        self._check_open()
        if self._pending is not None:
            raise AlreadyPendingCallError(
                f"Calling `{what}` while waiting for a pending call to `{self._pending}` to complete", self._pending
            )

    def _check_wait(self, name: str) -> None:
        self._check_open()
        if self._pending != name:
            raise NoAsyncCallError(f"Calling `{name}_wait` without any prior call to `{name}_async`.", name)

    def render(self) -> tuple[Any, ...] | None:
        """Every env's current RGB frame (Gymnasium's vector convention: a tuple, one per env)."""
        if self.render_mode is None:
            return None
        return tuple(self.pool.render(np.arange(self.num_envs)))

    def close_extras(self, **kwargs: Any) -> None:
        if self._env is not None:
            self._env.close()

    def __repr__(self) -> str:
        task = "?" if self._env is None else self._env.task_id
        return f"ParallelPoolVectorEnv({task}, num_envs={self.num_envs})"


def _rows_mask(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A per-row mask shaped to broadcast over ``values`` (rows first)."""
    return rows.reshape(rows.shape + (1,) * (np.ndim(values) - 1))


def _overlay_rows(previous: Any, rows: Any, ids: np.ndarray, num_envs: int) -> Any:
    """A full batch: the rows just reset at ``ids``, the previous observation elsewhere."""
    if isinstance(rows, dict):
        prev = previous if previous is not None else {k: None for k in rows}
        return {k: _overlay_rows(prev[k], rows[k], ids, num_envs) for k in rows}
    if isinstance(rows, tuple):
        prev_items = previous if previous is not None else (None,) * len(rows)
        return tuple(_overlay_rows(p, r, ids, num_envs) for p, r in zip(prev_items, rows))
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
