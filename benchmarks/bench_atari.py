"""Pong-v5: parallel_pool against Gymnasium, SB3 and EnvPool, and the raw single-thread ALE loop.

Measures, side by side in one run on this machine:

1. frames/s (agent steps x frame_skip 4, as EnvPool counts them) of our sync mode and async mode
   (batch_size = num_envs // 2) against Gymnasium's AsyncVectorEnv and SB3's SubprocVecEnv (when
   installed) over ale_py's ``ALE/Pong-v5`` (``frameskip=1``, ``repeat_action_probability=0``) in
   ``AtariPreprocessing(frame_skip=4, noop_max=30, screen_size=84)`` and
   ``FrameStackObservation(4)`` (the same preprocessing as ours), and EnvPool's sync and async
   modes (when installed: ``pip install envpool==1.2.5``), interleaved as ``parallel_pool_bench``
   does;
2. the raw single-thread C++ loop (native/bench/atari_raw.cc, no pool, no Python) in its two modes,
   "emulation" (ALE alone, 4 act() per step) and "preprocess" (our full env step: max-pool, grey,
   resize, frame stack), whose difference is what our preprocessing costs; one copy (the per-core
   limit) and two copies pinned to CPUs 0 and 1 at once (this machine's 2-core limit);

3. our share of the 2-core limit, interleaved: our sync and async modes at each num_envs >= 4, each
   segment between two limit segments (two pinned raw "preprocess" loops), the median over rounds
   of its rate over the mean of those two limits (benchmarks/limit_check.py; this shared VM's speed
   drifts within seconds);

prints markdown tables with ratios, checks the issue's targets (at or above EnvPool in both modes,
and at least 90% of the 2-core limit)
and optionally appends everything to a JSON file.

The raw loop is built with CMake (``-DPP_BUILD_BENCH=ON``, target ``atari_raw``) into
build/bench-atari, reusing the ALE already built by ``pip install -e .`` when there is one,
unless ``--raw-binary`` names one.

Usage:
    python benchmarks/bench_atari.py                       # ~10 minutes on 2 cores
    python benchmarks/bench_atari.py --json benchmarks/results_atari.json
    python benchmarks/bench_atari.py --num-envs 2 --seconds 0.2 --repeats 1 --raw-seconds 0.5   # smoke
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
from typing import Any

import gymnasium
import limit_check  # benchmarks/limit_check.py, next to this script

import parallel_pool_bench as bench

TASK = "Pong-v5"
FRAME_SKIP = 4
NUM_ENVS = (1, 2, 4, 8, 16, 32, 64)
METHODS = ("pp-sync", "pp-async", "gym-async", "sb3-subproc", "envpool-sync", "envpool-async")
RAW_MODES = ("emulation", "preprocess")
# The target: our best frames/s at this fraction of the 2-core limit.
LIMIT_FRACTION = 0.9
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW_BUILD_DIR = os.path.join(REPO, "build", "bench-atari")


def make_gymnasium_pong() -> gymnasium.Env:
    """ale_py's Pong with the preprocessing our Pong-v5 does (EnvPool's v5 defaults)."""
    import ale_py
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gymnasium.register_envs(ale_py)
    env = gymnasium.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
    env = AtariPreprocessing(env, noop_max=30, frame_skip=FRAME_SKIP, screen_size=84)
    return FrameStackObservation(env, 4)


def rom_dir() -> str:
    spec = importlib.util.find_spec("ale_py")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("ale-py is not installed: its ROMs are needed")
    return os.path.join(list(spec.submodule_search_locations)[0], "roms")


def build_raw_binary() -> str:
    """Configures and builds the atari_raw target; returns its path."""
    args: list[str] = []
    # Reuse the ALE that the editable install built (its download, source and objects).
    existing = sorted(glob.glob(os.path.join(REPO, "build", "cp*", "_deps", "ale", "build", "src", "ale", "libale.a")))
    if existing:
        ale_build = existing[-1].split(os.sep + "src" + os.sep + "ale")[0]
        args.append(f"-DPP_ALE_ROOT={os.path.dirname(ale_build)}")
        # Its build tree can only be driven by the generator that made it (pip's: Ninja).
        with open(os.path.join(ale_build, "CMakeCache.txt")) as f:
            cache = dict(re.findall(r"^(CMAKE_GENERATOR|CMAKE_MAKE_PROGRAM):\w+=(.*)$", f.read(), re.M))
        if "CMAKE_GENERATOR" in cache:
            args += ["-G", cache["CMAKE_GENERATOR"]]
        if os.path.exists(cache.get("CMAKE_MAKE_PROGRAM", "")):
            args.append(f"-DCMAKE_MAKE_PROGRAM={cache['CMAKE_MAKE_PROGRAM']}")
    return limit_check.build_raw_target(REPO, RAW_BUILD_DIR, "atari_raw", args)


def raw_rates(binary: str, mode: str, cpus: list[int | None], seconds: float) -> list[float]:
    """Runs one raw loop per entry of ``cpus`` at the same time (pinned where given); their frames/s."""
    cmd = [binary, "--task", TASK, "--mode", mode, "--seconds", str(seconds), "--rom-dir", rom_dir()]
    return limit_check.run_loops([cmd + (["--cpu", str(cpu)] if cpu is not None else []) for cpu in cpus],
                                 r"frames_per_s=([0-9.]+)", seconds)


def measure_raw(binary: str, seconds: float, repeats: int) -> dict[str, dict[str, Any]]:
    """Per mode, the median of ``repeats`` runs: one unpinned loop and two pinned loops (summed)."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    out: dict[str, dict[str, Any]] = {}
    # The modes alternate run by run, so that a drift of this shared machine's speed hits both.
    ones: dict[str, list[float]] = {mode: [] for mode in RAW_MODES}
    twos: dict[str, list[float]] = {mode: [] for mode in RAW_MODES}
    for _ in range(repeats):
        for mode in RAW_MODES:
            ones[mode].append(raw_rates(binary, mode, [None], seconds)[0])
            if len(cpus) == 2:
                twos[mode].append(sum(raw_rates(binary, mode, cpus, seconds)))
    for mode in RAW_MODES:
        one, two = ones[mode], twos[mode]
        out[mode] = limit_check.raw_summary(one, two, cpus)
    return out


