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

import json
import os
from typing import Any

from parallel_pool import _native, tasks

__all__ = ["ENVPOOL_ALIASES", "add_envpool_aliases"]

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
