"""Env libraries: the families installed with the package and those built outside it.

Every family is a C++ env library, ``parallel_pool/families/<name>.so``, loaded the same way
(``native/core/family_loader.h``): the library declares the data directories it reads (inside
installed Python packages, e.g. Gymnasium's MuJoCo model files or ale-py's ROMs), they are found
here without importing those packages, and the library registers its tasks.
"""

from __future__ import annotations

import importlib.util
import os

from parallel_pool import _native

# Next to the compiled module (in an editable install the .py files stay in the source tree).
FAMILIES_DIR = os.path.join(os.path.dirname(os.path.abspath(_native.__file__)), "families")


class MissingResourceError(LookupError):
    """An env library needs a data directory of a Python package that is not installed."""


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
                f"({'not installed' if root is None else f'not found in {root}'})"
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


# Families not loaded because a package they read data from is not installed (e.g. Atari without
# ale-py): name -> reason. Everything else works without them.
SKIPPED: dict[str, str] = {}


def load_installed_families(directory: str = FAMILIES_DIR) -> None:
    """Loads every installed family (at import). One whose data package is missing is skipped and
    recorded in ``SKIPPED``; one that fails to load is an ImportError that says why."""
    for path in installed_families(directory):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            load_env_library(path)
        except MissingResourceError as e:
            SKIPPED[name] = str(e)
        except (OSError, ValueError) as e:
            raise ImportError(f"cannot load parallel_pool's {name} envs ({path}): {e}") from e
