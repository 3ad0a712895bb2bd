"""Property-based tests: a Hypothesis state machine drives one pool with valid and invalid calls.

The machine makes a pool (CartPole-v1; the tutorial's GuessingGame-v0, multi-player and rendering;
Pendulum-v1 and MountainCarContinuous-v0, continuous), sync or async, in each autoreset mode, and
then calls ``reset``/``async_reset``/``step``/``send``/``recv``/``render``/``close`` on it in any
order, with arguments that are valid (in every layout NumPy allows: non-contiguous, Fortran-order,
big-endian, read-only, broadcast, castable dtypes, lists, dicts) or not (wrong shapes and dtypes,
NaN, out-of-range discrete actions, bad, duplicate, busy or unsteppable env ids, bad seeds and
masks, recv with nothing that can fill a batch, calls after close).

What it checks:

- An invalid call raises the documented exception (README "Errors and bad input";
  tests/core/test_bad_input.py) and changes nothing: ``outstanding`` and the blocks allocated stay as
  they were, and every later result still equals the twin's (below), so no env was stepped, reset
  or re-seeded by a refused call.
- Every env sent comes back exactly once (in send order in sync mode), ``outstanding`` counts
  what is in flight, ``elapsed_step`` counts steps since the reset, time limits truncate, and each
  autoreset mode does what Gymnasium's does: next_step's step after an episode end is a reset
  (reward 0, both flags False); same_step resets inside the step and puts the last observation in
  ``info["final_obs"]``; disabled refuses to step an env whose episode ended. Episode statistics
  add up the rewards and steps seen.
- A twin pool (same task, config and seeds; ``batch_size=1``, stepped one env at a time with
  C-contiguous arrays of the action field's own dtype) gets the same valid calls: each env's rows
  in the pool under test equal the twin's exactly. So an action in an unusual layout or dtype is
  read as the values it holds, inf is handled as the env defines it, and results do not depend on
  the batch an env lands in or on thread scheduling.
- Arrays returned earlier never change (output blocks are recycled only when unreferenced), also
  after close; close joins every thread the pool started.
- Nothing crashes or hangs: every wait has a timeout or a watchdog that closes the pool, so a lost
  wake-up fails the test instead of blocking the suite.

Settings: ``deadline=None`` because Hypothesis' deadline measures the speed of one example, and on
the shared 2-core CI machine (other jobs, several worker threads per pool) an example's time varies
several-fold with load: a deadline there fails on load, not on a bug, and tests never assert a
speed. Hangs are caught by the waits' own timeouts instead. 500 examples of up to 50 steps take
about 15-20 s on the project's 2-core machine under a load of 6 (~35 ms an example, most of it making
and closing two pools); ``PP_PROPERTY_EXAMPLES`` raises the count for a longer hunt, e.g.
``PP_PROPERTY_EXAMPLES=3000 pytest tests/core/test_properties.py`` (about 2 minutes; run clean here).
"""

from __future__ import annotations

import collections
import functools
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import parallel_pool
from parallel_pool import PoolClosedError

# Long enough that no legitimate wait on a loaded machine comes near it (a batch here is a few
# envs of microsecond steps), short enough that a lost wake-up fails within the suite's budget.
WAIT_S = 60.0
MODES = ("next_step", "same_step", "disabled")


@dataclass(frozen=True)
class Task:
    task_id: str
    discrete: bool
    renders: bool
    # Continuous actions: the action's bounds (the env clips to them, as Gymnasium's does).
    low: float = 0.0
    high: float = 0.0
    # The frame render() gives, when it renders (the classic-control frames are Gymnasium's, compared
    # pixel for pixel in tests/envs/classic_control/test_classic_control_render.py; the tutorial's encode its state).
    frame_shape: tuple[int, ...] = ()


TASKS = (
    Task("CartPole-v1", discrete=True, renders=True, frame_shape=(400, 600, 3)),
    Task("GuessingGame-v0", discrete=True, renders=True, frame_shape=(8, 8, 3)),
    Task("Pendulum-v1", discrete=False, renders=True, low=-2.0, high=2.0, frame_shape=(500, 500, 3)),
    Task("MountainCarContinuous-v0", discrete=False, renders=True, low=-1.0, high=1.0, frame_shape=(400, 600, 3)),
)

# Invalid make() kwargs and what each raises (README "`make` kwargs"; tests/core/test_bad_input.py).
BAD_MAKE = (
    ({"num_envs": 0}, ValueError),
    ({"num_envs": 2, "batch_size": 3}, ValueError),
    ({"num_threads": -1}, ValueError),
    ({"seed": -1}, ValueError),
    ({"seed": "x"}, TypeError),
    ({"autoreset_mode": "sometimes"}, ValueError),
    ({"max_episode_steps": -1}, ValueError),
    ({"episode_stats": 1}, TypeError),
    ({"no_such_kwarg": 1}, ValueError),
    ({"render_mode": "human"}, ValueError),
)


