"""What keeps CI honest: a hung test fails (pytest-timeout, and .ci/run's overall limit), a missing
test dependency fails instead of skipping its tests, and the sanitizer presets .ci/run runs exist
with the flags the README states."""

from __future__ import annotations

import ast
import json
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


def test_every_test_has_a_time_limit(pytestconfig: pytest.Config) -> None:
    # pytest-timeout is in the test extra and pyproject.toml sets the limit for every test; the
    # thread method, because a hang inside the engine holds no GIL for a signal handler to run on.
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) > 0
    assert pytestconfig.getini("timeout_method") == "thread"


def test_no_test_skips_a_missing_import() -> None:
    # Every library the suite imports is declared in the test extra: one that is missing is a
    # failure (an ImportError at collection), never a silently skipped file.
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, "importorskip of a declared dependency: " + ", ".join(offenders)


def test_the_test_extra_declares_the_timeout_plugin() -> None:
    requires = metadata.requires("parallel-pool") or []
    assert any(r.startswith("pytest-timeout") and 'extra == "test"' in r for r in requires), requires


def test_sanitizer_presets_run_the_cpp_tests() -> None:
    presets = json.loads((REPO / "CMakePresets.json").read_text())
    configure = {p["name"]: p for p in presets["configurePresets"]}
    base = configure["sanitizer-base"]["cacheVariables"]
    assert base["PP_BUILD_TESTS"] == "ON"
    asan = configure["asan"]["cacheVariables"]["CMAKE_CXX_FLAGS"].split()
    assert {"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"} <= set(asan)
    assert "-fsanitize=thread" in configure["tsan"]["cacheVariables"]["CMAKE_CXX_FLAGS"].split()
    workflows = {w["name"]: [s["type"] for s in w["steps"]] for w in presets["workflowPresets"]}
    assert workflows == {"asan": ["configure", "build", "test"], "tsan": ["configure", "build", "test"]}
    ci = (REPO / ".ci" / "run").read_text()
    for command in ("cmake --workflow --preset asan", "cmake --workflow --preset tsan", "timeout --kill-after"):
        assert command in ci, command
