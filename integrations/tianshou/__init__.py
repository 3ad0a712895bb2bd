"""Tianshou 2.x: a ``BaseVectorEnv`` over one native pool, and an ``EnvFactory`` for the high-level API.

``TianshouVectorEnv("CartPole-v1", num_envs=8)`` replaces ``DummyVectorEnv``/``SubprocVectorEnv``
in a ``Collector``; with ``wait_num < num_envs`` it is asynchronous (an ``AsyncCollector`` drives
it) and maps Tianshou's ``step(action, id)`` to the pool's ``send(action, env_id)``/``recv()``.
``ParallelPoolEnvFactory("CartPole-v1")`` gives the high-level API (``PPOExperimentBuilder`` and
friends) training and test envs of this kind.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import numpy as np
from tianshou.env import BaseVectorEnv, DummyVectorEnv
from tianshou.highlevel.env import EnvFactory, EnvMode, VectorEnvType

import parallel_pool
from parallel_pool.errors import EnvError
from parallel_pool.integrations.common import (
    EnvAttributes,
    check_no_reset_options,
    fill_seeds,
    reject_kwargs,
    render_frames,
    require_single_player,
    row_info,
    row_info_keys,
    take_rows,
)

__all__ = ["ParallelPoolEnvFactory", "PoolSingleEnv", "TianshouVectorEnv"]


class TianshouVectorEnv(BaseVectorEnv):
    """``num_envs`` envs of ``task_id`` as a Tianshou vector env, stepped by a native pool.

    Tianshou resets an env itself after its episode ends (``reset(env_id=...)``). The pool runs in
    same-step autoreset mode: the step that ends an episode returns its last observation, and the
    env's next episode has already started natively, so that ``reset`` returns the stored first
    observation without another round trip. ``reset()`` of every env, or one with a ``seed``, is a
    real reset (an int seed gives env ``i`` the seed ``seed + i``, as Gymnasium's vector envs do).

    Sync (``wait_num`` None or ``num_envs``): ``step(action, id)`` steps the envs in ``id``. When
    ``id`` is a strict subset (Tianshou's ``Collector`` drops surplus envs near the end of an
    ``n_episode`` collect), the pool still steps every env: the others get a fixed filler action and
    must be reset before they are stepped again (the ``Collector`` does so; stepping one earlier is
    a ``ValueError``).

    Async (``wait_num < num_envs``): ``step(action, id)`` sends the actions of the envs in ``id``
    and returns the first ``wait_num`` envs to finish, ``info[k]["env_id"]`` saying which;
    ``step(None)`` only waits. ``num_envs`` must be a multiple of ``wait_num`` (the pool returns
    exactly ``wait_num`` rows per ``recv``); ``reset(id)`` resets envs that are not in flight
    (received, not yet stepped again) at once, the others' steps staying in flight. ``timeout`` is not supported.

    ``seed(seed)`` seeds the action-space samplers and re-seeds the envs (with a reset), as
    Tianshou's ``DummyEnvWorker`` does; ``seed=`` here and ``reset(seed=...)`` seed the envs too.
    ``render()`` returns each env's RGB frame (None per env for tasks that do not render).
    ``make_kwargs`` go to ``parallel_pool.make``.

    Faults: an exception inside an env is raised from ``step`` (or ``reset``/``seed``) as
    ``parallel_pool.EnvError`` naming the env ids and messages, with ``result`` the call's return
    value in Tianshou's form (the failed envs' rows hold zeros, reward 0, not done). The batch is
    received all the same: in async mode its envs, the failed ones too, are ready to be stepped
    again, and a reset of every env receives every batch before it raises. A failed env starts a
    new episode on its next step. NaN in an observation or reward passes through unchanged.

    Example:
        >>> import numpy as np
        >>> from parallel_pool.integrations.tianshou import TianshouVectorEnv
        >>> envs = TianshouVectorEnv("CartPole-v1", num_envs=4, seed=0)
        >>> obs, info = envs.reset()
        >>> obs.shape, info[2]["env_id"]
        ((4, 4), 2)
        >>> obs, rew, terminated, truncated, info = envs.step(np.zeros(4, dtype=np.int64))
        >>> envs.close()
    """

    # BaseVectorEnv.__init__ builds one worker per env; a native pool has none, so it is not called.
    def __init__(
        self,
        task_id: str,
        num_envs: int = 1,
        wait_num: int | None = None,
        timeout: float | None = None,
        seed: Any = None,
        **make_kwargs: Any,
    ) -> None:
        if timeout is not None:
            raise ValueError("timeout is not supported: the native pool returns exactly wait_num envs per step")
        reject_kwargs(make_kwargs, ("autoreset_mode", "batch_size"),
                      "{key} is set by TianshouVectorEnv (autoreset same_step, batch_size=wait_num)")
        self.env_num = num_envs
        self.wait_num = wait_num or num_envs
        if not 1 <= self.wait_num <= num_envs:
            raise ValueError(f"wait_num should be in [1, {num_envs}], but got {wait_num}")
        self.timeout = None
        self.is_async = self.wait_num != num_envs
        if self.is_async and num_envs % self.wait_num:
            raise ValueError(
                f"num_envs ({num_envs}) must be a multiple of wait_num ({self.wait_num}): each native recv "
                "returns exactly wait_num envs"
            )
        self.pool = parallel_pool.make_gymnasium(
            task_id, num_envs=num_envs, batch_size=self.wait_num, seed=seed, autoreset_mode="same_step", **make_kwargs
        )
        require_single_player(self.pool, "a Tianshou vector env")
        self.task_id = task_id
        self.workers: list[Any] = []
        self.waiting_id: list[int] = []
        self.ready_id = list(range(num_envs))
        self.is_closed = False
        # The attributes whose per-env answer is not the pool's: each env has its own action space
        # (Tianshou seeds each env's sampler), no render_mode, and Gymnasium's default reward_range.
        self._action_spaces = [copy.deepcopy(self.pool.action_space) for _ in range(num_envs)]
        self._attrs = EnvAttributes(self.pool, "TianshouVectorEnv", {
            "action_space": lambda j: self._action_spaces[j],
            "render_mode": lambda j: None,
            "reward_range": lambda j: (-float("inf"), float("inf")),
        })
        self._info_keys = row_info_keys(self.pool.spec)
        self._filler_row = _filler_action(self.pool.action_space)
        # Envs whose next episode has started natively: env id -> (first obs, info).
        self._started: dict[int, tuple[Any, dict[str, Any]]] = {}
        # Envs stepped with a filler action (sync subset steps): they need a reset.
        self._stale: set[int] = set()

    # --- attributes ---
    def get_env_attr(self, key: str, id: int | list[int] | np.ndarray | None = None) -> list[Any]:
        self._assert_is_not_closed()
        return [self._attrs.get(key, int(j)) for j in self._wrap_id(id)]

    def set_env_attr(self, key: str, value: Any, id: int | list[int] | np.ndarray | None = None) -> None:
        """Stores a per-env Python attribute (the native env never reads it); config is fixed."""
        self._assert_is_not_closed()
        self._attrs.set(key, value, self._wrap_id(id))

    # --- reset and step ---
    def reset(
        self, env_id: int | list[int] | np.ndarray | None = None, **kwargs: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        self._assert_is_not_closed()
        seed = kwargs.pop("seed", None)
        if kwargs.pop("options", None) or kwargs:
            raise ValueError(f"native envs take only a seed at reset, got {kwargs or 'options'}")
        ids = np.asarray(self._wrap_id(env_id), dtype=np.int64).reshape(-1)
        if seed is None and all(int(j) in self._started for j in ids):
            rows = [self._started.pop(int(j)) for j in ids]
            return _stack([r[0] for r in rows]), _object_array([r[1] for r in rows])
        if len(ids) == self.env_num and np.array_equal(np.sort(ids), np.arange(self.env_num)):
            obs, infos, errors = self._reset_all(seed)
            if errors:
                raise EnvError(errors, (take_rows(obs, ids), infos[ids]))
            return take_rows(obs, ids), infos[ids]
        # The pool derives every env's seed from ``seed`` and gives the reset envs theirs.
        (obs, info), error = _rows_or_error(lambda: self.pool.reset(env_id=ids, seed=seed))
        for j in ids:
            self._started.pop(int(j), None)
            self._stale.discard(int(j))
        if error is not None:
            raise EnvError(error.errors, (obs, self._infos(info, info["env_id"])))
        return obs, self._infos(info, info["env_id"])

    def _reset_all(self, seed: Any) -> tuple[Any, np.ndarray, list[tuple[int, str]]]:
        """Every env's reset row in env order, and the errors of the envs whose reset raised."""
        self._drain()
        self._started.clear()
        self._stale.clear()
        if not self.is_async:
            (obs, info), error = _rows_or_error(lambda: self.pool.reset(seed=seed))
            return obs, self._infos(info, info["env_id"]), error.errors if error else []
        self.pool.async_reset(seed=seed)
        rows: dict[int, tuple[Any, dict[str, Any]]] = {}
        errors: list[tuple[int, str]] = []
        # Every batch is received, also after one with an error, so that no env stays in flight.
        for _ in range(self.env_num // self.wait_num):
            (obs, _, _, _, info), error = _rows_or_error(self.pool.recv)
            errors += error.errors if error else []
            for k, (j, info_row) in enumerate(zip(info["env_id"], self._infos(info, info["env_id"]))):
                rows[int(j)] = (take_rows(obs, k), info_row)
        obs = _stack([rows[j][0] for j in range(self.env_num)])
        return obs, _object_array([rows[j][1] for j in range(self.env_num)]), errors

    def _drain(self) -> None:
        """Receives (and drops) every step in flight, so that every env can be reset. The errors of
        envs that raised in those steps are dropped with their rows: every env is reset next."""
        while self.waiting_id:
            missing = self.wait_num - len(self.waiting_id)
            if missing > 0:
                # recv returns exactly wait_num envs: step some idle ones too (all are reset next).
                idle = np.asarray(self.ready_id[:missing], dtype=np.int64)
                self.pool.send(self._fillers(len(idle)), idle)
                self.waiting_id += idle.tolist()
                self.ready_id = self.ready_id[missing:]
            (_, _, _, _, info), _ = _rows_or_error(self.pool.recv)
            done_ids = {int(j) for j in info["env_id"]}
            self.waiting_id = [j for j in self.waiting_id if j not in done_ids]
            self.ready_id += sorted(done_ids)

    def step(
        self, action: Any, id: int | list[int] | np.ndarray | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        self._assert_is_not_closed()
        ids = np.asarray(self._wrap_id(id), dtype=np.int64).reshape(-1)
        if action is not None:
            action = np.asarray(action.detach().cpu() if hasattr(action, "detach") else action)
            if len(action) != len(ids):
                raise ValueError(f"got {len(action)} actions for {len(ids)} env ids")
            stale = self._stale.intersection(ids.tolist())
            if stale:
                raise ValueError(f"envs {sorted(stale)} were stepped with a filler action; reset them first")
        if not self.is_async:
            if action is None:
                raise ValueError("action must be not-None for non-async")
            if len(ids) == self.env_num and np.array_equal(ids, np.arange(self.env_num)):
                (obs, rew, terminated, truncated, info), error = _rows_or_error(lambda: self.pool.step(action))
                return self._finished_or_error(error, obs, rew, terminated, truncated, info)
            # A subset: the pool steps every env; the others get filler actions and go stale.
            full = self._fillers(self.env_num)
            full[ids] = action
            (obs, rew, terminated, truncated, info), error = _rows_or_error(lambda: self.pool.step(full))
            others = np.setdiff1d(np.arange(self.env_num), ids)
            self._stale.update(others.tolist())
            for j in others:
                self._started.pop(int(j), None)
            obs, rew, terminated, truncated = take_rows(obs, ids), rew[ids], terminated[ids], truncated[ids]
            info = take_rows(info, ids)
            if error is not None:
                # A stale env's error is dropped with its filler step: it is reset before it steps again.
                kept = [(j, message) for j, message in error.errors if j in set(ids.tolist())]
                error = EnvError(kept, None) if kept else None
            return self._finished_or_error(error, obs, rew, terminated, truncated, info)
        if action is not None:
            busy = set(self.waiting_id).intersection(ids.tolist())
            if busy:
                raise ValueError(f"cannot interact with environments {sorted(busy)}, which are stepping now")
            self.pool.send(action, ids)
            self.waiting_id += ids.tolist()
            sent = set(ids.tolist())
            self.ready_id = [j for j in self.ready_id if j not in sent]
        # A batch with an error is received all the same: its envs (the failed ones too) are ready.
        (obs, rew, terminated, truncated, info), error = _rows_or_error(self.pool.recv)
        done_ids = info["env_id"].tolist()
        received = set(done_ids)
        self.waiting_id = [j for j in self.waiting_id if j not in received]
        self.ready_id += done_ids
        return self._finished_or_error(error, obs, rew, terminated, truncated, info)

    def _finished_or_error(self, error: EnvError | None, *rows: Any) -> tuple[Any, np.ndarray, np.ndarray,
                                                                              np.ndarray, np.ndarray]:
        """``_finish(*rows)``, raised as ``EnvError`` with that result when ``error`` is given."""
        finished = self._finish(*rows)
        if error is not None:
            raise EnvError(error.errors, finished)
        return finished

    def _finish(self, obs: Any, rew: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                info: dict[str, Any]) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        env_ids = info["env_id"]
        infos = self._infos(info, env_ids)
        done = terminated | truncated
        if done.any():
            # Tianshou wants the episode's last observation; the next episode's first one is kept
            # for the reset(env_id) that the collector calls next.
            final_obs, final_info = info["final_obs"], info["final_info"]
            obs = _copy(obs)
            for k in np.flatnonzero(done):
                j = int(env_ids[k])
                self._started[j] = (_copy(take_rows(obs, k)), infos[k])
                infos[k] = {"env_id": j, **row_info(final_info, self._info_keys, int(k))}
                _set_row(obs, int(k), final_obs[k])
        return _objects_if_dict(obs), rew, terminated, truncated, infos

    def _infos(self, info: dict[str, Any], env_ids: np.ndarray) -> np.ndarray:
        return _object_array(
            [{"env_id": j, **row_info(info, self._info_keys, k)} for k, j in enumerate(env_ids.tolist())]
        )

    def _fillers(self, n: int) -> np.ndarray:
        return np.repeat(self._filler_row[None], n, axis=0)

    # --- the rest of BaseVectorEnv ---
    def seed(self, seed: int | list[int] | None = None) -> list[list[int] | None]:
        """Seeds the action-space samplers and re-seeds the envs with a reset, as Tianshou's
        ``DummyEnvWorker`` does (``env.reset(seed=...)``): an int gives env ``i`` the seed ``seed + i``."""
        self._assert_is_not_closed()
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds: list[int | None] = (
                [None] * self.env_num if seed is None else [int(seed) + i for i in range(self.env_num)]
            )
        else:
            seeds = [None if s is None else int(s) for s in seed]
        for space, s in zip(self._action_spaces, seeds):
            space.seed(s)
        filled = fill_seeds(seeds)
        if filled is not None:
            obs, infos, errors = self._reset_all(filled)
            if errors:
                raise EnvError(errors, (obs, infos))
        # Per env what Tianshou's DummyEnvWorker.seed returns: [seed], and [None] for an env given
        # none (its annotation, list[int] | None, does not say so).
        return cast("list[list[int] | None]", [[s] for s in seeds])

    def render(self, **kwargs: Any) -> list[Any]:
        self._assert_is_not_closed()
        return render_frames(self.pool)

    def close(self) -> None:
        self._assert_is_not_closed()
        self.pool.close()
        self.is_closed = True

    def __repr__(self) -> str:
        mode = f"async, wait_num={self.wait_num}" if self.is_async else "sync"
        return f"TianshouVectorEnv({self.task_id!r}, num_envs={self.env_num}, {mode})"


class PoolSingleEnv(gym.Env):
    """One native env as a plain ``gymnasium.Env`` (no autoreset): the high-level API's single env,
    used to read the spaces and for ``EnvMode.WATCH``.

    Example:
        >>> from parallel_pool.integrations.tianshou import PoolSingleEnv
        >>> env = PoolSingleEnv("CartPole-v1")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(0)
        >>> env.close()
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, task_id: str, **make_kwargs: Any) -> None:
        make_kwargs.pop("render_mode", None)
        self.pool = parallel_pool.make_gymnasium(task_id, num_envs=1, autoreset_mode="disabled", **make_kwargs)
        self.observation_space = self.pool.observation_space
        self.action_space = self.pool.action_space
        self.render_mode = None
        self._info_keys = ["elapsed_step", *row_info_keys(self.pool.spec)]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        check_no_reset_options(options)
        (obs, info), error = _rows_or_error(lambda: self.pool.reset(seed=seed))
        result = take_rows(obs, 0), row_info(info, self._info_keys, 0)
        if error is not None:
            raise EnvError(error.errors, result)
        return result

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """A step; if the env raises, ``EnvError`` with this step's (zero) row as ``result``, and
        the env must be reset before its next step (it has no autoreset)."""
        (obs, rew, terminated, truncated, info), error = _rows_or_error(
            lambda: self.pool.step(np.asarray(action)[None])
        )
        result = (take_rows(obs, 0), float(rew[0]), bool(terminated[0]), bool(truncated[0]),
                  row_info(info, self._info_keys, 0))
        if error is not None:
            raise EnvError(error.errors, result)
        return result

    def close(self) -> None:
        self.pool.close()


class ParallelPoolEnvFactory(EnvFactory):
    """Tianshou's high-level API (``PPOExperimentBuilder(ParallelPoolEnvFactory("CartPole-v1"), ...)``)
    over native pools: training and test envs are (sync) ``TianshouVectorEnv``s, the single and
    watch envs ``PoolSingleEnv``s; ``make_kwargs`` go to ``parallel_pool.make`` for every env. (The
    high-level API collects with ``Collector``, which refuses async envs.)

    Example:
        >>> from parallel_pool.integrations.tianshou import ParallelPoolEnvFactory
        >>> envs = ParallelPoolEnvFactory("CartPole-v1").create_envs(4, 2, seed=0)
        >>> len(envs.training_envs), len(envs.test_envs)
        (4, 2)
    """

    def __init__(self, task_id: str, **make_kwargs: Any) -> None:
        super().__init__(VectorEnvType.DUMMY)  # unused: the vector envs are native pools
        self.task_id = task_id
        self.make_kwargs = make_kwargs

    def _create_env(self, mode: EnvMode) -> gym.Env:
        return PoolSingleEnv(self.task_id, **self.make_kwargs)

    def create_venv(self, num_envs: int, mode: EnvMode, seed: int | None = None) -> BaseVectorEnv:
        rng = self._create_rng(seed)
        if mode == EnvMode.WATCH:
            env_seed = self._next_seed(rng)
            venv: BaseVectorEnv = DummyVectorEnv([lambda: self.create_env(mode, seed=env_seed)])
        else:
            venv = TianshouVectorEnv(self.task_id, num_envs=num_envs, seed=self._next_seed(rng), **self.make_kwargs)
        venv.seed([self._next_seed(rng) for _ in range(len(venv))])
        return venv


def _rows_or_error(call: Callable[[], Any]) -> tuple[Any, EnvError | None]:
    """``(call(), None)``, or ``(rows, error)`` when an env raised: the batch is still the adapter's
    to handle (bookkeeping, its own form) before it raises the error with that result."""
    try:
        return call(), None
    except EnvError as e:
        return e.result, e


# --- helpers for array or Dict observations ---
def _filler_action(space: gym.Space) -> np.ndarray:
    """A valid action for envs that must be stepped without one: the lowest, or 0 where allowed."""
    if isinstance(space, gym.spaces.Discrete):
        return np.asarray(space.start, dtype=space.dtype)
    if isinstance(space, gym.spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high)
    raise TypeError(f"unsupported action space {space}")


def _set_row(obs: Any, k: int, value: Any) -> None:
    if isinstance(obs, dict):
        for key in obs:
            obs[key][k] = value[key]
    else:
        obs[k] = value


def _copy(obs: Any) -> Any:
    return {key: np.array(v) for key, v in obs.items()} if isinstance(obs, dict) else np.array(obs)


def _stack(rows: list[Any]) -> Any:
    if rows and isinstance(rows[0], dict):
        return _object_array(rows)
    return np.stack(rows)


def _objects_if_dict(obs: Any) -> Any:
    # Tianshou's own vector envs return Dict observations as an object array of per-env dicts.
    if isinstance(obs, dict):
        n = len(next(iter(obs.values())))
        return _object_array([take_rows(obs, k) for k in range(n)])
    return obs


def _object_array(rows: list[Any]) -> np.ndarray:
    out = np.empty(len(rows), dtype=object)
    for k, row in enumerate(rows):
        out[k] = row
    return out
