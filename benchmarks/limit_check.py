"""Our pool against this machine's 2-core limit, measured interleaved round by round.

The limit is two raw single-thread C++ loops over the env (no pool, no Python) pinned to the two
CPUs at once. This machine's speed drifts by 10-30% within minutes (it is a shared VM), so a limit
measured once before the pool runs says little about the pool's share of it: here every round
times the two pinned loops and then each pool configuration for the same few seconds, and the
result is the median over rounds of (pool rate / that round's limit).

Used by bench_mujoco.py and bench_atari.py.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from typing import Any, Callable

import numpy as np

import parallel_pool


def two_pinned_loops(raw_cmd: Callable[[int], list[str]], cpus: list[int], pattern: str, seconds: float) -> float:
    """Sum of the rates of one raw loop per CPU, run at the same time."""
    procs = [subprocess.Popen(raw_cmd(cpu), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cpu in cpus]
    total = 0.0
    for p in procs:
        out, err = p.communicate(timeout=seconds * 10 + 60)
        match = re.search(pattern, out)
        if p.returncode != 0 or match is None:
            raise RuntimeError(f"raw loop failed: {err or out}")
        total += float(match.group(1))
    return total


class _PoolLoop:
    """A pool stepped as fast as Python drives it: sync ``step``, or async ``recv``/``send``."""

    def __init__(self, task_id: str, num_envs: int, batch_size: int, **kwargs: Any) -> None:
        self.env = parallel_pool.make(task_id, num_envs=num_envs, batch_size=batch_size, seed=0, **kwargs)
        rng = np.random.default_rng(0)
        space = self.env.action_space
        if hasattr(space, "n"):
            self.actions = [rng.integers(0, space.n, size=batch_size) for _ in range(64)]
        else:
            self.actions = [rng.uniform(space.low, space.high, size=(batch_size, *space.shape)).astype(space.dtype)
                            for _ in range(64)]
        self.sync = batch_size == num_envs
        if self.sync:
            self.env.reset()
        else:
            self.env.async_reset()

    def run(self, seconds: float) -> float:
        """Env steps per second over about ``seconds``."""
        env, steps = self.env, 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for action in self.actions:
                if self.sync:
                    env.step(action)
                else:
                    *_, info = env.recv()
                    env.send(action, info["env_id"])
                steps += len(action)
        return steps / (time.perf_counter() - start)


def interleaved(
    task_id: str,
    configs: dict[str, tuple[int, int]],
    raw_cmd: Callable[[int], list[str]],
    pattern: str,
    cpus: list[int],
    *,
    rounds: int = 6,
    seconds: float = 1.0,
    pool_scale: float = 1.0,
) -> dict[str, Any]:
    """Per config name -> (num_envs, batch_size): the median rate and the median per-round ratio to
    the 2-core limit. ``pool_scale`` converts env steps to the raw loop's unit (Atari: frames)."""
    loops = {name: _PoolLoop(task_id, n, b) for name, (n, b) in configs.items()}
    limits: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in configs}
    try:
        for loop in loops.values():  # warm up
            loop.run(min(seconds, 0.5))
        for _ in range(rounds):
            limits.append(two_pinned_loops(raw_cmd, cpus, pattern, seconds))
            for name, loop in loops.items():
                rates[name].append(loop.run(seconds) * pool_scale)
    finally:
        for loop in loops.values():
            loop.env.close()
    out: dict[str, Any] = {"limit_samples": limits, "limit_median": statistics.median(limits), "configs": {}}
    for name, samples in rates.items():
        ratios = [r / lim for r, lim in zip(samples, limits)]
        out["configs"][name] = {
            "num_envs": configs[name][0], "batch_size": configs[name][1], "samples": samples,
            "median": statistics.median(samples), "ratios": ratios, "median_ratio": statistics.median(ratios),
        }
    return out


def format_interleaved(task_id: str, result: dict[str, Any], unit: str) -> str:
    lines = [
        f"2-core limit of {task_id} (two pinned raw loops), median of {len(result['limit_samples'])} rounds: "
        f"{result['limit_median']:,.0f} {unit} (rounds: {', '.join(f'{x:,.0f}' for x in result['limit_samples'])})",
        "",
        f"| {task_id} | num_envs | batch_size | {unit}, median | median per-round share of the limit |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, c in result["configs"].items():
        lines.append(f"| {name} | {c['num_envs']} | {c['batch_size']} | {c['median']:,.0f} | {c['median_ratio']:.0%} |")
    return "\n".join(lines)


def best(result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return max(result["configs"].items(), key=lambda kv: kv[1]["median_ratio"])
