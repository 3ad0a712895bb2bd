"""A pool inherited by a forked child is inert there: dropping it neither joins threads that exist
only in the parent nor stops the parent's worker processes, and using it raises PoolForkedError.
(Gymnasium's AsyncVectorEnv forks by default on Linux, so a process may hold both.)"""

from __future__ import annotations

import gc
import os
import signal
import time
import traceback
from collections.abc import Callable

import gymnasium
import numpy as np
import pytest

import parallel_pool as pp


def _in_child(body: Callable[[], None], timeout_s: float = 60.0) -> None:
    """Runs ``body`` in a forked child; fails if it raised, or if it hung (then kills it)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            body()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, "the forked child failed (its traceback is above)"
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child hung for {timeout_s} s")


def _garbage_pool(**kwargs: object) -> None:
    """Makes a pool, steps it and drops it unclosed in a reference cycle: only gc finalizes it. An
    async pool is dropped with envs in flight."""
    pool = pp.make("CartPole-v1", num_envs=4, **kwargs)
    pool.async_reset()
    pool.recv()
    if not pool.is_async:
        pool.step(np.zeros(4, dtype=np.int64))
    cycle: list[object] = [pool]
    cycle.append(cycle)


@pytest.mark.parametrize("batch_size", [4, 2])
def test_garbage_pool_collected_in_child(batch_size: int) -> None:
    gc.disable()  # the pool must still be garbage, not yet collected, when the process forks
    try:
        _garbage_pool(num_threads=2, batch_size=batch_size)
        _in_child(gc.collect)
    finally:
        gc.enable()
    gc.collect()


def test_inherited_pool_raises_and_parent_goes_on() -> None:
    pool = pp.make("CartPole-v1", num_envs=4, batch_size=2, num_threads=2)
    pool.async_reset()
    pool.recv()

    def child() -> None:
        for call in (lambda: pool.recv(), lambda: pool.send(np.zeros(2, dtype=np.int64), np.array([0, 1])),
                     lambda: pool.step(np.zeros(4, dtype=np.int64)), lambda: pool.reset(), lambda: pool.render()):
            with pytest.raises(pp.PoolForkedError, match="forked"):
                call()
        pool.close()  # quiet, and leaves the parent's threads alone
        assert pool.closed
        with pytest.raises(pp.PoolClosedError):
            pool.reset()

    _in_child(child)
    # The parent's pool is untouched: the batch in flight arrives, and it steps on.
    obs, *_ = pool.recv()
    assert obs.shape == (2, 4)
    pool.send(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    pool.recv()
    pool.close()


def test_inherited_python_pool_leaves_parent_workers() -> None:
    pool = pp.make_python([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=2)
    pool.reset(seed=0)
    pids = pool.workers.pids

    def child() -> None:
        with pytest.raises(pp.PoolForkedError):
            pool.step(np.zeros(2, dtype=np.int64))
        with pytest.raises(pp.PoolForkedError, match="fork"):
            pool.workers.run("get", [(0, ("spec",))])
        pool.close()  # neither stops nor kills the parent's workers

    _in_child(child)
    assert all(p.is_alive() for p in pool.workers._processes), "a forked child stopped the parent's workers"
    assert pool.workers.pids == pids
    obs, *_ = pool.step(np.zeros(2, dtype=np.int64))
    assert obs.shape == (2, 4)
    pool.close()
