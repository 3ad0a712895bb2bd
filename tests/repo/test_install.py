"""What a new installation gives: every listed task id works with its defaults, and the families a
build or an installation cannot run are listed with what they need, their ids raising an error that
names it.

- ``test_every_listed_id_works_with_its_defaults``: every id of ``list_all_envs()`` is made with its
  defaults, reset and stepped, in sync and in async mode.
- ``test_a_build_without_optional_system_packages``: CMake configures the package with each optional
  system package hidden (``-DCMAKE_DISABLE_FIND_PACKAGE_<Name>=ON``: Boost, zlib, FreeType, EGL); the
  build succeeds, the families that need them are listed as skipped with the reason, and making one
  of their ids raises ``UnavailableTaskError`` naming the package and its install command.
- ``test_task_id_lists_match_the_families``: the task ids a skipped family lists
  (``native/envs/<family>/task_ids.txt``) are exactly those the built family registers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import parallel_pool
from parallel_pool import families, tasks

REPO = Path(__file__).resolve().parents[2]
# The families that pp_skip_family() can leave out, each with the system package it needs.
SKIPPABLE = {"atari": "zlib", "box2d": "FreeType", "toy_text": "zlib and FreeType", "vizdoom": "Boost"}


@pytest.mark.parametrize("task_id", parallel_pool.list_all_envs())
def test_every_listed_id_works_with_its_defaults(task_id: str, valid_actions: Any, async_round_trips: Any) -> None:
    env = parallel_pool.make(task_id, num_envs=2, seed=0)
    try:
        obs, info = env.reset()
        assert len(info["env_id"]) == 2
        for i in range(3):
            obs, reward, terminated, truncated, info = env.step(valid_actions(env, 2, i))
            assert reward.shape[0] == 2 and terminated.shape == truncated.shape == (2,)
    finally:
        env.close()
    async_round_trips(task_id, num_envs=2, batch_size=1, sends=4)


def test_task_id_lists_match_the_families() -> None:
    registered: dict[str, set[str]] = {}
    for task_id in parallel_pool.list_all_envs():
        base, _ = tasks.lookup(task_id)
        if base == task_id:
            registered.setdefault(tasks.task_info(task_id)["family"], set()).add(task_id)
    for family in SKIPPABLE:
        if family in families.SKIPPED or family in families.NOT_BUILT:
            continue  # not loaded here: nothing to compare with
        listed = (REPO / "native" / "envs" / family / "task_ids.txt").read_text().split("\n")
        listed_ids = {line for line in listed if line and not line.startswith("#")}
        assert listed_ids == registered[family], family


HIDDEN = ["Boost", "ZLIB", "Freetype", "EGL"]


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=env, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-20000:]}"
    return proc.stdout


# A cold build of the module and three families: about 3 minutes on 2 cores.
@pytest.mark.timeout(1500)
def test_a_build_without_optional_system_packages(tmp_path: Path) -> None:
    cmake = shutil.which("cmake")
    assert cmake is not None, "cmake must be on PATH (the test extra installs it)"
    import pybind11

    build = REPO / "build" / "no-system-packages"
    configure = _run(
        [cmake, "-S", str(REPO), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DPP_BUILD_PYTHON=ON",
         f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
         *[f"-DCMAKE_DISABLE_FIND_PACKAGE_{name}=ON" for name in HIDDEN],
         # Not affected by the hidden packages, and not needed to show what is: left out for time
         # (dm_control shares the MuJoCo family's renderer, which is here). No download either.
         "-DPP_WITH_MINIGRID=OFF", "-DPP_WITH_MPE=OFF", "-DPP_WITH_DM_CONTROL=OFF", "-DPP_WITH_XLA=OFF",
         "-DPP_WITH_PYGAME_FONT=OFF"],
        REPO, 300)
    for family, needs in SKIPPABLE.items():
        assert f"SKIPPING the {family} envs: {needs}" in configure, configure
    assert "MuJoCo and dm_control tasks will NOT render" in configure
    _run([cmake, "--build", str(build), "-j", str(min(2, os.cpu_count() or 1))], REPO, 1200)
    prefix = tmp_path / "site"
    _run([cmake, "--install", str(build), "--prefix", str(prefix)], REPO, 300)
    package = prefix / "parallel_pool"
    # The MuJoCo family finds libmujoco through its rpath $ORIGIN/../../mujoco, as in site-packages.
    import mujoco

    (prefix / "mujoco").symlink_to(Path(mujoco.__file__).parent)
    sources = REPO / "src" / "parallel_pool"
    for source in [*sources.glob("*.py"), sources / "envpool_aliases.json"]:
        shutil.copy(source, package / source.name)
    skipped = json.loads((package / "skipped_families.json").read_text())
    assert sorted(skipped) == sorted(SKIPPABLE)
    built = sorted(p.stem for p in (package / "families").glob("*.so"))
    assert built == ["classic_control", "mujoco", "tutorial"]

    script = """
