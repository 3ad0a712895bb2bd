"""The one family mechanism: every family, classic control and the tutorial included, is an env
library under parallel_pool/families/, loaded through one loader with the resources it declares."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import parallel_pool
from parallel_pool import _native
from parallel_pool.families import FAMILIES_DIR, NOT_BUILT, SKIPPED, installed_families

# An env library declaring resources (PP_FAMILY_RESOURCES): its task's `data_dir` default is the
# directory the loader found for it. @RESOURCES@ is filled in per test.
SOURCE = r'''
#include "core/family.h"
#include "core/task_maker.h"

class Still final : public pp::Env {
 public:
  Still(const pp::EnvSpec& spec, int env_id) : pp::Env(spec, env_id) {}
  void Reset() override { *Allocate().Get<float>(0) = 0.0f; }
  pp::StepResult Step(const pp::Action&) override { *Allocate().Get<float>(0) = 0.0f; return {}; }
};

PP_FAMILY_RESOURCES(@RESOURCES@)

PP_REGISTER_FAMILY(registry) {
  pp::Config defaults{{"max_episode_steps", int64_t{10}}, {"data_dir", registry->Resource("data")}};
  registry->Add(pp::MakeTask<Still>("Still-v0", "still", defaults, [](const std::string&, const pp::Config&) {
    pp::EnvSpec spec;
    spec.state.push_back(pp::Box("obs", pp::Dtype::kFloat32, {}));
    spec.action.push_back(pp::Discrete("action", 2));
    return spec;
  }));
}
'''


def build_library(tmp_path: Path, resources: str, name: str = "still") -> Path:
    if shutil.which("g++") is None:
        pytest.fail("the family tests build an env library: g++ is needed")
    src = tmp_path / f"{name}.cc"
    src.write_text(SOURCE.replace("@RESOURCES@", resources))
    lib = tmp_path / f"{name}.so"
    subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
                    "-I", parallel_pool.get_include(), str(src), "-o", str(lib)], check=True)
    return lib


def run_python(code: str) -> str:
    # A fresh interpreter, so this one's registry stays as it was.
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[2]))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_family_is_an_installed_env_library() -> None:
    names = {os.path.splitext(os.path.basename(p))[0] for p in installed_families()}
    expected = {"atari", "box2d", "classic_control", "dm_control", "minigrid", "mpe", "mujoco", "toy_text", "tutorial"}
    expected |= {"vizdoom"}
    assert names == expected
    assert SKIPPED == {}
    assert NOT_BUILT == {}  # this suite's build has every optional system package (.ci/run installs them)
    families = {_native.task_info(t)["family"] for t in _native.task_ids()}
    assert expected <= families
    # _native itself registers nothing: without the families there is no task at all.
    out = run_python(
        # The compiled module alone, without the package's __init__ (which loads the families).
        "import importlib, importlib.util, sys, types\n"
        "spec = importlib.util.find_spec('parallel_pool')\n"
        "package = types.ModuleType('parallel_pool')\n"
        "package.__path__ = list(spec.submodule_search_locations)\n"
        "sys.modules['parallel_pool'] = package\n"
        "print(len(importlib.import_module('parallel_pool._native').task_ids()))\n"
    )
    assert out.strip() == "0"


def test_the_family_libraries_export_one_entry_point() -> None:
    nm = shutil.which("nm")
    assert nm is not None
    for path in installed_families():
        symbols = subprocess.run([nm, "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
        exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
        assert {"parallel_pool_register", "parallel_pool_abi_version"} <= exported, path
        assert exported <= {"parallel_pool_register", "parallel_pool_abi_version", "parallel_pool_resources"}, (
            path,
            exported,
        )


def test_a_resource_is_found_in_its_package_and_handed_to_the_library(tmp_path: Path) -> None:
    lib = build_library(tmp_path, '"data gymnasium envs/mujoco/assets\\n"')
    out = run_python(
        f"import parallel_pool; print(parallel_pool.register('', library={str(lib)!r}));"
        "print(parallel_pool.make_spec('Still-v0').config['data_dir'])"
    )
    ids, data_dir = out.splitlines()
    assert ids == "['Still-v0']"
    import gymnasium

    assert data_dir == os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")


def test_a_missing_package_is_a_clear_error_and_an_installed_family_without_it_is_skipped(tmp_path: Path) -> None:
    lib = build_library(tmp_path, '"data no_such_package_xyz data\\n"')
    out = run_python(
        "import parallel_pool\n"
        "from parallel_pool.families import MissingResourceError, SKIPPED, load_installed_families\n"
        "try:\n"
        f"    parallel_pool.register('', library={str(lib)!r})\n"
        "except MissingResourceError as e:\n"
        "    print('error:', e)\n"
        f"load_installed_families({str(tmp_path)!r})\n"
        "print(sorted(SKIPPED), 'Still-v0' in parallel_pool.list_all_envs())\n"
    )
    error, skipped = out.splitlines()
    assert "no_such_package_xyz" in error and "not installed" in error
    assert skipped == "['still'] False"


def test_malformed_resources_and_a_library_without_entry_point_are_value_errors(tmp_path: Path) -> None:
    bad = build_library(tmp_path, '"data only_two_words\\n"', name="bad")
    with pytest.raises(ValueError, match="malformed resource line 'data only_two_words'"):
        parallel_pool.register("", library=str(bad))
    src = tmp_path / "empty.cc"
    src.write_text('extern "C" int nothing() { return 0; }\n')
    empty = tmp_path / "empty.so"
    subprocess.run(["g++", "-shared", "-fPIC", str(src), "-o", str(empty)], check=True)
    with pytest.raises(ValueError, match="has no parallel_pool_register function"):
        parallel_pool.register("", library=str(empty))
    with pytest.raises(ValueError, match="cannot load env library"):
        parallel_pool.register("", library=str(src))  # not a shared library


def test_families_dir_is_next_to_the_compiled_module() -> None:
    assert os.path.dirname(FAMILIES_DIR) == os.path.dirname(os.path.abspath(_native.__file__))


@pytest.mark.parametrize("abi", [None, 1, 999])
def test_a_library_built_against_other_core_headers_is_refused(tmp_path: Path, abi: int | None) -> None:
    # A library whose core headers differ from the engine's (another Env vtable, other field offsets)
    # must never be called into: the loader compares PP_CORE_ABI_VERSION first. Without the version
    # function a library predates it (version 1).
    source = SOURCE.replace("@RESOURCES@", '""').replace(
        "PP_REGISTER_FAMILY(registry) {", "PP_FAMILY_EXPORT void parallel_pool_register(pp::Registry* registry) {"
    )
    if abi is not None:
        source += f"PP_FAMILY_EXPORT int parallel_pool_abi_version() {{ return {abi}; }}\n"
    src = tmp_path / "other_abi.cc"
    src.write_text(source)
    lib = tmp_path / "other_abi.so"
    subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
                    "-I", parallel_pool.get_include(), str(src), "-o", str(lib)], check=True)
    header = (Path(parallel_pool.get_include()) / "core" / "family.h").read_text()
    engine_abi = int(re.search(r"#define PP_CORE_ABI_VERSION (\d+)", header).group(1))
    with pytest.raises(ValueError, match=f"ABI version {abi or 1}, and this engine's is {engine_abi}: rebuild it"):
        parallel_pool.register("", library=str(lib))
    assert "Still-v0" not in parallel_pool.list_all_envs()
