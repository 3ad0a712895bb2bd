"""parallel_pool's Gymnasium plug-in: ``gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=4)``
works without importing parallel_pool first.

Gymnasium 1.x reads no plug-in entry points (1.0 removed the ``gymnasium.envs`` entry-point loader
that Gymnasium 0.26-0.29 had; 1.1 to 1.4 have none), so this module is what registers the tasks:

- ``parallel_pool_gymnasium.pth``, at site-packages' root, imports it at interpreter start. Importing
  it only puts a finder on ``sys.meta_path`` (it imports nothing but ``os`` and ``sys``, which the
  interpreter has already loaded): no Gymnasium, no NumPy, no native library.
- When ``gymnasium`` is first imported, the finder runs once, right after Gymnasium's own
  ``__init__``, and registers every task of ``parallel_pool/gymnasium_tasks.json`` as
  ``parallel_pool/<task id>``, with the string entry points and the reward thresholds ``import
  parallel_pool`` registers. That manifest was written at build time by loading each family library
  the build made (``native/tools/task_manifest.cc``); a family whose data package is not installed
  (Atari without ale-py) is left out, as ``import parallel_pool`` leaves it out. The first
  ``make_vec`` imports parallel_pool through the entry point, which loads the native libraries.
- ``import parallel_pool`` registers every task too (aliases that ``parallel_pool.register`` adds
  included) and skips the ids already registered, so nothing is registered twice.
- Nothing here breaks start-up or Gymnasium's import: a failure (a missing or broken manifest) stops
  the registration, ``failure`` says why, and ``import parallel_pool`` still registers everything.
- ``PARALLEL_POOL_GYMNASIUM_PLUGIN=0`` switches it off (the finder is not installed).
"""

import os
import sys

# Nothing is imported that a bare interpreter has not already imported (this module is imported at every
# interpreter start): not typing (milliseconds), not __future__; the annotations are strings, which mypy
# reads and Python 3.9 never evaluates.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAMESPACE = "parallel_pool"
ENTRY_POINT = "parallel_pool.vector:make_single_env"
VECTOR_ENTRY_POINT = "parallel_pool.vector:make_vector_env"
MANIFEST = "gymnasium_tasks.json"
SWITCH = "PARALLEL_POOL_GYMNASIUM_PLUGIN"

# Why the last registration from the manifest registered nothing (None: it did, or it has not run).
failure: "str | None" = None
# How many ids that registration added (ids already registered are skipped).
registered = 0


class AfterImport:
    """A ``sys.meta_path`` finder that calls ``callback(module)`` once, right after the module ``name``
    has been imported (its own code has run; an exception in it propagates and the callback is not
    called). It removes itself from ``sys.meta_path`` when the import starts, so it fires at most once.
    """

    def __init__(self, name: str, callback: "Any") -> None:
        self.name = name
        self.callback = callback

    def find_spec(self, fullname: str, path: "Any" = None, target: "Any" = None) -> "Any":
        if fullname != self.name:
            return None
        self.remove()
        for finder in sys.meta_path:  # the other finders (this one is gone), which find it as usual
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec  # a namespace package or a legacy loader: imported as usual, nothing registered
        spec.loader = _ThenCall(spec.loader, self.callback)
        return spec

    def install(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def remove(self) -> None:
        while self in sys.meta_path:
            sys.meta_path.remove(self)


class _ThenCall:
    """The module's own loader, then the callback."""

    def __init__(self, loader: "Any", callback: "Any") -> None:
        self.loader = loader
        self.callback = callback

    def create_module(self, spec: "Any") -> "Any":
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: "Any") -> None:
        # The module sees its own loader (importlib.resources and pkgutil ask it), never this wrapper.
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        try:
            self.callback(module)
        except Exception:  # the callback records its own failures; the import must succeed regardless
            pass

    def __getattr__(self, name: str) -> "Any":
        return getattr(self.loader, name)


def _package_dirs(package: str) -> list[str]:
    # find_spec locates a top-level package without running its __init__ (as families.py does).
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


