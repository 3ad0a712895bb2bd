"""Stress of the engine and its binding from Python, meant to run under ThreadSanitizer and
AddressSanitizer (tests/stress/run_sanitized.sh builds a sanitized package and runs this with the
sanitizer's runtime preloaded; the README's "Reliability" section has the command and results).

Every scenario checks the results it gets, not only that nothing crashed, so a race that corrupts
a row fails here even where no sanitizer watches (NumPy and CPython are not instrumented):

- ``async``: threads, each with its own async pool of the tutorial env (multi-player, uneven step
  times, an env that raises on a chosen step), mixing send/recv, recv with timeouts, partial resets
  (now and queued) and render. Each row is checked against a model of the env: which envs come
  back (each sent env exactly once), elapsed steps, terminations, which envs raised and when, and
  the per-player rows against the per-env ones.
- ``replay``: threads, each with an async CartPole pool stepped with partial resets; afterwards
  every env's trajectory is replayed alone on a one-thread pool and must match bit for bit (an
  env's results depend only on its seed and its actions, never on scheduling).
- ``shared``: several threads on one async pool and one sync pool. By default the threads take
  turns (a lock around each call); results are kept and dropped on other threads, so output
  blocks go back to the free list from threads other than the one that received them while the
  workers fill new ones. ``--unlocked`` lets the threads call in at the same time (issue 14's
  threading part makes that safe in the binding; before it, this reproduces its known race).
- ``sync``: sync pools in same_step mode with episode statistics and an env that raises, with
  partial resets through ``reset_mask``.
- ``close``: closing with work in flight: right after a send; while another thread is blocked in
  recv(), in step() or in a partial reset; dropping a pool without close(); results received
  before close() stay readable after it.
- ``churn``: threads making, stepping and closing pools at the same time.

Exit status 0 when every check passed; 1 with the failures listed otherwise; a hang dumps every
thread's stack and exits 1 (faulthandler) after ``--hang-timeout`` seconds.

    python tests/stress/stress.py                  # every scenario at the default scale
    python tests/stress/stress.py --scale 0.1      # a quick pass (the default suite's)
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import gc
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

import parallel_pool
from parallel_pool import EnvError, PoolClosedError

# The tutorial env's own message (native/envs/tutorial/guessing_game.h).
RAISED = "tutorial env raised on step"
# Every legitimate wait here is milliseconds long; sanitizers slow the engine 5-20x. A recv that
# takes this long is a lost wake-up, not a slow machine.
RECV_TIMEOUT_S = 60.0


class Failures:
    """Check failures from every thread, with enough context to find them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.items: list[str] = []

    def add(self, what: str) -> None:
        with self._lock:
            self.items.append(what)

    def check(self, ok: bool, what: str) -> bool:
        if not ok:
            self.add(what)
        return ok


FAIL = Failures()


