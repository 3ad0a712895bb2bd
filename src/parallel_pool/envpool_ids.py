"""Task ids that EnvPool registers and Gymnasium 1.x no longer serves, as aliases of our tasks.

EnvPool (1.2.5) keeps old ids its users' scripts name: Box2D's ``-v2`` (served by the same
implementation as its ``-v3``) and MuJoCo's ``-v2``/``-v3`` (served by its ``-v4`` tasks; Ant-v3
and Humanoid-v3 with ``use_contact_force=True``). Each is added at import as an alias of our task
with the same spaces and rules, when that task is built here; one whose task is not available is
listed as unavailable for the same reason. Their reward thresholds are the base task's, which are
the ones Gymnasium registered for the old ids (0.29, the last release with them).

Example:
    >>> import parallel_pool
    >>> parallel_pool.tasks.lookup("Ant-v3")
    ('Ant-v4', {'use_contact_forces': True})
"""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Any

from parallel_pool import _native, tasks

__all__ = ["ENVPOOL_ALIASES", "add_envpool_aliases", "add_envpool_vizdoom_maps", "envpool_assets_dir"]

# EnvPool's id -> (our task, the kwargs that make it EnvPool's task), from envpool_aliases.json (which
# the Gymnasium plug-in reads too, to register them without importing the package; it says why each).
def _load_aliases() -> dict[str, tuple[str, dict[str, Any]]]:
    with open(os.path.join(os.path.dirname(__file__), "envpool_aliases.json"), encoding="utf-8") as f:
        data = json.load(f)
    return {alias: (base, dict(kwargs)) for alias, (base, kwargs) in data["aliases"].items()}


ENVPOOL_ALIASES: dict[str, tuple[str, dict[str, Any]]] = _load_aliases()


def add_envpool_aliases() -> list[str]:
    """Adds every alias whose task is built here (after the families are loaded); returns them. An
    alias of an unavailable task is recorded as unavailable, with that task's reason."""
    native = set(_native.task_ids())
    unavailable = tasks.unavailable_envs()
    added = []
    for alias, (base, kwargs) in ENVPOOL_ALIASES.items():
        if alias in native or tasks.lookup(alias)[0] != alias:
            continue  # a family or register() already serves this id
        if base in native:
            tasks.add_alias(alias, base, kwargs)
            added.append(alias)
        elif base in unavailable:
            family, needs, reason = unavailable[base]
            tasks.add_unavailable([alias], family, needs, reason)
    return added


def _scenario_task_id(stem: str) -> str:
    """A ViZDoom scenario's task id, as EnvPool (and our vizdoom family) names it: D1_basic -> D1Basic-v1."""
    return "".join(part[:1].upper() + part[1:].lower() for part in stem.split("_") if part) + "-v1"


def _screen_format(cfg: str) -> str:
    """A ViZDoom scenario file's screen_format ("" when it sets none): its channels, as the vizdoom
    family's tasks take them (a GRAY8 scenario's screen is gray by default)."""
    with open(cfg, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.split("#", 1)[0].partition("=")
            if key.strip().replace("_", "").lower() == "screenformat":
                return value.strip()
    return ""


def envpool_assets_dir(*parts: str) -> str | None:
    """A folder of the installed ``envpool-assets`` package (EnvPool's data wheel), located without
    importing it; None when the package or the folder is not there."""
    spec = importlib.util.find_spec("envpool_assets")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], *parts)
    return path if os.path.isdir(path) else None


def add_envpool_vizdoom_maps() -> list[str]:
    """EnvPool's own ViZDoom maps (``D1Basic-v1``, ``D2Navigation-v1``, ``D3Battle-v1``,
    ``D4Battle2-v1``, ...): when the ``envpool-assets`` package is installed (EnvPool's data wheel on
    PyPI, which EnvPool users have), each scenario of its ``vizdoom/maps`` whose id our vizdoom
    family does not serve already is added as a ViZDoom task on that scenario file (the family's
    ``cfg_path``), read from the installed package at run time. Returns the ids added."""
    native = set(_native.task_ids())
    if "Basic-v1" not in native:
        return []  # the vizdoom family is not built or not installed
    maps = envpool_assets_dir("vizdoom", "maps")
    if maps is None:
        return []
    added = []
    for name in sorted(os.listdir(maps)):
        stem, ext = os.path.splitext(name)
        task_id = _scenario_task_id(stem)
        if ext != ".cfg" or not os.path.isfile(os.path.join(maps, stem + ".wad")):
            continue
        if task_id in native or tasks.lookup(task_id)[0] != task_id:
            continue  # the vizdoom wheel's own scenario (basic, deathmatch, ...) or a registered id
        cfg = os.path.join(maps, name)
        tasks.add_alias(task_id, "Basic-v1", {"cfg_path": cfg, "gray_scale": _screen_format(cfg).upper() == "GRAY8"})
        added.append(task_id)
    return added