def manifest_path() -> "str | None":
    """The installed task manifest: ``parallel_pool/gymnasium_tasks.json`` next to this module, or in
    the directory ``parallel_pool`` is found in; None if there is none."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), NAMESPACE, MANIFEST)
    for candidate in [here] + [os.path.join(d, MANIFEST) for d in _package_dirs(NAMESPACE)]:
        if os.path.isfile(candidate):
            return candidate
    return None


def _resources_found(resources: list[dict[str, str]]) -> bool:
    # The loader's rule (families.library_resources): each declared directory must exist inside its
    # installed Python package, else the family is skipped at import and its tasks are absent.
    for resource in resources:
        if not any(os.path.isdir(os.path.join(d, resource["path"])) for d in _package_dirs(resource["package"])):
            return False
    return True


def register(gymnasium: "Any", path: "str | None" = None) -> int:
    """Registers every task of the manifest at ``path`` (default: the installed one) with ``gymnasium``
    as ``parallel_pool/<task id>``, skipping ids already registered; returns how many it added.

    Never raises: a failure stops the registration (the manifest is read whole first, so a missing or
    malformed one registers nothing), returns 0 and is described in ``failure``.
    """
    global failure, registered
    import json

    try:
        path = path if path is not None else manifest_path()
        if path is None:
            raise FileNotFoundError(f"no {NAMESPACE}/{MANIFEST} next to {__file__} (a broken install?)")
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("format") != 1:
            raise ValueError(f"{path} has format {manifest.get('format')!r}, expected 1")
        specs = []
        for family in manifest["families"]:
            if not _resources_found(family["resources"]):
                continue
            for task in family["tasks"]:
                threshold = task["reward_threshold"]
                specs.append((str(task["task_id"]), None if threshold is None else float(threshold)))
        specs += _aliases(os.path.dirname(path), dict(specs))
        added = 0
        for task_id, threshold in specs:
            env_id = f"{NAMESPACE}/{task_id}"
            if env_id in gymnasium.registry or "/" in task_id:
                continue  # registered, or EnvPool's "phys2d/..." ids: Gymnasium's ids take one namespace
            # What parallel_pool.factory.register_with_gymnasium registers (tests/frontends/test_gymnasium_plugin.py).
            gymnasium.register(
                id=env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs={"task_id": task_id},
                max_episode_steps=None,
                reward_threshold=threshold,
            )
            added += 1
    except Exception as e:
        failure = (
            f"parallel_pool's Gymnasium plug-in registered no task ({type(e).__name__}: {e}); "
            f"`import parallel_pool` registers them"
        )
        registered = 0
        return 0
    failure = None
    registered = added
    return added


def _aliases(directory: str, thresholds: "dict[str, float | None]") -> "list[tuple[str, float | None]]":
    """EnvPool's old ids (``envpool_aliases.json``, which ``parallel_pool.envpool_ids`` adds at import)
    whose task the manifest has, with that task's threshold."""
    import json

    path = os.path.join(directory, "envpool_aliases.json")
    if not os.path.exists(path):  # a manifest outside the package (tests): no aliases beside it
        return []
    with open(path, encoding="utf-8") as f:
        aliases = json.load(f)["aliases"]
    return [(alias, thresholds[base]) for alias, (base, _) in aliases.items() if base in thresholds]


def enabled() -> bool:
    """False when ``PARALLEL_POOL_GYMNASIUM_PLUGIN`` is ``0``, ``false``, ``no`` or ``off``."""
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


_finder = AfterImport("gymnasium", register)


def install() -> None:
    """What the .pth file's line runs: registers at Gymnasium's first import (at once if it is
    already imported), unless switched off."""
    global failure
    try:
        if not enabled():
            return
        gymnasium = sys.modules.get("gymnasium")
        if gymnasium is not None and hasattr(gymnasium, "register"):
            register(gymnasium)
        else:
            _finder.install()
    except Exception as e:  # start-up goes on; `import parallel_pool` still registers every task
        failure = f"parallel_pool's Gymnasium plug-in was not installed ({type(e).__name__}: {e})"
