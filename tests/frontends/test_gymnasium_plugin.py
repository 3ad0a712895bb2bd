"""The Gymnasium plug-in (``src/_parallel_pool_gymnasium.py``, imported by the .pth file at
site-packages' root): ``gymnasium.make_vec("parallel_pool/<id>")`` in a fresh interpreter that never
imports parallel_pool, registration from the build-time task manifest, and the manifest itself
against the native registry (so it cannot go stale).

Gymnasium 1.1-1.4 read no ``gymnasium.envs`` entry points (1.0 removed that loader), so the package
declares none; these tests exercise the mechanism that does run. The fresh interpreters run in a
temporary directory, away from the clone.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import _parallel_pool_gymnasium as plugin
from parallel_pool import envpool_ids, families

PREFIX = f"{plugin.NAMESPACE}/"


def run_python(code: str, cwd: Path, **env: str) -> Any:
    """Runs ``code`` in a fresh interpreter of this venv (site-packages' .pth files processed) and
    returns the JSON it printed last."""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, **env},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def manifest_tasks() -> dict[str, list[Any]]:
    """The installed manifest's tasks, but those of the families that ``import parallel_pool`` skips
    here (``families.SKIPPED``: a data package or directory is missing, e.g. toy text's font under
    Gymnasium 1.4): task id -> [family, reward threshold]."""
    path = plugin.manifest_path()
    assert path is not None
    with open(path) as f:
        manifest = json.load(f)
    return {task["task_id"]: [task["family"], task["reward_threshold"]]
            for family in manifest["families"] if os.path.splitext(family["library"])[0] not in families.SKIPPED
            for task in family["tasks"]}


def plugin_task_ids() -> list[str]:
    """The ids the plug-in registers: the manifest's, and EnvPool's old ids of the tasks it has
    (envpool_aliases.json), but for those with a namespace of their own ("phys2d/CartPole-v0"):
    Gymnasium's ids take one namespace."""
    tasks = manifest_tasks()
    aliases = [alias for alias, (base, _) in envpool_ids.ENVPOOL_ALIASES.items() if base in tasks and "/" not in alias]
    return sorted([*tasks, *aliases])


# Dumps every parallel_pool/<id> spec of Gymnasium's registry as JSON-ready dicts.
DUMP_SPECS = """
import dataclasses
def dump_specs():
    return {k: dataclasses.asdict(s) for k, s in gymnasium.registry.items() if k.startswith("parallel_pool/")}
"""


def test_make_vec_in_a_fresh_interpreter_without_importing_parallel_pool(tmp_path: Path) -> None:
    code = DUMP_SPECS + """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import gymnasium

    def native_maps():
        # The package's compiled module and family libraries mapped into this process.
        with open("/proc/self/maps") as f:
            return sorted({line.split()[-1] for line in f if "/parallel_pool/" in line and ".so" in line})

    before = {
        "parallel_pool imported": "parallel_pool" in sys.modules,
        "maps": native_maps(),
        "specs": dump_specs(),
    }
    cartpole = gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=4)
    obs, info = cartpole.reset(seed=0)
    obs, rew, terminated, truncated, info = cartpole.step(cartpole.action_space.sample())
    result = {"cartpole": [type(cartpole).__name__, list(obs.shape), list(rew.shape)]}
    cartpole.close()
    pong = gymnasium.make_vec("parallel_pool/Pong-v5", num_envs=2)
    obs, info = pong.reset(seed=0)
    obs, rew, terminated, truncated, info = pong.step(pong.action_space.sample())
    result["pong"] = [type(pong).__name__, list(obs.shape), str(obs.dtype)]
    pong.close()
    import parallel_pool
    result["after"] = {"maps": native_maps(), "specs": dump_specs()}
    parallel_pool.register("CartPole-plugin-test", "CartPole-v1", max_episode_steps=50)
    result["alias"] = gymnasium.spec("parallel_pool/CartPole-plugin-test").reward_threshold
result["before"] = before
result["warnings"] = [str(w.message) for w in caught]
print(json.dumps(result))
"""
    out = run_python(code, tmp_path)
    before, after = out["before"], out["after"]
    # Registered when Gymnasium was imported, with no native library loaded and parallel_pool not imported.
    assert before["parallel_pool imported"] is False
    assert before["maps"] == []
    # Every task of the manifest (which the next test holds to the native registry); the process
    # running this test may have aliases that other tests registered, so it is not the reference.
    assert sorted(before["specs"]) == sorted(PREFIX + task_id for task_id in plugin_task_ids())
    assert len(before["specs"]) > 300
    assert out["cartpole"] == ["ParallelPoolVectorEnv", [4, 4], [4]]
    assert out["pong"] == ["ParallelPoolVectorEnv", [2, 4, 84, 84], "uint8"]
    # make_vec imported parallel_pool, which loaded the libraries (the check above can see them) and
    # registered nothing twice: the registry is the plug-in's, unchanged, and no override warning.
    assert any(path.endswith("/families/classic_control.so") for path in after["maps"]), after["maps"]
    assert any(path.endswith("/families/atari.so") for path in after["maps"]), after["maps"]
    assert after["specs"] == before["specs"]
    assert [w for w in out["warnings"] if "Overriding environment" in w] == []
    # An alias added at run time is registered by parallel_pool itself, as before.
    assert out["alias"] == 475.0


def test_the_plugin_registers_what_import_parallel_pool_registers(tmp_path: Path) -> None:
    # With the plug-in switched off, importing Gymnasium registers nothing of ours, and `import
    # parallel_pool` registers every task: the specs must be those the plug-in registers (entry
    # points, kwargs, thresholds as floats), and its native registry what the manifest lists.
    code = DUMP_SPECS + """
import json, sys
import gymnasium
before = dump_specs()
import parallel_pool
from parallel_pool import _native, families
native = {task_id: dict(_native.task_info(task_id)) for task_id in _native.task_ids()}
print(json.dumps({"before": before, "specs": dump_specs(), "skipped": sorted(families.SKIPPED),
                  "plugin loaded": "_parallel_pool_gymnasium" in sys.modules,
                  "native": {k: [v["family"], v["reward_threshold"]] for k, v in native.items()}}))
"""
    off = run_python(code, tmp_path, **{plugin.SWITCH: "0"})
    assert off["before"] == {}
    assert off["plugin loaded"] is True  # the .pth line ran, and did nothing
    on = run_python(DUMP_SPECS + "import json, gymnasium\nprint(json.dumps(dump_specs()))", tmp_path)
    assert on == off["specs"]
    assert {spec["entry_point"] for spec in on.values()} == {plugin.ENTRY_POINT}
    # The manifest, written at build time, against the native registry of a fresh `import parallel_pool`.
    manifest_path = plugin.manifest_path()
    assert manifest_path is not None
    with open(manifest_path) as f:
        manifest = json.load(f)
    libraries = [family["library"] for family in manifest["families"]]
    assert libraries == [os.path.basename(p) for p in families.installed_families()]
    assert off["skipped"] == sorted(families.SKIPPED)
    every = [task["task_id"] for family in manifest["families"] for task in family["tasks"]]
    assert len(every) == len(set(every))  # no id twice
    listed = manifest_tasks()
    assert listed == off["native"]
    # Thresholds are written as floats (475.0, not 475), as parallel_pool registers them.
    assert all(isinstance(t, float) for _, t in listed.values() if t is not None)
    assert listed["CartPole-v1"] == ["classic_control", 475.0] and listed["Pong-v5"][0] == "atari"
    assert sum(1 for family, _ in listed.values() if family == "atari") > 100
    assert "toy_text" in families.SKIPPED or listed["FrozenLake-v1"] == ["toy_text", 0.7]


def test_interpreter_start_imports_only_the_plugin(tmp_path: Path) -> None:
    # The .pth line imports one small module (which imports nothing the interpreter had not) and puts
    # one finder first on sys.meta_path: no Gymnasium, no NumPy, nothing native at start.
    code = ("import json, sys; print(json.dumps([sorted(sys.modules), "
            "[type(f).__name__ for f in sys.meta_path]]))")
    on_modules, on_finders = run_python(code, tmp_path)
    off_modules, off_finders = run_python(code, tmp_path, **{plugin.SWITCH: "off"})
    # Switched off, the .pth line still imports the module (and installs nothing).
    assert set(on_modules) == set(off_modules)
    assert "_parallel_pool_gymnasium" in on_modules
    assert not {"gymnasium", "numpy", "parallel_pool"} & set(on_modules)
    assert on_finders[0] == "AfterImport" and "AfterImport" not in off_finders
    assert on_finders[1:] == off_finders


def test_the_plugin_module_imports_only_what_the_interpreter_has_loaded() -> None:
    # Its module-level imports (what the .pth line costs); json and importlib.util are imported when
    # Gymnasium is, inside the functions that need them, and typing only for mypy.
    tree = ast.parse(Path(plugin.__file__).read_text())
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert sorted(alias.name for node in imports for alias in node.names) == ["os", "sys"]


def test_gymnasium_make_of_one_env_says_to_use_make_vec() -> None:
    with pytest.raises(gymnasium.error.Error, match=r"gymnasium\.make_vec\('parallel_pool/CartPole-v1'"):
        gymnasium.make("parallel_pool/CartPole-v1")


# --- the finder and the registration, on synthetic inputs: they can fail ---


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Writes a package ``name`` with ``source`` as its __init__ into a directory on sys.path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = []

    def write(name: str, source: str) -> str:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_the_finder_calls_back_once_after_the_module_ran(package: Any) -> None:
    import importlib

    name = package("pp_plugin_probe", "VALUE = 41\n")
    seen = []

    def callback(module: types.ModuleType) -> None:
        seen.append(module.VALUE)  # the module's own code has run
        raise RuntimeError("a failing callback must not fail the import")

    finder = plugin.AfterImport(name, callback)
    finder.install()
    try:
        module = importlib.import_module(name)
        assert seen == [41]
        assert finder not in sys.meta_path
        # The module keeps its own loader, not the wrapper.
        assert type(module.__loader__).__name__ == "SourceFileLoader"
        assert module.__spec__.loader is module.__loader__
        importlib.reload(module)
        assert seen == [41]  # fires once
    finally:
        finder.remove()


def test_the_finder_lets_a_failing_import_fail_and_calls_nothing(package: Any) -> None:
    import importlib

    name = package("pp_plugin_broken", "raise ImportError('broken on purpose')\n")
    seen: list[Any] = []
    finder = plugin.AfterImport(name, seen.append)
    finder.install()
    try:
        with pytest.raises(ImportError, match="broken on purpose"):
            importlib.import_module(name)
        assert seen == []
    finally:
        finder.remove()


def fake_gymnasium() -> types.SimpleNamespace:
    """What register() uses of Gymnasium: its registry and register()."""
    registry: dict[str, dict[str, Any]] = {"parallel_pool/Known-v0": {}}

    def register(**kwargs: Any) -> None:
        registry[kwargs["id"]] = kwargs

    return types.SimpleNamespace(registry=registry, register=register)


def test_register_from_a_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin, "failure", None)
    monkeypatch.setattr(plugin, "registered", 0)
    manifest = {"format": 1, "families": [
        {"library": "a.so", "resources": [],
         "tasks": [{"task_id": "Task-v1", "family": "a", "reward_threshold": 475},
                   {"task_id": "Known-v0", "family": "a", "reward_threshold": None},
                   {"task_id": "Other-v0", "family": "a", "reward_threshold": None}]},
        # Its data package is not installed: skipped, as `import parallel_pool` skips the family.
        {"library": "b.so", "resources": [{"name": "dir", "package": "pp_no_such_package", "path": "data"}],
         "tasks": [{"task_id": "Skipped-v0", "family": "b", "reward_threshold": 1.0}]},
        # Its data directory exists in an installed package (gymnasium's MuJoCo assets).
        {"library": "c.so", "resources": [{"name": "dir", "package": "gymnasium", "path": "envs/mujoco/assets"}],
         "tasks": [{"task_id": "Found-v0", "family": "c", "reward_threshold": -3.75}]},
    ]}
    path = tmp_path / "gymnasium_tasks.json"
    path.write_text(json.dumps(manifest))
    gym = fake_gymnasium()
    assert plugin.register(gym, str(path)) == 3
    assert plugin.failure is None and plugin.registered == 3
    assert sorted(gym.registry) == ["parallel_pool/Found-v0", "parallel_pool/Known-v0", "parallel_pool/Other-v0",
                                    "parallel_pool/Task-v1"]
    assert gym.registry["parallel_pool/Known-v0"] == {}  # already registered: left alone
    task = gym.registry["parallel_pool/Task-v1"]
    assert task == {"id": "parallel_pool/Task-v1", "entry_point": plugin.ENTRY_POINT,
                    "vector_entry_point": plugin.VECTOR_ENTRY_POINT, "kwargs": {"task_id": "Task-v1"},
                    "max_episode_steps": None, "reward_threshold": 475.0}
    assert isinstance(task["reward_threshold"], float)


