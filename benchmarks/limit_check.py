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
from typing import Any, Callable

from parallel_pool import bench


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
    # bench.py's runners (our sync mode: step; async: recv/send), timed the way its tables are.
    runners: dict[str, bench.Runner] = {}
    calls: dict[str, int] = {}
    limits: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in configs}
    try:
        for name, (n, b) in configs.items():
            method = "pp-sync" if b == n else "pp-async"
            runners[name] = bench.make_runner(method, task_id, n, async_fraction=b / n)
            calls[name] = max(1, round(seconds * bench.warm_up(runners[name])))
        for _ in range(rounds):
            limits.append(two_pinned_loops(raw_cmd, cpus, pattern, seconds))
            for name, runner in runners.items():
                elapsed = bench._time_calls(runner, calls[name], bench.HANG_SECONDS)
                rates[name].append(calls[name] * runner.steps_per_call / elapsed * pool_scale)
    finally:
        for runner in runners.values():
            runner.close()
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
