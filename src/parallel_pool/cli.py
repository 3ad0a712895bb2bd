"""The ``parallel-pool`` command: list the tasks, show one task's spec, benchmark tasks.

Example:
    $ parallel-pool list
    $ parallel-pool info CartPole-v1
    $ parallel-pool bench CartPole-v1 --num-envs 1 16 256 --plot cartpole.png
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

import parallel_pool
import parallel_pool_bench as bench
from parallel_pool import tasks
from parallel_pool.options import POOL_DEFAULTS

PROG = "parallel-pool"
# `bench` defaults: five sizes, each method timed in three ~0.7 s segments, so that
# `parallel-pool bench CartPole-v1` takes about a minute on a 2-core machine.
DEFAULT_NUM_ENVS = (1, 4, 16, 64, 256)
DEFAULT_SECONDS = 0.7
DEFAULT_REPEATS = 3


class CliError(Exception):
    """A user error: printed as one line, exit status 2, no traceback."""


def _columns(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


def _check_task(task_id: str) -> None:
    known = parallel_pool.list_all_envs()
    if task_id in known:
        return
    unavailable = parallel_pool.unavailable_envs()
    if task_id in unavailable:
        family, _, reason = unavailable[task_id]
        raise CliError(f"{task_id!r} is a task of the {family} family, not available here: {reason}")
    close = difflib.get_close_matches(task_id, known, n=3)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise CliError(f"unknown task id {task_id!r}{hint}; `{PROG} list` shows the {len(known)} known ones")


def _family(task_id: str) -> tuple[str, str]:
    """The task's env family, and the task it aliases ('' if none)."""
    base, _ = tasks.lookup(task_id)
    return tasks.task_info(task_id)["family"], "" if base == task_id else base


def cmd_list(args: argparse.Namespace) -> int:
    rows = []
    for task_id in parallel_pool.list_all_envs():
        family, base = _family(task_id)
        rows.append([task_id, family, f"alias of {base}" if base else ""])
    # The families this installation cannot run: listed, with what they need, and each family's
    # whole reason (with the command that installs what is missing) once below the table.
    reasons: dict[str, str] = {}
    for task_id, (family, needs, reason) in parallel_pool.unavailable_envs().items():
        rows.append([task_id, family, f"not available: needs {needs}"])
        reasons[family] = reason
    if not any(r[2] for r in rows):
        rows = [r[:2] for r in rows]
    print(_columns(rows, ["task id", "family", "note"][: len(rows[0]) if rows else 2]))
    for family, reason in reasons.items():
        print(f"\n{family}: {reason}")
    return 0


def _fmt_default(value: Any) -> str:
    return "None" if value is None else repr(value)


