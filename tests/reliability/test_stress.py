"""The sanitizer stress script (tests/stress/stress.py), at a small scale on the installed package:
it keeps working between its sanitizer runs (tests/stress/run_sanitized.sh, the README's
"Reliability" section), and its checks of every result hold on the shipped build too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STRESS = Path(__file__).resolve().parents[1] / "stress" / "stress.py"


def test_stress_script_passes_at_a_small_scale() -> None:
    # A tenth of a second to a few seconds per scenario here; the hang timeout is far beyond that.
    proc = subprocess.run(
        [sys.executable, str(STRESS), "--scale", "0.05", "--hang-timeout", "240"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stress: every check passed" in proc.stdout
    for scenario in ("async", "replay", "shared", "sync", "close", "churn"):
        assert f"\n{scenario} " in proc.stdout, proc.stdout