@pytest.mark.parametrize("content, reason", [
    (None, "FileNotFoundError"),
    ("{not json", "JSONDecodeError"),
    (json.dumps({"format": 2, "families": []}), "expected 1"),
    (json.dumps({"format": 1, "families": [{"library": "a.so", "resources": [], "tasks": [{"id": "A-v0"}]}]}),
     "KeyError"),
])
def test_a_bad_manifest_registers_nothing_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       content: str | None, reason: str) -> None:
    monkeypatch.setattr(plugin, "failure", None)
    monkeypatch.setattr(plugin, "registered", 0)
    path = tmp_path / "gymnasium_tasks.json"
    if content is not None:
        path.write_text(content)
    gym = fake_gymnasium()
    assert plugin.register(gym, str(path)) == 0
    assert list(gym.registry) == ["parallel_pool/Known-v0"]
    assert plugin.failure is not None and reason in plugin.failure and "import parallel_pool" in plugin.failure


def test_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("0", "false", "No", " off "):
        monkeypatch.setenv(plugin.SWITCH, value)
        assert plugin.enabled() is False, value
    for value in ("1", "on", ""):
        monkeypatch.setenv(plugin.SWITCH, value)
        assert plugin.enabled() is True, value
    monkeypatch.delenv(plugin.SWITCH)
    assert plugin.enabled() is True


def test_install_after_gymnasium_registers_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Gymnasium is imported here already: install() registers now instead of waiting for an import
    # that will not come, and adds no finder. Switched off, it does neither.
    calls = []
    monkeypatch.setattr(plugin, "register", lambda gym: calls.append(gym) or 0)
    monkeypatch.setenv(plugin.SWITCH, "0")
    plugin.install()
    assert calls == []
    monkeypatch.delenv(plugin.SWITCH)
    plugin.install()
    assert calls == [gymnasium]
    assert all(not isinstance(f, plugin.AfterImport) for f in sys.meta_path)


def test_the_installed_plugin_is_this_checkout() -> None:
    # The installed module is the one in src/ (the suite tests what it ships), and its manifest is
    # the installed package's.
    source = Path(__file__).resolve().parents[2] / "src" / "_parallel_pool_gymnasium.py"
    assert Path(plugin.__file__).read_text() == source.read_text()
    assert plugin.manifest_path() == os.path.join(
        os.path.dirname(os.path.abspath(families.FAMILIES_DIR)), plugin.MANIFEST)
