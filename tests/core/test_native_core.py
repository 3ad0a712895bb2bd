"""Builds the C++ tests of the core (native/tests) with CMake and runs them with ctest.

The build directory (build/ctest under the repository root) persists between runs, so after the
first run only changed files are recompiled.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO / "build" / "ctest"

# Generous limits: a cold build on a 2-core machine takes a few minutes; each test binary runs in
# seconds and has its own 60 s watchdog per test case.
CONFIGURE_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 1800
CTEST_TIMEOUT_S = 900
PER_TEST_TIMEOUT_S = 300


def _run(cmd: list[str], timeout: float, what: str, cwd: Path = REPO) -> str:
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
        pytest.fail(f"{what} did not finish in {timeout} s: {' '.join(cmd)}\n{out[-20000:]}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(
            f"{what} failed (exit code {proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-20000:]}",
            pytrace=False,
        )
    return proc.stdout


# A cold build of the C++ tests takes minutes on 2 cores: the stages' own limits above come first.
@pytest.mark.timeout(CONFIGURE_TIMEOUT_S + BUILD_TIMEOUT_S + CTEST_TIMEOUT_S + 60)
def test_native_core_ctest() -> None:
    cmake = shutil.which("cmake")
    ctest = shutil.which("ctest")
    assert cmake is not None and ctest is not None, "cmake and ctest must be on PATH (the test extra installs them)"
    jobs = str(min(2, os.cpu_count() or 1))
    _run(
        [cmake, "-S", str(REPO), "-B", str(BUILD_DIR), "-DPP_BUILD_TESTS=ON", "-DCMAKE_BUILD_TYPE=Release",
         # The core's tests need none of these env libraries (nor ALE's or libvizdoom's download and build).
         "-DPP_WITH_MUJOCO=OFF", "-DPP_WITH_ATARI=OFF", "-DPP_WITH_VIZDOOM=OFF"],
        CONFIGURE_TIMEOUT_S,
        "CMake configure",
    )
    # The test executables alone (pp_tests), not the family libraries the Python package gets.
    _run([cmake, "--build", str(BUILD_DIR), "--target", "pp_tests", "-j", jobs], BUILD_TIMEOUT_S,
         "CMake build of the C++ tests")
    out = _run(
        [ctest, "--output-on-failure", "--timeout", str(PER_TEST_TIMEOUT_S)],
        CTEST_TIMEOUT_S,
        "ctest",
        cwd=BUILD_DIR,
    )
    assert "tests passed" in out, out
