"""Soak tests: long runs whose memory stays flat, and pools that leave nothing behind.

Each workload runs in a fresh Python process (``python tests/reliability/test_soak.py WORKLOAD SIZE``), so that
what it measures is its own: the threads and open files of the process (``/proc/self/task``,
``/proc/self/fd``), its resident memory (``VmRSS``) and glibc's heap in use (``mallinfo2``), read
after ``gc.collect()`` and ``malloc_trim(0)`` (freed memory handed back, so what stays resident is
what is still allocated). Memory is measured after a warm-up (the output blocks, Python's free
lists and allocator arenas, ALE's ROM and emulator state are all in place by then) and then at ten
checkpoints; the largest growth over the warm-up baseline must stay under the bounds below.

The default suite runs short versions (about 12 s in all here, 2 cores under load). The long versions are marked
``soak`` and left out of the default run like ``slow``; run them with

    pytest -m soak -s tests/reliability/test_soak.py

(``-s`` prints each result: time, RSS and heap before and after). Their results are recorded in
the README's "Reliability" section and in benchmarks/BENCHMARKS.md.

Bounds, and what they catch:

- ``RSS_BOUND`` = 2 MiB. Stepping allocates nothing in steady state (output blocks are recycled),
  and measured growth is 0 MiB over every run here. RSS moves by whole pages and CPython takes its
  small-object memory in 1 MiB arenas, so one arena that happens to be touched between two
  checkpoints can show as up to 1 MiB: 2 MiB is twice that. Over the short CartPole run (10^6
  steps, 1.25·10^5 send/recv pairs) it catches a leak of 2.1 bytes a step or 17 bytes a call, the
  size of the smallest Python object (keeping one 8-row env_id array a recv grows RSS by 22 MiB);
  over the long one (10^7 steps) 0.2 bytes a step. Over Pong's 6·10^4 frames (long: 10^6) it
  catches 35 (2.1) bytes a frame. Over 1,000 pools, 2 KiB a pool.
- ``HEAP_BOUND`` = 256 KiB of malloc'd bytes still in use, the sharper check of the C++ side (the
  engine, the envs, NumPy's buffers): it does not move by pages. Measured: 0 bytes over the
  stepping runs; over pools a one-off 19 to 23 KiB in the first 1,000 that stays flat after (22 KiB
  after 2,000 and after 8,000 pools), so not a per-pool leak. The bound is 2 bytes a recv over the
  short CartPole run, and 256 bytes a pool: less than one output block or one env of any task.
- Threads and open files after 1,000 pools are made and closed (with steps in flight at close):
  exactly as many as before.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

RSS_BOUND = 2 * 2**20
HEAP_BOUND = 256 * 2**10
CHECKPOINTS = 10

_LIBC = ctypes.CDLL(None)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")
    ]


def _heap_in_use() -> int:
    """Bytes malloc'd and not freed (glibc's mallinfo2: every arena, mmapped chunks included)."""
    _LIBC.mallinfo2.restype = _MallInfo2
    info = _LIBC.mallinfo2()
    return int(info.uordblks + info.hblkhd)


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _measure() -> dict[str, int]:
    gc.collect()
    _LIBC.malloc_trim(0)
    return {
        "rss": _rss(),
        "heap": _heap_in_use(),
        "threads": len(os.listdir("/proc/self/task")),
        "fds": len(os.listdir("/proc/self/fd")),
    }


def _soak(
    step: Callable[[int], None], units: int, warmup: int, blocks: Callable[[], int] | None = None
) -> dict[str, Any]:
    """Runs `step(n)` (n units of work) for `warmup` units, then `units` more in CHECKPOINTS
    slices, measuring after the warm-up and after each slice. `blocks`: the pool's output blocks
    allocated so far, which must not change after the warm-up."""
    step(warmup)
    blocks_before = blocks() if blocks else 0
    before = _measure()
    rss_growth = heap_growth = 0
    start = time.perf_counter()
    for _ in range(CHECKPOINTS):
        step(units // CHECKPOINTS)
        now = _measure()
        rss_growth = max(rss_growth, now["rss"] - before["rss"])
        heap_growth = max(heap_growth, now["heap"] - before["heap"])
    seconds = time.perf_counter() - start
    after = _measure()
    return {
        "blocks_before": blocks_before,
        "blocks_after": blocks() if blocks else 0,
        "units": units,
        "seconds": round(seconds, 2),
        "rss_before_mib": round(before["rss"] / 2**20, 2),
        "rss_after_mib": round(after["rss"] / 2**20, 2),
        "rss_max_growth": rss_growth,
        "heap_before_mib": round(before["heap"] / 2**20, 2),
        "heap_after_mib": round(after["heap"] / 2**20, 2),
        "heap_max_growth": heap_growth,
        "threads_before": before["threads"],
        "threads_after": after["threads"],
        "fds_before": before["fds"],
        "fds_after": after["fds"],
    }


def _soak_async(
    env: Any,
    actions: np.ndarray,
    units: int,
    units_per_recv: int,
    warmup: int,
    recv_timeout: float | None = None,
    count_blocks: bool = False,
) -> dict[str, Any]:
    """Soaks an async pool, then closes it: after ``async_reset``, each batch received (with
    `recv_timeout`, where the pool takes one) is sent the next row of `actions` (in turn), and
    counts as `units_per_recv` units of work. `count_blocks`: hand ``_soak`` the pool's output
    blocks (ours only: EnvPool does not count them)."""
    env.async_reset()
    calls = 0

    def step(n: int) -> None:
        nonlocal calls
        for _ in range(n // units_per_recv):
            _, _, _, _, info = env.recv() if recv_timeout is None else env.recv(timeout=recv_timeout)
            env.send(actions[calls % len(actions)], info["env_id"])
            calls += 1

    result = _soak(step, units, warmup, blocks=(lambda: env._native.blocks_allocated) if count_blocks else None)
    env.close()
    return result


# --- the workloads (run in a fresh process by _run) ------------------------------------------


def cartpole_async(steps: int) -> dict[str, Any]:
    """Async CartPole: 16 envs, batches of 8 (many calls per step, so a per-call leak shows),
    episode statistics on (an info dict per finished episode), random actions."""
    import parallel_pool

    env = parallel_pool.make("CartPole-v1", num_envs=16, batch_size=8, seed=0, episode_stats=True)
    actions = np.random.default_rng(0).integers(0, 2, size=(64, 8))
    return _soak_async(env, actions, steps, 8, 200_000, recv_timeout=60, count_blocks=True)


def pong_async(frames: int) -> dict[str, Any]:
    """Async Pong-v5 with EnvPool's defaults (frame_skip 4: four frames a step), 8 envs, batches
    of 4, random actions."""
    import parallel_pool

    env = parallel_pool.make("Pong-v5", num_envs=8, batch_size=4, seed=0)
    actions = np.random.default_rng(0).integers(0, 6, size=(64, 4))
    frames_per_recv = 4 * env.spec.config["frame_skip"]
    return _soak_async(env, actions, frames, frames_per_recv, 20_000, recv_timeout=60, count_blocks=True)


def _one_pool(i: int) -> None:
    """Makes a pool (one of five kinds, in turn), uses it, and closes it with work in flight."""
    import parallel_pool

    kind = i % 20
    if kind == 0:  # ALE: a ROM loaded, an emulator per env
        env = parallel_pool.make("Pong-v5", num_envs=2, batch_size=1, seed=i)
        env.async_reset()
        _, _, _, _, info = env.recv(timeout=60)
        env.send(np.zeros(1, dtype=np.int64), info["env_id"])
    elif kind % 3 == 0:  # multi-player, rendering, sync
        env = parallel_pool.make("GuessingGame-v0", num_envs=4, seed=i, num_threads=2)
        env.reset()
        env.step(np.zeros((4, 4), dtype=np.int64))
        env.render()
    elif kind % 3 == 1:  # async, steps in flight at close
        env = parallel_pool.make("CartPole-v1", num_envs=8, batch_size=4, seed=i, num_threads=2)
        env.async_reset()
        _, _, _, _, info = env.recv(timeout=60)
        env.send(np.zeros(4, dtype=np.int64), info["env_id"])
    else:  # continuous, same_step, episode statistics
        env = parallel_pool.make("Pendulum-v1", num_envs=3, seed=i, autoreset_mode="same_step", episode_stats=True)
        env.reset()
        env.step(np.zeros((3, 1), dtype=np.float32))
    env.close()


def _soak_pools(one_pool: Callable[[int], None], count: int) -> dict[str, Any]:
    """Soaks `one_pool(i)` (make, use and close pool i): a unit of work is one pool."""
    made = 0

    def step(n: int) -> None:
        nonlocal made
        for _ in range(n):
            one_pool(made)
            made += 1

    return _soak(step, count, warmup=100)


def pools(count: int) -> dict[str, Any]:
    return _soak_pools(_one_pool, count)


WORKLOADS: dict[str, Callable[[int], dict[str, Any]]] = {
    "cartpole_async": cartpole_async,
    "pong_async": pong_async,
    "pools": pools,
}


def _run(workload: str, size: int, timeout_s: float) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, workload, str(size)], capture_output=True, text=True, timeout=timeout_s
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"\nsoak {workload} {size}: {json.dumps(result)}")
    return result


def _check_memory(result: dict[str, Any]) -> None:
    assert result["blocks_after"] == result["blocks_before"], f"output blocks allocated in steady state: {result}"
    assert result["rss_max_growth"] <= RSS_BOUND, f"RSS grew {result['rss_max_growth'] / 2**20:.2f} MiB: {result}"
    assert result["heap_max_growth"] <= HEAP_BOUND, f"heap grew {result['heap_max_growth'] / 2**10:.0f} KiB: {result}"


# --- the default suite: short versions -------------------------------------------------------


def test_async_cartpole_memory_stays_flat() -> None:
    result = _run("cartpole_async", 1_000_000, timeout_s=600)
    _check_memory(result)


def test_pong_memory_stays_flat() -> None:
    result = _run("pong_async", 60_000, timeout_s=600)
    _check_memory(result)


def test_a_thousand_pools_leave_no_thread_file_or_memory_behind() -> None:
    result = _run("pools", 1_000, timeout_s=600)
    assert result["threads_after"] == result["threads_before"], result
    assert result["fds_after"] == result["fds_before"], result
    _check_memory(result)


# --- the long versions: pytest -m soak -s tests/reliability/test_soak.py ---------------------------------


@pytest.mark.soak
def test_async_cartpole_ten_million_steps() -> None:
    _check_memory(_run("cartpole_async", 10_000_000, timeout_s=3600))


@pytest.mark.soak
def test_pong_a_million_frames() -> None:
    _check_memory(_run("pong_async", 1_000_000, timeout_s=3600))


if __name__ == "__main__":
    print(json.dumps(WORKLOADS[sys.argv[1]](int(sys.argv[2]))))
