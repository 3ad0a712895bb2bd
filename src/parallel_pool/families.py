"""Env libraries: the families installed with the package and those built outside it.

Every family is a C++ env library, ``parallel_pool/families/<name>.so``, loaded the same way
(``native/core/family_loader.h``): the library declares the data directories it reads (inside
installed Python packages, e.g. Gymnasium's MuJoCo model files or ale-py's ROMs), they are found
here without importing those packages, and the library registers its tasks.
"""

from __future__ import annotations

import importlib.util
import json
import os

from parallel_pool import _native, tasks

# Next to the compiled module (in an editable install the .py files stay in the source tree).
FAMILIES_DIR = os.path.join(os.path.dirname(os.path.abspath(_native.__file__)), "families")


# The packages whose data a family reads that are not dependencies of parallel_pool: the extra that
# brings each (pyproject.toml's optional dependencies).
PACKAGE_EXTRAS = {"dm_control": "dm_control", "vizdoom": "vizdoom"}


class MissingResourceError(LookupError):
    """An env library needs a data directory of a Python package that is not installed."""

    def __init__(self, message: str, package: str = "", installed: bool = False) -> None:
        super().__init__(message)
        self.package = package
        self.installed = installed  # the package is there, but not the directory


def install_hint(package: str) -> str:
    """The command that installs ``package`` for parallel_pool's families."""
    extra = PACKAGE_EXTRAS.get(package)
    return f"pip install 'parallel-pool[{extra}]'" if extra else f"pip install {package}"


def _package_dir(package: str) -> str | None:
    # find_spec locates the package without running its __init__ (ale_py's imports numpy and more).
    spec = importlib.util.find_spec(package)
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def library_resources(path: str) -> dict[str, str]:
    """The data directories the env library at ``path`` declares, as absolute paths.

    Raises ``MissingResourceError`` naming the package when one cannot be found.
    """
    resources = {}
    for name, package, relative in _native.library_resources(path):
        root = _package_dir(package)
        directory = os.path.join(root, relative) if root is not None else None
        if directory is None or not os.path.isdir(directory):
            raise MissingResourceError(
                f"env library {path} needs the directory {relative!r} of the Python package {package!r} "
                f"({'not installed' if root is None else f'not found in {root}'})",
                package,
                root is not None,
            )
        resources[name] = directory
    return resources


def load_env_library(path: str) -> list[str]:
    """Loads one env library and returns the task ids it registered."""
    return list(_native.load_library(path, library_resources(path)))


def installed_families(directory: str = FAMILIES_DIR) -> list[str]:
    """The family libraries installed with the package (``families/*.so``), in name order."""
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".so"))


# Families not loaded because a package they read data from is not installed (e.g. dm_control's
# tasks without dm_control): name -> reason. Everything else works without them.
SKIPPED: dict[str, str] = {}
# Families the build left out because a system package was missing (skipped_families.json, written
# at configure time by CMakeLists.txt's pp_skip_family): name -> what it needs and how to install it.
NOT_BUILT: dict[str, str] = {}


def _manifest_task_ids(directory: str) -> dict[str, list[str]]:
    """Family library name -> the task ids it registered at build time (gymnasium_tasks.json)."""
    path = os.path.join(os.path.dirname(directory), "gymnasium_tasks.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        manifest = json.load(f)
    return {
        os.path.splitext(family["library"])[0]: [task["task_id"] for task in family["tasks"]]
        for family in manifest["families"]
    }


def _load_not_built(directory: str) -> None:
    path = os.path.join(os.path.dirname(directory), "skipped_families.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        skipped = json.load(f)
    for name, entry in skipped.items():
        reason = (
            f"this parallel_pool was built without its {name} envs: {entry['needs']} was not found at build time. "
            f"Install it ({entry['install']}), then build parallel_pool again (pip install --force-reinstall "
            "--no-binary parallel-pool parallel-pool, or pip install . in a clone)"
        )
        NOT_BUILT[name] = reason
        tasks.add_unavailable(entry["task_ids"], name, f"{entry['needs'].split(' (')[0]} at build time", reason)


def load_installed_families(directory: str = FAMILIES_DIR) -> None:
    """Loads every installed family (at import). One whose data package is missing is skipped and
    recorded in ``SKIPPED``, and its task ids (from the build-time manifest) raise an error naming the
    package and its extra; one that fails to load is an ImportError that says why. Families the build
    left out are recorded in ``NOT_BUILT``, their task ids likewise."""
    manifest_ids: dict[str, list[str]] | None = None
    for path in installed_families(directory):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            load_env_library(path)
        except MissingResourceError as e:
            SKIPPED[name] = str(e)
            if manifest_ids is None:
                manifest_ids = _manifest_task_ids(directory)
            if e.installed:
                needs = f"data the installed {e.package} lacks"
                reason = f"the installed {e.package!r} lacks the data its envs read: {e}"
            else:
                needs = f"{install_hint(e.package)}"
                reason = (
                    f"the {name} envs read their data from the Python package {e.package!r}, which is not "
                    f"installed here: {install_hint(e.package)}"
                )
            tasks.add_unavailable(manifest_ids.get(name, []), name, needs, reason)
        except (OSError, ValueError) as e:
            raise ImportError(f"cannot load parallel_pool's {name} envs ({path}): {e}") from e
    _load_not_built(directory)
