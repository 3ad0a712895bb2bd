"""CheetahRun-v1, WalkerWalk-v1 and HumanoidRun-v1: parallel_pool against EnvPool 1.2.5, and the C++ limit.

Measures, side by side in one run on this machine, in this order (the structure of
benchmarks/bench_mujoco.py):

1. the raw single-thread C++ loop over one env (native/bench/mujoco_raw.cc built as dm_control_raw:
   no pool, no Python): one copy (the per-core limit) and two copies pinned to CPUs 0 and 1 at once
   (this machine's 2-core limit);
2. our share of the 2-core limit, interleaved: our sync and async modes at each num_envs >= 4, each
   segment between two limit segments (benchmarks/limit_check.py), the median over rounds of its
   rate over the mean of those two limits. It runs before step 3, which imports EnvPool;
3. env steps/s of our sync mode and async mode (batch_size = num_envs // 2) against EnvPool's sync
   and async modes (``pip install envpool==1.2.5``, or ``--envpool-path`` to a site-packages that
   has it) with the same ids, for num_envs 1, 8, 32, interleaved as ``parallel_pool_bench`` does;

prints markdown tables, checks the issue's targets (at least 1.2x EnvPool in every cell, our async
mode at >= 90% of the 2-core limit) and optionally appends everything to a JSON file.

Usage:
    python benchmarks/bench_dm_control.py
    python benchmarks/bench_dm_control.py --envpool-path /work/venv-envpool/lib/python3.11/site-packages
    python benchmarks/bench_dm_control.py --tasks CheetahRun-v1 --num-envs 8 --skip-raw
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import limit_check  # benchmarks/limit_check.py, next to this script
import raw_loop_report  # benchmarks/raw_loop_report.py: what this script shares with bench_mujoco.py

import parallel_pool_bench as bench

TASKS = ("CheetahRun-v1", "WalkerWalk-v1", "HumanoidRun-v1")
NUM_ENVS = (1, 8, 32)
METHODS = ("pp-sync", "pp-async", "envpool-sync", "envpool-async")
# The targets: each of our modes at this multiple of EnvPool's same mode, and our async
# mode at this fraction of the 2-core limit (two raw loops pinned to the two CPUs).
ENVPOOL_RATIO = 1.2
LIMIT_FRACTION = 0.9
RAW_RATE_PATTERN = raw_loop_report.RATE_PATTERN


def build_raw_binary() -> str:
    """Configures and builds the dm_control_raw target into build/bench-dm-control; returns its path."""
    return raw_loop_report.build("dm_control_raw", "bench-dm-control")


def suite_dir() -> str:
    import importlib.util

    spec = importlib.util.find_spec("dm_control")
    if spec is None or spec.origin is None:
        raise SystemExit("dm_control is not installed (pip install 'parallel-pool[dm_control]')")
    return os.path.join(os.path.dirname(spec.origin), "suite")


def raw_cmd(binary: str, task_id: str, seconds: float, cpu: int | None, warmup: float = 1.0) -> list[str]:
    cmd = [binary, "--task", task_id, "--seconds", str(seconds), "--warmup", str(warmup), "--assets-dir", suite_dir()]
    return cmd + (["--cpu", str(cpu)] if cpu is not None else [])


def limit_raw_cmd(binary: str, task_id: str, seconds: float) -> Callable[[int], list[str]]:
    """The command of one limit segment's raw loop pinned to a CPU (limit_check.interleaved's raw_cmd)."""

    def cmd(cpu: int) -> list[str]:
        return raw_cmd(binary, task_id, seconds, cpu, warmup=0.3)

    return cmd


def raw_rates(binary: str, task_id: str, cpus: list[int | None], seconds: float) -> list[float]:
    """Runs one raw loop per entry of ``cpus`` at the same time (pinned where given); their steps/s."""
    return limit_check.run_loops([raw_cmd(binary, task_id, seconds, cpu) for cpu in cpus], RAW_RATE_PATTERN, seconds)


def measure_raw(binary: str, task_ids: list[str], seconds: float, repeats: int) -> dict[str, dict[str, Any]]:
    cpus = sorted(os.sched_getaffinity(0))[:2]
    out: dict[str, dict[str, Any]] = {}
    for task_id in task_ids:
        one = [raw_rates(binary, task_id, [None], seconds)[0] for _ in range(repeats)]
        two = [sum(raw_rates(binary, task_id, list(cpus), seconds)) for _ in range(repeats)] if len(cpus) == 2 else []
        out[task_id] = limit_check.raw_summary(one, two, cpus)
    return out


def format_raw(raw: dict[str, dict[str, Any]]) -> str:
    lines = ["| task | raw loop, 1 thread | 2 raw loops pinned to 2 CPUs (sum) | scaling |", "|---|---:|---:|---:|"]
    for task_id, r in raw.items():
        two = r["two_pinned_loops"]
        scaling = f"{two / r['one_loop']:.2f}x" if two else "-"
        lines.append(f"| {task_id} | {r['one_loop']:,.0f} | {'-' if two is None else f'{two:,.0f}'} | {scaling} |")
    return "\n".join(lines)


def check_share(task_id: str, share: dict[str, Any]) -> bench.Check:
    """Our best async config's share of the 2-core limit against LIMIT_FRACTION."""
    async_only = {k: v for k, v in share["configs"].items() if "async" in k}
    name, c = limit_check.best({**share, "configs": async_only})
    return (
        f"{task_id}: our async mode >= {LIMIT_FRACTION:.0%} of the 2-core limit (interleaved)",
        c["median_ratio"] >= LIMIT_FRACTION,
        f"{name}: {c['median']:,.0f} steps/s, {c['median_ratio']:.0%} of the limit "
        f"(limit median {share['limit_median']:,.0f})",
    )


def main(argv: list[str] | None = None) -> int:
    parser = raw_loop_report.arg_parser(
        __doc__.splitlines()[0], TASKS, NUM_ENVS, METHODS, "dm_control_raw", "bench-dm-control"
    )
    parser.add_argument("--envpool-path", help="a site-packages directory holding envpool 1.2.5 (appended to sys.path)")
    args = parser.parse_args(argv)
    if args.json:
        args.json = os.path.abspath(args.json)
    if args.envpool_path:
        sys.path.append(args.envpool_path)
    bench.work_in_scratch_dir("bench_dm_control_")  # MuJoCo's MUJOCO_LOG.TXT, if any, goes there

    record = bench.start_report(f"dm_control ({', '.join(args.tasks)}): parallel_pool vs EnvPool", gymnasium=False)
    limits = raw_loop_report.raw_sections(
        args,
        record,
        build_raw_binary,
        lambda binary: measure_raw(binary, args.tasks, args.raw_seconds, args.raw_repeats),
        format_raw,
        limit_raw_cmd,
    )
    result = None if args.skip_throughput else bench.throughput_section(args.tasks, args, record)
    targets = raw_loop_report.check_targets(result, limits, ENVPOOL_RATIO, check_share)
    return bench.finish_report(record, targets, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
