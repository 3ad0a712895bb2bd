"""Our pool against this machine's 2-core limit, measured interleaved segment by segment.

The limit is two raw single-thread C++ loops over the env (no pool, no Python) pinned to the two
CPUs at once. This machine's speed drifts by 10-30% within seconds to minutes (it is a shared VM),
so a limit measured once says little about the pool's share of it. Here every pool segment sits
between two limit segments (limit, config, limit, config, ..., limit), each config's share in a
round is its rate over the mean of the two limits measured right before and right after it, the
order of the configs rotates from round to round, and the result is the median share over rounds.
Run it before anything in the process imports the `mujoco` Python package (see the result's
``mujoco_module_imported``): that import installs MuJoCo's global timer callback, which our MuJoCo
envs then call on every mj_step while the raw loops never do.

Part of that drift is CPU time the hypervisor takes from this VM for other guests ("steal" in
/proc/stat): 4% in one 2 s window and 60% in another, while both vCPUs ran a raw loop. The rest is
invisible from inside the guest (one run saw 0% steal while the limit ranged 28k-49k). Neither the
raw loops nor the pool run while a vCPU is stolen, so the script also reads the two CPUs' stolen
ticks around every segment and also reports a steal-corrected share: each rate divided by the
fraction of the segment's CPU time that was not stolen. It is context, not the target's measure:
a pool that lets a vCPU halt (sync mode between batches) can be charged steal for the host's delay
in waking it, so correcting would excuse some of its own cost. The targets use the uncorrected share.

Used by bench_atari.py and, through raw_loop_report.py, bench_mujoco.py and bench_dm_control.py;
they also build and run their raw loops through ``build_raw_target`` and ``run_loops``.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, Callable

import parallel_pool_bench as bench


def cpu_ticks(cpus: list[int]) -> tuple[int, int]:
    """(stolen, total) clock ticks of these CPUs since boot, from /proc/stat; (0, 0) without it."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return 0, 0
    wanted = {f"cpu{c}" for c in cpus}
    stolen = total = 0
    for line in lines:
        fields = line.split()
        if fields and fields[0] in wanted:
            # user nice system idle iowait irq softirq steal (guest time is already inside user)
            values = [int(x) for x in fields[1:9]]
            total += sum(values)
            stolen += values[7] if len(values) > 7 else 0
    return stolen, total


