"""What every ``benchmarks/bench_*.py`` script does around its own measurements: the common
options, the report's title and machine line, the throughput section, the targets and the JSON
record. A script adds its own options and sections between ``start_report`` and ``finish_report``.
A script that times runners of its own (bench_mpe.py, bench_vizdoom.py) takes its options, the
methods it can run, their interleaved medians and its rate tables from here too; the pixel
benchmarks take their options."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parallel_pool_bench.machine import machine_info
from parallel_pool_bench.report import check_ratios, format_ratios, format_table, write_json
from parallel_pool_bench.runners import METHODS
from parallel_pool_bench.throughput import BenchResult, run_benchmarks

__all__ = [
    "Check",
    "add_common_args",
    "add_limit_args",
    "add_pixel_args",
    "add_runner_args",
    "available_methods",
    "finish_report",
    "interleaved_medians",
    "interleaved_methods",
    "limit_configs",
    "print_rates",
    "ratio_benchmark",
    "start_report",
    "throughput_section",
]

# A target checked by a script: its name, whether it was met, and the numbers behind the verdict.
Check = tuple[str, bool, str]


def add_common_args(
    parser: argparse.ArgumentParser,
    *,
    num_envs: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
    seconds: float = 1.0,
    repeats: int = 5,
) -> None:
    """Adds ``--num-envs`` and ``--methods`` (when given defaults), ``--seconds``, ``--repeats``,
    ``--json`` and ``--no-progress``."""
    if num_envs is not None:
        parser.add_argument("--num-envs", type=int, nargs="+", default=list(num_envs))
    if methods is not None:
        parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(methods))
    _add_segment_args(parser, seconds, repeats)
    parser.add_argument("--json", metavar="PATH", help="append this run's results to a JSON list here")
    parser.add_argument("--no-progress", action="store_true")


def _add_segment_args(parser: argparse.ArgumentParser, seconds: float, repeats: int) -> None:
    """Adds ``--seconds`` and ``--repeats``, the length and number of each method's timed segments."""
    parser.add_argument(
        "--seconds", type=float, default=seconds, help=f"seconds per timed segment (default {seconds:g})"
    )
    parser.add_argument("--repeats", type=int, default=repeats, help=f"timed segments per method (default {repeats})")


def add_runner_args(
    parser: argparse.ArgumentParser, *, num_envs: Sequence[int], methods: Sequence[str], seconds: float, repeats: int
) -> None:
    """The options of a script that times runners of its own (``interleaved_methods``) rather than
    ``METHODS``: ``--num-envs``, ``--methods`` (any of ``methods``, all by default), ``--seconds``,
    ``--repeats``, ``--seed`` and ``--json`` (a file the results are written to)."""
    parser.add_argument("--num-envs", type=int, nargs="+", default=list(num_envs))
    parser.add_argument("--methods", nargs="+", choices=methods, default=list(methods))
    _add_segment_args(parser, seconds, repeats)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="write this run's results as JSON here")


def add_pixel_args(parser: argparse.ArgumentParser) -> None:
    """The options the pixel benchmarks (bench_mujoco_pixels.py, bench_dm_control_pixels.py) share:
    ``--num-envs``, ``--num-threads`` (our worker threads), ``--seconds`` (per segment),
    ``--rounds`` and ``--json`` (a JSON list the results are appended to)."""
    parser.add_argument("--num-envs", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--num-threads", type=int, default=0, help="our worker threads (0: one per CPU)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="append the results to this JSON file")


def start_report(title: str, *, gymnasium: bool = True) -> dict[str, Any]:
    """Prints the report's title and the machine it runs on; returns the JSON record they begin.

    ``gymnasium``: whether the machine line names Gymnasium's version (the scripts whose peers
    run under it)."""
    machine = machine_info()
    print(f"# {title}")
    print()
    versions = f"numpy {machine['numpy']}, " + (f"gymnasium {machine['gymnasium']}, " if gymnasium else "")
    print(
        f"{machine['date']}; {machine['nproc']} CPUs ({machine['cpu']}); load average {os.getloadavg()[0]:.2f}; "
        f"Python {machine['python']}, {versions}parallel_pool {machine['parallel_pool']}"
    )
    return {"machine": machine, "command": " ".join(["python", *sys.argv])}


def throughput_section(tasks: Sequence[str], args: argparse.Namespace, record: dict[str, Any]) -> BenchResult:
    """Runs ``run_benchmarks`` with the common options, prints its table and records it."""
    result = run_benchmarks(
        list(tasks), args.num_envs, args.methods, seconds=args.seconds, repeats=args.repeats,
        progress=not args.no_progress,
    )
    print()
    print(f"## Throughput (env steps/s, median of {args.repeats} interleaved segments of ~{args.seconds:g} s)")
    print()
    print(format_table(result))
    record["throughput"] = result.to_json()
    return result


def finish_report(record: dict[str, Any], checks: Sequence[Check], json_path: str | None,
                  heading: str = "Targets") -> int:
    """Prints the targets' verdicts under ``heading``, records them, appends the record to
    ``json_path`` (when given); returns the script's exit code."""
    if checks:
        print()
        print(f"## {heading}")
        print()
        for name, ok, detail in checks:
            print(f"- {'MET' if ok else 'NOT MET'}: {name}: {detail}")
    record["targets"] = [{"target": n, "met": ok, "detail": d} for n, ok, d in checks]
    if json_path:
        write_json(json_path, record, append=True)
        print(f"\nappended to {json_path}", file=sys.stderr)
    return 0


