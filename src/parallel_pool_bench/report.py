"""Writing results down: markdown tables, a plot of steps/s against num_envs, and JSON records."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from parallel_pool_bench.runners import METHODS
from parallel_pool_bench.throughput import BenchResult

__all__ = ["check_ratios", "format_latency", "format_ratios", "format_table", "plot", "rates_by_cell", "write_json"]


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def rates_by_cell(result: BenchResult | None) -> dict[tuple[str, str, int], float | None]:
    """Steps/s keyed by (task_id, method, num_envs); None for a method that was skipped."""
    return {(m.task_id, m.method, m.num_envs): m.steps_per_s for m in (result.measurements if result else [])}


def format_ratios(result: BenchResult, pairs: Sequence[tuple[str, str]]) -> str:
    """A markdown table of ratios: for each task and (ours, theirs) pair of methods, ours' steps/s over
    theirs' at each num_envs ("-" where either was not measured)."""
    rates = rates_by_cell(result)
    tasks = list(dict.fromkeys(m.task_id for m in result.measurements))
    sizes = sorted({m.num_envs for m in result.measurements})
    lines = ["| ratio | " + " | ".join(f"{n} envs" for n in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for task_id in tasks:
        for ours, theirs in pairs:
            cells = []
            for n in sizes:
                mine, other = rates.get((task_id, ours, n)), rates.get((task_id, theirs, n))
                cells.append(f"{mine / other:.2f}x" if mine and other else "-")
            lines.append(f"| {task_id} {METHODS[ours]} / {METHODS[theirs]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def check_ratios(result: BenchResult | None, targets: Sequence[tuple[str, str, float]],
                 task_id: str | None = None) -> list[tuple[str, bool, str]]:
    """For each (ours, theirs, target) and each measured task (or `task_id` alone) and num_envs where
    both were measured: (what, met, detail), met when ours' steps/s >= target x theirs'."""
    rates = rates_by_cell(result)
    measurements = result.measurements if result else []
    tasks = [task_id] if task_id else list(dict.fromkeys(m.task_id for m in measurements))
    sizes = sorted({m.num_envs for m in measurements})
    checks: list[tuple[str, bool, str]] = []
    for task in tasks:
        for ours, theirs, target in targets:
            for n in sizes:
                mine, other = rates.get((task, ours, n)), rates.get((task, theirs, n))
                if mine is None or other is None:
                    continue
                times = "" if target == 1 else f"{target:g}x "
                checks.append((f"{task} num_envs={n}: {METHODS[ours]} >= {times}{METHODS[theirs]}",
                               mine >= target * other, f"{mine:,.0f} vs {other:,.0f} steps/s = {mine / other:.2f}x"))
    return checks


def format_table(result: BenchResult) -> str:
    """A markdown table: steps/s per task, num_envs and method, and the ratio to the faster of
    Gymnasium's SyncVectorEnv and AsyncVectorEnv at the same num_envs; skipped methods as notes."""
    header = ["task", "num_envs", "method", "batch_size", "steps/s", "vs best Gymnasium", "note"]
    rows = []
    for m in result.measurements:
        rows.append([m.task_id, str(m.num_envs), m.label, str(m.batch_size), _rate(m.steps_per_s),
                     _ratio(result.ratio(m)), m.note])
    tasks = list(dict.fromkeys([m.task_id for m in result.measurements] + [t for t, _ in result.skipped]))
    methods = list(METHODS)

    def order(item: tuple[tuple[str, str], str]) -> tuple[int, int]:
        return tasks.index(item[0][0]), methods.index(item[0][1])

    for (task_id, method), note in sorted(result.skipped.items(), key=order):
        rows.append([task_id, "all", METHODS[method], "-", "-", "-", f"skipped: {note}"])
    align = ("left", "right", "left", "right", "right", "right", "left")
    # disable_numparse: the cells are formatted already ("12,345", "1.20x", "all").
    return str(tabulate(rows, headers=header, tablefmt="pipe", colalign=align, disable_numparse=True))


def format_latency(latency: dict[str, Any]) -> str:
    """A markdown table of ``single_env_latency``'s result."""
    us = latency["us_per_step"]
    gym = us["gymnasium"]
    rows = [[name, f"{value:.2f}", f"{gym / value:.2f}x"] for name, value in us.items()]
    header = ["single env, one call", "µs/step (median)", "Gymnasium / this"]
    return str(tabulate(rows, headers=header, tablefmt="pipe", colalign=("left", "right", "right"),
                        disable_numparse=True))


def plot(result: BenchResult, path: str) -> None:
    """Writes a PNG: steps/s against num_envs, one line per method, one panel per task (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(m.task_id for m in result.measurements))
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(6 * max(1, len(tasks)), 4.5), squeeze=False)
    for ax, task_id in zip(axes[0], tasks):
        for method, label in METHODS.items():
            points = sorted(
                (m.num_envs, m.steps_per_s)
                for m in result.measurements
                if m.task_id == task_id and m.method == method and m.steps_per_s
            )
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, marker="o", label=label)
        ax.set_xscale("log", base=2)
        sizes = sorted({m.num_envs for m in result.measurements if m.task_id == task_id})
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.set_xlabel("num_envs")
        ax.set_ylabel("env steps / s")
        ax.set_title(task_id)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_json(path: str, record: dict[str, Any], append: bool = False) -> None:
    """Writes ``record`` to ``path``; with ``append``, adds it to the list of records already there."""
    records: list[Any] = []
    if append and os.path.exists(path):
        with open(path) as f:
            previous = json.load(f)
        records = previous if isinstance(previous, list) else [previous]
    with open(path, "w") as f:
        json.dump(records + [record] if append else record, f, indent=2)
        f.write("\n")