def format_raw(raw: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"| {TASK} raw loop | frames/s, 1 thread | 2 loops pinned to 2 CPUs (sum) | scaling |",
        "|---|---:|---:|---:|",
    ]
    for mode, r in raw.items():
        one, two = r["one_loop"], r["two_pinned_loops"]
        scaling = f"{two / one:.2f}x" if two else "-"
        lines.append(f"| {mode} | {one:,.0f} | {'-' if two is None else f'{two:,.0f}'} | {scaling} |")
    emulation, full = raw["emulation"]["one_loop"], raw["preprocess"]["one_loop"]
    lines.append("")
    lines.append(f"Preprocessing costs {(emulation / full - 1):.1%} of the emulation time per step "
                 f"(emulation only {emulation:,.0f} vs with preprocessing {full:,.0f} frames/s).")
    return "\n".join(lines)


def frames_table(result: bench.BenchResult) -> str:
    """The throughput as frames/s (steps x frame_skip), with each method's ratio to ours."""
    sizes = sorted({m.num_envs for m in result.measurements})
    methods = list(dict.fromkeys(m.method for m in result.measurements))
    rates = {(m.method, m.num_envs): m.steps_per_s for m in result.measurements}
    lines = ["| num_envs | " + " | ".join(bench.METHODS[m] for m in methods) + " | sync / envpool sync "
             "| async / envpool async |", "|---:|" + "---:|" * (len(methods) + 2)]
    for n in sizes:
        cells = [f"{rates[(m, n)] * FRAME_SKIP:,.0f}" if rates.get((m, n)) else "-" for m in methods]
        ratios = []
        for ours, theirs in (("pp-sync", "envpool-sync"), ("pp-async", "envpool-async")):
            a, b = rates.get((ours, n)), rates.get((theirs, n))
            ratios.append(f"{a / b:.2f}x" if a and b else "-")
        lines.append(f"| {n} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


def check_targets(result: bench.BenchResult, share: dict[str, Any] | None) -> list[tuple[str, bool, str]]:
    """The issue's targets: our modes at or above EnvPool's, and our best at LIMIT_FRACTION of the
    2-core limit (two raw loops of the full env step, preprocessing included, pinned to 2 CPUs)."""
    checks = []
    rates = {(m.method, m.num_envs): m.steps_per_s for m in result.measurements}
    for ours, theirs in (("pp-sync", "envpool-sync"), ("pp-async", "envpool-async")):
        for n in sorted({m.num_envs for m in result.measurements}):
            a, b = rates.get((ours, n)), rates.get((theirs, n))
            if a and b:
                checks.append((f"{TASK} num_envs={n}: {bench.METHODS[ours]} >= {bench.METHODS[theirs]}", a >= b,
                               f"{a * FRAME_SKIP:,.0f} vs {b * FRAME_SKIP:,.0f} frames/s = {a / b:.2f}x"))
    if share:
        name, c = limit_check.best(share)
        checks.append((f"{TASK}: our best >= {LIMIT_FRACTION:.0%} of the 2-core limit (interleaved)",
                       c["median_ratio"] >= LIMIT_FRACTION,
                       f"{name}: {c['median']:,.0f} frames/s, {c['median_ratio']:.0%} of the limit "
                       f"({c['median_ratio_steal_corrected']:.0%} steal-corrected; medians of the ratio to the "
                       f"adjacent limits; limit median {share['limit_median']:,.0f})"))
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench.add_common_args(parser, num_envs=NUM_ENVS, methods=METHODS, repeats=3)
    bench.add_limit_args(parser, "a built atari_raw (default: build it into build/bench-atari)")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    if args.json:
        args.json = os.path.abspath(args.json)

    record = bench.start_report(
        f"Atari ({TASK}): parallel_pool vs Gymnasium {gymnasium.__version__} + ale_py, SB3, EnvPool"
    )

    if not args.skip_raw:
        binary = args.raw_binary or build_raw_binary()
        raw = measure_raw(binary, args.raw_seconds, args.raw_repeats)
        print()
        print(f"## Raw single-thread C++ loop (median of {args.raw_repeats} runs of {args.raw_seconds:g} s)")
        print()
        print(format_raw(raw))
        record["raw"] = raw

    share = None
    if not args.skip_raw and not args.skip_limit and len(os.sched_getaffinity(0)) >= 2:
        cpus = sorted(os.sched_getaffinity(0))[:2]

        def raw_cmd(cpu: int) -> list[str]:
            return [binary, "--task", TASK, "--mode", "preprocess", "--seconds", str(args.limit_seconds),
                    "--warmup", "0.3",
                    "--rom-dir", rom_dir(), "--cpu", str(cpu)]

        share = limit_check.interleaved(TASK, bench.limit_configs(args.num_envs), raw_cmd, r"frames_per_s=([0-9.]+)",
                                        cpus, rounds=args.limit_rounds, seconds=args.limit_seconds,
                                        pool_scale=FRAME_SKIP)
        print()
        print(f"## Share of the 2-core limit, interleaved ({args.limit_rounds} rounds of {args.limit_seconds:g} s)")
        print()
        print(limit_check.format_interleaved(TASK, share, "frames/s"))
        record["limit_interleaved"] = share

    checks: list[bench.Check] = []
    if not args.skip_throughput:
        result = bench.run_benchmarks(
            [TASK], args.num_envs, args.methods, seconds=args.seconds, repeats=args.repeats,
            progress=not args.no_progress, gymnasium_equivalents={TASK: make_gymnasium_pong},
        )
        print()
        print(f"## Throughput (frames/s = steps/s x {FRAME_SKIP}, median of {args.repeats} interleaved segments)")
        print()
        print(frames_table(result))
        record["throughput"] = result.to_json()
        checks = check_targets(result, share)
    return bench.finish_report(record, checks, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
