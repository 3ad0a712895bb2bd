"""How the pool scales with threads: parallel_pool against EnvPool 1.2.5 at 2, 4, 8, 16 threads.

For each task and each thread count T (``num_threads=T`` for both pools; ours counts the calling
thread as one of the T, EnvPool adds T workers beside it), with ``num_envs = envs_per_thread * T``:

- our sync mode (``step``), our async mode (``send``/``recv``, ``batch_size = num_envs // 2``),
  EnvPool's sync and async modes, each built once and warmed up;
- the T-CPU limit: T raw single-env C++ loops (native/bench/, no pool, no Python) run at once,
  each pinned to its own CPU, CPUs of distinct physical cores first (an SMT sibling only once
  every core has one loop), summed;

timed interleaved in rounds: a limit segment, then each method's segment in a rotating order, the
next round's limit segment closing the round. A method's share of the limit is its rate over the
mean of the two limit segments around its round. Medians over rounds are reported; the tables
give steps/s, our ratio to EnvPool's same mode, our best mode's share of the T-CPU limit, and each
method's speed-up from the smallest T.

CartPole-v1 has no raw loop here (its step is ~50 ns: a pool of it measures the engine's per-batch
cost, not a share of env work). Pong-v5's raw loop counts ALE frames; env steps are frames / 4.

This needs a build configured with ``-DPP_BUILD_BENCH=ON`` (``--raw-dir``: where mujoco_raw,
dm_control_raw and atari_raw are), envpool 1.2.5 (``--envpool-path``), gymnasium's MuJoCo assets,
dm_control's suite and ale_py's ROMs installed (the raw loops read them as our envs do). It is
meant for a machine with many cores (benchmarks/BENCHMARKS.md, "Thread scaling").

Usage:
    python benchmarks/bench_scaling.py --raw-dir build/bench --envpool-path /path/site-packages
    python benchmarks/bench_scaling.py --tasks Ant-v5 --threads 2 4 --rounds 2 --json out.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import bench_atari  # benchmarks/bench_*.py and limit_check.py, next to this script: their raw loops
import bench_dm_control
import bench_mujoco
import limit_check

import parallel_pool_bench as bench

TASKS = ("CartPole-v1", "Ant-v5", "CheetahRun-v1", "Pong-v5")
THREADS = (2, 4, 8, 16)
METHODS = ("pp-sync", "pp-async", "envpool-sync", "envpool-async")


def raw_command(raw_dir: str, task_id: str) -> tuple[Callable[[int, float], list[str]], str, float] | None:
    """(command of one raw loop pinned to a CPU for some seconds, its rate pattern, env steps per
    unit of that rate), or None when the task has no raw loop. The commands are the other scripts'."""
    if task_id == "CartPole-v1":
        return None
    if task_id == "Pong-v5":
        binary = os.path.join(raw_dir, "atari_raw")

        def atari(cpu: int, seconds: float) -> list[str]:
            return [binary, "--task", task_id, "--mode", "preprocess", "--seconds", str(seconds), "--warmup", "0.3",
                    "--rom-dir", bench_atari.rom_dir(), "--cpu", str(cpu)]

        return atari, r"frames_per_s=([0-9.]+)", 1.0 / bench_atari.FRAME_SKIP
    if task_id.endswith("-v1"):  # a dm_control suite task
        binary = os.path.join(raw_dir, "dm_control_raw")
        return (lambda cpu, seconds: bench_dm_control.limit_raw_cmd(binary, task_id, seconds)(cpu),
                bench_dm_control.RAW_RATE_PATTERN, 1.0)
    binary = os.path.join(raw_dir, "mujoco_raw")
    return (lambda cpu, seconds: bench_mujoco.limit_raw_cmd(binary, task_id, seconds)(cpu),
            bench_mujoco.RAW_RATE_PATTERN, 1.0)


