"""The standalone C++ engine: examples/cpp, an out-of-tree CMake project, is built against the
installed wheel (find_package(parallel_pool CONFIG)), run with no Python, and its results are
compared with the Python API's on the same seeds and actions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import parallel_pool
from parallel_pool import _native
from parallel_pool.families import _package_dir, installed_families

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cpp"
NUM_ENVS = 4
# The first test here pays for the cold build of examples/cpp (the `build` fixture, with its own
# 300 s configure and 900 s build limits), more than the suite's per-test limit allows.
pytestmark = pytest.mark.timeout(1500)

# The Python side of the driver's runs: same seeds (seed=0: env i gets i), same actions.
PYTHON_SIDE = r"""
import json, sys
import numpy as np
import parallel_pool

library, runs = sys.argv[1], json.loads(sys.argv[2])
parallel_pool.register("", library=library)
out = {}
for task, steps in runs:
    env = parallel_pool.make(task, num_envs=4, seed=0, num_threads=2)
    space = env.action_space
    env.reset()
    reward_sum, episodes = 0.0, 0
    for t in range(steps):
        ids = np.arange(4)
        if hasattr(space, "n"):
            action = space.start + (t + ids) % space.n
        else:
            j = np.arange(space.shape[0])
            action = (((t * 7 + ids[:, None] * 3 + j[None, :]) % 11 - 5).astype(np.float32) / np.float32(10))
        obs, reward, terminated, truncated, info = env.step(action)
        for r in reward.tolist():  # summed in the driver's order
            reward_sum += r
        episodes += int((terminated | truncated).sum())
    out[task] = {"obs": obs.reshape(-1).tolist(), "reward_sum": reward_sum, "episodes": episodes}
    env.close()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cmake = shutil.which("cmake")
    assert cmake is not None, "cmake must be on PATH (the test extra installs it)"
    build_dir = tmp_path_factory.mktemp("cpp_example")
    subprocess.run(
        [cmake, "-S", str(EXAMPLE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
         f"-Dparallel_pool_DIR={parallel_pool.get_cmake_dir()}"],
        check=True, capture_output=True, text=True, timeout=300,
    )
    proc = subprocess.run([cmake, "--build", str(build_dir), "-j", "2"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    return build_dir


@pytest.fixture(scope="module")
def driver_runs(build: Path) -> list[dict]:
    # With an empty environment: nothing Python is involved. The data packages' site directories
    # are named in case they are not the one holding parallel_pool (a venv layered on another).
    sites = [os.path.dirname(_package_dir(p)) for p in ("gymnasium", "ale_py")]
    proc = subprocess.run([str(build / "driver"), os.path.dirname(parallel_pool.get_cmake_dir()), *sites],
                          capture_output=True, text=True, timeout=300, cwd=build, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_cmake_package_is_installed() -> None:
    cmake_dir = Path(parallel_pool.get_cmake_dir())
    for name in ("parallel_poolConfig.cmake", "parallel_poolConfigVersion.cmake", "parallel_poolEnvLibrary.cmake"):
        assert (cmake_dir / name).is_file(), name
    package = cmake_dir.parent
    assert (package / "lib" / "libparallel_pool_engine.a").is_file()
    assert (package / "include" / "core" / "pool.h").is_file()
    assert (package / "include" / "core" / "family.h").is_file()


def test_driver_loads_every_installed_family(driver_runs: list[dict]) -> None:
    families = {os.path.splitext(os.path.basename(p))[0] for p in installed_families()}
    assert {"classic_control", "mujoco", "tutorial"} <= families
    expected = [t for t in _native.task_ids() if _native.task_info(t)["family"] in families]
    assert driver_runs[0] == {"families_tasks": len(expected)}


def test_driver_sync_results_equal_the_python_api(build: Path, driver_runs: list[dict]) -> None:
    sync = {r["task"]: r for r in driver_runs if r.get("mode") == "sync"}
    assert sorted(sync) == ["Ant-v5", "CartPole-v1", "Corridor-v0"]
    runs = [[task, r["steps"]] for task, r in sorted(sync.items())]
    proc = subprocess.run(
        [sys.executable, "-c", PYTHON_SIDE, str(build / "corridor.so"), json.dumps(runs)],
        capture_output=True, text=True, timeout=300, cwd=build,
    )
    assert proc.returncode == 0, proc.stderr
    python = json.loads(proc.stdout)
    for task, r in sync.items():
        # The same engine on the same seeds and actions: equal to the last bit (the driver prints
        # each value as the shortest-exact 17 digits of its double).
        assert r["obs"] == python[task]["obs"], task
        assert r["reward_sum"] == python[task]["reward_sum"], task
        assert r["episodes"] == python[task]["episodes"], task
    assert sync["CartPole-v1"]["episodes"] > 0 and sync["Corridor-v0"]["episodes"] > 0


def test_driver_async_mode_returns_every_env(driver_runs: list[dict]) -> None:
    runs = [r for r in driver_runs if r.get("mode") == "async"]
    assert sorted(r["task"] for r in runs) == ["Ant-v5", "CartPole-v1", "Corridor-v0"]
    for r in runs:
        counts = r["results_per_env"]
        assert sum(counts) == r["batches"] * r["batch_size"], r
        assert len(counts) == NUM_ENVS and min(counts) > 0, r
