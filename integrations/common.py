"""What the integrations share: checks on the kwargs and the pool they wrap, per-env rows of a batch,
per-env attributes, seeds and frames.

An RL library's vector env wraps one native pool; the library asks it per-env questions (the info
of env ``i``, an attribute of env ``i``, a seed for some envs) that a pool answers per batch. The
helpers here answer them, once for every adapter. They import nothing heavier than NumPy.

Example:
    >>> import numpy as np, parallel_pool
    >>> from parallel_pool.integrations.common import row_info, row_info_keys, take_rows
    >>> pool = parallel_pool.make_gymnasium("CartPole-v1", num_envs=3, seed=0)
    >>> obs, info = pool.reset()
    >>> take_rows(obs, 1).shape
    (4,)
    >>> row_info(info, ["env_id"], 2)
    {'env_id': np.int32(2)}
    >>> pool.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from parallel_pool.base import BasePoolEnv
from parallel_pool.spec import EnvSpec

__all__ = [
    "EnvAttributes",
    "check_no_reset_options",
    "check_sync_batch_size",
    "fill_seeds",
    "reject_kwargs",
    "render_frames",
    "require_single_player",
    "row_info",
    "row_info_keys",
    "take_rows",
]


# --- the kwargs an adapter passes on, and the pool it gets ---
def reject_kwargs(kwargs: Mapping[str, Any], keys: Iterable[str], message: str) -> None:
    """Raises ``ValueError(message.format(key=key))`` for the first of ``keys`` present in ``kwargs``.

    For the ``parallel_pool.make`` kwargs an adapter sets itself (``autoreset_mode``, ``num_envs``,
    ...), so that a user's value is refused rather than silently overridden.
    """
    for key in keys:
        if key in kwargs:
            raise ValueError(message.format(key=key))


def check_sync_batch_size(make_kwargs: dict[str, Any], num_envs: int, message: str) -> None:
    """Removes ``batch_size`` from ``make_kwargs``; ``ValueError(message)`` unless it was absent, None
    or ``num_envs``: the adapter's library steps every env at once (a sync pool)."""
    batch_size = make_kwargs.pop("batch_size", None)
    if batch_size not in (None, num_envs):
        raise ValueError(message)


def require_single_player(pool: BasePoolEnv, adapter: str) -> None:
    """Closes ``pool`` and raises ``ValueError`` if its task is multi-player: ``adapter`` (e.g. "an
    SB3 VecEnv") has one row per env, where a multi-player pool has one per player."""
    if pool.spec.max_num_players > 1:
        pool.close()
        raise ValueError(f"{pool.task_id} is multi-player; {adapter} has one row per env")


def check_no_reset_options(options: Any) -> None:
    """Raises ``ValueError`` if reset ``options`` are given: native envs take none.

    ``options`` is a dict, or a list of per-env dicts (SB3's ``VecEnv.set_options``), which counts
    as given when any of them is non-empty.
    """
    given = any(options) if isinstance(options, list) else bool(options)
    if given:
        raise ValueError(f"native envs take no reset options, got {options!r}")


# --- per-env rows of a batch ---
def row_info_keys(spec: EnvSpec) -> list[str]:
    """The task's own info keys that have one value per env (not per player): what a per-env info
    dict holds, besides what an adapter adds. (A key a row may lack, a Python env's, is listed
    without its ``_key`` mask, which ``row_info`` reads.)"""
    masks = {"_" + key for key in spec.masked_info_keys}
    return [f.key for f in spec.info_fields if not f.per_player and f.key not in masks]


def row_info(info: Mapping[str, Any], keys: Iterable[str], row: int) -> dict[str, Any]:
    """Row ``row`` of a batched ``info`` as a per-env dict, for those of ``keys`` that ``info`` holds
    for that row (where ``info`` has a key's ``_key`` mask, the row's mask says whether it does)."""
    out = {}
    for key in keys:
        if key in info and ("_" + key not in info or info["_" + key][row]):
            out[key] = info[key][row]
    return out


def take_rows(batch: Any, index: Any) -> Any:
    """``batch[index]`` for an array (or anything ``np.asarray`` takes), or for every array of a
    (nested) dict of them, such as a Dict observation, a Dict action or an info dict.

    ``index`` is any NumPy index along the first axis: an int (one row), a slice, an array of ids
    or a boolean mask.
    """
    if isinstance(batch, dict):
        return {key: take_rows(value, index) for key, value in batch.items()}
    return np.asarray(batch)[index]


