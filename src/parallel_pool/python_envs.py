"""The Python-env backend: any ``gymnasium.Env`` run in worker processes, behind the native pool's API.

A pool of Python envs is a native pool whose envs are ``ProcessEnv``s (``native/core/process_env.h``):
each forwards its ``Reset``/``Step``/``Render`` to the worker process that holds the Python env,
through a shared-memory ``ProcessChannel`` (``native/core/process_channel.h``). The engine keeps
every semantic (batching, autoreset, episode statistics, seeding, bad-input checks, ``EnvError``),
so both backends behave the same by construction and the conformance tests run over both.

- **Batches.** A ``ProcessEnv`` is split-phase (``SplitPhaseEnv``, ``native/core/env_driver.h``): a
  pool thread posts a run of jobs (each action row copied into its env's slot of the shared
  mapping, no system call), rings each worker once, sleeps on the last slot it posted and then
  collects the rows in order. A worker steps its requested envs back to back with NumPy views of
  the slots. So a batch costs about one wake-up each way per worker, not one per env.
- **Workers and threads.** ``num_workers`` processes hold the envs round robin (env ``i`` on worker
  ``i % num_workers``); by default one per CPU but one, or one per CPU in sync mode when worker 0's
  timing of a spare env says a batch's share outweighs the wake-ups (``_SHARE_FOR_EVERY_CPU_S``). In
  sync mode the pool has one thread, the caller's; in async mode ``_THREADS_PER_WORKER`` per
  worker, so a worker always finds work queued.
- **Spinning.** A waiting thread polls the shared word before it sleeps (``_SPIN_PARENT_US``,
  ``_SPIN_WORKER_US``), only while its last wait ended within that budget, and only when the
  spinners fit the CPUs the process may use (``spin=None``); ``spin=True``/``False`` forces it.
- **Spec.** Built from the env's spaces (``python_spaces.SpaceLayout``): a fixed-size space (any
  nesting of ``Dict``/``Tuple`` over ``Box``, ``Discrete``, ``MultiDiscrete``, ``MultiBinary``, of
  any dtype) is one field per leaf; any other space (``Text``, ``Graph``, ``Sequence``, ``OneOf``,
  ...) is pickled per env into a byte row and batched as Gymnasium's ``concatenate``. The pool's
  spaces are the env's own; ``render()`` gives the env's frames, of any dtype and shape.
- **The env's info**, batched as ``SyncVectorEnv`` gives it (values and ``_key`` masks): numeric
  entries of the keys ``info_keys`` declares or a spare env's first step shows ride in typed rows
  of the shared memory; every other entry is pickled per env (``info_pickle``, ``_PICKLE_BYTES``)
  and merged by Gymnasium's rule. The engine's own keys (``ENGINE_INFO_KEYS``) are the engine's.
- **Seeds, options, calls.** ``seed=s`` gives env ``i`` ``reset(seed=s + i)`` first, as
  ``SyncVectorEnv.reset(seed=s)``; without a seed that reset gets ``seed=None``. Reset options,
  ``call``/``get_attr``/``set_attr`` go through each worker's pipe and run under the lock its step
  loop holds, never beside a step.
- **Processes.** Workers start with ``spawn`` (the parent has threads), so env factories travel
  with ``cloudpickle``, as ``AsyncVectorEnv``'s do. Workers ignore SIGINT and exit within
  ``_PARENT_POLL_S`` of their parent's death; the channel is a memfd. A process forked from the
  parent leaves the workers alone (``PoolForkedError`` if it uses the pool).
- **Faults.** An env's exception is its ``EnvError`` entry, with the traceback's text. A worker
  that dies fails its envs' jobs with a message naming it; ``env.workers.restart()`` starts a new
  one (their next step resets them). ``close()`` stops the workers, then the pool.
- **Ids.** ``make("gymnasium:<id>")`` (``"gymnasium:module:MyEnv-v0"`` imports ``module`` in the
  workers), ``make_python(...)``, or a name ``register(name, "gymnasium:<id>", **defaults)`` gave,
  which ``gymnasium.make_vec`` takes as ``"parallel_pool/<name>"``.

``benchmarks/BENCHMARKS.md`` ("Python envs") has the measurements behind these choices.

Example:
    >>> import numpy as np, parallel_pool
    >>> env = parallel_pool.make("gymnasium:CartPole-v1", num_envs=4, num_workers=2, seed=0)
    >>> obs, info = env.reset()
    >>> obs.shape
    (4, 4)
    >>> obs, reward, terminated, truncated, info = env.step(np.zeros(4, dtype=np.int64))
    >>> env.close()
"""

from __future__ import annotations

import dataclasses
import importlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import gymnasium
import numpy as np
from gymnasium import spaces

from parallel_pool import _native
from parallel_pool.options import POOL_DEFAULTS, _check_int, _check_pool_options, env_seeds
from parallel_pool.python_spaces import ENGINE_DTYPES, PICKLE_HEADER, SpaceLayout, field, put_bytes, unpickle_row
from parallel_pool.spec import PICKLED_INFO, EnvSpec

# make("gymnasium:<id>"): a Gymnasium-registered env id run by this backend.
GYMNASIUM_PREFIX = "gymnasium:"
# register(name, "gymnasium:<id>", **defaults): name -> (the "gymnasium:<id>", its default kwargs).
# make(name) and gymnasium.make_vec("parallel_pool/<name>") run it on this backend.
PYTHON_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}
# make_python's kwargs besides the pool options every task takes.
PYTHON_DEFAULTS: dict[str, Any] = {
    "num_workers": 0, "max_episode_steps": None, "render_mode": None, "info_keys": None, "info_pickle": True,
    "spin": None, "obs_pickle": None, "action_pickle": None,
}
# info_pickle=True: bytes per env for the pickled info entries (a dozen small entries; the row is
# copied with each step, so the default stays small).
_PICKLE_BYTES = 1024
# Info keys the engine writes itself: a Python env's entries of these names are not carried.
ENGINE_INFO_KEYS = frozenset({"env_id", "elapsed_step", "episode", "players", "final_obs", "final_info"})
# A waiting worker checks this often that its parent lives (an orphan exits within this).
_PARENT_POLL_S = 0.1
# How long close() waits for a worker to exit before it kills it.
_JOIN_S = 2.0
# How long the pool waits for a worker to build its envs and report (imports, env construction).
_START_S = 120.0
# The exit status of a spawned worker whose start re-ran the user's main module, which tried to make a
# pool again (a script without the ``if __name__ == "__main__":`` guard): the parent then says so.
_MAIN_RERAN_EXIT = 87
_MAIN_GUARD_HELP = (
    "make_python starts its worker processes with multiprocessing's 'spawn' method, which imports the "
    "main module (your script) again in each worker, and your script made a pool at import. Put the code "
    "that makes and uses the pool under a main guard:\n\n"
    "    if __name__ == \"__main__\":\n"
    "        env = parallel_pool.make_python(...)\n"
)
# The pool's default threads per worker process in async mode (BENCHMARKS.md, "Python envs (issue 17)").
_THREADS_PER_WORKER = 2
# Sync mode, default worker count: a worker on every CPU (none spinning) rather than on every CPU but
# one (spinning) when each worker's share of a batch takes at least this long (seconds of steps of the
# spare env, timed in CPU time): BENCHMARKS.md, "Python envs (issue 17): sixth run".
_SHARE_FOR_EVERY_CPU_S = 250e-6
# The spare env's steps are timed in windows of this many steps, for up to this much CPU time (_time_steps).
_COST_PROBE_S = 0.05
_COST_PROBE_STEPS = 50
_COST_PROBE_WINDOWS = 4


