"""What bench_mujoco.py and bench_dm_control.py share around their raw loop, native/bench/mujoco_raw.cc
(built as the mujoco_raw and dm_control_raw targets): its build, the scripts' options, the report's
sections on the raw loop and on the interleaved share of the 2-core limit (benchmarks/limit_check.py),
and the targets against EnvPool and that limit.

Each script keeps the parts that differ: the loop's commands (``limit_raw_cmd``), its build
(``build_raw_binary``), its measurements and table, and its limit target. ab_limit.py reads a script's
``limit_raw_cmd``, ``RAW_RATE_PATTERN`` and ``build_raw_binary``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

import limit_check  # benchmarks/limit_check.py, next to this module

import parallel_pool_bench as bench

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The raw loop's last line: its rate.
RATE_PATTERN = r"steps_per_s=([0-9.]+)"

# By task id: a raw loop's record (limit_check.raw_summary), or a share of the limit (limit_check.interleaved).
ByTask = dict[str, dict[str, Any]]


def build(target: str, build_dir: str) -> str:
    """Configures the repository into build/``build_dir`` and builds ``target``; returns its path."""
    # The raw MuJoCo loop needs no ALE (nor its download).
    return limit_check.build_raw_target(REPO, os.path.join(REPO, "build", build_dir), target, ["-DPP_WITH_ATARI=OFF"])


def arg_parser(
    description: str,
    tasks: Sequence[str],
    num_envs: Sequence[int],
    methods: Sequence[str],
    target: str,
    build_dir: str,
) -> argparse.ArgumentParser:
    """A parser of ``--tasks``, the common options, the raw loop's and the limit's
    (``add_limit_args``: ``--raw-binary`` is a built ``target``, else ``build`` makes one in
    build/``build_dir``) and ``--skip-throughput``; the script adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", nargs="+", default=list(tasks))
    bench.add_common_args(parser, num_envs=num_envs, methods=methods, repeats=3)
    bench.add_limit_args(parser, f"a built {target} (default: build it into build/{build_dir})")
    parser.add_argument("--skip-throughput", action="store_true")
    return parser


def raw_sections(
    args: argparse.Namespace,
    record: dict[str, Any],
    build_raw_binary: Callable[[], str],
    measure_raw: Callable[[str], ByTask],
    format_raw: Callable[[ByTask], str],
    limit_raw_cmd: Callable[[str, str, float], Callable[[int], list[str]]],
) -> ByTask:
    """Unless ``--skip-raw``, the raw loop's section: ``measure_raw(binary)`` of ``--raw-binary`` (or
    of ``build_raw_binary()``) as ``format_raw`` prints it; then, unless ``--skip-limit`` or on one
    CPU, each task's interleaved share of the 2-core limit, whose raw loops are
    ``limit_raw_cmd(binary, task_id, seconds)``. Records both; returns the shares by task (empty
    when not measured)."""
    limits: ByTask = {}
    if args.skip_raw:
        return limits
    binary = args.raw_binary or build_raw_binary()
    raw = measure_raw(binary)
    print()
    print(f"## Raw single-thread C++ loop, steps/s (median of {args.raw_repeats} runs of {args.raw_seconds:g} s)")
    print()
    print(format_raw(raw))
    record["raw"] = raw
    if args.skip_limit or len(os.sched_getaffinity(0)) < 2:
        return limits
    cpus = sorted(os.sched_getaffinity(0))[:2]
    print()
    print(f"## Share of the 2-core limit, interleaved ({args.limit_rounds} rounds of {args.limit_seconds:g} s)")
    for task_id in args.tasks:
        raw_cmd = limit_raw_cmd(binary, task_id, args.limit_seconds)
        limits[task_id] = limit_check.interleaved(
            task_id,
            bench.limit_configs(args.num_envs),
            raw_cmd,
            RATE_PATTERN,
            cpus,
            rounds=args.limit_rounds,
            seconds=args.limit_seconds,
        )
        print()
        print(limit_check.format_interleaved(task_id, limits[task_id], "steps/s"))
    record["limit_interleaved"] = limits
    return limits


def check_targets(
    result: bench.BenchResult | None,
    limits: ByTask,
    envpool_ratio: float,
    check_share: Callable[[str, dict[str, Any]], bench.Check],
) -> list[bench.Check]:
    """Per task of ``result`` or ``limits``: each of our modes at ``envpool_ratio`` x EnvPool's same
    mode or above, and ``check_share(task_id, share)`` of its share of the limit, where measured."""
    checks: list[bench.Check] = []
    measurements = result.measurements if result is not None else []
    for task_id in dict.fromkeys([m.task_id for m in measurements] + list(limits)):
        pairs = (("pp-sync", "envpool-sync", envpool_ratio), ("pp-async", "envpool-async", envpool_ratio))
        checks += bench.check_ratios(result, pairs, task_id=task_id)
        if limits.get(task_id):
            checks.append(check_share(task_id, limits[task_id]))
    return checks