@st.composite
def pool_configs(draw: Any) -> tuple[Task, dict[str, Any]]:
    task = draw(st.sampled_from(TASKS))
    num_envs = draw(st.integers(1, 4))
    batch_size = num_envs if draw(st.booleans()) else draw(st.integers(1, num_envs))
    kwargs: dict[str, Any] = {
        "num_envs": num_envs,
        "batch_size": batch_size,
        "seed": draw(st.integers(0, 2**31)),
        "num_threads": draw(st.integers(0, 2)),
        "autoreset_mode": draw(st.sampled_from(MODES)),
        "episode_stats": draw(st.booleans()),
        # Short time limits, so that episodes end (by truncation) within a run of the machine.
        "max_episode_steps": draw(st.integers(1, 8) | st.just(40)),
    }
    if task.task_id == "GuessingGame-v0":
        kwargs["max_num_players"] = draw(st.sampled_from([1, 2, 4]))
        kwargs["num_actions"] = draw(st.integers(2, 4))
        kwargs["episode_length"] = draw(st.integers(1, 4))
    return task, kwargs


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _settled_threads(expected: int | None, wait_s: float = 5.0) -> int:
    """The process's thread count, once threads that were just joined have left /proc (a joined
    thread's task can linger there for a moment after pthread_join or Thread.join returns): polls
    until it is at most `expected` (or, for None, until it stops falling), for at most `wait_s`."""
    deadline = time.monotonic() + wait_s
    count = _threads()
    while time.monotonic() < deadline:
        # At or below: the count is the whole process's, and a thread of an earlier test may end.
        if expected is not None and count <= expected:
            return count
        time.sleep(0.002)
        now = _threads()
        if expected is None and now == count:
            return count
        count = now
    return count


@dataclass
class Row:
    """One env's result, copied out of the batch."""

    env_id: int
    obs: np.ndarray  # (players, ...) for a multi-player env, else the env's row
    reward: float
    terminated: bool
    truncated: bool
    elapsed: int
    extra: dict[str, Any]  # players, final_obs, episode statistics: compared with the twin's

    def same_as(self, other: Row) -> bool:
        return (
            self.env_id == other.env_id
            and np.array_equal(self.obs, other.obs, equal_nan=True)
            and _same_number(self.reward, other.reward)
            and (self.terminated, self.truncated, self.elapsed) == (other.terminated, other.truncated, other.elapsed)
            and self.extra.keys() == other.extra.keys()
            and all(np.array_equal(self.extra[k], other.extra[k], equal_nan=True) for k in self.extra)
        )


def _same_number(a: float, b: float) -> bool:
    return a == b or (np.isnan(a) and np.isnan(b))


def _rows(result: tuple, stats: bool, same_step: bool) -> list[Row]:
    """The rows of a (obs, reward, terminated, truncated, info) batch, in batch order.

    The keys that a batch has only when one of its rows has them (``_episode``, ``_final_obs``) are
    filled in for every row, so that a row compares equal whatever batch it came in.
    """
    obs, reward, terminated, truncated, info = result
    ids = info["env_id"]
    players = info.get("players")
    player_ids = players.get("env_id") if players is not None else None  # absent with one player
    rows = []
    for k, env_id in enumerate(ids):
        extra: dict[str, Any] = {}
        if player_ids is not None:
            mine = player_ids == env_id
            assert mine.sum() == info["num_players"][k], "one player row per active player"
            env_obs = obs[mine].copy()
            extra["player_reward"] = players["reward"][mine].copy()
        elif players is not None:
            env_obs = obs[k : k + 1].copy()
            extra["player_reward"] = players["reward"][k : k + 1].copy()
        else:
            env_obs = obs[k].copy()
        if players is not None:
            extra["num_players"] = int(info["num_players"][k])
            np.testing.assert_array_equal(env_obs[:, 0], np.arange(len(env_obs)))  # the player index
        if same_step:
            extra["final"] = bool(info["_final_obs"][k]) if "_final_obs" in info else False
            if extra["final"]:
                extra["final_obs"] = np.array(info["final_obs"][k])
            elif "final_obs" in info:
                assert info["final_obs"][k] is None
        if stats:
            extra["episode"] = bool(info["_episode"][k]) if "_episode" in info else False
            if extra["episode"]:
                extra["episode_r"] = float(info["episode"]["r"][k])
                extra["episode_l"] = int(info["episode"]["l"][k])
        rows.append(
            Row(int(env_id), env_obs, float(reward[k]), bool(terminated[k]), bool(truncated[k]),
                int(info["elapsed_step"][k]), extra)
        )
    # Per-player rows belong to the batch's envs and to no other.
    if player_ids is not None:
        assert set(player_ids.tolist()) <= set(ids.tolist())
        assert len(player_ids) == int(info["num_players"].sum())
    return rows


@dataclass
class EnvModel:
    """What the test knows about one env of the pool under test."""

    ever_reset: bool = False
    over: bool = False  # its last step ended the episode (next_step/disabled)
    elapsed: int = 0
    episode_return: float = 0.0
    pending: str | None = None  # "reset" | "step" | "autoreset" while in flight
    last: Row | None = None