# Spin budgets (ProcessChannel.SetSpin), in microseconds: the parent's, awaiting a worker's batch
# (bounded by the batch's own time), and a worker's, waiting for its next request (the CPU a wrong
# guess wastes per batch).
_SPIN_PARENT_US = 1000
_SPIN_WORKER_US = 200


def _spin_budgets(spin: bool | None, num_threads: int, num_workers: int, sync: bool) -> tuple[int, int]:
    """The channel's spin budgets (parent's, workers') for ``spin``. None: each side spins only
    where its spinners have CPUs of their own. The pool's threads (awaiting a worker's batch) spin
    when they, the workers and, in async mode, the caller fit the CPUs: the threads that may wait
    are the pool's ``num_threads`` in sync mode (the caller is one of them); in async mode its
    workers (at least one) and also the caller, in ``recv``. The workers (awaiting their next
    request) spin when they fit the CPUs beside one core for the parent: a worker spins only while
    it has nothing to do, and the parent's threads, while the workers run, need one core at most
    (they post, wait and copy; the caller's policy)."""
    if spin is None:
        cpus = len(os.sched_getaffinity(0))
        waiting = num_threads if sync else max(1, num_threads - 1) + 1
        parent = waiting + num_workers <= cpus
        worker = num_workers + 1 <= cpus
        return (_SPIN_PARENT_US if parent else 0, _SPIN_WORKER_US if worker else 0)
    return (_SPIN_PARENT_US, _SPIN_WORKER_US) if spin else (0, 0)


def default_num_workers(num_envs: int) -> int:
    """The default worker count: one per CPU but one (the parent's core), at least 1, at most ``num_envs``."""
    return max(1, min(num_envs, (os.cpu_count() or 1) - 1))


def _every_cpu_workers(num_envs: int) -> int:
    return max(1, min(num_envs, os.cpu_count() or 1))


def sync_num_workers(num_envs: int, step_s: float | None) -> int:
    """The default worker count of a sync pool whose env steps take ``step_s`` seconds (None: not
    known): one per CPU when each worker's share of a batch then takes at least
    ``_SHARE_FOR_EVERY_CPU_S``, so that the steps outweigh the wake-ups of workers that cannot spin,
    else ``default_num_workers`` (a core left to the parent, whose hand-offs then spin)."""
    few, every = default_num_workers(num_envs), _every_cpu_workers(num_envs)
    if step_s is None or every == few:
        return few
    return every if num_envs / every * step_s >= _SHARE_FOR_EVERY_CPU_S else few


