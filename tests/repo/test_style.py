"""The repository's habits, checked by the suite (and so by .ci/run): ruff and mypy clean on the
package and its integrations, clang-format applied to the C++ sources. The tools are pinned in
the test extra, so every machine formats and judges alike."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CPP_DIRS = ("native", "examples/cpp")


def _tool(name: str) -> str:
    # The test extra installs each tool next to this interpreter.
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found is not None, f"{name} is not installed (pip install '.[test]')"
    return found


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    proc = _run([_tool("ruff"), "check", "src", "integrations", "tests", "benchmarks", "examples"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean() -> None:
    # Files and options come from [tool.mypy] in pyproject.toml: the package, the benchmark
    # package and the integrations.
    proc = _run([_tool("mypy")])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def cpp_sources() -> list[str]:
    out = []
    for top in CPP_DIRS:
        for root, _, files in os.walk(REPO / top):
            out += [os.path.join(root, f) for f in files if f.endswith((".h", ".cc"))]
    return sorted(out)


def test_clang_format_is_applied() -> None:
    sources = cpp_sources()
    assert len(sources) > 40
    assert (REPO / ".clang-format").is_file()
    proc = _run([_tool("clang-format"), "--dry-run", "-Werror", *sources])
    assert proc.returncode == 0, (
        "run `clang-format -i` on these (the repo's .clang-format):\n" + proc.stderr[-5000:]
    )


def test_core_files_hold_one_idea_each() -> None:
    # The engine's files stay small enough to read whole (CONTRIBUTING.md): a file past this has
    # grown a second idea, to be split off by role as pool.cc was (scheduler, job runner, options).
    limit = 500
    core = sorted((REPO / "native" / "core").glob("*.[hc]*"))
    assert len(core) > 20
    long = {p.name: n for p in core if (n := len(p.read_text().splitlines())) > limit}
    assert not long, f"core files over {limit} lines: {long}"
