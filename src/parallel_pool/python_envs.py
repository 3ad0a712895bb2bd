"""The Python-env backend: any ``gymnasium.Env`` run in worker processes, behind the native pool's API.

Design
------
Every front-end (``GymnasiumEnv``, ``GymEnv``, ``DmEnv``, the vector view, the integrations) drives a
``_native.Pool``, whose engine owns the semantics: sync and async batching, ``info["env_id"]``, the
autoreset modes, episode statistics, seeding, bad-input checks and ``EnvError``. This backend reuses
that engine unchanged rather than re-implementing it in a Python coordinator: a pool of Python envs
is a native pool whose envs are ``ProcessEnv``s (``native/core/process_env.h``), each forwarding its
``Reset``/``Step``/``Render`` to the worker process that holds the Python env, through a
shared-memory ``ProcessChannel`` (``native/core/process_channel.h``). So both backends have
identical semantics by construction, and the conformance tests run over both.

- **Data path of one step.** The pool's thread running env ``i``'s job copies the action row into
  env ``i``'s slot (a memfd mapping shared with the workers), marks the slot requested and rings
  its worker's doorbell (a futex, woken only while the worker sleeps), then sleeps on the slot's
  futex word. The worker, parked in ``ProcessChannel.wait`` with the GIL released, collects every
  requested slot of its envs, steps each Python env with NumPy views of the slot's action area,
  writes the observation into the slot's output area (NumPy views, no pickling), and completes the
  slot. The pool thread copies the output into the batch's output block, which NumPy views without
  a copy, as for native envs. Measured on the 2-core host: a futex round trip between two
  processes costs ~8 us (a pipe round trip, as ``AsyncVectorEnv`` uses with pickled messages, ~5-25 us
  plus pickling), against ~7-13 us for a ``CartPole-v1`` step in Python.
- **Threads and workers.** Each env's job blocks a pool thread (asleep on a futex) while its worker
  runs it. ``num_workers`` processes hold the envs round robin (env ``i`` on worker ``i % num_workers``):
  several envs per process, and one wake-up serves every request pending for them. The default is one
  worker per CPU but one (at least one, at most ``num_envs``): the parent needs a core of its own, for
  the caller's loop and for the pool's threads that carry each step's action and results. The pool has
  ``_THREADS_PER_WORKER`` threads per worker by default (at most one per env). Both defaults were
  measured on the 2-core host (``CartPole-v1`` and ``LunarLander-v3`` at 8, 32 and 64 envs, sync and
  async): one worker beat two in every case, up to 2x for the cheap CartPole, because two workers
  and the parent's threads contend for two cores and every step then waits for a context switch;
  two threads per worker let a worker find its next request queued while a result is carried back,
  and more threads add wake-ups that cost more than they feed the worker (four per worker: 10-25%
  slower; one per env: 2x slower).
- **Spec.** Built at run time from the env's spaces: ``Box``, ``Discrete``, ``MultiDiscrete``,
  ``MultiBinary``, and a ``Dict``/``Tuple`` of those as observations (a ``Dict`` of those as
  actions); anything else is refused with a ``TypeError`` naming the space. The pool's
  ``observation_space``/``action_space`` are the env's own space objects. The env's own ``info``
  dict is not carried (only the engine's entries: ``env_id``, ``elapsed_step``, episode stats,
  same-step final observations).
- **Seeds.** As the native pools: ``seed=s`` gives env ``i`` the seed ``s + i`` on its first reset
  (``env.reset(seed=s + i)``, as ``SyncVectorEnv.reset(seed=s)``), and ``reset(seed=...)`` re-seeds;
  other resets continue the env's own stream.
- **Processes.** Workers are started with the ``spawn`` method (the parent has threads: never a
  plain fork), so env factories must be picklable; they are sent with ``cloudpickle`` (a Gymnasium
  dependency), so lambdas and closures work, as with ``AsyncVectorEnv``. Workers ignore SIGINT
  (Ctrl-C is the parent's to handle) and exit on their own within ``_PARENT_POLL_S`` once their
  parent is gone, however it died (they watch ``getppid()`` while they wait); the channel is a
  memfd, so nothing is left in ``/dev/shm`` either.
- **Faults.** An exception in a worker's env is that env's ``EnvError`` entry, with the traceback's
  text; the other envs go on. A worker that dies makes each of its envs' pending and later jobs
  fail with a message naming the worker and its envs (the pool's threads watch its pidfd), and
  ``env.workers.restart()`` starts a new process for them (their next step resets them).
  ``recv(timeout=...)`` is the engine's. ``close()`` stops the workers (killing any that do not
  exit in time) and then closes the pool.

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

import multiprocessing
import os
import signal
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
from parallel_pool.spec import EnvSpec

# make("gymnasium:<id>"): a Gymnasium-registered env id run by this backend.
GYMNASIUM_PREFIX = "gymnasium:"
# make_python's kwargs besides the pool options every task takes.
PYTHON_DEFAULTS: dict[str, Any] = {"num_workers": 0, "max_episode_steps": None, "render_mode": None}
# A waiting worker checks this often that its parent lives (an orphan exits within this).
_PARENT_POLL_S = 0.1
# How long close() waits for a worker to exit before it kills it.
_JOIN_S = 2.0
# How long the pool waits for a worker to build its envs and report (imports, env construction).
_START_S = 120.0
# The pool's default threads per worker process (see "Threads and workers" above for the measurements).
_THREADS_PER_WORKER = 2


def default_num_workers(num_envs: int) -> int:
    """The default worker count: one per CPU but one (the parent's core), at least 1, at most ``num_envs``."""
    return max(1, min(num_envs, (os.cpu_count() or 1) - 1))


def _as_dtype(dtype: Any, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    allowed = {"bool", "int8", "uint8", "int16", "int32", "int64", "float32", "float64"}
    if dtype.name not in allowed:
        raise TypeError(f"{what} has dtype {dtype}, which a pool field cannot hold (allowed: {sorted(allowed)})")
    return dtype


def _leaf_field(name: str, space: spaces.Space, what: str) -> dict[str, Any]:
    """The native field dict (SpecToDict's form) of one non-composite space."""
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return _field(name, np.dtype(np.int64), (), "discrete", [start], [start + int(space.n) - 1])
    if isinstance(space, spaces.Box):
        dtype = _as_dtype(space.dtype, what)
        return _field(name, dtype, space.shape, "box", _bound(space.low), _bound(space.high))
    if isinstance(space, spaces.MultiDiscrete):
        low = np.broadcast_to(np.asarray(space.start, dtype=np.int64), space.shape)
        high = low + np.asarray(space.nvec, dtype=np.int64) - 1
        return _field(name, _as_dtype(space.dtype, what), space.shape, "box", _bound(low), _bound(high))
    if isinstance(space, spaces.MultiBinary):
        shape = tuple(np.atleast_1d(np.asarray(space.n)).tolist())
        return _field(name, _as_dtype(space.dtype, what), shape, "box", [0.0], [1.0])
    raise TypeError(
        f"{what} is a {type(space).__name__} space; the Python backend supports Box, Discrete, MultiDiscrete, "
        "MultiBinary, and a Dict or Tuple of those"
    )


def _bound(values: np.ndarray) -> list[float]:
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size and np.all(flat == flat[0]):
        return [float(flat[0])]
    return flat.tolist()


def _field(name: str, dtype: np.dtype, shape: tuple[int, ...], space: str, low: list[float],
           high: list[float]) -> dict[str, Any]:
    # NaN actions are the env's to accept or refuse, as in Gymnasium: the pool does not check them.
    return {
        "name": name, "dtype": dtype.name, "shape": tuple(int(d) for d in shape), "space": space,
        "low": low, "high": high, "per_player": False, "allow_nan": True,
    }


def space_fields(space: spaces.Space, prefix: str, allow_tuple: bool = True) -> list[tuple[Any, dict[str, Any]]]:
    """``(key, field)`` per leaf of ``space``: key None for a plain space, the Dict key or Tuple index
    otherwise. Fields are named ``prefix``, or ``prefix:<key>``."""
    what = f"the {'observation' if prefix == 'obs' else 'action'} space"
    if isinstance(space, spaces.Dict):
        out: list[tuple[Any, dict[str, Any]]] = []
        for key, sub in space.spaces.items():
            if not isinstance(key, str) or ":" in key or "." in key:
                raise TypeError(f"{what}'s Dict keys must be str without ':' or '.', got {key!r}")
            out.append((key, _leaf_field(f"{prefix}:{key}", sub, f"{what}[{key!r}]")))
        return out
    if isinstance(space, spaces.Tuple):
        if not allow_tuple:
            raise TypeError(f"{what} is a Tuple; the Python backend takes Dict actions (of named arrays) only")
        return [(i, _leaf_field(f"{prefix}:{i}", sub, f"{what}[{i}]")) for i, sub in enumerate(space.spaces)]
    return [(None, _leaf_field(prefix, space, what))]


def _row_bytes(field: dict[str, Any]) -> int:
    return int(np.prod(field["shape"], dtype=np.int64)) * np.dtype(field["dtype"]).itemsize


class PythonEnvSpec(EnvSpec):
    """The spec of a pool of Python envs: fields from the env's spaces, and those spaces themselves."""

    def __init__(self, task_id: str, native: dict[str, Any], pool_config: dict[str, Any],
                 observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().__init__(task_id, native, pool_config)
        self._observation_space = observation_space
        self._action_space = action_space

    @property
    def observation_space(self) -> gymnasium.Space:
        """The env's own single-env observation space."""
        return self._observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """The env's own single-env action space."""
        return self._action_space


# ---- the worker process ----------------------------------------------------------------------------


class _EnvSlot:
    """One env in a worker, with NumPy views of its slot: actions in, observation (and frame) out."""

    def __init__(self, env: gymnasium.Env, channel: Any, env_id: int, obs: list, action: list,
                 render_shape: tuple[int, ...] | None) -> None:
        self.env = env
        buffer = np.frombuffer(channel.buffer, dtype=np.uint8)

        def view(offset: int, field: dict[str, Any]) -> np.ndarray:
            dtype = np.dtype(field["dtype"])
            return np.ndarray(field["shape"], dtype=dtype, buffer=buffer, offset=offset)

        self.obs_views = [(key, view(channel.state_offset(env_id, f), field)) for f, (key, field) in enumerate(obs)]
        self.action_views = [
            (key, view(channel.action_offset(env_id, f), field)) for f, (key, field) in enumerate(action)
        ]
        self.frame = None
        if render_shape is not None:
            self.frame = np.ndarray(render_shape, dtype=np.uint8, buffer=buffer, offset=channel.render_offset(env_id))
        self.single_obs = len(self.obs_views) == 1 and self.obs_views[0][0] is None
        self.discrete_action = self.action_views[0][1].shape == () and len(self.action_views) == 1 \
            and self.action_views[0][0] is None

    def action(self) -> Any:
        if self.discrete_action:
            return self.action_views[0][1][()]
        if len(self.action_views) == 1 and self.action_views[0][0] is None:
            return self.action_views[0][1].copy()
        return {key: v[()] if v.shape == () else v.copy() for key, v in self.action_views}

    def write_obs(self, obs: Any) -> None:
        if self.single_obs:
            self.obs_views[0][1][...] = obs
        else:
            for key, v in self.obs_views:
                v[...] = obs[key]

    def write_frame(self) -> None:
        frame: Any = self.env.render()
        assert self.frame is not None
        if not isinstance(frame, np.ndarray) or frame.shape != self.frame.shape:
            got = frame.shape if isinstance(frame, np.ndarray) else type(frame).__name__
            raise ValueError(f"render() returned {got}, expected an RGB frame of shape {self.frame.shape}")
        self.frame[...] = frame


def _probe_render_shape(env: gymnasium.Env) -> tuple[int, ...] | None:
    """The shape of the env's rgb_array frames (a reset and a render: the pool's first reset of each
    env is seeded, so this changes no episode), or None when it does not render frames."""
    if env.render_mode != "rgb_array":
        return None
    env.reset()
    frame: Any = env.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise TypeError(
            f"render_mode='rgb_array' but render() returned {type(frame).__name__}, not an (h, w, 3) uint8 array"
        )
    return tuple(int(d) for d in frame.shape)


def _worker_main(conn: Connection, worker: int, env_ids: list[int], payload: bytes) -> None:
    """A worker process: builds its envs, reports their spaces, attaches to the channel, serves it."""
    # Ctrl-C reaches the whole process group: it is the parent's to handle (it closes the pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        env_fns = cloudpickle.loads(payload)
        envs = [fn() for fn in env_fns]
        render_shape = _probe_render_shape(envs[0])
        env0 = envs[0]
        spec = getattr(env0, "spec", None)
        conn.send(("spaces", env0.observation_space, env0.action_space, render_shape, env0.render_mode,
                   getattr(spec, "max_episode_steps", None), getattr(spec, "reward_threshold", None),
                   getattr(spec, "id", None)))
        message = conn.recv()
        if message[0] != "attach":
            return
        _, shape, parent_pid, fd, obs_fields, action_fields = message
        channel = _native.ProcessChannel.attach(*shape, parent_pid=parent_pid, fd=fd)
        slots = {i: _EnvSlot(env, channel, i, obs_fields, action_fields, render_shape) for i, env in zip(env_ids, envs)}
        conn.send(("attached",))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    _serve(channel, worker, slots)
    for slot in slots.values():
        try:
            slot.env.close()
        except Exception:  # noqa: S110 (the worker exits either way)
            pass


def _serve(channel: Any, worker: int, slots: dict[int, _EnvSlot]) -> None:
    step, reset = _native.CHANNEL_STEP, _native.CHANNEL_RESET
    wait, finish, fail = channel.wait, channel.finish, channel.fail
    while True:
        requests = wait(worker, _PARENT_POLL_S)
        if requests is None:
            return
        for env_id, command, seed in requests:
            slot = slots[env_id]
            try:
                if command == step:
                    obs, reward, terminated, truncated, _ = slot.env.step(slot.action())
                    slot.write_obs(obs)
                    finish(env_id, float(reward), bool(terminated), bool(truncated))
                elif command == reset:
                    obs, _ = slot.env.reset(seed=seed)
                    slot.write_obs(obs)
                    finish(env_id, 0.0, False, False)
                else:
                    slot.write_frame()
                    finish(env_id, 0.0, False, False)
            except Exception:
                fail(env_id, f"(Python env, worker {worker}, pid {os.getpid()})\n{traceback.format_exc()}")


# ---- the parent's side -----------------------------------------------------------------------------


class WorkerGroup:
    """The worker processes of one pool of Python envs: which envs each holds, their liveness, restarts.

    ``env.workers`` of a pool made by ``make_python`` (None for a native pool).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], num_workers: int) -> None:
        num_envs = len(env_fns)
        self.num_workers = max(1, min(num_workers, num_envs))
        # Round robin: env i on worker i % num_workers. The pool's threads take jobs in env order, so
        # consecutive jobs go to different workers, which all stay busy with fewer threads than envs.
        self.worker_of_env = [i % self.num_workers for i in range(num_envs)]
        self.env_ids: list[list[int]] = [list(range(w, num_envs, self.num_workers)) for w in range(self.num_workers)]
        self._payloads = [cloudpickle.dumps([env_fns[i] for i in ids]) for ids in self.env_ids]
        self._context = multiprocessing.get_context("spawn")
        self._processes: list[Any] = [None] * self.num_workers
        self._conns: list[Connection | None] = [None] * self.num_workers
        self._channel: Any = None
        self._attach_message: tuple | None = None
        self._first_report: tuple = ()  # worker 0's report: a restarted worker must match it
        self.closed = False
        # Workers of a pool that is dropped without close() still stop (the pool's own finalizer).
        self._finalizer = weakref.finalize(self, WorkerGroup._stop, self._processes, self._conns, [None])

    # -- start-up --
    def start(self) -> list[tuple]:
        """Starts every worker; returns each one's report (its spaces and render shape)."""
        for w in range(self.num_workers):
            self._spawn(w)
        return [self._report(w) for w in range(self.num_workers)]

    def _spawn(self, w: int) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_worker_main, args=(child, w, self.env_ids[w], self._payloads[w]),
            name=f"parallel_pool-python-worker-{w}", daemon=True,
        )
        process.start()
        child.close()
        self._processes[w] = process
        self._conns[w] = parent

    def _receive(self, w: int, what: str) -> tuple:
        conn, process = self._conns[w], self._processes[w]
        assert conn is not None
        waited = 0.0
        while not conn.poll(0.1):
            waited += 0.1
            if not process.is_alive() and not conn.poll(0):
                raise RuntimeError(f"worker {w} (envs {self._range(w)}) exited with code {process.exitcode} "
                                   f"while {what}")
            if waited > _START_S:
                raise TimeoutError(f"worker {w} (envs {self._range(w)}) did not answer in {_START_S} s while {what}")
        try:
            message = conn.recv()
        except EOFError:
            raise RuntimeError(f"worker {w} (envs {self._range(w)}) closed its pipe while {what}") from None
        if message[0] == "error":
            raise RuntimeError(f"worker {w} (envs {self._range(w)}) failed while {what}:\n{message[1]}")
        return message

    def _report(self, w: int) -> tuple:
        return self._receive(w, "building its envs")

    def attach(self, channel: Any, message: tuple) -> None:
        """Hands every worker the channel and waits until each has mapped it."""
        self._channel = channel
        self._attach_message = message
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, WorkerGroup._stop, self._processes, self._conns, [channel])
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

    def dead(self) -> dict[int, list[int]]:
        """The workers whose process has exited, each with the env ids it held."""
        return {w: list(self.env_ids[w]) for w, p in enumerate(self._processes) if not p.is_alive()}

    def restart(self) -> list[int]:
        """Starts a new process for each dead worker; returns the env ids they hold.

        Their envs are new instances: each one's next step resets it (its episode was cut by the
        failure), or reset them explicitly (``reset(env_id=...)``, with a seed if wanted)."""
        if self.closed:
            raise RuntimeError("the pool is closed")
        restarted: list[int] = []
        for w in sorted(self.dead()):
            old, conn = self._processes[w], self._conns[w]
            old.join(0)
            if conn is not None:
                conn.close()
            self._spawn(w)
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
    def _stop(processes: list[Any], conns: list[Connection | None], channel: list[Any]) -> None:
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
        num_workers = min(num_workers, len(env_fns)) if num_workers else default_num_workers(len(env_fns))
        if pool["num_threads"] == 0:
            # Each thread sleeps while a worker steps the env of its job: two per worker keep every
            # worker fed (a request queued while it steps), without the wake-ups of one per env.
            pool["num_threads"] = min(len(env_fns), _THREADS_PER_WORKER * num_workers)
        pool["num_envs"] = len(env_fns)
        pool["env_kwargs"] = None  # given to the factories; the native pool sees one spec
        _check_pool_options(pool)
        workers = WorkerGroup(env_fns, num_workers)
        try:
            native, spec = self._start(workers, pool)
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

    def _start(self, workers: WorkerGroup, pool: dict[str, Any]) -> tuple[Any, EnvSpec]:
        reports = workers.start()
        first = reports[0]
        _, obs_space, action_space, render_shape, render_mode, max_steps, threshold, gym_id = first
        for w, report in enumerate(reports[1:], start=1):
            if report[1] != obs_space or report[2] != action_space or report[3] != render_shape:
                raise ValueError(
                    f"every env of a pool must have the same spaces: worker {w}'s envs have "
                    f"{report[1]} / {report[2]}, worker 0's {obs_space} / {action_space}"
                )
        workers._first_report = first
        obs = space_fields(obs_space, "obs")
        action = space_fields(action_space, "action", allow_tuple=False)
        state_fields = [field for _, field in obs]
        action_fields = [field for _, field in action]
        render_bytes = int(np.prod(render_shape)) if render_shape else 0
        shape = (workers.worker_of_env, [_row_bytes(f) for f in action_fields], [_row_bytes(f) for f in state_fields],
                 render_bytes)
        channel = _native.ProcessChannel.create(*shape)
        workers.attach(channel, ("attach", shape, os.getpid(), channel.fd, obs, action))
        if self.env_id is None and gym_id:
            self.task_id = f"python:{gym_id}"
        native_spec = {
            "task_id": self.task_id, "config": {}, "state": state_fields, "action": action_fields,
            "max_num_players": 1, "max_episode_steps": int(max_steps or 0), "reward_threshold": threshold,
            "render_shape": render_shape, "tables": {},
        }
        seeds = env_seeds(pool["seed"], pool["num_envs"])
        native = _native.Pool.for_processes(
            native_spec, channel, pool["num_envs"], pool["batch_size"], pool["num_threads"], seeds,
            pool["autoreset_mode"], pool["episode_stats"],
        )
        pool["num_threads"] = native.num_threads
        pool["num_workers"] = workers.num_workers
        spec = PythonEnvSpec(self.task_id, native.spec, pool, obs_space, action_space)
        self.render_mode = render_mode
        return native, spec


class _GymnasiumMaker:
    """``gymnasium.make(env_id, **kwargs)`` as a picklable factory."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        self.env_id = env_id
        self.kwargs = kwargs

    def __call__(self) -> gymnasium.Env:
        return gymnasium.make(self.env_id, **self.kwargs)