def _as_dtype(dtype: Any, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.name not in ENGINE_DTYPES:
        raise TypeError(f"{what} has dtype {dtype}, which a pool field cannot hold (allowed: {sorted(ENGINE_DTYPES)})")
    return dtype


_field = field


def space_fields(space: spaces.Space, prefix: str) -> list[tuple[Any, dict[str, Any]]]:
    """``(path, field)`` per engine field of ``space`` (``SpaceLayout``): path None for a plain space
    or a pickled one, the Dict key or Tuple index of a flat Dict or Tuple, else the tuple of keys
    and indices from the root. Fields are named ``prefix``, or ``prefix:<key>``."""
    layout = SpaceLayout(space, prefix)
    if layout.pickled:
        return [(None, layout.fields[0])]
    return [(None if not leaf.path else leaf.path[0] if len(leaf.path) == 1 else leaf.path, leaf.field)
            for leaf in layout.leaves]


def _row_bytes(field: dict[str, Any]) -> int:
    return int(np.prod(field["shape"], dtype=np.int64)) * np.dtype(field["dtype"]).itemsize


def _check_info_keys(info_keys: Any) -> dict[str, tuple[tuple[int, ...], str]] | list[str] | None:
    """``info_keys`` as None (infer every key), a list of keys (infer their types) or a dict of
    declared ``(shape, dtype)``."""
    if info_keys is None:
        return None
    if isinstance(info_keys, str):
        raise TypeError("info_keys must be a dict of key -> dtype or (shape, dtype), or a list of keys; got a str")
    if isinstance(info_keys, dict):
        declared: dict[str, tuple[tuple[int, ...], str]] = {}
        for key, kind in info_keys.items():
            _check_info_key(key)
            shape, dtype = kind if isinstance(kind, tuple) else ((), kind)
            dtype = _as_dtype(dtype, f"info_keys[{key!r}]")
            declared[key] = (tuple(int(d) for d in np.atleast_1d(shape)) if shape != () else (), dtype.name)
        return declared
    keys = list(info_keys)
    for key in keys:
        _check_info_key(key)
    return keys


def _check_info_key(key: Any) -> None:
    if not isinstance(key, str) or not key or ":" in key or "." in key:
        raise ValueError(f"an info key of a typed row must be a non-empty str without ':' or '.', got {key!r}")
    if key in ENGINE_INFO_KEYS:
        raise ValueError(f"info[{key!r}] is the engine's own entry; it cannot be a typed row of the env's info")


def _check_info_pickle(info_pickle: Any) -> int:
    """The bytes of a pickled-info row (its length header included), 0 for none."""
    if info_pickle is True:
        return _PICKLE_BYTES + PICKLE_HEADER
    if info_pickle is False or info_pickle is None:
        return 0
    size = _check_int("info_pickle", info_pickle)
    if size < 0:
        raise ValueError(f"info_pickle must be a bool or a number of bytes >= 0, got {size}")
    return size + PICKLE_HEADER if size else 0


def _check_pickle_size(name: str, value: Any) -> int | None:
    """``obs_pickle``/``action_pickle``: None (sized from a sample of the space) or bytes >= 1."""
    if value is None:
        return None
    size = _check_int(name, value)
    if size < 1:
        raise ValueError(f"{name} must be None (sized from the space) or a number of bytes >= 1, got {size}")
    return size


def _info_fields(info_keys: Any, probed: dict[str, tuple[str, tuple[int, ...]]] | None
                 ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(key, value field, mask field) per typed info key, from the declared or probed types."""
    if isinstance(info_keys, dict):
        kinds = {key: (dtype, shape) for key, (shape, dtype) in info_keys.items()}
    else:
        probed = probed or {}
        if info_keys is None:
            kinds = dict(probed)
        else:
            missing = [key for key in info_keys if key not in probed]
            if missing:
                raise ValueError(
                    f"info_keys {missing} are not numeric entries of the env's first reset's or step's info: "
                    "declare their types, info_keys={key: dtype or (shape, dtype)}"
                )
            kinds = {key: probed[key] for key in info_keys}
    fields = []
    for key, (dtype, shape) in kinds.items():
        if "_" + key in kinds:
            raise ValueError(f"info keys {key!r} and {'_' + key!r} cannot both be typed rows: the second is the "
                             "first's mask in Gymnasium's vector info")
        fields.append((key, _field(f"info:{key}", np.dtype(dtype), shape, "box", [], []),
                       _field(f"info:_{key}", np.dtype(np.bool_), (), "box", [0.0], [1.0])))
    return fields


class PythonEnvSpec(EnvSpec):
    """The spec of a pool of Python envs: fields from the env's spaces (``SpaceLayout``), and those
    spaces themselves."""

    def __init__(self, task_id: str, native: dict[str, Any], pool_config: dict[str, Any],
                 obs: SpaceLayout, action: SpaceLayout, render: RenderLayout | None = None) -> None:
        super().__init__(task_id, native, pool_config)
        self.obs_layout = obs
        self.action_layout = action
        self.render_layout = render
        # The env's frames: their own shape and dtype (the engine carries their bytes).
        if render is not None and not render.pickled:
            self.render_shape = render.shape
        self.render_dtype = render.dtype if render is not None and not render.pickled else None

    @property
    def observation_space(self) -> gymnasium.Space:
        """The env's own single-env observation space."""
        return self.obs_layout.space

    @property
    def action_space(self) -> gymnasium.Space:
        """The env's own single-env action space."""
        return self.action_layout.space

    def obs_readers(self, index: dict[str, int], prefix: str = "") -> tuple[Callable, Callable] | None:
        if self.obs_layout.direct:
            return None
        return self.obs_layout.batch_reader(index, prefix), self.obs_layout.row_reader(index, prefix)

    def action_flattener(self, num_envs: int) -> Callable[[Any], Any] | None:
        return self.action_layout.flattener(num_envs)

    def decode_frames(self, frames: np.ndarray) -> Any:
        return frames if self.render_layout is None else self.render_layout.decode(frames)


# ---- the worker process ----------------------------------------------------------------------------


class _EnvSlot:
    """One env in a worker, with NumPy views of its slot: actions in, observation, info (and frame) out."""

    def __init__(self, env: gymnasium.Env, channel: Any, env_id: int, obs: SpaceLayout, action: SpaceLayout,
                 render: RenderLayout | None, info: list | None = None, pickle_bytes: int = 0,
                 unseeded: int | None = None) -> None:
        self.env = env
        # Not reset by this process yet: a worker restarted after its predecessor died holds new
        # envs, and the pool may still take one for mid-episode (it finished a step before the death).
        self.needs_reset = True
        # A pool made without a seed still hands each env a seed for its first reset (the engine's
        # own, 64-bit); that reset gets None instead, as from Gymnasium's vector envs.
        self.unseeded = unseeded
        # Options for this env's next reset (the pool's reset(options=...), sent over the pipe).
        self.reset_options: dict | None = None
        buffer = np.frombuffer(channel.buffer, dtype=np.uint8)

        def view(offset: int, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
            return np.ndarray(shape, dtype=np.dtype(dtype), buffer=buffer, offset=offset)

        def layout_views(layout: SpaceLayout, offset: Callable[[int, int], int]) -> list[np.ndarray]:
            if layout.pickled:
                return [view(offset(env_id, 0), np.uint8, layout.fields[0]["shape"])]
            return [view(offset(env_id, f), leaf.dtype, leaf.shape) for f, leaf in enumerate(layout.leaves)]

        self.write_obs = obs.writer(layout_views(obs, channel.state_offset))
        self.action = action.reader(layout_views(action, channel.action_offset))
        self.render = render
        self.frame = None
        if render is not None:
            self.frame = view(channel.render_offset(env_id), render.dtype, render.shape)
        # The info rows follow the observation's fields: per typed key a value and a mask row, then
        # the pickled row (the module's docstring).
        f = len(obs.fields)
        self.info_views: list[tuple[str, np.ndarray, np.ndarray]] = []
        for key, value_field, mask_field in info or []:
            self.info_views.append((key, view(channel.state_offset(env_id, f), value_field["dtype"],
                                              value_field["shape"]),
                                    view(channel.state_offset(env_id, f + 1), mask_field["dtype"], ())))
            f += 2
        self.typed_keys = frozenset(key for key, _, _ in self.info_views)
        self.pickled = None
        self.pickled_empty = False  # the pickled row's header says "nothing" (write_info)
        if pickle_bytes:
            self.pickled = view(channel.state_offset(env_id, f), np.uint8, (pickle_bytes,))
        self.has_info = bool(self.info_views) or self.pickled is not None

    def reset(self, seed: int | None) -> tuple[Any, dict]:
        if self.unseeded is not None:
            if seed == self.unseeded:
                seed = None
            self.unseeded = None
        options, self.reset_options = self.reset_options, None
        return self.env.reset(seed=seed, options=options)  # options=None too, as Gymnasium's vector envs

    def write_info(self, info: dict) -> None:
        for key, value, mask in self.info_views:
            if key in info:
                try:
                    value[...] = info[key]
                except (ValueError, TypeError) as e:
                    raise ValueError(f"info[{key!r}] does not fit its row ({value.dtype}, shape {value.shape}): "
                                     f"{e}; declare its type with info_keys=") from None
                mask[...] = True
            else:
                value[...] = 0
                mask[...] = False
        if self.pickled is not None:
            # An entry the engine also writes (e.g. "episode" with episode_stats) is the engine's in the
            # batch (unpack.py); without it, the env's own comes through, as from AsyncVectorEnv.
            rest = {k: v for k, v in info.items() if k not in self.typed_keys} if info else info
            if not rest:
                # Most steps of most envs carry nothing untyped: the row's header says so already
                # after the first such step (the row is this env's alone; nothing else writes it).
                if not self.pickled_empty:
                    put_bytes(self.pickled, b"")
                    self.pickled_empty = True
                return
            data = pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL)
            room = self.pickled.size - PICKLE_HEADER
            if len(data) > room:
                raise ValueError(f"the pickled info ({len(data)} bytes, keys {sorted(rest)}) is larger than its "
                                 f"row ({room} bytes); pass a larger info_pickle=")
            put_bytes(self.pickled, data)
            self.pickled_empty = False

    def write_frame(self) -> None:
        frame: Any = self.env.render()
        assert self.frame is not None and self.render is not None
        if self.render.pickled:
            data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
            room = self.frame.size - PICKLE_HEADER
            if len(data) > room:
                raise ValueError(f"render() returned {len(data)} bytes pickled, more than the frame's row ({room} "
                                 "bytes) made for the first frame's size")
            put_bytes(self.frame, data)
            return
        if not isinstance(frame, np.ndarray) or frame.shape != self.frame.shape or frame.dtype != self.frame.dtype:
            got = f"{frame.dtype} {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
            raise ValueError(f"render() returned {got}, expected a frame like the first one: "
                             f"{self.frame.dtype} {self.frame.shape}")
        self.frame[...] = frame


@dataclasses.dataclass(frozen=True)
class RenderLayout:
    """What a Python env's ``render()`` returns, from a first frame: an array of this dtype and shape,
    carried as its bytes, or (``pickled``) anything else, pickled into ``shape[0]`` bytes."""

    dtype: np.dtype
    shape: tuple[int, ...]
    pickled: bool = False

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def native_shape(self) -> tuple[int, ...]:
        """The engine's frame shape (uint8): an ``(h, w, 3)`` uint8 frame as it is, else its bytes."""
        if not self.pickled and self.dtype == np.uint8 and len(self.shape) == 3 and self.shape[2] == 3:
            return self.shape
        return (self.nbytes,)

    def decode(self, frames: np.ndarray) -> Any:
        """The engine's frames (``(n, *native_shape)`` uint8) as the env's: a batch array, or a list."""
        if self.pickled:
            return [unpickle_row(row) for row in frames]
        if frames.shape[1:] == self.shape and frames.dtype == self.dtype:
            return frames
        return frames.view(self.dtype).reshape(frames.shape[0], *self.shape)


# A pickled render() result gets this many times its first pickle's size, at least this many bytes.
_RENDER_PICKLE_FACTOR = 4
_RENDER_PICKLE_MIN = 4096


def _probe_render(env: gymnasium.Env) -> RenderLayout | None:
    """What the env's rgb_array frames are like, or None when it does not render frames. A render,
    and only if that fails or gives None (most envs draw nothing before their first reset), a reset
    and a render: the pool's first reset of each env is the pool's own, so this changes no episode."""
    if env.render_mode != "rgb_array":
        return None
    try:
        frame: Any = env.render()
    except Exception:  # noqa: BLE001 (an env that must be reset first, e.g. Gymnasium's OrderEnforcing)
        frame = None
    if frame is None:
        env.reset()
        frame = env.render()
    if isinstance(frame, np.ndarray) and frame.dtype.kind in "biufc":
        return RenderLayout(frame.dtype, tuple(int(d) for d in frame.shape))
    size = len(pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL))
    return RenderLayout(np.dtype(np.uint8), (PICKLE_HEADER + max(_RENDER_PICKLE_MIN, _RENDER_PICKLE_FACTOR * size),),
                        pickled=True)


def _info_entry_type(value: Any) -> tuple[str, tuple[int, ...]] | None:
    """(dtype, shape) of an info entry that a typed row holds, as Gymnasium's vector info types it;
    None for anything else."""
    if type(value) in (bool, int, float):
        dtype = np.dtype(type(value))
        shape: tuple[int, ...] = ()
    elif isinstance(value, (np.number, np.bool_)):
        dtype, shape = value.dtype, ()
    elif isinstance(value, np.ndarray):
        dtype, shape = value.dtype, tuple(int(d) for d in value.shape)
    else:
        return None
    if dtype.name not in ENGINE_DTYPES:
        return None
    return dtype.name, shape


def _probe_spare_env(env_fn: Callable[[], gymnasium.Env], time_steps: bool = False
                ) -> tuple[dict[str, tuple[str, tuple[int, ...]]], float | None]:
    """The typed-row info keys of a spare env from ``env_fn``: those of its first reset's and step's
    info (an env that raises there gives what it gave before); and, with ``time_steps``, the CPU time
    of one of its steps (None: not timed, or it raised), over up to ``_COST_PROBE_STEPS`` further
    steps or ``_COST_PROBE_S`` (sampled actions, resets at episode ends included)."""
    found: dict[str, tuple[str, tuple[int, ...]]] = {}
    step_s = None
    env = env_fn()
    try:
        _, info = env.reset(seed=0)
        infos = [info]
        env.action_space.seed(0)
        stepped = False
        try:
            infos.append(env.step(env.action_space.sample())[4])
            stepped = True
        except Exception:  # noqa: S110 (a step that raises has no info to give)
            pass
        for info in infos:
            for key, value in info.items():
                kind = _info_entry_type(value)
                if kind is not None and isinstance(key, str) and key not in ENGINE_INFO_KEYS:
                    found.setdefault(key, kind)
        if time_steps and stepped:
            step_s = _time_steps(env)
    except Exception:  # noqa: S110 (a reset that raises has no info to give)
        pass
    finally:
        try:
            env.close()
        except Exception:  # noqa: S110
            pass
    return found, step_s


def _time_steps(env: gymnasium.Env) -> float:
    """The CPU time of one step of ``env`` (reset first), actions sampled beforehand: the fastest of
    ``_COST_PROBE_WINDOWS`` windows of up to ``_COST_PROBE_STEPS`` steps (resets at episode ends
    included) after as many untimed ones, within ``_COST_PROBE_S`` in all (a fresh process's first
    steps run on cold caches and lazy set-ups). CPU time is read per window, not per step (a
    system call costs a good part of a cheap env's step); the wall clock bounds the probe."""
    actions = [env.action_space.sample() for _ in range(16)]
    env.reset()
    deadline = time.perf_counter() + _COST_PROBE_S
    best = float("inf")
    for window in range(_COST_PROBE_WINDOWS + 1):
        start = time.thread_time()
        steps = 0
        while steps < _COST_PROBE_STEPS:
            _, _, terminated, truncated, _ = env.step(actions[steps % len(actions)])
            if terminated or truncated:
                env.reset()
            steps += 1
            if time.perf_counter() > deadline:
                break
        over = time.perf_counter() > deadline
        if window > 0 or over:
            best = min(best, (time.thread_time() - start) / steps)
        if over:
            break
    return best


def _worker_main(conn: Connection, worker: int, probe: bytes | None = None, time_steps: bool = False) -> None:
    """A worker process. With ``probe`` (a pickled env factory), it first reports the info keys of
    a spare env from it (and, with ``time_steps``, the time of one of its steps); then it is told
    which envs to build (or to exit), builds them, reports their spaces, attaches to the channel and
    serves it, while a control thread serves the pipe (``_control``)."""
    # Ctrl-C reaches the whole process group: it is the parent's to handle (it closes the pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if probe is not None:
            conn.send(("probed", *_probe_spare_env(cloudpickle.loads(probe), time_steps)))
        message = conn.recv()
        if message[0] != "build":
            return
        _, env_ids, payload = message
        envs = [cloudpickle.loads(fn)() for fn in cloudpickle.loads(payload)]
        env0 = envs[0]
        for i, env in zip(env_ids, envs):
            if env.observation_space != env0.observation_space or env.action_space != env0.action_space:
                raise ValueError(f"every env of a pool must have the same spaces: env {i} has {env.observation_space} "
                                 f"/ {env.action_space}, env {env_ids[0]} {env0.observation_space} / "
                                 f"{env0.action_space}")
        render = _probe_render(env0)
        spec = getattr(env0, "spec", None)
        # The spaces travel with cloudpickle, both ways: a space class of a module pickled by value
        # (cloudpickle.register_pickle_by_value) exists only as the objects that carry it.
        conn.send(("spaces", cloudpickle.dumps((env0.observation_space, env0.action_space, render, env0.render_mode,
                                                 getattr(spec, "max_episode_steps", None),
                                                 getattr(spec, "reward_threshold", None), getattr(spec, "id", None)))))
        message = conn.recv()
        if message[0] != "attach":
            return
        _, shape, parent_pid, fd, layouts, info_fields, pickle_bytes, unseeded = message
        obs, action = cloudpickle.loads(layouts)
        channel = _native.ProcessChannel.attach(*shape, parent_pid=parent_pid, fd=fd)
        slots = {
            i: _EnvSlot(env, channel, i, obs, action, render, info_fields, pickle_bytes, unseeded.get(i))
            for i, env in zip(env_ids, envs)
        }
        conn.send(("attached",))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    # The step loop and the control thread each hold this while they touch an env: a call never
    # runs beside a step of the same worker's envs.
    lock = threading.Lock()
    threading.Thread(target=_control, args=(conn, slots, lock), name="parallel_pool-control", daemon=True).start()
    _serve(channel, worker, slots, lock)
    with lock:
        for slot in slots.values():
            try:
                slot.env.close()
            except Exception:  # noqa: S110 (the worker exits either way)
                pass


def _serve(channel: Any, worker: int, slots: dict[int, _EnvSlot], lock: threading.Lock) -> None:
    step, reset = _native.CHANNEL_STEP, _native.CHANNEL_RESET
    wait, finish, fail = channel.wait, channel.finish, channel.fail
    while True:
        requests = wait(worker, _PARENT_POLL_S)
        if requests is None:
            return
        with lock:
            for env_id, command, seed in requests:
                slot = slots[env_id]
                try:
                    if command == step:
                        if slot.needs_reset:
                            raise RuntimeError(f"env {env_id} has not been reset since its worker process was "
                                               "(re)started: its episode was cut; it resets on its next step")
                        obs, reward, terminated, truncated, info = slot.env.step(slot.action())
                        slot.write_obs(obs)
                        if slot.has_info:
                            slot.write_info(info)
                        finish(env_id, float(reward), bool(terminated), bool(truncated))
                    elif command == reset:
                        obs, info = slot.reset(seed)
                        slot.needs_reset = False
                        slot.write_obs(obs)
                        if slot.has_info:
                            slot.write_info(info)
                        finish(env_id, 0.0, False, False)
                    else:
                        slot.write_frame()
                        finish(env_id, 0.0, False, False)
                except Exception:
                    fail(env_id, f"(Python env, worker {worker}, pid {os.getpid()})\n{traceback.format_exc()}")


# Methods a call must not reach: the pool steps, resets and closes its envs itself.
_POOL_METHODS = frozenset({"reset", "step", "close"})


def _env_call(env: gymnasium.Env, name: str, args: tuple, kwargs: dict) -> Any:
    """Gymnasium's ``VectorEnv.call`` on one env: the attribute's value, called if callable."""
    if name in _POOL_METHODS:
        raise ValueError(f"call({name!r}) would {name} an env behind the pool's back: use the pool's own {name}()")
    attr = env.get_wrapper_attr(name)
    return attr(*args, **kwargs) if callable(attr) else attr


def _env_method(env: gymnasium.Env, name: str, args: tuple, kwargs: dict) -> Any:
    """SB3's ``env_method`` on one env: the method found through the wrappers, called."""
    if name in _POOL_METHODS:
        raise ValueError(f"env_method({name!r}) would {name} an env behind the pool's back")
    return env.get_wrapper_attr(name)(*args, **kwargs)


def _env_is_wrapped(env: gymnasium.Env, wrapper_class: type) -> bool:
    """SB3's ``is_wrapped``: some wrapper on the way to the base env is a ``wrapper_class``."""
    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, wrapper_class):
            return True
        env = env.env
    return False