def run_threads(name: str, targets: list[Callable[[], None]]) -> None:
    """Runs each target on its own thread; an exception in one is a failure of the scenario."""

    def guard(index: int, target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException:  # noqa: BLE001 - every escape is a failure to report
            FAIL.add(f"{name}[{index}]: unexpected exception:\n{traceback.format_exc()}")

    threads = [threading.Thread(target=guard, args=(i, t), name=f"{name}-{i}") for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# --- the tutorial env's model -------------------------------------------------------------------


class GuessingModel:
    """What each GuessingGame-v0 env must return, in next_step or same_step autoreset mode.

    ``raise_on_step`` R: the step that reaches elapsed step R raises (its row: elapsed R, no
    players, reward 0) and the env's next step is a reset. ``episode_length`` L: the step that
    reaches L terminates. A reset row has elapsed step 0 and reward 0.
    """

    def __init__(self, name: str, num_envs: int, raise_on_step: int, episode_length: int, same_step: bool) -> None:
        self.name = name
        self.raise_on_step = raise_on_step
        self.episode_length = episode_length
        self.same_step = same_step
        self.elapsed = [0] * num_envs
        self.over = [True] * num_envs  # not reset yet: the first step of an env resets it
        self.expected: dict[int, str] = {}  # env id -> "reset" or "step", for the envs in flight

    def sent(self, ids: Any, kind: str) -> None:
        for i in np.asarray(ids).tolist():
            FAIL.check(i not in self.expected, f"{self.name}: env {i} sent twice")
            self.expected[i] = kind

    def check(self, arrays: tuple, raised: list[int], ordered_ids: Any = None) -> list[int]:
        """Checks one batch's rows against the model and advances it; returns the env ids."""
        obs, reward, terminated, truncated, info = arrays
        ids = info["env_id"].tolist()
        where = f"{self.name}: batch {ids}"
        FAIL.check(len(set(ids)) == len(ids), f"{where}: an env id twice")
        if ordered_ids is not None:
            FAIL.check(ids == np.asarray(ordered_ids).tolist(), f"{where}: rows not in the order asked")
        FAIL.check(set(raised) <= set(ids), f"{where}: errors {raised} name envs outside the batch")
        # Multi-player: player rows of their own, info["players"]["env_id"] naming their env; one
        # player: the per-player fields have one row per env.
        multi = "env_id" in info["players"]
        players = info["players"]["env_id"].tolist() if multi else ids
        player_reward = info["players"]["reward"]
        FAIL.check(len(players) == obs.shape[0], f"{where}: {len(players)} player ids for {obs.shape[0]} obs rows")
        for row, env_id in enumerate(ids):
            kind = self.expected.pop(env_id, None)
            if not FAIL.check(kind is not None, f"{where}: env {env_id} came back without being sent"):
                continue
            elapsed = int(info["elapsed_step"][row])
            rows_of_env = [p for p, e in enumerate(players) if e == env_id]
            num_players = int(info["num_players"][row])
            if kind == "reset" or self.over[env_id]:
                ok = elapsed == 0 and reward[row] == 0 and not terminated[row] and env_id not in raised
                FAIL.check(ok, f"{where}: env {env_id} should be a reset row (elapsed {elapsed})")
                self.elapsed[env_id], self.over[env_id] = 0, False
            else:
                step = self.elapsed[env_id] + 1
                if step == self.raise_on_step:
                    ok = env_id in raised and elapsed == step and not (multi and rows_of_env)
                    FAIL.check(ok, f"{where}: env {env_id} should have raised on step {step}")
                    self.over[env_id] = True
                    continue
                FAIL.check(env_id not in raised, f"{where}: env {env_id} raised on step {step}")
                ends = step >= self.episode_length
                FAIL.check(bool(terminated[row]) == ends, f"{where}: env {env_id} step {step}: terminated wrong")
                FAIL.check(not truncated[row], f"{where}: env {env_id} truncated before its time limit")
                if self.same_step and ends:
                    # Reset inside the step: the row is the new episode's, the last step's is final_obs.
                    FAIL.check(elapsed == 0, f"{where}: env {env_id}: same_step reset row has elapsed {elapsed}")
                    FAIL.check("_final_obs" in info and bool(info["_final_obs"][row]),
                               f"{where}: env {env_id}: no final_obs")
                    FAIL.check("_episode" in info and bool(info["_episode"][row]) and
                               int(info["episode"]["l"][row]) == step, f"{where}: env {env_id}: episode length")
                    self.elapsed[env_id], self.over[env_id] = 0, False
                else:
                    FAIL.check(elapsed == step, f"{where}: env {env_id}: elapsed {elapsed}, expected {step}")
                    self.elapsed[env_id], self.over[env_id] = step, ends
            # Per-player rows agree with the per-env row: count, and the rewards' sum.
            FAIL.check(len(rows_of_env) == num_players, f"{where}: env {env_id}: {len(rows_of_env)} player rows "
                       f"for num_players {num_players}")
            total = float(np.sum(player_reward[rows_of_env])) if rows_of_env else 0.0
            FAIL.check(total == float(reward[row]), f"{where}: env {env_id}: player rewards {total} vs {reward[row]}")
        return ids


def recv_checked(env: Any, model: GuessingModel, timeout: float | None = RECV_TIMEOUT_S) -> list[int]:
    try:
        arrays = env.recv(timeout=timeout)
        raised: list[int] = []
    except EnvError as e:
        FAIL.check(all(RAISED in m for _, m in e.errors), f"{model.name}: unexpected env error {e}")
        arrays, raised = e.result, e.env_ids
    return model.check(arrays, raised)


def guess_actions(env: Any, ids: list[int], rng: random.Random) -> np.ndarray:
    players = env.spec.config["max_num_players"]
    return np.array([[rng.randrange(4) for _ in range(players)] for _ in ids], dtype=np.int64).reshape(len(ids), -1)


# --- scenarios ----------------------------------------------------------------------------------


def async_worker(index: int, iterations: int) -> None:
    rng = random.Random(index)
    num_envs, batch_size = 8, 3
    length = rng.randint(3, 9)
    raise_on_step = rng.randint(2, length + 2)  # sometimes never reached
    env = parallel_pool.make(
        "GuessingGame-v0", num_envs=num_envs, batch_size=batch_size, num_threads=rng.choice([1, 2, 3]),
        seed=index, max_num_players=3, episode_length=length, raise_on_step=raise_on_step,
        step_sleep_us=rng.choice([0, 20, 200]),
    )
    model = GuessingModel(f"async[{index}]", num_envs, raise_on_step, length, same_step=False)
    env.async_reset()
    model.sent(range(num_envs), "reset")
    held: list[int] = []  # received, not sent again yet
    for _ in range(iterations):
        if len(model.expected) >= batch_size:
            timeout = rng.choice([None, RECV_TIMEOUT_S, 0.0])
            try:
                held += recv_checked(env, model, timeout)
            except TimeoutError:
                FAIL.check(timeout == 0.0, f"async[{index}]: recv timed out after {timeout} s")
        if not held:
            continue
        rng.shuffle(held)
        k = rng.randint(1, len(held))
        ids, held = held[:k], held[k:]
        what = rng.random()
        if what < 0.1:
            # Reset now: the rows come back at once, in the order asked; other envs stay in flight.
            model.sent(ids, "reset")
            try:
                arrays = env.reset(env_id=np.array(ids))
                raised: list[int] = []
            except EnvError as e:
                arrays, raised = e.result, e.env_ids
            obs, info = arrays
            fake_step = (obs, np.zeros(len(ids)), np.zeros(len(ids), bool), np.zeros(len(ids), bool), info)
            held += model.check(fake_step, raised, ordered_ids=ids)
        elif what < 0.2:
            env.async_reset(env_id=np.array(ids))
            model.sent(ids, "reset")
        elif what < 0.25:
            frames = env.render(np.array(ids))
            FAIL.check(frames.shape == (len(ids), 8, 8, 3), f"async[{index}]: render shape {frames.shape}")
            held += ids
        else:
            env.send(guess_actions(env, ids, rng), np.array(ids))
            model.sent(ids, "step")
    env.close()


def cartpole_actions(env_id: int, t: int) -> int:
    return (env_id * 7 + t * 3 + t // 5) % 2


def replay_worker(index: int, iterations: int) -> None:
    rng = random.Random(1000 + index)
    num_envs, batch_size, seed = 6, 2, 100 * index
    env = parallel_pool.make("CartPole-v1", num_envs=num_envs, batch_size=batch_size, seed=seed,
                             num_threads=rng.choice([1, 2, 3]))
    # Each env's history: ("reset" | action, obs, reward, terminated, truncated) per result.
    history: dict[int, list[tuple[Any, np.ndarray, float, bool, bool]]] = collections.defaultdict(list)
    pending: dict[int, Any] = {}
    env.async_reset()
    pending.update(dict.fromkeys(range(num_envs), "reset"))
    for _ in range(iterations):
        obs, reward, terminated, truncated, info = env.recv(timeout=RECV_TIMEOUT_S)
        ids = info["env_id"].tolist()
        for row, i in enumerate(ids):
            what = pending.pop(i)
            history[i].append((what, obs[row].copy(), float(reward[row]), bool(terminated[row]), bool(truncated[row])))
        if rng.random() < 0.15:
            reset_ids = ids[: rng.randint(1, len(ids))]
            obs_now, _ = env.reset(env_id=np.array(reset_ids))
            for row, i in enumerate(reset_ids):
                history[i].append(("reset", obs_now[row].copy(), 0.0, False, False))
        actions = np.array([cartpole_actions(i, len(history[i])) for i in ids])
        env.send(actions, np.array(ids))
        pending.update({i: int(a) for i, a in zip(ids, actions)})
    env.close()
    # Replay each env alone, one thread: its results must be the same, bit for bit.
    replay = parallel_pool.make("CartPole-v1", num_envs=num_envs, batch_size=1, seed=seed, num_threads=1)
    for i in range(num_envs):
        for n, (what, obs_then, reward_then, term_then, trunc_then) in enumerate(history[i]):
            if what == "reset":
                obs_now, _ = replay.reset(env_id=np.array([i]))
                same = np.array_equal(obs_now[0], obs_then)
            else:
                replay.send(np.array([what]), np.array([i]))
                o, r, te, tr, info = replay.recv(timeout=RECV_TIMEOUT_S)
                same = (int(info["env_id"][0]) == i and np.array_equal(o[0], obs_then) and float(r[0]) == reward_then
                        and bool(te[0]) == term_then and bool(tr[0]) == trunc_then)
            if not FAIL.check(same, f"replay[{index}]: env {i} result {n} ({what}) differs when replayed alone"):
                break
    replay.close()


def shared_pools(num_threads: int, iterations: int, unlocked: bool) -> None:
    num_envs, batch_size = 16, 4
    env = parallel_pool.make("GuessingGame-v0", num_envs=num_envs, batch_size=batch_size, num_threads=3, seed=7,
                             max_num_players=2, episode_length=6, raise_on_step=4, step_sleep_us=10)
    model = GuessingModel("shared-async", num_envs, 4, 6, same_step=False)
    sync_env = parallel_pool.make("CartPole-v1", num_envs=4, num_threads=2, seed=3)
    lock = threading.Lock() if not unlocked else None
    model_lock = threading.Lock()  # the model's own bookkeeping (Python), not the pool's
    kept: collections.deque = collections.deque(maxlen=32)  # results dropped later, on other threads
    env.async_reset()
    model.sent(range(num_envs), "reset")
    sync_env.reset()

    def locked(fn: Callable[[], Any]) -> Any:
        if lock is None:
            return fn()
        with lock:
            return fn()

    def one_round(rng: random.Random) -> None:
        try:
            arrays = locked(lambda: env.recv(timeout=RECV_TIMEOUT_S))
            raised: list[int] = []
        except EnvError as e:
            arrays, raised = e.result, e.env_ids
        except RuntimeError as e:
            # Between its recv and its send a thread holds its envs; when the others hold the rest,
            # fewer than batch_size are in flight and recv refuses to wait for ever (documented).
            FAIL.check("would wait for ever" in str(e), f"shared: {e}")
            time.sleep(0.001)
            return
        with model_lock:
            ids = model.check(arrays, raised)
            model.sent(ids, "step")
        kept.append(arrays)
        locked(lambda: env.send(guess_actions(env, ids, rng), np.array(ids)))

    def worker(index: int) -> None:
        rng = random.Random(2000 + index)
        for t in range(iterations):
            one_round(rng)
            if t % 4 == 0:
                actions = np.array([(index + t) % 2] * 4)
                try:
                    result = locked(lambda a=actions: sync_env.step(a))
                except ValueError as e:
                    # Unlocked: another thread's step of the same envs is in flight (documented).
                    FAIL.check(lock is None and "has not been received" in str(e), f"shared-sync: {e}")
                    continue
                FAIL.check(result[4]["env_id"].tolist() == [0, 1, 2, 3], "shared-sync: rows out of env order")
                kept.append(result)
            if kept and rng.random() < 0.5:
                try:
                    kept.popleft()  # this thread may drop a block another thread received
                except IndexError:
                    pass

    run_threads("shared", [lambda i=i: worker(i) for i in range(num_threads)])
    kept.clear()
    env.close()
    sync_env.close()


def sync_worker(index: int, iterations: int) -> None:
    rng = random.Random(3000 + index)
    num_envs, length = 5, rng.randint(3, 7)
    raise_on_step = rng.randint(2, length)
    env = parallel_pool.make(
        "GuessingGame-v0", num_envs=num_envs, num_threads=rng.choice([1, 2, 3]), seed=index, max_num_players=1,
        episode_length=length, raise_on_step=raise_on_step, autoreset_mode="same_step", episode_stats=True,
        step_sleep_us=rng.choice([0, 50]),
    )
    model = GuessingModel(f"sync[{index}]", num_envs, raise_on_step, length, same_step=True)
    all_ids = np.arange(num_envs)
    model.sent(all_ids, "reset")
    obs, info = env.reset()
    fake_step = (obs, np.zeros(num_envs), np.zeros(num_envs, bool), np.zeros(num_envs, bool), info)
    model.check(fake_step, [], ordered_ids=all_ids)
    for _ in range(iterations):
        if rng.random() < 0.1:
            mask = np.array([rng.random() < 0.5 for _ in range(num_envs)])
            mask[rng.randrange(num_envs)] = True
            ids = np.flatnonzero(mask)
            model.sent(ids, "reset")
            obs, info = env.reset(options={"reset_mask": mask})
            fake_step = (obs, np.zeros(len(ids)), np.zeros(len(ids), bool), np.zeros(len(ids), bool), info)
            model.check(fake_step, [], ordered_ids=ids)
            continue
        model.sent(all_ids, "step")
        try:
            arrays = env.step(guess_actions(env, list(range(num_envs)), rng))
            raised: list[int] = []
        except EnvError as e:
            arrays, raised = e.result, e.env_ids
        model.check(arrays, raised, ordered_ids=all_ids)
    env.close()


def expect_closed(fn: Callable[[], Any], what: str) -> None:
    try:
        fn()
    except PoolClosedError:
        return
    FAIL.add(f"close: {what} after close() did not raise PoolClosedError")


def blocked_call_then_close(make: Callable[[], Any], call: Callable[[Any], Any], what: str, delay_s: float) -> None:
    """Runs ``call(env)`` on another thread until it raises, and closes the pool meanwhile."""
    env = make()
    outcome: list[str] = []

    def caller() -> None:
        try:
            deadline = time.monotonic() + RECV_TIMEOUT_S
            while time.monotonic() < deadline:  # calls may complete before close(); then one must raise
                call(env)
            outcome.append("never raised")
        except PoolClosedError:
            outcome.append("closed")
        except BaseException as e:  # noqa: BLE001
            outcome.append(f"{type(e).__name__}: {e}")

    t = threading.Thread(target=caller, daemon=True)
    t.start()
    time.sleep(delay_s)
    env.close()
    t.join(RECV_TIMEOUT_S)
    FAIL.check(not t.is_alive(), f"close: {what} still blocked after close()")
    FAIL.check(outcome == ["closed"], f"close: {what} ended with {outcome}")


def close_case(t: int, rng: random.Random) -> None:
    sleep_us = rng.choice([100, 1000, 3000])

    def make_async() -> Any:
        return parallel_pool.make("GuessingGame-v0", num_envs=8, batch_size=4, num_threads=2, seed=t,
                                  max_num_players=2, step_sleep_us=sleep_us)

    def make_sync() -> Any:
        env = parallel_pool.make("GuessingGame-v0", num_envs=6, num_threads=2, seed=t, max_num_players=1,
                                 step_sleep_us=sleep_us)
        env.reset()
        return env

    def make_reset() -> Any:
        env = parallel_pool.make("CartPole-v1", num_envs=32, num_threads=3, seed=t)
        env.reset()
        return env

    def recv_then_send(env: Any) -> None:
        if env._native.outstanding == 0:
            env.async_reset()
        info = env.recv()[4]
        env.send(np.zeros((len(info["env_id"]), 2), np.int64), info["env_id"])

    case = t % 6
    if case == 0:
        # Close right after a send, with the steps in flight; then every call raises.
        env = make_async()
        obs, info = env.reset()
        env.send(np.zeros((len(info["env_id"]), 2), np.int64), info["env_id"])
        env.close()
        expect_closed(lambda: env.recv(), "recv")
        expect_closed(lambda: env.send(np.zeros((1, 2), np.int64), np.array([0])), "send")
        expect_closed(lambda: env.reset(), "reset")
        # The rows received before close() are still readable.
        FAIL.check(obs.shape[1] == 2 and info["env_id"].shape == (4,), "close: old result unreadable")
        env.close()  # idempotent
    elif case == 1:
        # Another thread blocked in recv() (its batch far from done) when close() runs.
        blocked_call_then_close(make_async, recv_then_send, "recv()", rng.uniform(0, 0.01))
    elif case == 2:
        # Another thread in a sync step() of slow envs when close() runs.
        blocked_call_then_close(make_sync, lambda env: env.step(np.zeros(6, np.int64)), "step()", rng.uniform(0, 0.01))
    elif case == 3:
        # Another thread in partial resets (reset now, rows in a block of their own).
        blocked_call_then_close(make_reset, lambda env: env.reset(env_id=np.arange(0, 32, 2)), "reset(env_id)",
                                rng.uniform(0, 0.005))
    elif case == 4:
        # Dropped without close(), steps in flight: the destructor closes it.
        env = make_async()
        env.async_reset()
        del env
        gc.collect()
    else:
        # Results kept past close() and the pool's end, then read and dropped.
        env = make_async()
        env.async_reset()
        kept = [env.recv(timeout=RECV_TIMEOUT_S) for _ in range(2)]
        env.close()
        del env
        gc.collect()
        for obs, _, _, _, info in kept:
            FAIL.check(obs.shape[1] == 2 and len(info["env_id"]) == 4 and np.isfinite(obs).all(),
                       "close: a result kept past the pool's end is unreadable")
        kept.clear()


def close_worker(index: int, iterations: int) -> None:
    rng = random.Random(4000 + index)
    for t in range(iterations):
        close_case(t, rng)


def churn_worker(index: int, iterations: int) -> None:
    rng = random.Random(5000 + index)
    for t in range(iterations):
        task = rng.choice(["CartPole-v1", "Pendulum-v1", "GuessingGame-v0"])
        num_envs = rng.randint(1, 6)
        batch_size = rng.randint(1, num_envs)
        env = parallel_pool.make(task, num_envs=num_envs, batch_size=batch_size, seed=t,
                                 num_threads=rng.randint(0, 3))
        obs, info = env.reset()
        ids = info["env_id"]
        if task == "GuessingGame-v0":
            actions: Any = np.zeros((len(ids), env.spec.config["max_num_players"]), np.int64)
        else:
            actions = np.stack([env.action_space.sample() for _ in ids])
        env.send(actions, ids)
        if rng.random() < 0.5:
            env.recv(timeout=RECV_TIMEOUT_S)
        env.close()


SCENARIOS = ("async", "replay", "shared", "sync", "close", "churn")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="iterations per thread, relative (default 1)")
    parser.add_argument("--threads", type=int, default=4, help="threads per scenario (default 4)")
    parser.add_argument("--only", choices=SCENARIOS, action="append", help="run only these scenarios")
    parser.add_argument("--unlocked", action="store_true",
                        help="shared: the threads call the shared pools at the same time, without taking turns")
    parser.add_argument("--hang-timeout", type=float, default=1800.0,
                        help="dump every thread's stack and exit 2 after this many seconds (default 1800)")
    args = parser.parse_args(argv)
    faulthandler.dump_traceback_later(args.hang_timeout, exit=True)

    def n(base: int) -> int:
        return max(1, int(base * args.scale))

    threads = args.threads
    plan: dict[str, Callable[[], None]] = {
        "async": lambda: run_threads("async", [lambda i=i: async_worker(i, n(6000)) for i in range(threads)]),
        "replay": lambda: run_threads("replay", [lambda i=i: replay_worker(i, n(3000)) for i in range(threads)]),
        "shared": lambda: shared_pools(threads, n(2000), args.unlocked),
        "sync": lambda: run_threads("sync", [lambda i=i: sync_worker(i, n(2400)) for i in range(threads)]),
        "close": lambda: run_threads("close", [lambda i=i: close_worker(i, n(240)) for i in range(threads)]),
        "churn": lambda: run_threads("churn", [lambda i=i: churn_worker(i, n(400)) for i in range(threads)]),
    }
    print(f"parallel_pool from {parallel_pool.__file__}", flush=True)
    start = time.monotonic()
    for name in args.only or SCENARIOS:
        t0 = time.monotonic()
        before = len(FAIL.items)
        plan[name]()
        status = "ok" if len(FAIL.items) == before else f"{len(FAIL.items) - before} failure(s)"
        print(f"{name:8s} {time.monotonic() - t0:7.1f} s  {status}", flush=True)
    faulthandler.cancel_dump_traceback_later()
    print(f"total    {time.monotonic() - start:7.1f} s", flush=True)
    if FAIL.items:
        for item in FAIL.items[:50]:
            print("FAILED:", item, file=sys.stderr)
        print(f"{len(FAIL.items)} failure(s)", file=sys.stderr)
        return 1
    print("stress: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
