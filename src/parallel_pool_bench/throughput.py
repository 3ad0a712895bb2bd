"""Env steps per second of every method, task and ``num_envs``, timed interleaved.

Every method is timed the same way: actions are drawn before the clock starts and cycled through,
creation and ``close`` are not timed, each method is warmed up (which also estimates its rate),
and then timed in ``repeats`` segments interleaved with the other methods of the same
``num_envs``, so noise from a shared machine hits every method alike. The reported rate is the
median segment's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from parallel_pool_bench.machine import machine_info
from parallel_pool_bench.progress import Progress
from parallel_pool_bench.runners import (
    DEFAULT_METHODS,
    GYMNASIUM_METHODS,
    MAX_SUBPROCESSES,
    METHODS,
    SUBPROCESS_METHODS,
    GymnasiumEquivalents,
    Runner,
    check_available,
    make_runner,
)
from parallel_pool_bench.timing import HANG_SECONDS, Hung, time_calls, warm_up

__all__ = ["BenchResult", "Measurement", "run_benchmarks"]


@dataclass
class Measurement:
    """The env steps per second of one method at one ``num_envs`` (the median of its segments)."""

    task_id: str
    method: str
    num_envs: int
    batch_size: int
    steps_per_s: float | None
    samples: list[float] = field(default_factory=list)
    steps_per_segment: int = 0
    note: str = ""

    @property
    def label(self) -> str:
        """The method's name in tables."""
        return METHODS[self.method]


