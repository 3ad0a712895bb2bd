"""The task table: every task id, what it stands for, its metadata, and the loading of the env families.

A task id is either a native task, which an env library registered with ``_native``, or an alias
that ``register(alias, base, **kwargs)`` added: a task with other default kwargs. ``lookup`` turns
either into the native task and the alias's kwargs. Nothing here builds a spec: ``task_info`` reads
a task's metadata (family, config defaults, reward threshold) from the native registry as declared.

Example:
    >>> from parallel_pool import tasks
    >>> tasks.lookup("CartPole-v1")
    ('CartPole-v1', {})
    >>> tasks.task_info("CartPole-v1")["reward_threshold"]
    475.0
"""

from __future__ import annotations

import os
from typing import Any

from parallel_pool import _native

# alias -> (native task id, the alias's default kwargs); an alias of an alias is stored resolved.
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def add_alias(task_id: str, base_task: str, default_kwargs: dict[str, Any]) -> None:
    """Adds ``task_id``: ``base_task`` (a native task or an alias) with ``default_kwargs`` on top of its own.

    The caller checks that ``task_id`` is new and that the kwargs are valid for ``base_task``.
    """
    base, base_kwargs = lookup(base_task)
    _ALIASES[task_id] = (base, {**base_kwargs, **default_kwargs})


def lookup(task_id: str) -> tuple[str, dict[str, Any]]:
    """The native task id behind ``task_id``, and the default kwargs its alias sets (``{}`` if none)."""
    base, kwargs = _ALIASES.get(task_id, (task_id, {}))
    return base, dict(kwargs)


def list_all_envs() -> list[str]:
    """Every registered task id, native or alias, sorted."""
    return sorted(set(_native.task_ids()) | set(_ALIASES))


def task_info(task_id: str) -> dict[str, Any]:
    """The metadata of ``task_id``'s native task, read without building its spec.

    A dict with ``"task_id"`` (the native id), ``"family"``, ``"defaults"`` (every config key with its
    default) and ``"reward_threshold"`` (a float, or None). An unknown id is a ``ValueError``.
    """
    base_id, _ = lookup(task_id)
    try:
        return dict(_native.task_info(base_id))
    except ValueError:
        raise ValueError(
            f"unknown task id {task_id!r}; parallel_pool.list_all_envs() lists the {len(list_all_envs())} "
            "known ones"
        ) from None


# --- Family loading: the env libraries built next to _native. Moved here as they were; one generic
# loader replaces both (issue 13, point 4), so they are kept apart from the table above.
def load_families() -> None:
    """Loads the env families built as libraries (MuJoCo, Atari), registering their tasks. Once, at import."""
    _load_mujoco_envs()
    _load_atari_envs()


# MuJoCo family: parallel_pool/_mujoco_envs.so, an env library next to _native (see the MuJoCo
# block of CMakeLists.txt). A build without it simply has no MuJoCo tasks; one that fails to load
# is an ImportError that says why.
def _load_mujoco_envs() -> None:
    import ctypes

    import gymnasium

    path = os.path.join(os.path.dirname(_native.__file__), "_mujoco_envs.so")
    if not os.path.exists(path):
        return
    # Bare xml_file names (Gymnasium's defaults) are Gymnasium's own model files.
    assets_dir = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
    try:
        library = ctypes.CDLL(path)  # the same handle _native.load_library opens next
        library.parallel_pool_mujoco_set_assets_dir.argtypes = [ctypes.c_char_p]
        library.parallel_pool_mujoco_set_assets_dir.restype = None
        library.parallel_pool_mujoco_set_assets_dir(os.fsencode(assets_dir))
        _native.load_library(path)
    except (OSError, ValueError, AttributeError) as e:
        raise ImportError(f"cannot load parallel_pool's MuJoCo envs ({path}): {e}") from e


# Atari family: parallel_pool/_atari_envs.so (GPL-2.0, it links ALE; see the Atari block of
# CMakeLists.txt). Its tasks are the ROMs of the installed ale-py wheel, found without importing
# ale_py (find_spec locates the package only). Without ale-py, or without the library, there are
# no Atari tasks and everything else works.
def _load_atari_envs() -> None:
    import ctypes
    import importlib.util

    path = os.path.join(os.path.dirname(_native.__file__), "_atari_envs.so")
    if not os.path.exists(path):
        return
    spec = importlib.util.find_spec("ale_py")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    rom_dirs = [os.path.join(d, "roms") for d in locations if os.path.isdir(os.path.join(d, "roms"))]
    if not rom_dirs:
        return
    try:
        library = ctypes.CDLL(path)  # the same handle _native.load_library opens next
        library.parallel_pool_atari_set_rom_dir.argtypes = [ctypes.c_char_p]
        library.parallel_pool_atari_set_rom_dir.restype = None
        library.parallel_pool_atari_set_rom_dir(os.fsencode(rom_dirs[0]))
        _native.load_library(path)
    except (OSError, ValueError, AttributeError) as e:
        raise ImportError(f"cannot load parallel_pool's Atari envs ({path}): {e}") from e


# --- end of family loading