# The operations the control thread runs on an env, by name: (env, *args) -> result.
_ENV_OPS: dict[str, Callable[..., Any]] = {
    "call": _env_call,
    "method": _env_method,
    "get": lambda env, name: env.get_wrapper_attr(name),
    "set_wrapper": lambda env, name, value: env.set_wrapper_attr(name, value),
    "setattr": setattr,
    "is_wrapped": _env_is_wrapped,
}


def _control(conn: Connection, slots: dict[int, _EnvSlot], lock: threading.Lock) -> None:
    """The worker's control thread: serves the parent's requests on the pipe (``WorkerGroup.run``,
    ``WorkerGroup.set_reset_options``) until it reads "exit" or the pipe closes. Each reply is
    ``("ok", [result per env])`` or ``("error", env_id, exception type, traceback text)``."""
    while True:
        try:
            message = cloudpickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        except Exception:  # noqa: BLE001 (an argument that does not unpickle here is the caller's error)
            _reply(conn, ("error", None, None, traceback.format_exc()))
            continue
        if message[0] == "exit":
            return
        if message[0] == "options":
            with lock:
                for env_id, options in message[1].items():
                    slots[env_id].reset_options = options
            _reply(conn, ("ok", []))
            continue
        _, op, requests = message
        results: list[Any] = []
        reply: tuple = ("ok", results)
        with lock:
            for env_id, args in requests:
                try:
                    results.append(_ENV_OPS[op](slots[env_id].env, *args))
                except Exception as e:  # noqa: BLE001 (the env's error goes to the caller)
                    reply = ("error", env_id, type(e), traceback.format_exc())
                    break
        _reply(conn, reply)


