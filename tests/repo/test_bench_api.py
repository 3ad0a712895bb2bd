"""parallel_pool_bench's public API is what the CLI and the scripts in benchmarks/ use, and all they use."""

from __future__ import annotations

import ast
import pathlib

import pytest

import parallel_pool_bench

REPO = pathlib.Path(__file__).resolve().parents[2]
USERS = [
    path
    for path in [*sorted(REPO.glob("benchmarks/*.py")), REPO / "src" / "parallel_pool" / "cli.py"]
    if "parallel_pool_bench" in path.read_text()
]


def bench_names_used(source: str) -> set[str]:
    """Every name a module takes from parallel_pool_bench: ``from parallel_pool_bench import x``, and
    ``alias.x`` where ``import parallel_pool_bench as alias``."""
    tree = ast.parse(source)
    aliases: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == "parallel_pool_bench")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("parallel_pool_bench"):
            used.update(a.name for a in node.names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.add(node.attr)
    return used


def test_the_checker_sees_private_and_unknown_names() -> None:
    source = (
        "import parallel_pool_bench as b\nfrom parallel_pool_bench.timing import _x\n"
        "b._time_calls(r, 1)\nb.METHODS\n"
    )
    assert bench_names_used(source) == {"_x", "_time_calls", "METHODS"}


def test_the_users_are_found() -> None:
    assert {p.name for p in USERS} >= {"cli.py", "bench_atari.py", "bench_classic_control.py", "bench_mujoco.py",
                                       "limit_check.py"}


@pytest.mark.parametrize("path", USERS, ids=lambda p: p.name)
def test_users_take_only_public_names(path: pathlib.Path) -> None:
    used = bench_names_used(path.read_text())
    assert used, f"{path.name} mentions parallel_pool_bench but takes nothing from it"
    assert used <= set(parallel_pool_bench.__all__), sorted(used - set(parallel_pool_bench.__all__))


def test_every_public_name_exists() -> None:
    for name in parallel_pool_bench.__all__:
        assert not name.startswith("_") and hasattr(parallel_pool_bench, name), name


def test_ratio_checks_and_table() -> None:
    """check_ratios and format_ratios, which the benchmark scripts' targets rest on: a cell is met at
    exactly the target, missed just below it, and skipped where a method was not measured."""
    def m(task: str, method: str, n: int, rate: float | None) -> parallel_pool_bench.Measurement:
        return parallel_pool_bench.Measurement(task_id=task, method=method, num_envs=n, batch_size=n, steps_per_s=rate)

    result = parallel_pool_bench.BenchResult(
        measurements=[m("A", "pp-sync", 8, 120.0), m("A", "envpool-sync", 8, 100.0), m("A", "pp-sync", 32, 119.0),
                      m("A", "envpool-sync", 32, 100.0), m("B", "pp-sync", 8, 50.0), m("B", "envpool-sync", 8, None)],
        skipped={}, settings={})
    checks = parallel_pool_bench.check_ratios(result, [("pp-sync", "envpool-sync", 1.2)])
    assert [(what, met) for what, met, _ in checks] == [
        ("A num_envs=8: parallel_pool sync >= 1.2x envpool sync", True),
        ("A num_envs=32: parallel_pool sync >= 1.2x envpool sync", False),
    ]
    assert checks[1][2] == "119 vs 100 steps/s = 1.19x"
    assert parallel_pool_bench.check_ratios(result, [("pp-sync", "envpool-sync", 1.0)], task_id="B") == []
    table = parallel_pool_bench.format_ratios(result, [("pp-sync", "envpool-sync")]).splitlines()
    assert table[0] == "| ratio | 8 envs | 32 envs |"
    assert table[2] == "| A parallel_pool sync / envpool sync | 1.20x | 1.19x |"
    assert table[3] == "| B parallel_pool sync / envpool sync | - | - |"


def test_warm_up_rate_is_not_taken_from_a_slow_first_call() -> None:
    """A runner whose first call carries a one-time cost (an async pool's resets): the rate that
    sizes the timed segments comes from a batch of several calls, not from that one call."""
    import time

    from parallel_pool_bench.runners import Runner

    class FirstCallSlow(Runner):
        steps_per_call = 1

        def __init__(self) -> None:
            self.made = 0

        def run(self, calls: int) -> None:
            for _ in range(calls):
                time.sleep(0.2 if self.made == 0 else 0.002)
                self.made += 1

        def close(self) -> None:
            pass

    runner = FirstCallSlow()
    rate = parallel_pool_bench.warm_up(runner)
    assert runner.made >= 1 + parallel_pool_bench.timing.WARMUP_MIN_CALLS
    # Calls of 2 ms: about 500 per second (well above the 5 a rate from the first call gives).
    assert rate > 100
