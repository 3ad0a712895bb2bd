"""CartPole-v1: parallel_pool against Gymnasium's vector envs, and one env's step latency.

Measures, side by side in one run on this machine:

1. env steps/s of our sync mode and async mode (batch_size = num_envs // 2) against Gymnasium's
   SyncVectorEnv and AsyncVectorEnv, for num_envs 1, 4, 16, 64, 256;
2. the latency of one ``step`` of a single env: ``parallel_pool.make(task, num_envs=1).step``
   against ``gymnasium.make(task).step`` (median µs over many calls);

prints markdown tables, checks the two targets (single env >= 2x Gymnasium's; at num_envs=256
>= 10x Gymnasium's best vector env) and optionally appends everything to a JSON file.
How each number is measured is in ``parallel_pool_bench`` and benchmarks/BENCHMARKS.md.

Usage:
    python benchmarks/bench_classic_control.py                      # ~2-3 minutes on 2 cores
    python benchmarks/bench_classic_control.py --json benchmarks/results.json
"""

from __future__ import annotations

import argparse

import gymnasium

import parallel_pool_bench as bench

TASK = "CartPole-v1"
NUM_ENVS = (1, 4, 16, 64, 256)
METHODS = ("pp-sync", "pp-async", "gym-sync", "gym-async")
# The targets of the issue: single-env step speed against gymnasium.make, and throughput at
# TARGET_NUM_ENVS against the faster of Gymnasium's two vector envs.
SINGLE_ENV_TARGET = 2.0
VECTOR_TARGET = 10.0
TARGET_NUM_ENVS = 256


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default=TASK)
    bench.add_common_args(parser, num_envs=NUM_ENVS, methods=METHODS)
    parser.add_argument("--latency-calls", type=int, default=10_000, help="step calls per latency segment")
    parser.add_argument("--latency-repeats", type=int, default=20, help="latency segments (default 20)")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args(argv)

    record = bench.start_report(f"{args.task}: parallel_pool vs Gymnasium {gymnasium.__version__}")
    checks: list[bench.Check] = []

    if not args.skip_throughput:
        result = bench.throughput_section([args.task], args, record)
        best = result.best_gymnasium(args.task, TARGET_NUM_ENVS)
        for m in result.measurements if best else []:
            if m.num_envs == TARGET_NUM_ENVS and m.method in ("pp-sync", "pp-async"):
                name = f"{m.label} at num_envs={TARGET_NUM_ENVS} >= {VECTOR_TARGET:g}x Gymnasium's best vector env"
                ratio = result.ratio(m)
                if m.steps_per_s is None or ratio is None:
                    checks.append((name, False, f"not measured ({m.note})"))
                    continue
                checks.append((
                    name, ratio >= VECTOR_TARGET, f"{m.steps_per_s:,.0f} vs {best:,.0f} steps/s = {ratio:.1f}x"
                ))

    if not args.skip_latency:
        latency = bench.single_env_latency(
            args.task, calls=args.latency_calls, repeats=args.latency_repeats, progress=not args.no_progress
        )
        print()
        print(
            f"## Single-env step latency (median of {args.latency_repeats} segments of "
            f"{args.latency_calls:,} calls; next-step autoreset on both sides: every call is one step, "
            "or one reset after an episode ended)"
        )
        print()
        print(bench.format_latency(latency))
        record["latency"] = latency
        us = latency["us_per_step"]
        checks.append((
            f"single-env step >= {SINGLE_ENV_TARGET:g}x faster than gymnasium.make({args.task!r})",
            latency["speedup_vs_gymnasium"] >= SINGLE_ENV_TARGET,
            f"{us['parallel_pool']:.2f} vs {us['gymnasium']:.2f} µs/step = "
            f"{latency['speedup_vs_gymnasium']:.2f}x",
        ))

    return bench.finish_report(record, checks, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