def _reply(conn: Connection, reply: tuple) -> None:
    try:
        data = cloudpickle.dumps(reply)
    except Exception:  # noqa: BLE001 (a result or exception type that cannot be pickled)
        if reply[0] == "error":  # the exception's type stays here; its traceback's text goes
            data = cloudpickle.dumps(("error", reply[1], None, reply[3]))
        else:
            data = cloudpickle.dumps(("error", None, TypeError, "the result cannot be pickled to the parent:\n"
                                      + traceback.format_exc()))
    try:
        conn.send_bytes(data)
    except OSError:
        pass  # the parent closed the pool


# ---- the parent's side -----------------------------------------------------------------------------


def _main_module_name() -> str:
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return repr(path) if path else "(__main__)"


class WorkerGroup:
    """The worker processes of one pool of Python envs: which envs each holds, their liveness, restarts.

    ``env.workers`` of a pool made by ``make_python`` (None for a native pool).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], num_workers: int,
                 probe_info: bool = False, time_steps: bool = False) -> None:
        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # This process is a worker being spawned, and importing the main module made a pool:
            # exit with a status the parent recognizes (``_receive``), before starting any process.
            sys.stderr.write("parallel_pool: a worker process re-ran the main module, which made a pool. "
                             + _MAIN_GUARD_HELP)
            raise SystemExit(_MAIN_RERAN_EXIT)
        self._env_fns = list(env_fns)
        # Worker 0 first reports the info keys of a spare env (first start only); with
        # ``time_steps`` (sync mode, default workers: needs ``probe_info``), also the time of one of
        # its steps, from which ``sync_num_workers`` gives the worker count (at most num_workers,
        # the processes started): the rest are ended before they build envs.
        self._probe_info = probe_info
        self._time_steps = time_steps and probe_info
        self.probed_info: dict[str, tuple[str, tuple[int, ...]]] | None = None
        self.probed_step_s: float | None = None
        self._layout(num_workers)
        self._context = multiprocessing.get_context("spawn")
        self._processes: list[Any] = [None] * self.num_workers
        self._conns: list[Connection | None] = [None] * self.num_workers
        self._channel: Any = None
        self._attach_message: tuple | None = None
        self._first_report: tuple = ()  # worker 0's report: a restarted worker must match it
        self.closed = False
        # One request at a time on the pipes (run, set_reset_options, restart): each waits for its replies.
        self._pipe_lock = threading.RLock()
        self._unseeded: dict[int, int] = {}  # the attach message's: env id -> its engine seed to drop
        # Workers of a pool that is dropped without close() still stop (the pool's own finalizer),
        # in this process only: a forked child that inherits the group leaves them to their parent.
        self._owner_pid = os.getpid()
        self._finalizer = weakref.finalize(self, WorkerGroup._stop, self._owner_pid, self._processes, self._conns,
                                           [None])

    def _layout(self, num_workers: int) -> None:
        num_envs = len(self._env_fns)
        self.num_workers = max(1, min(num_workers, num_envs))
        # Round robin: env i on worker i % num_workers. The pool's threads take jobs in env order, so
        # consecutive jobs go to different workers, which all stay busy with fewer threads than envs.
        self.worker_of_env = [i % self.num_workers for i in range(num_envs)]
        self.env_ids: list[list[int]] = [list(range(w, num_envs, self.num_workers)) for w in range(self.num_workers)]
        self._payloads: list[bytes] | None = None  # each worker's env factories, pickled once (_build)

    # -- start-up --
    def start(self) -> list[tuple]:
        """Starts every worker; returns each one's report (its spaces and render shape)."""
        for w in range(self.num_workers):
            self._spawn(w, first=True)
        if self._probe_info:
            _, self.probed_info, self.probed_step_s = self._receive(0, "probing a spare env")
        if self._time_steps:
            chosen = max(1, min(self.num_workers, sync_num_workers(len(self._env_fns), self.probed_step_s)))
            if chosen < self.num_workers:
                # Not built anything yet (no envs, no channel): ended at once, not asked. Killed
                # before its pipe closes: a worker that read EOF first would print a traceback.
                for conn, process in zip(self._conns[chosen:], self._processes[chosen:]):
                    process.kill()
                    process.join()
                    if conn is not None:
                        conn.close()
                del self._processes[chosen:], self._conns[chosen:]
                self._layout(chosen)
        for w in range(self.num_workers):
            self._build(w)
        return [self._report(w) for w in range(self.num_workers)]

    def _spawn(self, w: int, first: bool = False) -> None:
        parent, child = self._context.Pipe()
        probe = cloudpickle.dumps(self._env_fns[0]) if first and w == 0 and self._probe_info else None
        process = self._context.Process(
            target=_worker_main, args=(child, w, probe, self._time_steps),
            name=f"parallel_pool-python-worker-{w}", daemon=True,
        )
        process.start()
        child.close()
        self._processes[w] = process
        self._conns[w] = parent

    def _build(self, w: int) -> None:
        conn = self._conns[w]
        assert conn is not None
        if self._payloads is None:
            # One pickle per env: each env is built from its own copy of its factory, as in a process
            # of its own (SubprocVecEnv), even where factories share an object (``lambda: env``).
            self._payloads = [cloudpickle.dumps([cloudpickle.dumps(self._env_fns[i]) for i in ids])
                              for ids in self.env_ids]
        try:
            conn.send(("build", self.env_ids[w], self._payloads[w]))
        except (OSError, ValueError):
            pass  # a worker that died: _report says so

    def _receive(self, w: int, what: str) -> tuple:
        conn, process = self._conns[w], self._processes[w]
        assert conn is not None
        waited = 0.0
        while not conn.poll(0.1):
            waited += 0.1
            if not process.is_alive() and not conn.poll(0):
                self._check_main_reran(w, what, process)
                raise RuntimeError(f"worker {w} (envs {self._range(w)}) exited with code {process.exitcode} "
                                   f"while {what}")
            if waited > _START_S:
                raise TimeoutError(f"worker {w} (envs {self._range(w)}) did not answer in {_START_S} s while {what}")
        try:
            message = conn.recv()
        except EOFError:
            process.join(5.0)
            self._check_main_reran(w, what, process)
            raise RuntimeError(f"worker {w} (envs {self._range(w)}) closed its pipe while {what}") from None
        if message[0] == "error":
            raise RuntimeError(f"worker {w} (envs {self._range(w)}) failed while {what}:\n{message[1]}")
        return message

    def _check_main_reran(self, w: int, what: str, process: Any) -> None:
        if process.exitcode == _MAIN_RERAN_EXIT:
            raise RuntimeError(f"worker {w} (envs {self._range(w)}) exited while {what}: its start re-ran "
                               f"the main module {_main_module_name()}, which made a pool again. " + _MAIN_GUARD_HELP)

    def _report(self, w: int) -> tuple:
        kind, spaces_blob = self._receive(w, "building its envs")
        return (kind, *cloudpickle.loads(spaces_blob))

    def attach(self, channel: Any, message: tuple) -> None:
        """Hands every worker the channel and waits until each has mapped it."""
        self._channel = channel
        self._attach_message = message
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, WorkerGroup._stop, self._owner_pid, self._processes, self._conns,
                                           [channel])
        for w in range(self.num_workers):
            self._attach(w)

    def _attach(self, w: int) -> None:
        conn = self._conns[w]
        assert conn is not None and self._attach_message is not None
        conn.send(self._attach_message)
        self._receive(w, "attaching to the pool's shared memory")
        self._channel.set_worker(w, self._processes[w].pid)

    def _range(self, w: int) -> str:
        return ", ".join(map(str, self.env_ids[w]))

    # -- the API --
    @property
    def pids(self) -> list[int]:
        """The process id of each worker."""
        return [p.pid for p in self._processes]

    def _check_usable(self) -> None:
        if self.closed:
            raise RuntimeError("the pool is closed")
        if os.getpid() != self._owner_pid:
            raise _native.PoolForkedError(
                f"this pool's worker processes belong to process {self._owner_pid}, and this process is a fork "
                "of it; make a new pool in this one")

    def dead(self) -> dict[int, list[int]]:
        """The workers whose process has exited, each with the env ids it held."""
        return {w: list(self.env_ids[w]) for w, p in enumerate(self._processes) if not p.is_alive()}

    def run(self, op: str, requests: Sequence[tuple[int, tuple]], what: str | None = None) -> list[Any]:
        """Runs ``op`` (a name in ``_ENV_OPS``) on envs in their workers: ``requests`` holds
        ``(env_id, args)`` pairs, and the result is one value per pair, in that order. Each worker
        runs its part while no step of its envs runs (its lock), so this is safe while steps are in
        flight; an exception in an env is raised here, of the env's exception type where it can be
        made, with the env's traceback text."""
        self._check_usable()
        by_worker: dict[int, list[tuple[int, tuple]]] = {}
        for env_id, args in requests:
            by_worker.setdefault(self.worker_of_env[env_id], []).append((env_id, args))
        with self._pipe_lock:
            replies = self._exchange({w: ("run", op, part) for w, part in by_worker.items()}, what or op)
        results: dict[int, list[Any]] = {w: list(reply[1]) for w, reply in replies.items()}
        for part in results.values():
            part.reverse()  # popped from the end, in order
        return [results[self.worker_of_env[env_id]].pop() for env_id, _ in requests]

    def set_reset_options(self, options: dict[int, dict | None]) -> None:
        """Hands each env in ``options`` the options of its next reset (None: none)."""
        self._check_usable()
        by_worker: dict[int, dict[int, dict | None]] = {}
        for env_id, opts in options.items():
            by_worker.setdefault(self.worker_of_env[env_id], {})[env_id] = opts
        with self._pipe_lock:
            self._exchange({w: ("options", part) for w, part in by_worker.items()}, "set_reset_options")

    def _exchange(self, messages: dict[int, tuple], what: str) -> dict[int, tuple]:
        """Sends each worker its message and waits for every reply (all sent first: the workers
        run their parts at once); raises the first error in env order."""
        data = {w: cloudpickle.dumps(m) for w, m in messages.items()}
        for w, payload in data.items():
            conn = self._conns[w]
            try:
                assert conn is not None
                conn.send_bytes(payload)
            except (OSError, ValueError):
                raise RuntimeError(self._gone(w, what)) from None
        replies = {w: self._control_reply(w, what) for w in data}
        errors = sorted(((r[1] if r[1] is not None else -1), w) for w, r in replies.items() if r[0] == "error")
        if errors:
            _, env_id, exc_type, text = replies[errors[0][1]]
            where = f"env {env_id}" if env_id is not None else f"worker {errors[0][1]}"
            message = f"{where} raised in {what}:\n{text}"
            error: Exception
            try:
                error = exc_type(message) if isinstance(exc_type, type) and issubclass(exc_type, Exception) \
                    else RuntimeError(message)
            except Exception:  # noqa: BLE001 (an exception type that takes other arguments)
                error = RuntimeError(message)
            raise error
        return replies

    def _control_reply(self, w: int, what: str) -> tuple:
        conn, process = self._conns[w], self._processes[w]
        try:
            assert conn is not None
            while not conn.poll(_PARENT_POLL_S):
                if self.closed:
                    raise RuntimeError(f"the pool was closed while {what}")
                if not process.is_alive() and not conn.poll(0):
                    raise RuntimeError(self._gone(w, what))
            return cloudpickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            raise RuntimeError(self._gone(w, what) if not self.closed else f"the pool was closed while {what}") \
                from None

    def _gone(self, w: int, what: str) -> str:
        return (f"worker {w} (envs {self._range(w)}) has died (exit code {self._processes[w].exitcode}) while "
                f"{what}; env.workers.restart() starts it again")

    def restart(self) -> list[int]:
        """Starts a new process for each dead worker; returns the env ids they hold.

        Their envs are new instances: each one's next step resets it (its episode was cut by the
        failure), or reset them explicitly (``reset(env_id=...)``, with a seed if wanted)."""
        self._check_usable()
        with self._pipe_lock:
            return self._restart()

    def _restart(self) -> list[int]:
        restarted: list[int] = []
        for w in sorted(self.dead()):
            old, conn = self._processes[w], self._conns[w]
            old.join(0)
            if conn is not None:
                conn.close()
            self._spawn(w)
            self._build(w)
            report = self._report(w)
            if report[1:3] != self._first_report[1:3]:
                raise RuntimeError(f"restarted worker {w} reports other spaces than before")
            self._attach(w)
            restarted.extend(self.env_ids[w])
        return restarted

    def close(self) -> None:
        """Stops every worker: asks them to exit, then kills those still running after a grace time."""
        if self.closed:
            return
        self.closed = True
        self._finalizer()

    @staticmethod
    def _stop(owner_pid: int, processes: list[Any], conns: list[Connection | None], channel: list[Any]) -> None:
        if os.getpid() != owner_pid:
            return  # a forked child's copy: the workers are its parent's
        if channel[0] is not None:
            channel[0].shutdown()
        for conn in conns:
            if conn is not None:
                try:
                    conn.send(("exit",))  # a worker still at its handshake
                except (OSError, ValueError):
                    pass
        for p in processes:
            if p is not None:
                p.join(_JOIN_S)
        for p in processes:
            if p is not None and p.is_alive():
                p.kill()
                p.join()
        for conn in conns:
            if conn is not None:
                conn.close()


