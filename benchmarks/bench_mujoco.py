"""Ant-v5 and HalfCheetah-v5: parallel_pool against Gymnasium, SB3 and EnvPool, and the C++ limit.

Measures, side by side in one run on this machine, in this order:

1. the raw single-thread C++ loop over one env (native/bench/mujoco_raw.cc, no pool, no Python):
   one copy (the per-core limit), and two copies pinned to CPUs 0 and 1 at once (this machine's
   2-core limit; two vCPUs of one core scale less than 2x, so twice one loop is not the limit);
   for reference, one copy stepping the largest num_envs envs round robin (what that many envs'
   state costs in cache, without a pool);
2. our share of the 2-core limit, interleaved: our sync and async modes at each num_envs >= 4, each
   segment between two limit segments (two pinned raw loops), the median over rounds of its rate
   over the mean of those two limits (benchmarks/limit_check.py; this shared VM's speed drifts
   within seconds, so the limit of step 1 alone is not compared). This runs before step 3, whose
   Gymnasium envs import the `mujoco` Python package: that import installs MuJoCo's global timer
   callback, which our envs' mj_step then calls as well (the raw loops never do);
3. env steps/s of our sync mode and async mode (batch_size = num_envs // 2) against Gymnasium's
   AsyncVectorEnv, SB3's SubprocVecEnv (when installed) and EnvPool's sync and async modes (when
   installed: ``pip install envpool==1.2.5``), for num_envs 1, 2, 4, 8, 16, 32, interleaved as
   ``parallel_pool_bench`` does. The Gymnasium rows import `mujoco` into this process, so by
   default the timer callback is removed (``mujoco.mj_resetCallbacks()``) before this step: our
   rows then run as in the process of a user who does not import `mujoco` (as EnvPool's
   statically linked MuJoCo always does). Gymnasium's AsyncVectorEnv workers, forked from this
   process, inherit that (in their favour); SB3's SubprocVecEnv workers start fresh and install
   it. ``--keep-mujoco-timer`` measures with the callback in place;

prints markdown tables, checks the issue's targets (at or above EnvPool in both modes; our best
at >= 90% of the 2-core limit) and optionally appends everything to a JSON file.

The raw loop is built with CMake (``-DPP_BUILD_BENCH=ON``, target ``mujoco_raw``) into
build/bench-mujoco unless ``--raw-binary`` names one.

Usage:
    python benchmarks/bench_mujoco.py                     # ~17 minutes on 2 cores
    python benchmarks/bench_mujoco.py --json benchmarks/results_mujoco.json
    python benchmarks/bench_mujoco.py --tasks Ant-v5 --num-envs 8 32 --skip-raw
"""

from __future__ import annotations

import os
from typing import Any, Callable

import gymnasium
import limit_check  # benchmarks/limit_check.py, next to this script
import raw_loop_report  # benchmarks/raw_loop_report.py: what this script shares with bench_dm_control.py

import parallel_pool_bench as bench

TASKS = ("Ant-v5", "HalfCheetah-v5")
NUM_ENVS = (1, 2, 4, 8, 16, 32)
METHODS = ("pp-sync", "pp-async", "gym-async", "sb3-subproc", "envpool-sync", "envpool-async")
# The targets: our modes at or above EnvPool's, and our best steps/s at this fraction of
# the 2-core limit (two raw loops pinned to the two CPUs).
LIMIT_FRACTION = 0.9
RAW_RATE_PATTERN = raw_loop_report.RATE_PATTERN


def build_raw_binary() -> str:
    """Configures and builds the mujoco_raw target into build/bench-mujoco; returns its path."""
    return raw_loop_report.build("mujoco_raw", "bench-mujoco")


def gymnasium_assets_dir() -> str:
    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")


def limit_raw_cmd(binary: str, task_id: str, seconds: float) -> Callable[[int], list[str]]:
    """The command of one limit segment's raw loop pinned to a CPU (limit_check.interleaved's raw_cmd)."""

    def raw_cmd(cpu: int) -> list[str]:
        return [binary, "--task", task_id, "--seconds", str(seconds), "--warmup", "0.3",
                "--assets-dir", gymnasium_assets_dir(), "--cpu", str(cpu)]

    return raw_cmd


def raw_rates(binary: str, task_id: str, cpus: list[int | None], seconds: float, num_envs: int = 1) -> list[float]:
    """Runs one raw loop per entry of ``cpus`` at the same time (pinned where given); their steps/s."""
    cmd = [binary, "--task", task_id, "--seconds", str(seconds), "--assets-dir", gymnasium_assets_dir(),
           "--num-envs", str(num_envs)]
    return limit_check.run_loops([cmd + (["--cpu", str(cpu)] if cpu is not None else []) for cpu in cpus],
                                 RAW_RATE_PATTERN, seconds)


