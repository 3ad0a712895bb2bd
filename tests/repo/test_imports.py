"""The package's structure: its modules import only downward, and importing it builds no spec.

The import graph is read from the source with ``ast`` (imports inside functions included), so a
lazy import that hides a cycle from Python's import system does not hide it from these tests.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gymnasium

import parallel_pool
from parallel_pool import tasks
from parallel_pool.envpool_ids import ENVPOOL_ALIASES

PACKAGE = "parallel_pool"
PACKAGE_DIR = Path(__file__).resolve().parents[2] / "src" / PACKAGE
# Compiled modules of the package: imported by the Python modules, importing none of them.
COMPILED = {"_native"}

# The package's layers, bottom to top: a module may import modules of lower layers only. The
# package itself (``__init__``) re-exports the public names; ``cli`` uses the package.
LAYERS: list[set[str]] = [
    {"_native"},
    {"errors"},  # exceptions
    {"tasks"},  # the task table: aliases, lookup, metadata, the ids this installation cannot run
    {"families"},  # the env libraries: the installed families and out-of-tree ones (their ids: tasks)
    {"envpool_ids"},  # EnvPool's old ids, as aliases of the loaded families' tasks
    {"options"},  # kwargs: pool options, env config, autoreset modes, seeds
    {"spec"},  # EnvSpec: fields, spaces, dm_env specs
    {"python_spaces"},  # a Python env's spaces as a pool's fields (per leaf) or pickled byte rows
    {"python_envs"},  # the Python-env backend: gymnasium.Envs in worker processes, a native pool's envs
    {"unpack"},  # native results -> (obs, reward, terminated, truncated, info)
    {"xla"},  # xla(): send/recv/step as XLA custom calls (imports jax only when called)
    {"attributes"},  # call/get_attr/set_attr of a native pool's envs
    {"base"},  # BasePoolEnv
    {"gymnasium_env", "dm_env"},  # front-ends
    {"vector", "pettingzoo_api"},  # the VectorEnv view; the PettingZoo front-end (batched)
    {"pettingzoo_env"},  # the one-env pettingzoo.ParallelEnv view
    {"factory"},  # make*, register, Gymnasium registration
    {"envpool_layout"},  # as_envpool(): EnvPool's module layout over the package
    {"__init__"},
    {"cli"},
]


def package_imports(tree: ast.AST, module: str, known: set[str]) -> set[str]:
    """The package's modules that ``module``'s syntax tree imports, anywhere in it (functions too).

    ``known`` holds the package's module names (``base`` for ``base.py``); a name imported from the
    package that is not a module is a dependency on the package itself (``__init__``).
    """

    def resolve(dotted: str) -> str:
        # The longest prefix of `dotted` (relative to the package) that is one of its modules.
        parts = dotted.split(".") if dotted else []
        while parts:
            if ".".join(parts) in known:
                return ".".join(parts)
            parts.pop()
        return "__init__"

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    found.add(resolve(alias.name[len(PACKAGE) + 1:]))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1:  # relative to the package (it has no subpackages)
                parent = node.module or ""
            elif node.level:
                continue
            elif node.module == PACKAGE or (node.module or "").startswith(PACKAGE + "."):
                parent = (node.module or "")[len(PACKAGE) + 1:]
            else:
                continue
            for alias in node.names:
                found.add(resolve(f"{parent}.{alias.name}" if parent else alias.name))
    found.discard(module)
    return found


def function_level_imports(tree: ast.AST) -> list[int]:
    """Line numbers of the imports of the package inside a function of ``tree``."""
    lines = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == PACKAGE for a in node.names):
                lines.append(node.lineno)
            elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == PACKAGE):
                lines.append(node.lineno)
    return sorted(set(lines))


def import_graph(package_dir: Path) -> tuple[dict[str, set[str]], dict[str, ast.AST]]:
    """Every module of the package mapped to the package modules it imports, and its syntax tree."""
    # The package is flat; a subpackage would need dotted module names here.
    assert not list(package_dir.glob("*/__init__.py")), "the import checker handles no subpackages"
    trees = {p.stem: ast.parse(p.read_text(), str(p)) for p in package_dir.glob("*.py")}
    known = set(trees) | COMPILED
    graph = {name: package_imports(tree, name, known) for name, tree in trees.items()}
    for name in COMPILED:
        graph[name] = set()
    return graph, trees


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as ``[a, b, ..., a]``, or None if it has none."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def layer_violations(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Each import of ``graph`` that does not go to a lower layer, and each module in no layer."""
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    problems = [f"{name} is in no layer" for name in sorted(graph) if name not in rank]
    for name in sorted(graph):
        for dep in sorted(graph[name]):
            if name in rank and rank.get(dep, len(layers)) >= rank[name]:
                problems.append(f"{name} (layer {rank[name]}) imports {dep} (layer {rank.get(dep, '?')})")
    return problems


# --- the checker itself, on small synthetic inputs: it can fail ---


