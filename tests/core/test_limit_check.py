"""benchmarks/limit_check.py: the interleaved 2-core-limit measurement and its steal accounting."""

from __future__ import annotations

import math
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
import limit_check  # noqa: E402


def test_steal_fraction_is_stolen_over_total_ticks() -> None:
    assert limit_check.steal_fraction((10, 1000), (30, 1200)) == pytest.approx(0.1)
    assert limit_check.steal_fraction((0, 0), (0, 0)) == 0.0  # no /proc/stat: nothing known


def test_cpu_ticks_reads_this_machines_cpus() -> None:
    stolen, total = limit_check.cpu_ticks([0])
    if not pathlib.Path("/proc/stat").exists():
        assert (stolen, total) == (0, 0)
        return
    assert total > 0 and 0 <= stolen <= total
    # Two CPUs' ticks are at least one CPU's.
    assert limit_check.cpu_ticks([0, 1])[1] >= total


def test_corrected_rate_and_nearly_stolen_segments() -> None:
    assert limit_check._corrected(900.0, 0.1) == pytest.approx(1000.0)
    assert math.isnan(limit_check._corrected(900.0, 0.95))


def test_interleaved_sandwiches_each_config_between_limits() -> None:
    # A fake raw loop that always reports 1,000 steps/s per CPU: the limit is 2,000 on two CPUs.
    def raw_cmd(cpu: int) -> list[str]:
        return [sys.executable, "-c", "print('steps_per_s=1000.0')"]

    configs = {"sync 2": (2, 2), "async 2/1": (2, 1)}
    result = limit_check.interleaved(
        "CartPole-v1", configs, raw_cmd, r"steps_per_s=([0-9.]+)", [0], rounds=2, seconds=0.05
    )
    # One limit before each round, then one after every config.
    assert len(result["limit_samples"]) == 2 * (1 + len(configs))
    assert result["limit_samples"] == [1000.0] * len(result["limit_samples"])
    assert len(result["limit_steal"]) == len(result["limit_samples"])
    for name, c in result["configs"].items():
        assert (c["num_envs"], c["batch_size"]) == configs[name]
        assert len(c["samples"]) == len(c["ratios"]) == len(c["steal"]) == 2
        # The adjacent limits are both 1,000, so each share is the rate over 1,000.
        for rate, ratio in zip(c["samples"], c["ratios"]):
            assert ratio == pytest.approx(rate / 1000.0)
        assert c["median_ratio"] == pytest.approx(sorted(c["ratios"])[0] / 2 + sorted(c["ratios"])[1] / 2)
    name, _ = limit_check.best(result)
    assert name in configs
    text = limit_check.format_interleaved("CartPole-v1", result, "steps/s")
    assert "sync 2" in text and "async 2/1" in text and "steal-corrected" in text


def test_a_failing_raw_loop_is_an_error_not_a_number() -> None:
    def raw_cmd(cpu: int) -> list[str]:
        return [sys.executable, "-c", "import sys; print('crashed'); sys.exit(3)"]

    with pytest.raises(RuntimeError, match="raw loop failed"):
        limit_check.two_pinned_loops(raw_cmd, [0], r"steps_per_s=([0-9.]+)", 0.05)


def test_ab_limit_rejects_configs_that_are_not_num_envs_over_batch_size(capsys: pytest.CaptureFixture[str]) -> None:
    import ab_limit

    for bad in ("8/9", "8", "0/0", "a/b"):
        with pytest.raises(SystemExit) as e:
            ab_limit.main(["--a", sys.executable, "--b", sys.executable, bad])
        assert e.value.code == 2
        assert f"config {bad!r} is not N/B" in capsys.readouterr().err


def test_ab_limit_alternates_two_builds_and_tabulates_their_shares(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fake raw loop at 1,000 steps/s per CPU, and both "builds" this interpreter: the plumbing
    # (child processes, alternation, per-config medians) is what is tested, not a speed.
    raw = tmp_path / "fake_raw"
    raw.write_text("#!/bin/sh\necho steps_per_s=1000.0\n")
    raw.chmod(0o755)
    import ab_limit

    code = ab_limit.main([
        "--a", sys.executable, "--b", sys.executable, "--raw-binary", str(raw), "--task", "CartPole-v1",
        "--reps", "2", "--rounds", "1", "--seconds", "0.05", "2/2", "2/1",
    ])
    out = capsys.readouterr().out
    assert code == 0
    runs = [line.split(":")[0] for line in out.splitlines() if line.startswith("rep ")]
    assert runs == ["rep 0 build A", "rep 0 build B", "rep 1 build B", "rep 1 build A"]
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| 2/")}
    assert set(rows) == {"2/2", "2/1"}
    for line in rows.values():
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[4] == "2"  # rounds per build: 2 processes x 1 round
        assert float(cells[1].rstrip("%")) > 0 and float(cells[2].rstrip("%")) > 0