def measure_raw(
    binary: str, task_ids: list[str], seconds: float, repeats: int, many: int
) -> dict[str, dict[str, Any]]:
    """Per task, the median of ``repeats`` runs: one unpinned loop, two pinned loops (summed), and
    one loop over ``many`` envs."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    out: dict[str, dict[str, Any]] = {}
    for task_id in task_ids:
        one = [raw_rates(binary, task_id, [None], seconds)[0] for _ in range(repeats)]
        two = [sum(raw_rates(binary, task_id, cpus, seconds)) for _ in range(repeats)] if len(cpus) == 2 else []
        one_many = [raw_rates(binary, task_id, [None], seconds, many)[0] for _ in range(repeats)]
        out[task_id] = {
            **limit_check.raw_summary(one, two, cpus),
            "one_loop_many_envs": sorted(one_many)[len(one_many) // 2],
            "many_envs": many,
            "samples_one_many_envs": one_many,
        }
    return out


def format_raw(raw: dict[str, dict[str, Any]]) -> str:
    many = next(iter(raw.values()))["many_envs"] if raw else 1
    lines = [
        "| task | raw loop, 1 thread, 1 env | 2 raw loops pinned to 2 CPUs (sum) | scaling "
        f"| 1 thread, {many} envs round robin |",
        "|---|---:|---:|---:|---:|",
    ]
    for task_id, r in raw.items():
        two = r["two_pinned_loops"]
        scaling = f"{two / r['one_loop']:.2f}x" if two else "-"
        lines.append(
            f"| {task_id} | {r['one_loop']:,.0f} | {'-' if two is None else f'{two:,.0f}'} | {scaling} "
            f"| {r['one_loop_many_envs']:,.0f} |"
        )
    return "\n".join(lines)


def check_share(task_id: str, share: dict[str, Any]) -> bench.Check:
    """Our best config's share of the 2-core limit against LIMIT_FRACTION."""
    name, c = limit_check.best(share)
    return (
        f"{task_id}: our best >= {LIMIT_FRACTION:.0%} of the 2-core limit (interleaved)",
        c["median_ratio"] >= LIMIT_FRACTION,
        f"{name} at num_envs={c['num_envs']}: {c['median']:,.0f} steps/s, {c['median_ratio']:.0%} of "
        f"the limit ({c['median_ratio_steal_corrected']:.0%} steal-corrected; medians of the ratio to the "
        f"adjacent limits; limit median {share['limit_median']:,.0f})",
    )


def set_mujoco_timer(keep: bool) -> str:
    """Imports `mujoco` (the Gymnasium rows would anyway) and, unless `keep`, removes the timer
    callback its import installs. Returns which state the throughput rows run in."""
    import mujoco

    if keep:
        return "kept (installed by `import mujoco`)"
    mujoco.mj_resetCallbacks()
    return "removed (mujoco.mj_resetCallbacks())"


def main(argv: list[str] | None = None) -> int:
    parser = raw_loop_report.arg_parser(__doc__.splitlines()[0], TASKS, NUM_ENVS, METHODS, "mujoco_raw", "bench-mujoco")
    parser.add_argument("--keep-mujoco-timer", action="store_true",
                        help="measure the throughput rows with the timer callback that `import mujoco` installs")
    args = parser.parse_args(argv)
    if args.json:
        args.json = os.path.abspath(args.json)
    # Gymnasium's HalfCheetah model draws a MuJoCo compiler warning, which the mujoco Python package
    # (in Gymnasium's and SB3's workers) appends to ./MUJOCO_LOG.TXT: run where that does no harm.
    bench.work_in_scratch_dir("bench_mujoco_")

    record = bench.start_report(
        f"MuJoCo ({', '.join(args.tasks)}): parallel_pool vs Gymnasium {gymnasium.__version__}, SB3, EnvPool"
    )

    # The limit share first, while nothing in this process has imported the `mujoco` Python package:
    # importing it installs MuJoCo's global timer callback (mjcb_time), which every mj_step of our
    # envs then calls too, and the raw loops never pay it (BENCHMARKS.md). The throughput rows below
    # create Gymnasium's MuJoCo envs, which import it.
    limits = raw_loop_report.raw_sections(
        args,
        record,
        build_raw_binary,
        lambda binary: measure_raw(binary, args.tasks, args.raw_seconds, args.raw_repeats, max(args.num_envs)),
        format_raw,
        limit_raw_cmd,
    )

    result = None
    if not args.skip_throughput:
        record["mujoco_timer_callback"] = set_mujoco_timer(keep=args.keep_mujoco_timer)
        print()
        print(f"MuJoCo timer callback during the throughput rows: {record['mujoco_timer_callback']}")
        result = bench.throughput_section(args.tasks, args, record)
    return bench.finish_report(record, raw_loop_report.check_targets(result, limits, 1.0, check_share), args.json)


if __name__ == "__main__":
    raise SystemExit(main())
