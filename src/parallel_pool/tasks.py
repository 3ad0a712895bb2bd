"""The task table: every task id, what it stands for, and its metadata.

A task id is either a native task, which an env library (``families.py``) registered with ``_native``, or an alias
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
    """Every task id that can be made here, native or alias, sorted (``unavailable_envs()`` lists the
    others)."""
    return sorted(set(_native.task_ids()) | set(_ALIASES))


class UnavailableTaskError(ValueError):
    """A task of a family that this installation cannot run: the family was left out of the build
    (a system package was missing) or a Python package it reads data from is not installed. The
    message names what is missing and the command that brings it."""

    def __init__(self, task_id: str, family: str, reason: str) -> None:
        super().__init__(f"{task_id!r} is a task of the {family} family, not available here: {reason}")
        self.task_id = task_id
        self.family = family
        self.reason = reason


# Task ids of the families that are not available here: id -> (family, what is missing, the whole
# reason with the command that installs it).
_UNAVAILABLE: dict[str, tuple[str, str, str]] = {}


def add_unavailable(task_ids: list[str], family: str, needs: str, reason: str) -> None:
    """Records task ids that cannot be made here (``families.py``, at import)."""
    for task_id in task_ids:
        _UNAVAILABLE[task_id] = (family, needs, reason)


def unavailable_envs() -> dict[str, tuple[str, str, str]]:
    """The task ids of the families this installation cannot run: id -> (family, needs, reason).
    ``needs`` names the missing system or Python package in a few words; ``reason`` says it whole,
    with the command that installs it."""
    registered = set(_native.task_ids())
    return {task_id: entry for task_id, entry in sorted(_UNAVAILABLE.items()) if task_id not in registered}


# Ids a reference package registers that this package does not serve, by prefix, with the reason the
# error gives. minigrid 3.2.0 registers six MiniGrid-WFC-* ids, but neither its wheel nor its sdist on
# PyPI holds the pattern images they read (minigrid/envs/wfc/patterns/*.png): minigrid's own reset()
# raises FileNotFoundError there, and copying the images from its repository is not done here.
_UNSUPPORTED = {
    "MiniGrid-WFC-": (
        "the MiniGrid-WFC-* ids are not supported: minigrid 3.2.0 registers them, but its PyPI wheel and "
        "sdist ship none of the pattern images they are generated from (minigrid/envs/wfc/patterns/*.png), "
        "so minigrid's own reset() raises FileNotFoundError and there is no reference to align with"
    ),
}


def task_info(task_id: str) -> dict[str, Any]:
    """The metadata of ``task_id``'s native task, read without building its spec.

    A dict with ``"task_id"`` (the native id), ``"family"``, ``"defaults"`` (every config key with its
    default) and ``"reward_threshold"`` (a float, or None). An unknown id is a ``ValueError``.
    """
    base_id, _ = lookup(task_id)
    try:
        return dict(_native.task_info(base_id))
    except ValueError:
        if base_id in _UNAVAILABLE:
            family, _, why = _UNAVAILABLE[base_id]
            raise UnavailableTaskError(task_id, family, why) from None
        for prefix, reason in _UNSUPPORTED.items():
            if task_id.startswith(prefix):
                raise ValueError(f"{task_id!r}: {reason}") from None
        raise ValueError(
            f"unknown task id {task_id!r}; parallel_pool.list_all_envs() lists the {len(list_all_envs())} "
            "known ones"
        ) from None
