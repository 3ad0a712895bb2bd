"""A/B of two builds of parallel_pool on the latency of one sync ``step`` (one env by default).

The single-env step is the engine's fixed cost (binding, checks, hand-off to the caller's own
thread), so it is where a change to the engine's structure shows first. Each build is a Python
interpreter with its own parallel_pool installed; the two alternate process by process (A B, B A,
...), each process timing ``repeats`` segments of ``calls`` steps of one env, and the result is
each build's median segment. The child uses only ``make``, ``reset`` and ``step``, which every
build has, so builds from before and after an API change compare alike. ``--num-envs n`` steps a
sync pool of n envs (a batch per step) instead, on the default threads.

Usage (from anywhere; processes run outside the repository so they import the installed builds):

    python benchmarks/ab_latency.py --a /path/to/base/bin/python --b /path/to/new/bin/python \\
        --task CartPole-v1 --reps 6
    python benchmarks/ab_latency.py --a ... --b ... --task Pong-v5 --num-envs 16 --calls 300
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
import time


def child(task_id: str, num_envs: int, calls: int, repeats: int) -> None:
    """Runs in each build's interpreter: prints its per-segment µs per step as JSON."""
    import numpy as np

    import parallel_pool

    env = parallel_pool.make(task_id, num_envs=num_envs, seed=0)
    env.reset()
    space = env.action_space
    rng = np.random.default_rng(0)
    if hasattr(space, "n"):
        actions = [rng.integers(0, space.n, num_envs) for _ in range(calls)]
    else:
        actions = [rng.uniform(space.low, space.high, (num_envs, *space.shape)).astype(space.dtype)
                   for _ in range(calls)]
    step = env.step
    for a in actions[: calls // 10]:  # warm up
        step(a)
    segments = []
    for _ in range(repeats):
        start = time.perf_counter()
        for a in actions:
            step(a)
        segments.append((time.perf_counter() - start) / calls * 1e6)
    env.close()
    print(json.dumps({"us_per_step": segments}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, metavar="PYTHON", help="interpreter of build A (the baseline)")
    parser.add_argument("--b", required=True, metavar="PYTHON", help="interpreter of build B (the change)")
    parser.add_argument("--task", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=1, help="envs of the sync pool (default 1)")
    parser.add_argument("--reps", type=int, default=6, help="processes per build (default 6)")
    parser.add_argument("--calls", type=int, default=20_000, help="steps per segment (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="segments per process (default 5)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.task, args.num_envs, args.calls, args.repeats)
        return 0
    builds = {"A": args.a, "B": args.b}
    segments: dict[str, list[float]] = {"A": [], "B": []}
    workdir = tempfile.mkdtemp(prefix="ab_latency_")
    atexit.register(shutil.rmtree, workdir, True)
    for rep in range(args.reps):
        for build in (["A", "B"] if rep % 2 == 0 else ["B", "A"]):
            cmd = [builds[build], os.path.abspath(__file__), "--child", "--a", args.a, "--b", args.b,
                   "--task", args.task, "--num-envs", str(args.num_envs), "--calls", str(args.calls),
                   "--repeats", str(args.repeats)]
            proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"build {build} ({builds[build]}) failed:\n{proc.stderr[-5000:]}", file=sys.stderr)
                return 1
            us = json.loads(proc.stdout.strip().splitlines()[-1])["us_per_step"]
            segments[build] += us
            print(f"rep {rep} build {build}: " + " ".join(f"{x:.2f}" for x in us) + " µs/step", flush=True)
    a, b = statistics.median(segments["A"]), statistics.median(segments["B"])
    print()
    envs = "one env" if args.num_envs == 1 else f"{args.num_envs} envs, sync"
    print(f"| {args.task}, {envs}: µs per step (median segment) | A | B | B / A | segments each |")
    print("|---|---:|---:|---:|---:|")
    print(f"| step | {a:.2f} | {b:.2f} | {b / a:.3f} | {len(segments['A'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
