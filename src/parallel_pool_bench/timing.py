"""Timing a runner: a timed batch of calls under a watchdog, and the warm-up that sizes segments.

A native pool that returns nothing for too long is closed from a watchdog thread and reported as
``Hung``, so one stuck ``recv()`` cannot stall a whole benchmark run.
"""

from __future__ import annotations

import threading
import time

from parallel_pool_bench.runners import Runner

__all__ = ["HANG_SECONDS", "WARMUP_MIN_CALLS", "WARMUP_SECONDS", "Hung", "time_calls", "warm_up"]

# Warm-up: run at least this long (it also estimates the rate that sizes a timed segment).
WARMUP_SECONDS = 0.05
# ... and over at least this many calls in one batch (see warm_up).
WARMUP_MIN_CALLS = 8
# A native pool that returns nothing for this long (or 10x its expected segment time, if longer)
# is closed from a watchdog thread and reported as hung.
HANG_SECONDS = 30.0


class Hung(Exception):
    """A method whose env returned nothing within the watchdog limit; it was closed."""


def time_calls(runner: Runner, calls: int, limit: float | None = None) -> float:
    """Seconds ``runner`` takes for ``calls`` calls.

    With a ``limit`` and an ``abortable`` runner, a watchdog aborts the runner after ``limit``
    seconds and this raises ``Hung``; other runners are timed without one.

    Example:
        >>> from parallel_pool_bench import make_runner, time_calls
        >>> runner = make_runner("pp-sync", "CartPole-v1", 4)
        >>> seconds = time_calls(runner, 100, limit=30.0)
        >>> runner.close()
    """
    watchdog = None
    if limit is not None and runner.abortable:
        watchdog = threading.Timer(limit, runner.abort)
        watchdog.daemon = True
        watchdog.start()
    try:
        start = time.perf_counter()
        runner.run(calls)
        return time.perf_counter() - start
    except Exception as e:
        if runner.aborted:
            raise Hung(f"hung: no result for {limit:.3g} s, pool closed by the watchdog") from e
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()


def warm_up(runner: Runner, min_seconds: float = WARMUP_SECONDS) -> float:
    """Runs ``runner`` for at least ``min_seconds`` and returns its rate in calls per second.

    The number of calls grows (x4 while far too short, else x2) until one batch of at least
    ``WARMUP_MIN_CALLS`` calls lasts ``min_seconds``; each batch is under the ``HANG_SECONDS``
    watchdog. A run's first calls carry one-time costs (an async pool's first ``recv`` waits for
    the resets sent when it was made; first imports, page faults): a rate taken from one slow first
    call sized every timed segment of that method at a few calls, which then timed the wake-ups
    after the pause between segments rather than the steps (a Python-env pool at 8 envs measured
    ~40k steps/s so, ~95k with segments of a second).
    """
    calls = 1
    while True:
        elapsed = time_calls(runner, calls, HANG_SECONDS)
        if elapsed >= min_seconds and calls >= WARMUP_MIN_CALLS:
            return calls / elapsed
        calls *= 4 if elapsed < min_seconds / 8 else 2