def add_limit_args(parser: argparse.ArgumentParser, raw_binary_help: str) -> None:
    """Adds the options of a family's raw C++ loop and of the interleaved 2-core-limit rounds:
    ``--raw-binary``, ``--raw-seconds``, ``--raw-repeats``, ``--skip-raw``, ``--skip-limit``,
    ``--limit-rounds``, ``--limit-seconds``."""
    # Absolute: a script may work in a scratch directory (work_in_scratch_dir).
    parser.add_argument("--raw-binary", type=os.path.abspath, help=raw_binary_help)
    parser.add_argument("--raw-seconds", type=float, default=5.0, help="seconds per raw-loop run (default 5)")
    parser.add_argument("--raw-repeats", type=int, default=3, help="raw-loop runs, median reported (default 3)")
    parser.add_argument("--skip-raw", action="store_true")
    parser.add_argument("--skip-limit", action="store_true", help="skip the interleaved 2-core-limit rounds")
    parser.add_argument("--limit-rounds", type=int, default=6, help="interleaved limit rounds (default 6)")
    parser.add_argument("--limit-seconds", type=float, default=1.0, help="seconds per segment there (default 1)")


def limit_configs(num_envs: Sequence[int]) -> dict[str, tuple[int, int]]:
    """The pools whose share of the 2-core limit a script measures, as (num_envs, batch_size) by
    label: sync and async (batch_size num_envs // 2) at each size of at least 4 envs, or at every
    size when none is."""
    configs = {}
    for n in [n for n in num_envs if n >= 4] or list(num_envs):
        configs[f"parallel_pool sync, {n} envs"] = (n, n)
        configs[f"parallel_pool async, {n} envs"] = (n, max(1, n // 2))
    return configs


def interleaved_medians(runners: Mapping[str, Any], seconds: float, repeats: int, warmup: float) -> dict[str, float]:
    """Each runner's median rate over ``repeats`` segments of ``seconds``, the runners taking turns
    in an order that rotates each round, after one warm-up segment of ``warmup`` seconds each
    (worker processes started, caches filled). A runner is anything whose ``run(seconds)``
    returns a rate."""
    for r in runners.values():
        r.run(warmup)
    names = list(runners)
    samples: dict[str, list[float]] = {m: [] for m in names}
    for k in range(repeats):
        for m in names[k % len(names):] + names[: k % len(names)]:
            samples[m].append(runners[m].run(seconds))
    return {m: statistics.median(samples[m]) for m in names}


def available_methods(methods: Sequence[str], unavailable: Callable[[str], str | None]) -> list[str]:
    """The ``methods`` for which ``unavailable(method)`` gives no reason; prints the reason of each
    other one, which is skipped."""
    kept = []
    for method in methods:
        reason = unavailable(method)
        if reason:
            print(f"\n(skipped {method}: {reason})")
        else:
            kept.append(method)
    return kept


def interleaved_methods(
    methods: Sequence[str], make: Callable[[str], Any], seconds: float, repeats: int, warmup: float, label: str
) -> dict[str, float]:
    """``interleaved_medians`` of one runner per method, ``make(method)`` (anything with ``run`` and
    ``close``), closed afterwards; prints the medians to stderr after ``label`` (what the cell is)."""
    runners = {m: make(m) for m in methods}
    try:
        medians = interleaved_medians(runners, seconds, repeats, warmup)
    finally:
        for r in runners.values():
            r.close()
    print(f"{label}: " + ", ".join(f"{m} {medians[m]:,.0f}" for m in methods), file=sys.stderr)
    return medians


def print_rates(
    heading: str,
    num_envs: Sequence[int],
    rates: Mapping[str, Sequence[float]],
    pairs: Sequence[tuple[str, str]],
    digits: int,
) -> dict[tuple[str, str], list[float]]:
    """Prints ``heading``, then a markdown table of each method's rate at each of ``num_envs``
    (``rates[method]``, in that order) and, for each (ours, theirs) of ``pairs`` that ``rates`` has
    both of, a row of ours / theirs with ``digits`` decimals. Returns those rows' ratios by pair."""
    print()
    print(f"## {heading}")
    print()
    print("| method | " + " | ".join(f"{n} envs" for n in num_envs) + " |")
    print("|---|" + "---:|" * len(num_envs))
    for method, row in rates.items():
        print(f"| {method} | " + " | ".join(f"{r:,.0f}" for r in row) + " |")
    ratios = {}
    for ours, theirs in pairs:
        if ours in rates and theirs in rates:
            cells = [a / b for a, b in zip(rates[ours], rates[theirs])]
            print(f"| {ours} / {theirs} | " + " | ".join(f"{c:.{digits}f}x" for c in cells) + " |")
            ratios[(ours, theirs)] = cells
    return ratios


def ratio_benchmark(
    argv: list[str] | None,
    description: str,
    title: Callable[[list[str]], str],
    tasks: Sequence[str],
    num_envs: Sequence[int],
    methods: Sequence[str],
    pairs: Sequence[tuple[str, str, float | None]],
) -> int:
    """A whole script that compares our modes with peers by ratio (bench_box2d.py, bench_minigrid.py):
    its options (``--tasks`` and the common ones), the report titled ``title(tasks)``, the
    throughput table, the table of each (ours, theirs) pair's ratio per num_envs, and the targets
    of the pairs that have one (ours >= target x theirs in every cell). Returns the exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", nargs="+", default=list(tasks))
    add_common_args(parser, num_envs=num_envs, methods=methods)
    args = parser.parse_args(argv)
    record = start_report(title(args.tasks))
    result = throughput_section(args.tasks, args, record)
    print()
    print(format_ratios(result, [(ours, theirs) for ours, theirs, _ in pairs]))
    targets = [(ours, theirs, target) for ours, theirs, target in pairs if target is not None]
    return finish_report(record, check_ratios(result, targets), args.json)