import json, parallel_pool
from parallel_pool import cli, families
out = {"built": sorted(parallel_pool.list_all_envs()), "not_built": families.NOT_BUILT, "errors": {}}
for task_id in ["Pong-v5", "LunarLander-v3", "FrozenLake-v1", "Basic-v1"]:
    try:
        parallel_pool.make(task_id, num_envs=1)
    except parallel_pool.UnavailableTaskError as e:
        out["errors"][task_id] = [e.family, str(e)]
env = parallel_pool.make("Ant-v5", num_envs=1, render_mode="rgb_array")
env.reset()
try:
    env.render()
except Exception as e:
    out["render"] = str(e)
env.close()
print(json.dumps(out))
cli.main(["list"])
"""
    env = {**os.environ, "PYTHONPATH": str(prefix), "PARALLEL_POOL_GYMNASIUM_PLUGIN": "0"}
    lines = _run([sys.executable, "-c", script], tmp_path, 300, env).splitlines()
    out = json.loads(lines[0])
    assert "CartPole-v1" in out["built"] and "Ant-v5" in out["built"] and "Pong-v5" not in out["built"]
    for task_id, family, needs, install in [
        ("Pong-v5", "atari", "zlib", "apt-get install zlib1g-dev"),
        ("LunarLander-v3", "box2d", "FreeType", "apt-get install libfreetype-dev"),
        ("FrozenLake-v1", "toy_text", "zlib and FreeType", "apt-get install zlib1g-dev libfreetype-dev"),
        ("Basic-v1", "vizdoom", "Boost", "apt-get install libboost-filesystem-dev"),
    ]:
        error_family, message = out["errors"][task_id]
        assert error_family == family
        assert f"without its {family} envs: {needs}" in message and install in message, message
    assert "apt-get install libegl-dev" in out.get("render", ""), "a MuJoCo frame without EGL must say why it cannot be"
    listing = "\n".join(lines[1:])
    assert "Basic-v1" in listing and "not available: needs Boost at build time" in listing
    assert "vizdoom: this parallel_pool was built without its vizdoom envs: Boost" in listing
    assert "CartPole-v1" in listing


def test_a_missing_data_package_names_its_extra(tmp_path: Path) -> None:
    # An interpreter where dm_control and vizdoom are not installed (find_spec finds nothing for a
    # module that sys.modules maps to None): their families' ids are listed as unavailable, and making
    # one raises naming the extra that brings the package.
    script = """
import json, sys
sys.modules["dm_control"] = None
sys.modules["vizdoom"] = None
import parallel_pool
out = {"skipped": sorted(parallel_pool.families.SKIPPED), "unavailable": parallel_pool.unavailable_envs(), "errors": {}}
for task_id in ["CheetahRun-v1", "Basic-v1"]:
    try:
        parallel_pool.make(task_id, num_envs=1)
    except parallel_pool.UnavailableTaskError as e:
        out["errors"][task_id] = str(e)
print(json.dumps(out))
"""
    env = {**os.environ, "PARALLEL_POOL_GYMNASIUM_PLUGIN": "0"}
    out = json.loads(_run([sys.executable, "-c", script], tmp_path, 300, env).splitlines()[-1])
    assert out["skipped"] == ["dm_control", "vizdoom"]
    assert out["unavailable"]["WalkerWalk-v1"][:2] == ["dm_control", "pip install 'parallel-pool[dm_control]'"]
    assert out["unavailable"]["DefendTheCenter-v1"][0] == "vizdoom"
    assert "pip install 'parallel-pool[dm_control]'" in out["errors"]["CheetahRun-v1"]
    assert "pip install 'parallel-pool[vizdoom]'" in out["errors"]["Basic-v1"]