# --- per-env attributes ---
class EnvAttributes:
    """Per-env attributes of a vector env over one native pool, which has no per-env Python objects.

    ``get(name, i)`` answers, in this order: an attribute stored for env ``i`` with ``set``; the
    adapter's own answer, ``fixed[name](i)``; the pool's config value (``max_episode_steps``, the
    task's kwargs, ...); the pool's public attribute (``observation_space``, ``action_space``,
    ``metadata``, ``spec``, ``render_mode``, ...); else ``AttributeError``.

    ``set(name, value, env_ids)`` stores a Python attribute per env, which ``get`` returns and the
    native env never reads. Config keys and pool attributes are fixed when the pool is built:
    setting one is an ``AttributeError`` that says to pass it to ``owner(...)`` instead.

    Example:
        >>> import parallel_pool
        >>> from parallel_pool.integrations.common import EnvAttributes
        >>> pool = parallel_pool.make_gymnasium("CartPole-v1", num_envs=2)
        >>> attrs = EnvAttributes(pool, "MyVecEnv")
        >>> attrs.get("max_episode_steps", 0)
        500
        >>> attrs.set("note", "hi", [1])
        >>> attrs.has("note", 0), attrs.get("note", 1)
        (False, 'hi')
        >>> pool.close()
    """

    def __init__(
        self, pool: BasePoolEnv, owner: str, fixed: Mapping[str, Callable[[int], Any]] | None = None
    ) -> None:
        self._pool = pool
        self._owner = owner
        self._fixed = dict(fixed or {})
        self._stored: list[dict[str, Any]] = [{} for _ in range(pool.num_envs)]

    def get(self, name: str, i: int) -> Any:
        """Env ``i``'s attribute ``name``."""
        if name in self._stored[i]:
            return self._stored[i][name]
        if name in self._fixed:
            return self._fixed[name](i)
        config = self._pool.config
        if name in config:
            return config[name]
        if not name.startswith("_") and hasattr(self._pool, name):
            return getattr(self._pool, name)
        raise AttributeError(f"the native {self._pool.task_id} envs have no attribute {name!r}")

    def has(self, name: str, i: int) -> bool:
        """Whether ``get(name, i)`` has an answer."""
        try:
            self.get(name, i)
        except AttributeError:
            return False
        return True

    def stored(self, name: str, i: int) -> Any:
        """The attribute stored for env ``i`` with ``set`` (a callable for ``env_method``), else None."""
        return self._stored[i].get(name)

    def is_fixed(self, name: str) -> bool:
        """Whether ``name`` is fixed when the pool is built (a config key or a pool attribute)."""
        return name in self._pool.config or hasattr(self._pool, name)

    def set(self, name: str, value: Any, env_ids: Iterable[int]) -> None:
        """Stores ``value`` as the attribute ``name`` of every env in ``env_ids``."""
        if self.is_fixed(name):
            raise AttributeError(
                f"{name!r} is fixed when the native pool is built; pass it to {self._owner}(...) instead"
            )
        for i in env_ids:
            self._stored[int(i)][name] = value


# --- seeds and frames ---
def fill_seeds(seeds: Sequence[int | None]) -> list[int] | None:
    """One seed per env from a list with gaps: the given seeds, fresh entropy where None.

    None when no env has a seed: the pool then keeps its envs' random streams. A library's
    ``seed(...)`` that seeds some envs and leaves others alone (SB3's and Tianshou's VecEnvs do)
    re-seeds them all this way at its next reset.

    Example:
        >>> from parallel_pool.integrations.common import fill_seeds
        >>> seeds = fill_seeds([7, None, 9])
        >>> seeds[0], seeds[2], isinstance(seeds[1], int)
        (7, 9, True)
        >>> fill_seeds([None, None]) is None
        True
    """
    if all(s is None for s in seeds):
        return None
    fresh = np.random.SeedSequence().generate_state(len(seeds), dtype=np.uint32)
    return [int(s) if s is not None else int(f) for s, f in zip(seeds, fresh)]


def render_frames(pool: BasePoolEnv, env_ids: Sequence[int] | None = None) -> list[np.ndarray | None]:
    """The current RGB frame of each env in ``env_ids`` (all if None), as a list with one entry per
    env; None for each env of a task that does not render (as a Python env made without a
    ``render_mode`` returns)."""
    count = pool.num_envs if env_ids is None else len(env_ids)
    if pool.render_mode is None:
        return [None] * count
    ids = np.arange(pool.num_envs) if env_ids is None else np.asarray(env_ids, dtype=np.int64)
    return list(pool.render(ids))