def cmd_info(args: argparse.Namespace) -> int:
    _check_task(args.task)
    spec = parallel_pool.make_spec(args.task)
    family, base = _family(args.task)
    print(f"{args.task}  (family: {family}{', alias of ' + base if base else ''})")
    print()
    print(_columns(
        [
            ["observation_space", str(spec.observation_space)],
            ["action_space", str(spec.action_space)],
            ["max_episode_steps", str(spec.max_episode_steps)],
            ["reward_threshold", str(spec.reward_threshold)],
        ],
        ["spec", "value"],
    ))
    print()
    rows = []
    for key, default in POOL_DEFAULTS.items():
        shown = "num_envs (sync)" if key == "batch_size" and default is None else _fmt_default(default)
        if key == "seed" and default is None:
            shown = "None (fresh entropy)"
        if key == "num_threads" and default == 0:
            shown = "0 (one per CPU)"
        rows.append([key, shown, "pool"])
    for key, default in spec.env_config.items():
        rows.append([key, _fmt_default(default), "task"])
    print(_columns(rows, ["config key", "default", "kind"]))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    for task_id in args.tasks:
        _check_task(task_id)
    if any(n < 1 for n in args.num_envs):
        raise CliError("--num-envs values must be >= 1")
    if args.steps is not None and args.steps < 1:
        raise CliError("--steps must be >= 1")
    if args.seconds is not None and args.seconds <= 0:
        raise CliError("--seconds must be > 0")
    if args.repeats < 1:
        raise CliError("--repeats must be >= 1")
    if not 0 < args.async_fraction <= 1:
        raise CliError("--async-fraction must be in (0, 1]")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plot needs matplotlib, which is not installed (pip install 'parallel-pool[plot]')")
    methods = list(args.methods or bench.DEFAULT_METHODS)
    if args.no_gymnasium_async:
        methods = [m for m in methods if m != "gym-async"]
    seconds = None if args.steps is not None else (args.seconds or DEFAULT_SECONDS)
    result = bench.run_benchmarks(
        args.tasks,
        args.num_envs,
        methods,
        seconds=seconds,
        steps=args.steps,
        repeats=args.repeats,
        seed=args.seed,
        num_threads=args.num_threads,
        async_fraction=args.async_fraction,
        progress=not args.no_progress,
    )
    if args.no_gymnasium_async:
        for task_id in args.tasks:
            result.skipped[(task_id, "gym-async")] = "--no-gymnasium-async"
    machine = bench.machine_info()
    budget = f"{args.steps} env steps" if args.steps is not None else f"~{seconds} s"
    print(
        f"env steps/s, median of {args.repeats} segments of {budget} per method; "
        f"{machine['nproc']} CPUs ({machine['cpu']}), Python {machine['python']}, "
        f"gymnasium {machine['gymnasium']}; async batch_size = {args.async_fraction:g} x num_envs"
    )
    print()
    print(bench.format_table(result))
    if args.json:
        bench.write_json(args.json, result.to_json())
        print(f"\nwrote {args.json}", file=sys.stderr)
    if args.plot:
        bench.plot(result, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Batched C++ RL environments: tasks and benchmarks.")
    sub = parser.add_subparsers(dest="command", metavar="{list,info,bench}")
    sub.required = True

    p = sub.add_parser("list", help="every task id with its env family")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("info", help="a task's spaces, episode limit and config keys with defaults")
    p.add_argument("task", help="task id, e.g. CartPole-v1")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser(
        "bench",
        help="steps/s of our sync and async modes against Gymnasium's (and SB3's, EnvPool's) vector envs",
        description=(
            "Env steps per second of parallel_pool's sync and async modes, Gymnasium's SyncVectorEnv and "
            "AsyncVectorEnv, and SB3's SubprocVecEnv and EnvPool when installed. Actions are drawn "
            "before timing; creation and close are not timed; each method is timed in --repeats "
            "segments, interleaved with the others, and the median is reported."
        ),
    )
    p.add_argument("tasks", nargs="+", metavar="TASK", help="task id(s)")
    p.add_argument("--num-envs", type=int, nargs="+", default=list(DEFAULT_NUM_ENVS), metavar="N",
                   help=f"numbers of envs to measure (default: {' '.join(map(str, DEFAULT_NUM_ENVS))})")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, default=None,
                        help="env steps per timed segment (default: time-based, see --seconds)")
    budget.add_argument("--seconds", type=float, default=None,
                        help=f"approximate seconds per timed segment (default: {DEFAULT_SECONDS})")
    p.add_argument("--repeats", type=int, default=DEFAULT_REPEATS,
                   help=f"timed segments per method; the median is reported (default: {DEFAULT_REPEATS})")
    p.add_argument("--num-threads", type=int, default=0, help="our pool's threads (default: 0, one per CPU)")
    p.add_argument("--async-fraction", type=float, default=0.5,
                   help="async modes use batch_size = max(1, fraction * num_envs) (default: 0.5)")
    p.add_argument("--methods", nargs="+", choices=list(bench.METHODS), default=None,
                   help="methods to run (default: all; unavailable ones are noted and skipped)")
    p.add_argument("--no-gymnasium-async", action="store_true",
                   help="skip Gymnasium's AsyncVectorEnv (its subprocesses are slow to start)")
    p.add_argument("--seed", type=int, default=0, help="env and action seed (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--plot", metavar="PNG", help="write a plot of steps/s against num_envs (needs matplotlib)")
    p.add_argument("--json", metavar="PATH", help="write the results and machine details as JSON")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``parallel-pool`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a usage error argparse already printed
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    try:
        return int(args.func(args))
    except CliError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