class _Watchdog:
    """One thread for the whole module: closes the pool of a call still blocked after WAIT_S, which
    wakes every wait in it, so that a lost wake-up fails the test instead of hanging the suite."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: tuple[Any, float] | None = None
        self.fired = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pp-watchdog", daemon=True)
            self._thread.start()

    def arm(self, env: Any) -> None:
        with self._lock:
            self._armed = (env, time.monotonic() + WAIT_S)

    def disarm(self) -> None:
        with self._lock:
            self._armed = None

    def _run(self) -> None:
        while True:
            time.sleep(0.5)
            with self._lock:
                armed = self._armed
                late = armed is not None and time.monotonic() > armed[1]
            if late and armed is not None:
                self.fired = True
                armed[0].close()


WATCHDOG = _Watchdog()


def _trace(rule_name: str) -> None:
    """Counts a rule in Hypothesis' statistics (``pytest --hypothesis-show-statistics`` shows how
    many examples reached each rule)."""
    event("rule " + rule_name)


def _pool_rule(**arguments: Any) -> Callable[[Callable[..., None]], Any]:
    """``@rule(**arguments)`` for a call on the pool: once the pool is closed the rule makes one of
    the calls after close instead (``PoolMachine._call_after_close``); otherwise it is counted
    (``_trace``) and runs."""

    def wrap(method: Callable[..., None]) -> Any:
        @functools.wraps(method)
        def run(self: PoolMachine, **kwargs: Any) -> None:
            if self.closed:
                return self._call_after_close()
            _trace(method.__name__)
            return method(self, **kwargs)

        return rule(**arguments)(run)

    return wrap


SEEDS = st.integers(0, 2**32 - 1)


def _subset(r: np.random.Generator, pool: list[int], min_size: int = 1, max_size: int | None = None) -> list[int]:
    """A random subset of `pool` in random order (`min_size` <= len(pool) assumed)."""
    top = len(pool) if max_size is None else min(max_size, len(pool))
    size = int(r.integers(min_size, top + 1))
    return [int(x) for x in r.permutation(pool)[:size]]


def _id_array(r: np.random.Generator, ids: list[int]) -> Any:
    """Valid env ids in one of the forms the API takes: any integer dtype that holds them, a list,
    a non-contiguous or reversed view."""
    form = int(r.integers(7))
    if form == 0:
        return list(ids)
    if form == 1:
        wide = np.zeros(2 * len(ids), dtype=np.int64)
        wide[::2] = ids
        return wide[::2]
    if form == 2:
        return np.array(ids[::-1], dtype=np.int32)[::-1]
    return np.array(ids, dtype=[np.int64, np.int32, np.uint8, np.uint64][form - 3])


class PoolMachine(RuleBasedStateMachine):
    """One pool under test, its twin, and a model of each env.

    Hypothesis needs the same choices to mean the same steps when it replays and shrinks an example,
    but which envs an async recv returns depends on thread scheduling. So no rule has a
    precondition (every rule makes the call the state allows, or else checks the refusal the state
    calls for, and after close checks PoolClosedError), and each rule draws one seed and makes its
    state-dependent choices (which envs, which values) from it: the choices Hypothesis records have
    the same shape whatever the scheduling did.
    """

    def __init__(self) -> None:
        super().__init__()
        WATCHDOG.start()
        self.env: Any = None
        self.twin: Any = None
        self.threads_before = _settled_threads(None)
        self.held: list[tuple[np.ndarray, np.ndarray]] = []  # (array returned, its copy)

    # --- setup ---------------------------------------------------------------------------------
    @initialize(config=pool_configs(), bad_make=st.none() | st.sampled_from(BAD_MAKE))
    def make_pool(self, config: tuple[Task, dict[str, Any]], bad_make: Any) -> None:
        task, kwargs = config
        if bad_make is not None:
            bad_kwargs, error = bad_make
            self._raises(error, lambda: parallel_pool.make(task.task_id, **{**kwargs, **bad_kwargs}))
            # `<=` here and below: the count is the process's, and another test's thread may end.
            assert _settled_threads(self.threads_before) <= self.threads_before, "a refused make() left a thread"
        if kwargs.get("max_num_players", 1) > 1 and kwargs["autoreset_mode"] == "same_step":
            # Refused by the core: a reset inside the step may change the number of players.
            self._raises(ValueError, lambda: parallel_pool.make(task.task_id, **kwargs))
            kwargs["autoreset_mode"] = "next_step"
        self.task = task
        self.kwargs = kwargs
        self.env = parallel_pool.make(task.task_id, **kwargs)
        self.twin = parallel_pool.make(task.task_id, **{**kwargs, "batch_size": 1})
        self.n = kwargs["num_envs"]
        self.batch_size = kwargs["batch_size"]
        self.is_async = self.batch_size < self.n
        self.mode = kwargs["autoreset_mode"]
        self.max_steps = kwargs["max_episode_steps"]
        self.field = self.env.spec.action_fields[0]
        self.players = kwargs.get("max_num_players", 1)
        self.model = [EnvModel() for _ in range(self.n)]
        self.sync_order: list[int] = []  # sync mode: envs in flight, in send order
        self.expected: list[collections.deque[Row]] = [collections.deque() for _ in range(self.n)]
        self.closed = False
        self.calls_after_close = 0
        assert self.env.is_async == self.is_async

    def teardown(self) -> None:
        if self.env is not None:
            self.env.close()
            self.twin.close()
            self._check_held()
            threads = _settled_threads(self.threads_before)
            assert threads <= self.threads_before, f"close() left {threads - self.threads_before} thread(s)"
        assert not WATCHDOG.fired, f"a call blocked for {WAIT_S} s"

    # --- helpers -------------------------------------------------------------------------------
    def _pending(self) -> list[int]:
        return [i for i, m in enumerate(self.model) if m.pending is not None]

    def _free(self) -> list[int]:
        return [i for i, m in enumerate(self.model) if m.pending is None]

    def _steppable(self) -> list[int]:
        return [
            i
            for i, m in enumerate(self.model)
            if m.pending is None and not (m.over and self.mode == "disabled")
        ]

    def _snapshot(self) -> tuple:
        return (self.env._native.outstanding, self.env._native.blocks_allocated, self.env.closed)

    def _raises(self, error: type[BaseException], call: Callable[[], Any]) -> BaseException:
        """Runs `call`, which must raise exactly `error` and change nothing."""
        before = self._snapshot() if self.env is not None else None
        with pytest.raises(error) as raised:
            self._guarded(call)
        assert type(raised.value) is error, f"expected {error.__name__}, got {raised.value!r}"
        if before is not None:
            assert self._snapshot() == before, f"a refused call changed the pool: {raised.value}"
        return raised.value

    def _guarded(self, call: Callable[[], Any]) -> Any:
        """Runs a call that may block, under the watchdog."""
        if self.env is None:
            return call()
        WATCHDOG.arm(self.env)
        try:
            return call()
        finally:
            WATCHDOG.disarm()
            assert not WATCHDOG.fired, f"a call blocked for {WAIT_S} s"

    def _hold(self, result: tuple) -> None:
        """Keeps a few returned arrays alive, to check later that they never change."""
        obs = result[0]
        self.held.append((obs, obs.copy()))
        if len(self.held) > 4:
            self.held.pop(0)

    def _check_held(self) -> None:
        for array, copy in self.held:
            np.testing.assert_array_equal(array, copy)

    def _twin_rows(self, count: int) -> None:
        stats, same_step = self.kwargs["episode_stats"], self.mode == "same_step"
        for _ in range(count):
            (row,) = _rows(self.twin.recv(timeout=WAIT_S), stats, same_step)
            self.expected[row.env_id].append(row)

    def _twin_step(self, canonical: np.ndarray, ids: list[int]) -> None:
        self.twin.send(canonical, np.array(ids))
        self._twin_rows(len(ids))

    def _twin_reset(self, ids: list[int], seed: Any) -> None:
        self.twin.async_reset(seed=seed, env_id=np.array(ids))
        self._twin_rows(len(ids))

    def _queued(self, ids: list[int], kind: str) -> None:
        """The model's side of a successful send/reset of `ids`."""
        for i in ids:
            m = self.model[i]
            if kind == "step" and not m.ever_reset:
                m.pending = "reset"  # the first step of an env never reset resets it (EnvPool's way)
            elif kind == "step" and m.over and self.mode == "next_step":
                m.pending = "autoreset"
            else:
                m.pending = kind
        if not self.is_async:
            self.sync_order += ids

    def _received(self, result: tuple, expect_ids: list[int] | None = None) -> None:
        """Checks a batch against the model and the twin, and updates the model."""
        self._hold(result)
        rows = _rows(result, self.kwargs["episode_stats"], self.mode == "same_step")
        ids = [r.env_id for r in rows]
        assert len(set(ids)) == len(ids), f"an env came back twice in one batch: {ids}"
        if expect_ids is not None:
            assert ids == expect_ids
        for row in rows:
            m = self.model[row.env_id]
            assert m.pending is not None, f"env {row.env_id} came back but was not in flight"
            twin_row = self.expected[row.env_id].popleft()
            assert row.same_as(twin_row), f"env {row.env_id}: {row} differs from the twin's {twin_row}; batch {result}"
            self._check_semantics(m, row)
            m.pending = None
            m.last = row
        assert self.env._native.outstanding == len(self._pending())

    def _after_recv(self, result: tuple) -> None:
        if self.is_async:
            assert len(result[4]["env_id"]) == self.batch_size
            self._received(result)
        else:
            expect, self.sync_order = self.sync_order[: self.batch_size], self.sync_order[self.batch_size :]
            self._received(result, expect_ids=expect)

    def _check_semantics(self, m: EnvModel, row: Row) -> None:
        episode = row.extra.get("episode", False)
        if m.pending in ("reset", "autoreset"):
            # A reset row; next_step's autoreset ignores the action and looks the same.
            assert (row.elapsed, row.reward, row.terminated, row.truncated) == (0, 0.0, False, False), row
            assert not episode and not row.extra.get("final", False)
            m.ever_reset, m.over, m.elapsed, m.episode_return = True, False, 0, 0.0
            return
        elapsed = m.elapsed + 1  # the step's own count, before a same_step reset
        done = row.terminated or row.truncated
        if row.truncated:
            assert elapsed == self.max_steps, f"truncated at step {elapsed}, the limit is {self.max_steps}"
        if elapsed >= self.max_steps and not row.terminated:
            assert row.truncated, f"step {elapsed} reached the limit {self.max_steps} without truncating"
        if self.task.task_id == "GuessingGame-v0":
            assert row.terminated == (elapsed >= self.kwargs["episode_length"])
        if self.task.task_id == "CartPole-v1":
            assert row.reward == 1.0
        m.episode_return += row.reward
        if self.kwargs["episode_stats"]:
            assert episode == done
            if done:
                assert row.extra["episode_l"] == elapsed
                assert row.extra["episode_r"] == pytest.approx(m.episode_return, rel=1e-12, abs=1e-12)
        if self.mode == "same_step":
            assert row.extra["final"] == done
            assert row.elapsed == (0 if done else elapsed)
            m.over, m.elapsed = False, 0 if done else elapsed
            if done:
                m.episode_return = 0.0
        else:
            assert "final" not in row.extra
            assert row.elapsed == elapsed
            m.over, m.elapsed = done, elapsed

    # --- actions -------------------------------------------------------------------------------
    def _action_shape(self, n: int) -> tuple[int, ...]:
        if self.field.per_player:
            return (n, self.players, *self.field.shape)
        return (n, *self.field.shape)

    def _action_values(self, r: np.random.Generator, n: int) -> np.ndarray:
        """Valid values, as a C-contiguous array of the action field's dtype."""
        shape = self._action_shape(n)
        if self.task.discrete:
            return r.integers(0, int(self.field.high[0]) + 1, size=shape).astype(self.field.dtype)
        values = r.uniform(self.task.low, self.task.high, size=shape)
        # Out-of-bounds values and inf are valid too: the env clips them as Gymnasium's does.
        extreme = r.random(shape) < 0.15
        choices = [np.inf, -np.inf, 1e30, -1e30, 3 * self.task.high, self.task.low]
        values[extreme] = r.choice(choices, size=shape)[extreme]
        return values.astype(self.field.dtype)

    def _layout(
        self, r: np.random.Generator, values: np.ndarray, allow_dict: bool = True, exact: bool = False,
        allow_list: bool = True,
    ) -> Any:
        """The same values in a layout the binding must read as they are. `exact`: every value kept
        as it is (no narrower dtype, no rows made equal), for invalid values that must stay invalid.
        `allow_list`: a list is fine (NumPy infers float64 for a list mixing ints beyond int64 with
        others, which is then a dtype error rather than a range error)."""
        layouts = ["c", "fortran", "strided", "reversed", "big_endian", "readonly"] + ["list"] * allow_list
        if not exact:
            layouts += ["broadcast", "cast"]
        if allow_dict:
            layouts.append("dict")
        if self.field.per_player and self.players == 1:
            layouts.append("one_player")  # (n, *shape) for (n, 1, *shape), as the single-env space says
        layout = layouts[int(r.integers(len(layouts)))]
        if layout == "fortran":
            return np.asfortranarray(values)
        if layout == "strided":
            wide = np.zeros((values.shape[0] * 2, *values.shape[1:]), dtype=values.dtype)
            wide[::2] = values
            return wide[::2]
        if layout == "reversed":
            return values[::-1].copy()[::-1]
        if layout == "big_endian":
            return values.astype(values.dtype.newbyteorder(">"))
        if layout == "readonly":
            out = values.copy()
            out.flags.writeable = False
            return out
        if layout == "list":
            return values.tolist()
        if layout == "broadcast":
            # Zero strides: every row views the first one (the caller's values change to match).
            values[...] = values[:1]
            return np.broadcast_to(values[:1], values.shape)
        if layout == "cast":
            if self.task.discrete:
                return values.astype(r.choice([np.int32, np.int16, np.uint8, np.uint64]))
            return values.astype(np.float64)
        if layout == "dict":
            return {"action": self._layout(r, values, allow_dict=False, exact=exact, allow_list=allow_list)}
        if layout == "one_player":
            return values.reshape(values.shape[0], *values.shape[2:])
        return values

    def _valid_action(self, r: np.random.Generator, n: int) -> tuple[Any, np.ndarray]:
        """(what the call gets, the twin's C-contiguous array with the same values)."""
        values = self._action_values(r, n)
        given = self._layout(r, values)
        return given, np.ascontiguousarray(values)

    def _invalid_action(self, r: np.random.Generator, n: int) -> tuple[Any, type[BaseException]]:
        values = self._action_values(r, n)
        kinds = ["more_rows", "fewer_rows", "extra_dim", "scalar", "bool", "complex", "string", "none", "dict_key"]
        kinds += ["float", "above", "below", "huge_unsigned"] if self.task.discrete else ["nan"]
        kind = kinds[int(r.integers(len(kinds)))]
        if kind == "more_rows":
            return np.concatenate([values, values[:1]]), ValueError
        if kind == "fewer_rows":
            return values[:-1], ValueError
        if kind == "extra_dim":
            return values[..., None], ValueError
        if kind == "scalar":
            return values.reshape(-1)[0], ValueError
        if kind == "bool":
            return values.astype(bool), TypeError
        if kind == "complex":
            return values.astype(np.complex64), TypeError
        if kind == "string":
            return values.astype(str), TypeError
        if kind == "none":
            return None, TypeError
        if kind == "dict_key":
            return ({"action": values, "other": values} if r.random() < 0.5 else {"act": values}), ValueError
        if kind == "float":
            return values.astype(np.float32), TypeError
        flat = values.reshape(-1)
        where = int(r.integers(flat.size))
        if kind == "above":
            flat[where] = int(self.field.high[0]) + int(r.choice([1, 2, 255, 2**31, 2**40]))
        elif kind == "below":
            flat[where] = int(self.field.low[0]) - int(r.choice([1, 2, 255, 2**31, 2**40]))
        elif kind == "huge_unsigned":
            # A uint64 beyond int64 casts to a negative int64: refused as out of range, never wrapped.
            wide = values.astype(np.uint64)
            wide.reshape(-1)[where] = np.uint64(2**63) + np.uint64(r.integers(2**62))
            return self._layout(r, wide, exact=True, allow_list=False), ValueError
        else:  # nan, anywhere, whatever the layout
            flat[where] = np.nan
        return self._layout(r, values, exact=True), ValueError

    def _bad_ids(self, r: np.random.Generator, for_step: bool, for_render: bool = False,
                 ) -> tuple[Any, type[BaseException]]:
        """Env ids that send/step/reset/render must refuse, and what they raise (render takes one env
        id alone, as EnvPool's)."""
        free, pending, steppable = self._free(), self._pending(), self._steppable()
        stuck = [i for i in free if i not in steppable]  # ended with autoreset disabled
        kinds = ["out_of_range", "two_d", "float", "bool", "empty"] + ["scalar"] * (not for_render)
        kinds += ["duplicate"] * bool(free) + ["busy"] * bool(pending) + ["unsteppable"] * bool(for_step and stuck)
        kind = kinds[int(r.integers(len(kinds)))]
        ok = _subset(r, free, min_size=0, max_size=2)
        if kind == "out_of_range":
            bad = int(r.choice([self.n, self.n + 7, -1, 2**31, -(2**31) - 1, 2**40]))
            return r.permutation(np.array(ok + [bad], dtype=np.int64)), ValueError
        if kind == "scalar":
            return np.int64(free[0] if free else 0), ValueError
        if kind == "two_d":
            return np.array([ok or [0]]), ValueError
        if kind == "float":
            return np.array(ok or [0], dtype=np.float64) + 0.5, TypeError
        if kind == "bool":
            return np.array([True] * max(1, len(ok))), TypeError
        if kind == "empty":
            return np.array([], dtype=np.int64), ValueError
        if kind == "duplicate":
            e = int(r.choice(free))
            return np.array(ok + [e, e]), ValueError
        if kind == "busy":
            return r.permutation(np.array(ok + [int(r.choice(pending))])), ValueError
        bad_one = int(r.choice(stuck))
        return r.permutation(np.array([i for i in ok if i != bad_one] + [bad_one])), ValueError

    # --- valid calls (each falls back to the refusal its state calls for) -------------------------
    @_pool_rule(seed=SEEDS)
    def reset_all(self, seed: int) -> None:
        """reset() of every env: refused while any env is in flight."""
        r = np.random.default_rng(seed)
        env_seed: Any = [None, int(r.integers(2**32)), [int(x) for x in r.integers(2**32, size=self.n)]][
            int(r.integers(3))
        ]
        if self._pending():
            self._raises(ValueError, lambda: self.env.reset(seed=env_seed))
            return
        ids = list(range(self.n))
        self._twin_reset(ids, env_seed)
        obs, info = self._guarded(lambda: self.env.reset(seed=env_seed))
        self._queued(ids, "reset")
        zeros = np.zeros(len(info["env_id"]))
        result = (obs, zeros, zeros.astype(bool), zeros.astype(bool), info)
        if self.is_async:
            # EnvPool's async reset(): every reset queued, the first batch_size returned.
            self._after_recv(result)
        else:
            self.sync_order = []
            self._received(result, expect_ids=ids)

    @_pool_rule(seed=SEEDS, as_mask=st.booleans())
    def reset_some(self, seed: int, as_mask: bool) -> None:
        """reset(env_id) or reset(options={"reset_mask"}): those envs now, their rows in that order."""
        r = np.random.default_rng(seed)
        env_seed = None if r.random() < 0.5 else int(r.integers(2**32))
        free = self._free()
        if not free:
            return
        ids = sorted(_subset(r, free)) if as_mask else _subset(r, free)
        self._twin_reset(ids, env_seed)
        if as_mask:
            mask = np.zeros(self.n, dtype=bool)
            mask[ids] = True
            obs, info = self._guarded(lambda: self.env.reset(seed=env_seed, options={"reset_mask": mask}))
        else:
            obs, info = self._guarded(lambda: self.env.reset(_id_array(r, ids), seed=env_seed))
        for i in ids:
            self.model[i].pending = "reset"  # not in sync_order: these rows come back now
        zeros = np.zeros(len(ids))
        self._received((obs, zeros, zeros.astype(bool), zeros.astype(bool), info), expect_ids=ids)

    @_pool_rule(seed=SEEDS, every=st.booleans())
    def async_reset(self, seed: int, every: bool) -> None:
        r = np.random.default_rng(seed)
        env_seed = None if r.random() < 0.5 else int(r.integers(2**32))
        free = self._free()
        if not free or (every and self._pending()):
            busy = None if every else self._pending()[:1]  # every env, or one in flight
            self._raises(ValueError, lambda: self.env.async_reset(seed=env_seed, env_id=busy))
            return
        ids = list(range(self.n)) if every else _subset(r, free)
        self._twin_reset(ids, env_seed)
        self.env.async_reset(seed=env_seed, env_id=None if every else _id_array(r, ids))
        self._queued(ids, "reset")

    @_pool_rule(seed=SEEDS, every=st.booleans())
    def send(self, seed: int, every: bool) -> None:
        r = np.random.default_rng(seed)
        steppable = self._steppable()
        every = every and steppable == list(range(self.n))
        ids = list(range(self.n)) if every else _subset(r, steppable) if steppable else []
        if not ids:
            return
        given, canonical = self._valid_action(r, len(ids))
        self._twin_step(canonical, ids)
        self.env.send(given, None if every else _id_array(r, ids))
        self._queued(ids, "step")

    @_pool_rule(seed=SEEDS, every=st.booleans())
    def step(self, seed: int, every: bool) -> None:
        """step(): send and recv in one call. Too few envs to fill a batch is refused before anything
        is queued (they would stay in flight with nobody to receive them), in both modes, except
        EnvPool's step of some envs in sync mode with nothing in flight (one player per env): their
        rows alone come back, in the order given."""
        r = np.random.default_rng(seed)
        steppable = self._steppable()
        need = self.batch_size - len(self._pending())  # envs this step must add to make a batch
        if not steppable:
            return
        if len(steppable) < need or (need > 1 and r.random() < 0.2):
            ids = _subset(r, steppable, max_size=need - 1)
            given, canonical = self._valid_action(r, len(ids))
            if not self.is_async and not self._pending() and self.players == 1:
                event("sync step of some envs")
                self._twin_step(canonical, ids)
                result = self._guarded(lambda: self.env.step(given, _id_array(r, ids)))
                self._queued(ids, "step")
                self.sync_order = []
                self._received(result, expect_ids=ids)
                return
            event("step refused: cannot fill a batch")
            self._raises(ValueError, lambda: self.env.step(given, _id_array(r, ids)))
            return
        every = every and steppable == list(range(self.n))
        ids = list(range(self.n)) if every else _subset(r, steppable, min_size=max(1, need))
        given, canonical = self._valid_action(r, len(ids))
        self._twin_step(canonical, ids)
        result = self._guarded(lambda: self.env.step(given, None if every else _id_array(r, ids)))
        self._queued(ids, "step")
        self._after_recv(result)

    @_pool_rule(timeout=st.sampled_from([None, 0, WAIT_S]))
    def recv(self, timeout: float | None) -> None:
        """recv(): a batch, or, with fewer envs in flight than batch_size, RuntimeError at once
        (never a wait, for ever or until the timeout)."""
        if len(self._pending()) < self.batch_size:
            self._raises(RuntimeError, lambda: self.env.recv(timeout=timeout))
            return
        if timeout == 0:
            # Either the batch is there already or TimeoutError, which changes nothing: the batch
            # still comes on a later recv.
            try:
                result = self.env.recv(timeout=0)
            except TimeoutError:
                assert self.env._native.outstanding == len(self._pending())
                return
        else:
            result = self._guarded(lambda: self.env.recv(timeout=timeout))
        self._after_recv(result)

    @_pool_rule(seed=SEEDS, every=st.booleans())
    def render(self, seed: int, every: bool) -> None:
        r = np.random.default_rng(seed)
        if not self.task.renders:
            self._raises(ValueError, lambda: self.env.render(None if every else np.array([0])))
            return
        ready = [i for i in self._free() if self.model[i].ever_reset]
        every = every and ready == list(range(self.n))
        if not ready:
            self._raises(ValueError, lambda: self.env.render(np.array(self._free() or [0])))
            return
        ids = list(range(self.n)) if every else _subset(r, ready)
        frames = self.env.render(np.arange(self.n) if every else _id_array(r, ids))
        assert frames.shape == (len(ids), *self.task.frame_shape) and frames.dtype == np.uint8
        if every:  # no env ids: EnvPool's render_env_id (0) alone
            np.testing.assert_array_equal(self.env.render(), frames[:1])
        if self.task.task_id != "GuessingGame-v0":
            return
        for frame, i in zip(frames, ids):
            last = self.model[i].last
            assert last is not None
            # The tutorial's frame encodes its state: red = last secret + 1, green = players, blue = steps.
            expected = (int(last.obs[0, 1]) + 1, last.extra["num_players"], last.elapsed % 256)
            assert (frame == np.array(expected, dtype=np.uint8)).all(), (i, frame[0, 0], expected)

    @rule(seed=SEEDS)
    def close(self, seed: int) -> None:
        """close(), with work in flight or not. Only one time in eight, so that most runs go on long
        enough to reach deep states; the calls after it are checked in the rest."""
        if self.closed:
            return self._call_after_close()
        if seed % 8:
            return
        _trace("close")
        threads_open = _settled_threads(None)
        self.env.close()
        self.closed = True
        assert self.env.closed
        # The pool's workers: num_threads - 1 (the caller is one of the threads), at least one in
        # async mode; close() has joined every one of them, even with work in flight.
        num_threads = self.env._native.num_threads
        workers = max(1, num_threads - 1) if self.is_async else num_threads - 1
        # `<=`: the count is the whole process's, and a thread of an earlier test (Ray's, say) may
        # end meanwhile; a worker close() failed to join would leave it above.
        assert _settled_threads(threads_open - workers) <= threads_open - workers
        self._check_held()  # arrays returned before close stay valid

    # --- invalid calls -------------------------------------------------------------------------
    @_pool_rule(seed=SEEDS, call=st.sampled_from(["send", "step"]))
    def bad_action(self, seed: int, call: str) -> None:
        r = np.random.default_rng(seed)
        steppable = self._steppable()
        if not steppable:
            return
        if call == "step":
            # Enough envs to fill a batch, so that the action is the only thing wrong.
            if len(steppable) + len(self._pending()) < self.batch_size:
                return
            ids = steppable
        else:
            ids = _subset(r, steppable)
        action, error = self._invalid_action(r, len(ids))
        method = getattr(self.env, call)
        self._raises(error, lambda: method(action, _id_array(r, ids)))

    @_pool_rule(seed=SEEDS, call=st.sampled_from(["send", "step", "reset", "async_reset", "render"]))
    def bad_env_ids(self, seed: int, call: str) -> None:
        r = np.random.default_rng(seed)
        ids, error = self._bad_ids(r, for_step=call in ("send", "step"), for_render=call == "render")
        if call == "render" and not self.task.renders:
            error = ValueError  # "does not render", whatever the ids
        n = np.asarray(ids).shape[0] if np.ndim(ids) >= 1 else 1
        action = np.zeros(self._action_shape(n), dtype=self.field.dtype)
        env_seed = None if r.random() < 0.5 else int(r.integers(100))
        calls = {
            "send": lambda: self.env.send(action, ids),
            "step": lambda: self.env.step(action, ids),
            "reset": lambda: self.env.reset(ids, seed=env_seed),
            "async_reset": lambda: self.env.async_reset(env_id=ids),
            "render": lambda: self.env.render(ids),
        }
        self._raises(error, calls[call])

    @_pool_rule(call=st.sampled_from(["send", "step"]))
    def every_env_while_some_cannot_step(self, call: str) -> None:
        """send/step of every env (env_id=None) while one is in flight or cannot step."""
        if self._steppable() == list(range(self.n)):
            return
        action = np.zeros(self._action_shape(self.n), dtype=self.field.dtype)
        self._raises(ValueError, lambda: getattr(self.env, call)(action))

    @_pool_rule(timeout=st.sampled_from([-1, -0.5, "1", [1]]))
    def recv_with_a_bad_timeout(self, timeout: Any) -> None:
        self._raises(ValueError, lambda: self.env.recv(timeout=timeout))

    @_pool_rule(case=st.integers(0, 11))
    def bad_reset_arguments(self, case: int) -> None:
        n = self.n
        cases: list[tuple[Callable[[], Any], type[BaseException]]] = [
            (lambda: self.env.reset(seed=-1), ValueError),
            (lambda: self.env.reset(seed=2**64), ValueError),
            (lambda: self.env.reset(seed="x"), TypeError),
            (lambda: self.env.reset(seed=1.5), TypeError),
            (lambda: self.env.reset(seed=[0] * (n + 1)), ValueError),
            (lambda: self.env.reset(seed=[-1] * n), ValueError),
            (lambda: self.env.async_reset(seed=-3), ValueError),
            (lambda: self.env.reset(options={"reset_mask": [True] * n}), TypeError),
            (lambda: self.env.reset(options={"reset_mask": np.ones(n + 1, dtype=bool)}), ValueError),
            (lambda: self.env.reset(options={"reset_mask": np.ones(n, dtype=np.int64)}), TypeError),
            (lambda: self.env.reset(options={"reset_mask": np.zeros(n, dtype=bool)}), ValueError),
            (lambda: self.env.reset(np.array([0]), options={"reset_mask": np.ones(n, dtype=bool)}), ValueError),
        ]
        call, error = cases[case]
        self._raises(error, call)

    def _call_after_close(self) -> None:
        """Once the pool is closed, every rule makes one of these calls instead (in turn): each raises
        PoolClosedError, whatever its arguments, and close() again does nothing."""
        action = np.zeros(self._action_shape(self.n), dtype=self.field.dtype)
        calls: list[Callable[[], Any]] = [
            lambda: self.env.reset(),
            lambda: self.env.reset(np.array([0]), seed=0),
            lambda: self.env.reset(seed=-5),
            lambda: self.env.async_reset(),
            lambda: self.env.step(action),
            lambda: self.env.step(np.zeros(7, dtype=np.float32), np.int32(0)),
            lambda: self.env.send(action),
            lambda: self.env.send(None, [9, 9]),
            lambda: self.env.recv(),
            lambda: self.env.recv(timeout=1),
            lambda: self.env.render(),
            lambda: self.env.render(np.array([99])),
        ]
        event("after close")
        self._raises(PoolClosedError, calls[self.calls_after_close % len(calls)])
        self.calls_after_close += 1
        self.env.close()  # idempotent
        self._check_held()

    # --- invariants ----------------------------------------------------------------------------
    @invariant()
    def counts_match_the_model(self) -> None:
        if self.env is None:
            return
        assert self.env.closed == self.closed
        if not self.closed:
            assert self.env._native.outstanding == len(self._pending())
        assert all(len(q) == (m.pending is not None) for q, m in zip(self.expected, self.model))

    @invariant()
    def returned_arrays_never_change(self) -> None:
        self._check_held()