def steal_fraction(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the CPUs' time between two ``cpu_ticks`` readings that the hypervisor took."""
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


def build_raw_target(repo: str, build_dir: str, target: str, cmake_args: Sequence[str] = ()) -> str:
    """Configures ``repo`` into ``build_dir`` (Release, the bench targets on, ``cmake_args``) and
    builds ``target``, a raw loop; returns its path."""
    subprocess.run(
        ["cmake", "-S", repo, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DPP_BUILD_BENCH=ON",
         f"-DPython_EXECUTABLE={sys.executable}", *cmake_args],
        check=True, stdout=subprocess.DEVNULL,
    )
    subprocess.run(["cmake", "--build", build_dir, "--target", target, "-j2"], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build_dir, target)


def run_loops(cmds: Sequence[list[str]], pattern: str, seconds: float) -> list[float]:
    """Runs the raw loops ``cmds`` at the same time; the rate each printed (``pattern``'s group)."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in cmds]
    rates = []
    for cmd, p in zip(cmds, procs):
        out, err = p.communicate(timeout=seconds * 10 + 60)
        match = re.search(pattern, out)
        if p.returncode != 0 or match is None:
            raise RuntimeError(f"raw loop failed ({os.path.basename(cmd[0])}): {err or out}")
        rates.append(float(match.group(1)))
    return rates


def raw_summary(one: list[float], two: list[float], cpus: list[int]) -> dict[str, Any]:
    """A raw loop's record: the medians of its runs alone (``one``) and of two loops pinned to
    ``cpus`` (``two``, summed per run; empty on a machine with one CPU), and the runs."""
    return {
        "one_loop": sorted(one)[len(one) // 2],
        "two_pinned_loops": sorted(two)[len(two) // 2] if two else None,
        "samples_one": one,
        "samples_two": two,
        "cpus": cpus,
    }


def two_pinned_loops(
    raw_cmd: Callable[[int], list[str]], cpus: list[int], pattern: str, seconds: float
) -> tuple[float, float]:
    """Sum of the rates of one raw loop per CPU, run at the same time, and the share of the CPUs'
    time the hypervisor stole meanwhile."""
    ticks = cpu_ticks(cpus)
    total = sum(run_loops([raw_cmd(cpu) for cpu in cpus], pattern, seconds))
    return total, steal_fraction(ticks, cpu_ticks(cpus))


def _corrected(rate: float, steal: float) -> float:
    """``rate`` per unstolen CPU time (a segment that lost nearly everything is not comparable)."""
    return rate / (1.0 - steal) if steal < 0.9 else float("nan")


def interleaved(
    task_id: str,
    configs: dict[str, tuple[int, int]],
    raw_cmd: Callable[[int], list[str]],
    pattern: str,
    cpus: list[int],
    *,
    rounds: int = 6,
    seconds: float = 1.0,
    pool_scale: float = 1.0,
) -> dict[str, Any]:
    """Per config name -> (num_envs, batch_size): the median rate and the median per-round ratio to
    the 2-core limit. ``pool_scale`` converts env steps to the raw loop's unit (Atari: frames)."""
    # parallel_pool_bench's runners (our sync mode: step; async: recv/send), timed the way its tables are.
    runners: dict[str, bench.Runner] = {}
    calls: dict[str, int] = {}
    limits: list[float] = []
    limit_steal: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in configs}
    steal: dict[str, list[float]] = {name: [] for name in configs}
    ratios: dict[str, list[float]] = {name: [] for name in configs}
    corrected: dict[str, list[float]] = {name: [] for name in configs}
    try:
        for name, (n, b) in configs.items():
            method = "pp-sync" if b == n else "pp-async"
            runners[name] = bench.make_runner(method, task_id, n, async_fraction=b / n)
            calls[name] = max(1, round(seconds * bench.warm_up(runners[name])))
        names = list(runners)
        for r in range(rounds):
            # Rotate the order, so no config always runs first (or last) after a limit segment.
            order = names[r % len(names):] + names[:r % len(names)]
            before, before_steal = two_pinned_loops(raw_cmd, cpus, pattern, seconds)
            limits.append(before)
            limit_steal.append(before_steal)
            for name in order:
                runner = runners[name]
                ticks = cpu_ticks(cpus)
                elapsed = bench.time_calls(runner, calls[name], bench.HANG_SECONDS)
                pool_steal = steal_fraction(ticks, cpu_ticks(cpus))
                rate = calls[name] * runner.steps_per_call / elapsed * pool_scale
                after, after_steal = two_pinned_loops(raw_cmd, cpus, pattern, seconds)
                limits.append(after)
                limit_steal.append(after_steal)
                rates[name].append(rate)
                steal[name].append(pool_steal)
                ratios[name].append(rate / ((before + after) / 2))
                limit_corrected = (_corrected(before, before_steal) + _corrected(after, after_steal)) / 2
                corrected[name].append(_corrected(rate, pool_steal) / limit_corrected)
                before, before_steal = after, after_steal
    finally:
        for runner in runners.values():
            runner.close()
    out: dict[str, Any] = {
        "limit_samples": limits, "limit_median": statistics.median(limits), "limit_steal": limit_steal,
        # Importing the `mujoco` package installs MuJoCo's timer callback, which our MuJoCo envs then
        # call on every mj_step and the raw loops never do: such a share is not like with like.
        "mujoco_module_imported": "mujoco" in sys.modules,
        "configs": {},
    }
    for name, samples in rates.items():
        kept = [x for x in corrected[name] if x == x]  # without NaN: segments almost wholly stolen
        out["configs"][name] = {
            "num_envs": configs[name][0], "batch_size": configs[name][1], "samples": samples,
            "median": statistics.median(samples), "ratios": ratios[name],
            "median_ratio": statistics.median(ratios[name]), "steal": steal[name],
            "ratios_steal_corrected": corrected[name],
            "median_ratio_steal_corrected": statistics.median(kept) if kept else float("nan"),
        }
    return out


def format_interleaved(task_id: str, result: dict[str, Any], unit: str) -> str:
    limits, steal = result["limit_samples"], result["limit_steal"]
    lines = [
        f"2-core limit of {task_id} (two pinned raw loops), median of {len(limits)} segments: "
        f"{result['limit_median']:,.0f} {unit} (range {min(limits):,.0f}-{max(limits):,.0f}); CPU time stolen "
        f"by the hypervisor during them: median {statistics.median(steal):.0%} (range {min(steal):.0%}-"
        f"{max(steal):.0%})",
    ]
    if result.get("mujoco_module_imported"):
        lines.append(
            "WARNING: the `mujoco` Python package was imported in this process: its timer callback slowed "
            "our MuJoCo envs (not the raw loops) during these segments."
        )
    lines += [
        "",
        f"| {task_id} | num_envs | batch_size | {unit}, median | stolen, median | share of the adjacent limits, "
        "median | the same, steal-corrected |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in result["configs"].items():
        lines.append(
            f"| {name} | {c['num_envs']} | {c['batch_size']} | {c['median']:,.0f} "
            f"| {statistics.median(c['steal']):.0%} | {c['median_ratio']:.0%} "
            f"| {c['median_ratio_steal_corrected']:.0%} |"
        )
    return "\n".join(lines)


def best(result: dict[str, Any], key: str = "median_ratio") -> tuple[str, dict[str, Any]]:
    """The config with the highest median share (uncorrected by default: the target's measure)."""
    return max(result["configs"].items(), key=lambda kv: kv[1][key])