@dataclass
class BenchResult:
    """Measurements, plus one note per (task, method) that was skipped, and the run's settings."""

    measurements: list[Measurement]
    skipped: dict[tuple[str, str], str]
    settings: dict[str, Any]

    def best_gymnasium(self, task_id: str, num_envs: int) -> float | None:
        """Steps/s of the faster Gymnasium vector env at this ``num_envs``, if one was measured."""
        rates = [
            m.steps_per_s
            for m in self.measurements
            if m.task_id == task_id and m.num_envs == num_envs and m.method in GYMNASIUM_METHODS
            and m.steps_per_s
        ]
        return max(rates) if rates else None

    def ratio(self, m: Measurement) -> float | None:
        """``m``'s steps/s over the best Gymnasium vector env's at the same task and ``num_envs``."""
        best = self.best_gymnasium(m.task_id, m.num_envs)
        return m.steps_per_s / best if best and m.steps_per_s else None

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-serializable data, with the machine it ran on."""
        return {
            "machine": machine_info(),
            "settings": self.settings,
            "throughput": [
                {**asdict(m), "label": m.label, "ratio_to_best_gymnasium": self.ratio(m)}
                for m in self.measurements
            ],
            "skipped": [{"task_id": t, "method": k, "note": n} for (t, k), n in self.skipped.items()],
        }


def run_benchmarks(
    task_ids: Sequence[str],
    num_envs_list: Sequence[int],
    methods: Sequence[str] = DEFAULT_METHODS,
    *,
    seconds: float | None = 0.5,
    steps: int | None = None,
    repeats: int = 3,
    seed: int = 0,
    num_threads: int = 0,
    async_fraction: float = 0.5,
    progress: bool = True,
    gymnasium_equivalents: GymnasiumEquivalents | None = None,
) -> BenchResult:
    """Env steps per second of every method, task and ``num_envs``.

    Each timed segment lasts about ``seconds`` (sized from the warm-up rate) or, when ``steps`` is
    given, covers at least ``steps`` env steps. The ``repeats`` segments of the methods of one
    (task, num_envs) run interleaved, in a rotating order, and each method reports its median.
    ``gymnasium_equivalents`` maps task ids to the single env the Gymnasium and SB3 methods build
    instead of ``gymnasium.make(task_id)`` (see ``make_runner``).

    Example:
        >>> from parallel_pool_bench import format_table, run_benchmarks
        >>> result = run_benchmarks(["CartPole-v1"], [1, 4], ["pp-sync", "gym-sync"], seconds=None,
        ...                         steps=2000, repeats=1, progress=False)
        >>> print(format_table(result))  # doctest: +SKIP
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    if (seconds is None) == (steps is None):
        raise ValueError("give exactly one of seconds and steps")
    skipped: dict[tuple[str, str], str] = {}
    for task_id in task_ids:
        for method in methods:
            reason = check_available(method, task_id, gymnasium_equivalents)
            if reason is not None:
                skipped[(task_id, method)] = reason
    measurements: list[Measurement] = []
    configs = [(t, n) for t in task_ids for n in num_envs_list]
    runnable = {t: [m for m in methods if (t, m) not in skipped] for t in task_ids}
    bar = Progress(sum(len(runnable[t]) * (repeats + 1) for t, _ in configs), progress)
    try:
        for task_id, num_envs in configs:
            runners: dict[str, Runner] = {}
            rates: dict[str, float] = {}
            failed: dict[str, str] = {}
            samples: dict[str, list[float]] = {m: [] for m in runnable[task_id]}
            calls: dict[str, int] = {}
            here = [m for m in runnable[task_id] if not (m in SUBPROCESS_METHODS and num_envs > MAX_SUBPROCESSES)]
            for method in runnable[task_id]:
                if method not in here:
                    bar.advance(repeats + 1)
                    measurements.append(Measurement(
                        task_id=task_id, method=method, num_envs=num_envs, batch_size=num_envs, steps_per_s=None,
                        note=f"not run: {num_envs} subprocesses (more than {MAX_SUBPROCESSES})",
                    ))
            try:
                for method in here:
                    bar.describe(f"{task_id} num_envs={num_envs}: starting {METHODS[method]}")
                    runners[method] = runner = make_runner(
                        method, task_id, num_envs, seed=seed, num_threads=num_threads,
                        async_fraction=async_fraction, gymnasium_equivalents=gymnasium_equivalents,
                    )
                    try:
                        rates[method] = warm_up(runner)
                    except Hung as e:
                        failed[method] = str(e)
                    time.sleep(runner.settle_s)
                    if steps is not None:
                        calls[method] = max(1, -(-steps // runner.steps_per_call))
                    elif seconds is not None and method in rates:
                        calls[method] = max(1, round(seconds * rates[method]))
                    bar.advance()
                order = list(runners)
                for r in range(repeats):
                    shift = r % max(1, len(order))
                    for method in order[shift:] + order[:shift]:
                        bar.advance()
                        if method in failed:
                            continue
                        bar.describe(f"{task_id} num_envs={num_envs}: {METHODS[method]} ({r + 1}/{repeats})")
                        runner = runners[method]
                        limit = max(HANG_SECONDS, 10 * calls[method] / rates[method])
                        try:
                            elapsed = time_calls(runner, calls[method], limit)
                        except Hung as e:
                            failed[method] = str(e)
                            continue
                        samples[method].append(calls[method] * runner.steps_per_call / elapsed)
                        time.sleep(runner.settle_s)
            finally:
                for runner in runners.values():
                    if not runner.aborted:
                        runner.close()
            for method in order:
                runner = runners[method]
                note = ""
                if method in ("pp-async", "envpool-async") and runner.steps_per_call == num_envs:
                    note = "batch_size = num_envs: a sync pool driven by send/recv"
                if method in failed:
                    done = len(samples[method])
                    note = failed[method] + (f"; median of the {done} segments before" if done else "")
                measurements.append(
                    Measurement(
                        task_id=task_id,
                        method=method,
                        num_envs=num_envs,
                        batch_size=runner.steps_per_call,
                        steps_per_s=statistics.median(samples[method]) if samples[method] else None,
                        samples=samples[method],
                        steps_per_segment=calls.get(method, 0) * runner.steps_per_call,
                        note=note,
                    )
                )
    finally:
        bar.close()
    settings = {
        "task_ids": list(task_ids),
        "num_envs": list(num_envs_list),
        "methods": list(methods),
        "seconds": seconds,
        "steps": steps,
        "repeats": repeats,
        "seed": seed,
        "num_threads": num_threads,
        "async_fraction": async_fraction,
    }
    return BenchResult(measurements, skipped, settings)