def spread_cpus() -> list[int]:
    """This process's CPUs ordered so that the first k sit on k distinct physical cores while
    there are cores left (each core's first sibling, then the second siblings, ...)."""
    cpus = sorted(os.sched_getaffinity(0))
    rank: dict[int, tuple[int, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(base + "core_id") as f:
                core = f.read().strip()
            with open(base + "physical_package_id") as f:
                package = f.read().strip()
        except OSError:
            core, package = str(cpu), "0"
        key = (package, core)
        rank[cpu] = (seen.get(key, 0), cpu)
        seen[key] = seen.get(key, 0) + 1
    return sorted(cpus, key=lambda c: rank[c])


def topology() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "lscpu unavailable"
    keep = ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "L2 cache", "L3 cache",
            "NUMA node(s)", "Hypervisor vendor")
    return "; ".join(line.split(":", 1)[0].strip() + ": " + line.split(":", 1)[1].strip()
                     for line in out.splitlines() if line.split(":", 1)[0].strip() in keep)


def measure(task_id: str, threads: int, envs_per_thread: int, methods: list[str], raw: Any, cpus: list[int],
            rounds: int, seconds: float) -> dict[str, Any]:
    num_envs = envs_per_thread * threads
    runners: dict[str, bench.Runner] = {}
    calls: dict[str, int] = {}
    rates: dict[str, list[float]] = {m: [] for m in methods}
    shares: dict[str, list[float]] = {m: [] for m in methods}
    limits: list[float] = []

    def limit() -> float:
        if raw is None:
            return float("nan")
        cmd, pattern, scale = raw
        total, _ = limit_check.two_pinned_loops(lambda cpu: cmd(cpu, seconds), cpus[:threads], pattern, seconds)
        return total * scale

    try:
        for method in methods:
            runners[method] = bench.make_runner(method, task_id, num_envs, num_threads=threads)
            calls[method] = max(1, round(seconds * bench.warm_up(runners[method])))
        before = limit()
        limits.append(before)
        for r in range(rounds):
            order = methods[r % len(methods):] + methods[:r % len(methods)]
            round_rates = {}
            for method in order:
                runner = runners[method]
                elapsed = bench.time_calls(runner, calls[method], bench.HANG_SECONDS)
                round_rates[method] = calls[method] * runner.steps_per_call / elapsed
                time.sleep(runner.settle_s)
            after = limit()
            limits.append(after)
            for method, rate in round_rates.items():
                rates[method].append(rate)
                shares[method].append(rate / ((before + after) / 2))
            before = after
    finally:
        for runner in runners.values():
            runner.close()
    out: dict[str, Any] = {
        "task_id": task_id, "threads": threads, "num_envs": num_envs, "async_batch_size": num_envs // 2,
        "limit_cpus": cpus[:threads], "limit_samples": limits,
        "limit_median": statistics.median(limits) if raw is not None else None, "methods": {},
    }
    for method in methods:
        out["methods"][method] = {
            "samples": rates[method], "median": statistics.median(rates[method]),
            "shares": shares[method] if raw is not None else None,
            "median_share": statistics.median(shares[method]) if raw is not None else None,
        }
    return out


def _fmt(x: float | None, spec: str = ",.0f") -> str:
    return "-" if x is None or x != x else format(x, spec)


def format_task(rows: list[dict[str, Any]]) -> str:
    lines = ["| threads | num_envs | T-CPU limit | ours sync | EnvPool sync | ratio | ours async | EnvPool async "
             "| ratio | ours best / limit | ours best speed-up | EnvPool best speed-up |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    first = rows[0]

    def best(row: dict[str, Any], a: str, b: str) -> float:
        return max(row["methods"][a]["median"], row["methods"][b]["median"])

    for row in rows:
        m = row["methods"]
        ours = best(row, "pp-sync", "pp-async")
        theirs = best(row, "envpool-sync", "envpool-async")
        share = None
        if row["limit_median"] is not None:
            key = "pp-sync" if m["pp-sync"]["median"] >= m["pp-async"]["median"] else "pp-async"
            share = m[key]["median_share"]
        lines.append(
            f"| {row['threads']} | {row['num_envs']} | {_fmt(row['limit_median'])} "
            f"| {_fmt(m['pp-sync']['median'])} | {_fmt(m['envpool-sync']['median'])} "
            f"| {m['pp-sync']['median'] / m['envpool-sync']['median']:.2f}x "
            f"| {_fmt(m['pp-async']['median'])} | {_fmt(m['envpool-async']['median'])} "
            f"| {m['pp-async']['median'] / m['envpool-async']['median']:.2f}x "
            f"| {_fmt(share, '.0%')} "
            f"| {ours / best(first, 'pp-sync', 'pp-async'):.2f}x "
            f"| {theirs / best(first, 'envpool-sync', 'envpool-async'):.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--threads", type=int, nargs="+", default=list(THREADS))
    parser.add_argument("--envs-per-thread", type=int, default=4, help="num_envs = this x threads (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=0.7, help="seconds per segment (default 0.7)")
    parser.add_argument("--raw-dir", required=True, help="a build dir configured with -DPP_BUILD_BENCH=ON")
    parser.add_argument("--envpool-path", help="a site-packages directory holding envpool 1.2.5 (appended to sys.path)")
    parser.add_argument("--json", metavar="PATH", help="write this run's results here")
    args = parser.parse_args(argv)
    raw_dir = os.path.abspath(args.raw_dir)
    json_path = os.path.abspath(args.json) if args.json else None
    if args.envpool_path:
        sys.path.append(args.envpool_path)
    if importlib.util.find_spec("envpool") is None:
        raise SystemExit("envpool is not installed (pip install envpool==1.2.5, or --envpool-path)")
    bench.work_in_scratch_dir("bench_scaling_")  # MuJoCo's MUJOCO_LOG.TXT, if any, goes there
    cpus = spread_cpus()
    threads = [t for t in args.threads if t <= len(cpus)]
    if threads != args.threads:
        print(f"only {len(cpus)} CPUs here: threads {', '.join(map(str, threads))}")
    machine = bench.machine_info()
    record: dict[str, Any] = {"machine": machine, "topology": topology(), "command": " ".join(["python", *sys.argv]),
                              "cpu_order": cpus, "results": {}}
    print(f"# Thread scaling: parallel_pool vs EnvPool ({time.strftime('%Y-%m-%d')})")
    print()
    print(f"{machine['nproc']} CPUs ({machine['cpu']}); {record['topology']}; Python {machine['python']}, "
          f"numpy {machine['numpy']}, parallel_pool {machine['parallel_pool']}")
    print(f"limit CPUs in order: {cpus}")
    for task_id in args.tasks:
        raw = raw_command(raw_dir, task_id)
        rows = []
        for t in threads:
            start = time.monotonic()
            rows.append(measure(task_id, t, args.envs_per_thread, list(METHODS), raw, cpus, args.rounds, args.seconds))
            print(f"  {task_id} threads={t}: {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        record["results"][task_id] = rows
        print()
        print(f"## {task_id} (num_envs = {args.envs_per_thread} x threads; async batch_size = num_envs // 2; "
              f"median of {args.rounds} rounds of {args.seconds:g} s)")
        print()
        print(format_task(rows), flush=True)
        if json_path:
            with open(json_path, "w") as f:
                json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