class PythonEnvSource:
    """What a front-end (``BasePoolEnv``) builds a pool of Python envs from: the env factories and the
    kwargs. ``open`` starts the workers and returns the native pool; see the module's docstring."""

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]] | None = None, env_id: str | None = None,
                 name: str | None = None) -> None:
        self.env_fns = env_fns
        self.env_id = env_id
        self.task_id = name or (GYMNASIUM_PREFIX + env_id if env_id else "python")

    def open(self, kwargs: dict[str, Any]) -> tuple[Any, EnvSpec, dict[str, Any], WorkerGroup]:
        valid = set(POOL_DEFAULTS) | set(PYTHON_DEFAULTS)
        unknown = sorted(set(kwargs) - valid)
        if self.env_id is None and unknown:
            raise ValueError(
                f"unknown keyword argument(s) {', '.join(unknown)}; valid ones: {', '.join(sorted(valid))}"
            )
        pool = {k: kwargs.get(k, v) for k, v in POOL_DEFAULTS.items()}
        extra = {k: kwargs.get(k, v) for k, v in PYTHON_DEFAULTS.items()}
        # With an env id, the other kwargs are the env's own: gymnasium.make(env_id, **them).
        make_kwargs = {k: kwargs[k] for k in unknown}
        env_fns = self._env_fns(pool, extra, make_kwargs)
        num_workers = _check_int("num_workers", extra["num_workers"])
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        spin = extra["spin"]
        if spin is not None and not isinstance(spin, bool):
            raise TypeError(f"spin must be None (chosen from the CPUs), True or False, got {spin!r}")
        sync = pool["batch_size"] in (None, len(env_fns))
        info_keys = _check_info_keys(extra["info_keys"])
        # Types to infer: every key (None), or some named keys (a list): from a spare env.
        spare_env = not isinstance(info_keys, dict)
        time_steps = False
        if num_workers:
            num_workers = min(num_workers, len(env_fns))
        elif sync and spare_env and _every_cpu_workers(len(env_fns)) > default_num_workers(len(env_fns)):
            # Sync mode: every CPU or every CPU but one, by the spare env's step time.
            num_workers = _every_cpu_workers(len(env_fns))
            time_steps = True
        else:
            num_workers = default_num_workers(len(env_fns))
        if pool["num_threads"] == 0:
            # Sync: the caller alone posts every worker's part of the batch and collects it (a second
            # thread only splits the batch into two hand-offs per worker). Async: a thread sleeps
            # while a worker steps the batch it posted: two per worker keep every worker fed (the
            # next batch posted while it steps one), without more wake-ups.
            pool["num_threads"] = 1 if sync else min(len(env_fns), _THREADS_PER_WORKER * num_workers)
        pool["num_envs"] = len(env_fns)
        env_kwargs = pool["env_kwargs"]
        pool["env_kwargs"] = None  # given to the factories; the native pool sees one spec
        _check_pool_options(pool)
        pool["env_kwargs"] = env_kwargs  # the pool's config says what its envs were made with
        pickle_bytes = _check_info_pickle(extra["info_pickle"])
        self.obs_pickle, self.action_pickle = extra["obs_pickle"], extra["action_pickle"]
        workers = WorkerGroup(env_fns, num_workers, probe_info=spare_env, time_steps=time_steps)
        try:
            native, spec = self._start(workers, pool, info_keys, pickle_bytes, spin, sync)
        except BaseException:
            workers.close()
            raise
        return native, spec, pool, workers

    def _env_fns(self, pool: dict[str, Any], extra: dict[str, Any],
                 make_kwargs: dict[str, Any]) -> list[Callable[[], gymnasium.Env]]:
        env_kwargs = pool["env_kwargs"]
        if self.env_id is not None:
            num_envs = _check_int("num_envs", pool["num_envs"])
            if num_envs < 1:
                raise ValueError(f"num_envs must be >= 1, got {num_envs}")
            if env_kwargs is not None and (
                not isinstance(env_kwargs, (list, tuple)) or len(env_kwargs) != num_envs
                or not all(isinstance(d, dict) for d in env_kwargs)
            ):
                raise ValueError(f"env_kwargs needs one dict per env ({num_envs})")
            common = dict(make_kwargs)
            for key in ("max_episode_steps", "render_mode"):
                if extra[key] is not None:
                    common[key] = extra[key]
            per_env = env_kwargs or [{}] * num_envs
            return [_GymnasiumMaker(self.env_id, {**common, **dict(kw)}) for kw in per_env]
        assert self.env_fns is not None
        env_fns = list(self.env_fns)
        if not env_fns or not all(callable(fn) for fn in env_fns):
            raise TypeError("env_fns must be a non-empty sequence of callables that each return a gymnasium.Env")
        if pool["num_envs"] not in (POOL_DEFAULTS["num_envs"], len(env_fns)):
            raise ValueError(f"num_envs ({pool['num_envs']}) must equal len(env_fns) ({len(env_fns)})")
        for key, value in (("env_kwargs", env_kwargs), *((k, extra[k]) for k in ("max_episode_steps", "render_mode"))):
            if value is not None:
                raise ValueError(f"{key} applies to an env id; with env_fns, pass it to the factories")
        return env_fns

    def _start(self, workers: WorkerGroup, pool: dict[str, Any], info_keys: Any,
               pickle_bytes: int, spin: bool | None, sync: bool) -> tuple[Any, EnvSpec]:
        reports = workers.start()
        first = reports[0]
        _, obs_space, action_space, render, render_mode, max_steps, threshold, gym_id = first
        probed = workers.probed_info
        for w, report in enumerate(reports[1:], start=1):
            if report[1] != obs_space or report[2] != action_space or report[3] != render:
                raise RuntimeError(  # AsyncVectorEnv's error type for it
                    f"every env of a pool must have the same spaces: worker {w}'s envs have "
                    f"{report[1]} / {report[2]}, worker 0's {obs_space} / {action_space}"
                )
        workers._first_report = first
        obs = SpaceLayout(obs_space, "obs", _check_pickle_size("obs_pickle", self.obs_pickle))
        action = SpaceLayout(action_space, "action", _check_pickle_size("action_pickle", self.action_pickle))
        info = _info_fields(info_keys, probed)
        state_fields = list(obs.fields)
        for _, value_field, mask_field in info:
            state_fields += [value_field, mask_field]
        if pickle_bytes:
            state_fields.append(_field(PICKLED_INFO, np.dtype(np.uint8), (pickle_bytes,), "box", [0.0], [255.0]))
        action_fields = list(action.fields)
        render_bytes = render.nbytes if render else 0
        shape = (workers.worker_of_env, [_row_bytes(f) for f in action_fields], [_row_bytes(f) for f in state_fields],
                 render_bytes)
        channel = _native.ProcessChannel.create(*shape)
        seeds = env_seeds(pool["seed"], pool["num_envs"])
        # No seed given: each env's first reset gets None (as from Gymnasium's vector envs), not the
        # engine's 64-bit seed, which NumPy's legacy seeding (np.random.seed) refuses.
        unseeded = dict(enumerate(seeds)) if pool["seed"] is None else {}
        workers.attach(channel, ("attach", shape, os.getpid(), channel.fd, cloudpickle.dumps((obs, action)), info,
                                 pickle_bytes, unseeded))
        if self.env_id is None and gym_id:
            self.task_id = f"python:{gym_id}"
        native_spec = {
            "task_id": self.task_id, "config": {}, "state": state_fields, "action": action_fields,
            "max_num_players": 1, "max_episode_steps": int(max_steps or 0), "reward_threshold": threshold,
            "render_shape": render.native_shape if render else None, "tables": {},
        }
        options = _native.PoolOptions(num_envs=pool["num_envs"], seeds=seeds, batch_size=pool["batch_size"],
                                      num_threads=pool["num_threads"], autoreset_mode=pool["autoreset_mode"],
                                      episode_stats=pool["episode_stats"])
        native = _native.Pool.for_processes(native_spec, channel, options)
        pool["num_threads"] = native.num_threads
        pool["num_workers"] = workers.num_workers
        budgets = _spin_budgets(spin, native.num_threads, workers.num_workers, sync)
        channel.set_spin(*budgets)
        pool["spin"] = budgets != (0, 0)
        pool["max_episode_steps"] = max_steps  # env 0's time limit (None: none)
        pool["info_keys"] = {key: (field["shape"], field["dtype"]) for key, field, _ in info}
        pool["info_pickle"] = pickle_bytes - PICKLE_HEADER if pickle_bytes else 0  # bytes for the pickle
        pool["obs_pickle"] = obs.pickle_bytes  # bytes for a pickled observation (0: not pickled)
        pool["action_pickle"] = action.pickle_bytes
        spec = PythonEnvSpec(self.task_id, native.spec, pool, obs, action, render)
        spec.masked_info_keys = tuple(key for key, _, _ in info)
        self.render_mode = render_mode
        return native, spec