def test_find_cycle_on_synthetic_graphs() -> None:
    cyclic = {"base": {"pool"}, "pool": {"registry"}, "registry": {"base", "spec"}, "spec": set()}
    cycle = find_cycle(cyclic)
    assert cycle is not None
    assert cycle[0] == cycle[-1] and set(cycle) == {"base", "pool", "registry"}
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"top": {"mid", "low"}, "mid": {"low"}, "low": set()}) is None


def test_layer_violations_on_a_synthetic_graph() -> None:
    layers = [{"low"}, {"mid_a", "mid_b"}, {"top"}]
    assert layer_violations({"top": {"mid_a", "low"}, "mid_a": {"low"}, "mid_b": set(), "low": set()}, layers) == []
    assert layer_violations({"low": {"top"}, "top": set()}, layers) == ["low (layer 0) imports top (layer 2)"]
    assert layer_violations({"mid_a": {"mid_b"}, "mid_b": set()}, layers) == ["mid_a (layer 1) imports mid_b (layer 1)"]
    assert layer_violations({"new": set()}, layers) == ["new is in no layer"]


def test_package_imports_sees_every_form_of_import() -> None:
    source = """
import numpy
import parallel_pool
from parallel_pool import _native, make
from parallel_pool.spec import EnvSpec
from . import options
from .unpack import Unpacker


def later():
    import parallel_pool.tasks
    from parallel_pool.base import BasePoolEnv
"""
    known = {"_native", "tasks", "options", "spec", "unpack", "base", "factory"}
    found = package_imports(ast.parse(source), "factory", known)
    assert found == {"__init__", "_native", "spec", "options", "unpack", "tasks", "base"}
    assert function_level_imports(ast.parse(source)) == [11, 12]


# --- the package ---


def test_the_package_has_no_import_cycle() -> None:
    graph, _ = import_graph(PACKAGE_DIR)
    assert {"__init__", "base", "factory", "tasks"} <= set(graph)
    assert find_cycle(graph) is None


def test_the_package_imports_only_downward() -> None:
    graph, _ = import_graph(PACKAGE_DIR)
    assert layer_violations(graph, LAYERS) == []
    listed = set().union(*LAYERS)
    assert listed - set(graph) == set(), "LAYERS names modules that no longer exist"


def test_no_function_level_import_of_a_package_module() -> None:
    # A lazy import of the package inside a function is how a cycle hides; heavy third-party
    # libraries may still be imported lazily.
    _, trees = import_graph(PACKAGE_DIR)
    lazy = {name: lines for name, tree in trees.items() if (lines := function_level_imports(tree))}
    assert lazy == {}


# --- importing the package ---


def test_import_builds_no_spec(tmp_path: Path) -> None:
    # Importing registers every task with Gymnasium from task metadata only: no spec is built, so no
    # MuJoCo model is compiled. Run as the issue states it, in a fresh process, away from the clone.
    code = (
        "import gymnasium, parallel_pool\n"
        "from parallel_pool import _native\n"
        "print(_native.specs_built())\n"
        "print(gymnasium.spec('parallel_pool/Ant-v5').reward_threshold)\n"
        "parallel_pool.make_spec('Ant-v5')\n"
        "print(_native.specs_built())\n"
    )
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    built_by_import, ant_threshold, built_after_make_spec = out.stdout.split()
    assert "parallel_pool.factory" in out.stderr  # -X importtime's report
    assert int(built_by_import) == 0
    assert float(ant_threshold) == 6000.0  # Gymnasium's Ant-v5 threshold, read without a spec
    assert int(built_after_make_spec) == 1  # the counter counts


def test_gymnasium_registration_reads_thresholds_from_task_metadata() -> None:
    # Each task's registered threshold is its metadata's, which is Gymnasium's own where Gymnasium
    # has the task, and the spec's; an alias has its base task's.
    compared = 0
    for task_id in parallel_pool.list_all_envs():
        if "/" in task_id:  # EnvPool's "phys2d/..." ids: Gymnasium's ids take one namespace, no parallel_pool/ name
            continue
        ours = gymnasium.spec(f"parallel_pool/{task_id}").reward_threshold
        assert ours == tasks.task_info(task_id)["reward_threshold"], task_id
        # Gymnasium 1.x registers the old MuJoCo ids (Ant-v3, ...) only as stubs that raise, without
        # a threshold: ours are Gymnasium 0.29's (tests/frontends/test_envpool_ids.py).
        if task_id in gymnasium.registry and task_id not in ENVPOOL_ALIASES:
            assert ours == gymnasium.spec(task_id).reward_threshold, task_id
            compared += 1
    assert compared >= 10  # classic control and MuJoCo at least
    for task_id in ("CartPole-v1", "Pendulum-v1", "Ant-v5"):
        assert gymnasium.spec(f"parallel_pool/{task_id}").reward_threshold == parallel_pool.make_spec(
            task_id).reward_threshold
    parallel_pool.register("CartPole-imports-test", "CartPole-v1", max_episode_steps=50)
    assert gymnasium.spec("parallel_pool/CartPole-imports-test").reward_threshold == 475.0