EXAMPLES = int(os.environ.get("PP_PROPERTY_EXAMPLES", "500"))
PoolMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
TestPoolMachine = PoolMachine.TestCase


@pytest.mark.parametrize("task_id", ["Pendulum-v1", "MountainCarContinuous-v0"])
def test_infinite_continuous_actions_do_what_gymnasium_does(task_id: str) -> None:
    """The machine checks that inf is accepted and read as inf (against the twin); this checks what
    the env then does against Gymnasium's own env, put in the same state: the action is clipped to
    its bound for the dynamics, and MountainCarContinuous charges the unclipped action (reward
    -inf), as Gymnasium does. Tolerances as tests/envs/classic_control/test_classic_control.py states them: 1e-5 on the
    observation (Gymnasium restarts from our float32 observation), 1e-6 on Pendulum's reward."""
    import gymnasium

    env = parallel_pool.make(task_id, num_envs=1, seed=0)
    gym_env: Any = gymnasium.make(task_id).unwrapped
    obs, _ = env.reset()
    for value in [np.inf, -np.inf, 1e30, -1e30, np.inf]:
        if task_id == "Pendulum-v1":
            gym_env.state = np.array([np.arctan2(obs[0, 1], obs[0, 0]), obs[0, 2]], dtype=np.float64)
        else:
            gym_env.state = np.array(obs[0], dtype=np.float32)  # Gymnasium keeps this one in float32
        action = np.array([value], dtype=np.float32)
        gym_obs, gym_reward, gym_terminated, _, _ = gym_env.step(action)
        obs, reward, terminated, _, _ = env.step(action[None])
        assert np.isfinite(obs).all()
        np.testing.assert_allclose(obs[0], gym_obs, rtol=0, atol=1e-5)
        if np.isinf(gym_reward):
            assert reward[0] == gym_reward
        else:
            assert reward[0] == pytest.approx(gym_reward, rel=0, abs=1e-6)
        assert terminated[0] == gym_terminated
    env.close()