def python_source(task_id: str, kwargs: dict[str, Any]) -> tuple[PythonEnvSource, dict[str, Any]] | None:
    """The source and kwargs of a Python env task id (``gymnasium:<id>`` or a registered alias of
    one), or None for a native task id."""
    if task_id in PYTHON_ALIASES:
        base, defaults = PYTHON_ALIASES[task_id]
        return PythonEnvSource(env_id=base[len(GYMNASIUM_PREFIX):], name=task_id), {**defaults, **kwargs}
    if task_id.startswith(GYMNASIUM_PREFIX):
        return PythonEnvSource(env_id=task_id[len(GYMNASIUM_PREFIX):]), kwargs
    return None


def gymnasium_spec(task_id: str) -> Any:
    """Gymnasium's spec of a Python env task id (its registry entry; ``"module:<id>"`` imports the
    module first, as ``gymnasium.make`` does): an unknown id fails here, before any worker starts."""
    base = PYTHON_ALIASES[task_id][0] if task_id in PYTHON_ALIASES else task_id
    module, _, env_id = base[len(GYMNASIUM_PREFIX):].rpartition(":")
    if module:
        importlib.import_module(module)
    return gymnasium.spec(env_id)


class _GymnasiumMaker:
    """``gymnasium.make(env_id, **kwargs)`` as a picklable factory."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        self.env_id = env_id
        self.kwargs = kwargs

    def __call__(self) -> gymnasium.Env:
        return gymnasium.make(self.env_id, **self.kwargs)
