"""A/B of two builds of parallel_pool on a MuJoCo or dm_control task's share of this machine's 2-core limit.

For an engine change whose effect is a few percent, on a shared VM whose speed drifts by more than
that within seconds. Each build is a Python interpreter with its own parallel_pool installed (for
example the CI venv of main's HEAD and a developer venv of the change). The two alternate process by
process (A B, B A, A B, ...); each process runs ``limit_check.interleaved`` (every pool segment
between two segments of two pinned raw loops) for the given configs, and the result is each build's
median share over all rounds. The raw loop (native/bench/mujoco_raw.cc; ``dm_control_raw`` with
``--family dm_control``) is the same for both builds.

Usage (from anywhere; processes run outside the repository so they import the installed builds):

    python benchmarks/ab_limit.py --a /path/to/base/bin/python --b /path/to/new/bin/python \\
        --task HalfCheetah-v5 --reps 4 --rounds 3 16/8 32/16 16/16 32/32
    python benchmarks/ab_limit.py --a ... --b ... --family dm_control --task CheetahRun-v1 32/16 64/32

A config ``N/B`` is num_envs N with batch_size B (B == N: sync mode; B < N: async mode).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def bench_module(family: str):
    """The family's benchmark module: its raw loop's command, output pattern and build."""
    sys.path.insert(0, HERE)
    if family == "dm_control":
        import bench_dm_control

        return bench_dm_control
    import bench_mujoco

    return bench_mujoco


def child(family: str, task_id: str, rounds: int, seconds: float, raw_binary: str, configs: list[str]) -> None:
    """Runs in each build's interpreter: prints the per-round shares of each config as JSON."""
    bench_family = bench_module(family)
    import limit_check

    parsed = {}
    for spec in configs:
        n, b = (int(x) for x in spec.split("/"))
        parsed[spec] = (n, b)
    cpus = sorted(os.sched_getaffinity(0))[:2]
    raw_cmd = bench_family.limit_raw_cmd(raw_binary, task_id, seconds)
    result = limit_check.interleaved(task_id, parsed, raw_cmd, bench_family.RAW_RATE_PATTERN, cpus,
                                     rounds=rounds, seconds=seconds)
    print(json.dumps({
        "ratios": {name: c["ratios"] for name, c in result["configs"].items()},
        "limit_median": result["limit_median"],
        "mujoco_module_imported": result["mujoco_module_imported"],
    }))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, metavar="PYTHON", help="interpreter of build A (the baseline)")
    parser.add_argument("--b", required=True, metavar="PYTHON", help="interpreter of build B (the change)")
    parser.add_argument("--family", choices=["mujoco", "dm_control"], default="mujoco",
                        help="the task's family, whose raw loop is the limit (default mujoco)")
    parser.add_argument("--task", default="HalfCheetah-v5")
    parser.add_argument("--reps", type=int, default=4, help="processes per build (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per process (default 3)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per segment (default 1)")
    parser.add_argument("--raw-binary",
                        help="a built mujoco_raw or dm_control_raw (default: build it into build/bench-<family>)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("configs", nargs="+", metavar="N/B")
    args = parser.parse_args(argv)
    for spec in args.configs:
        parts = spec.split("/")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts) or int(parts[1]) > int(parts[0]):
            parser.error(f"config {spec!r} is not N/B with 1 <= B <= N (num_envs/batch_size)")
    if args.child:
        child(args.family, args.task, args.rounds, args.seconds, args.raw_binary, args.configs)
        return 0
    if len(os.sched_getaffinity(0)) < 2:
        parser.error("needs at least 2 CPUs (the limit is two raw loops pinned to two CPUs)")
    raw_binary = args.raw_binary
    if raw_binary is None:
        raw_binary = bench_module(args.family).build_raw_binary()
    raw_binary = os.path.abspath(raw_binary)

    builds = {"A": args.a, "B": args.b}
    shares: dict[str, dict[str, list[float]]] = {b: {c: [] for c in args.configs} for b in builds}
    workdir = tempfile.mkdtemp(prefix="ab_limit_")
    atexit.register(shutil.rmtree, workdir, True)
    for rep in range(args.reps):
        order = ["A", "B"] if rep % 2 == 0 else ["B", "A"]
        for build in order:
            cmd = [builds[build], os.path.abspath(__file__), "--child", "--family", args.family, "--task", args.task,
                   "--rounds", str(args.rounds), "--seconds", str(args.seconds), "--raw-binary", raw_binary,
                   "--a", args.a, "--b", args.b, *args.configs]
            proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"build {build} ({builds[build]}) failed:\n{proc.stderr[-5000:]}", file=sys.stderr)
                return 1
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            if out["mujoco_module_imported"]:
                print(f"WARNING: build {build} imported the mujoco package (its timer callback slows our envs)")
            for c in args.configs:
                shares[build][c] += out["ratios"][c]
            detail = ", ".join(f"{c}: " + " ".join(f"{x:.0%}" for x in out["ratios"][c]) for c in args.configs)
            print(f"rep {rep} build {build}: {detail} (limit median {out['limit_median']:,.0f})", flush=True)

    print()
    print(f"| {args.task}: median share of the 2-core limit | A | B | B - A | rounds each |")
    print("|---|---:|---:|---:|---:|")
    for c in args.configs:
        a, b = statistics.median(shares["A"][c]), statistics.median(shares["B"][c])
        print(f"| {c} | {a:.1%} | {b:.1%} | {b - a:+.1%} | {len(shares['A'][c])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
