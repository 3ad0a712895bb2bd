"""The Python side of a native pool, shared by every front-end: kwargs, seeds, and unpacking.

A native ``recv`` returns one array per output field, all views into one recycled output block;
this module turns them into ``(obs, reward, terminated, truncated, info)`` without copying.
"""

from __future__ import annotations

import collections
import operator
from typing import Any

import numpy as np

from parallel_pool import _native
from parallel_pool.spec import POOL_DEFAULTS, EnvSpec

_AUTORESET_MODES = ("next_step", "same_step", "disabled")
# Gymnasium's AutoresetMode values, accepted as well as our names.
_GYMNASIUM_AUTORESET = {"NextStep": "next_step", "SameStep": "same_step", "Disabled": "disabled"}


def gymnasium_autoreset_mode(mode: str) -> Any:
    """Our autoreset mode name as Gymnasium's ``AutoresetMode``."""
    from gymnasium.vector import AutoresetMode

    return {v: AutoresetMode(k) for k, v in _GYMNASIUM_AUTORESET.items()}[mode]
_MAX_SEED = 2**64 - 1


def list_all_envs() -> list[str]:
    """Every registered task id, sorted."""
    from parallel_pool.registry import aliases

    return sorted(set(_native.task_ids()) | set(aliases()))


def resolve(task_id: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Splits kwargs into pool options and env config, applying defaults; rejects unknown keys."""
    from parallel_pool.registry import aliases

    if not isinstance(task_id, str):
        raise TypeError(f"task_id must be a str, got {type(task_id).__name__}")
    alias = aliases().get(task_id)
    if alias is not None:
        base_id, alias_kwargs = alias
        kwargs = {**alias_kwargs, **kwargs}
    else:
        base_id = task_id
    try:
        info = _native.task_info(base_id)
    except ValueError:
        raise ValueError(
            f"unknown task id {task_id!r}; parallel_pool.list_all_envs() lists the {len(list_all_envs())} "
            "known ones"
        ) from None
    env_defaults = info["defaults"]
    unknown = sorted(set(kwargs) - set(POOL_DEFAULTS) - set(env_defaults))
    if unknown:
        valid = ", ".join(sorted(set(POOL_DEFAULTS) | set(env_defaults)))
        raise ValueError(f"unknown keyword argument(s) {', '.join(unknown)} for {task_id!r}; valid ones: {valid}")
    pool = {k: kwargs.get(k, v) for k, v in POOL_DEFAULTS.items()}
    env = {k: kwargs[k] for k in env_defaults if k in kwargs}
    for key, value in env.items():
        _check_config_type(task_id, key, value, env_defaults[key])
    _check_pool_options(pool)
    return base_id, pool, env


def _check_config_type(task_id: str, key: str, value: Any, default: Any) -> None:
    """A config value must have its default's type (an int is fine where a float is expected)."""
    numbers = (int, float, np.integer, np.floating)
    if isinstance(default, bool):
        ok = isinstance(value, (bool, np.bool_))
    elif isinstance(default, int):
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, numbers) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    else:  # a sequence of floats
        ok = isinstance(value, (list, tuple, np.ndarray)) and all(
            isinstance(v, numbers) and not isinstance(v, bool) for v in value
        )
    if not ok:
        raise TypeError(
            f"{task_id}: {key} must be {type(default).__name__} (default {default!r}), got {value!r}"
        )


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_pool_options(pool: dict[str, Any]) -> None:
    pool["num_envs"] = _check_int("num_envs", pool["num_envs"], 1)
    if pool["batch_size"] is None:
        pool["batch_size"] = pool["num_envs"]
    pool["batch_size"] = _check_int("batch_size", pool["batch_size"], 1)
    if pool["batch_size"] > pool["num_envs"]:
        raise ValueError(f"batch_size ({pool['batch_size']}) must be <= num_envs ({pool['num_envs']})")
    pool["num_threads"] = _check_int("num_threads", pool["num_threads"], 0)
    pool["thread_affinity_offset"] = _check_int("thread_affinity_offset", pool["thread_affinity_offset"], -1)
    if pool["autoreset_mode"] not in _AUTORESET_MODES:
        # Accept Gymnasium's AutoresetMode enum as well as its string value.
        value = getattr(pool["autoreset_mode"], "value", pool["autoreset_mode"])
        value = _GYMNASIUM_AUTORESET.get(value, value)
        if value not in _AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {_AUTORESET_MODES}, got {pool['autoreset_mode']!r}")
        pool["autoreset_mode"] = value
    if not isinstance(pool["episode_stats"], (bool, np.bool_)):
        raise TypeError(f"episode_stats must be a bool, got {type(pool['episode_stats']).__name__}")
    pool["episode_stats"] = bool(pool["episode_stats"])


def env_seeds(seed: Any, num_envs: int) -> list[int]:
    """One seed per env, as Gymnasium's vector envs do: ``seed + i``, or one per env given, or fresh
    entropy for ``None``."""
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = int(seed)
        if seed < 0 or seed + num_envs - 1 > _MAX_SEED:
            raise ValueError(f"seed must be in [0, 2**64 - num_envs], got {seed}")
        return [seed + i for i in range(num_envs)]
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"a list of seeds needs one per env ({num_envs}), got {len(seeds)}")
        out = []
        for s in seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= int(s) <= _MAX_SEED:
                raise ValueError(f"seeds must be ints in [0, 2**64), got {s!r}")
            out.append(int(s))
        return out
    raise TypeError(f"seed must be None, an int or a list of ints, got {type(seed).__name__}")


class Unpacker:
    """Turns the native field arrays of one recv into ``(obs, reward, terminated, truncated, info)``."""

    def __init__(self, spec: EnvSpec, field_names: list[str]) -> None:
        index = {name: i for i, name in enumerate(field_names)}
        self._reward = index["reward"]
        self._terminated = index["terminated"]
        self._truncated = index["truncated"]
        if len(spec.obs_fields) == 1 and spec.obs_fields[0].name == "obs":
            self._obs: int | list[tuple[str, int]] = index["obs"]
        else:
            self._obs = [(f.key, index[f.name]) for f in spec.obs_fields]
        # info entries: (key, index) at the top level, or grouped ("players", "episode").
        self._info: list[tuple[str, int]] = []
        self._groups: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
        for name, i in index.items():
            if not name.startswith("info:"):
                continue
            key = name[5:]
            if "." in key:
                group, sub = key.split(".", 1)
                self._groups[group].append((sub, i))
            else:
                self._info.append((key, i))
        self._info_keys = tuple(key for key, _ in self._info)
        # itemgetter of one index returns the item itself, not a 1-tuple: always ask for a tuple.
        getter = operator.itemgetter(*[i for _, i in self._info]) if self._info else (lambda a: ())
        self._info_getter = getter if len(self._info) != 1 else (lambda a, g=getter: (g(a),))
        self._final_mask = index.get("info:_final")
        self._final_obs: int | list[tuple[str, int]] | None = None
        self._final_info: list[tuple[str, int]] = []
        if self._final_mask is not None:
            if isinstance(self._obs, int):
                self._final_obs = index["final:obs"]
            else:
                self._final_obs = [(f.key, index["final:" + f.name]) for f in spec.obs_fields]
            self._final_info = [
                (f.key, index["final:" + f.name]) for f in spec.info_fields if not f.per_player
            ]
        self._simple = isinstance(self._obs, int) and not self._groups and self._final_mask is None

    def obs(self, arrays: tuple) -> Any:
        if isinstance(self._obs, int):
            return arrays[self._obs]
        return {key: arrays[i] for key, i in self._obs}

    def info(self, arrays: tuple) -> dict[str, Any]:
        info = dict(zip(self._info_keys, self._info_getter(arrays)))
        for group, entries in self._groups.items():
            info[group] = {key: arrays[i] for key, i in entries}
        if "_episode" in info and not info["_episode"].any():
            # As Gymnasium's RecordEpisodeStatistics: the keys appear only when an episode ended.
            del info["_episode"], info["episode"]
        if self._final_mask is not None:
            del info["_final"]
            mask = arrays[self._final_mask]
            if mask.any():
                self._add_final(info, arrays, mask)
        return info

    def _add_final(self, info: dict[str, Any], arrays: tuple, mask: np.ndarray) -> None:
        # Gymnasium's same_step layout: an object array of final observations, and the final step's
        # info as batched arrays, each with a `_key` mask.
        final_obs = np.full(mask.shape[0], None, dtype=object)
        for row in np.flatnonzero(mask):
            if isinstance(self._final_obs, int):
                final_obs[row] = arrays[self._final_obs][row]
            else:
                final_obs[row] = {key: arrays[i][row] for key, i in self._final_obs}
        final_info: dict[str, Any] = {}
        for key, i in self._final_info:
            final_info[key] = arrays[i]
            final_info["_" + key] = mask
        info["final_obs"] = final_obs
        info["_final_obs"] = mask
        info["final_info"] = final_info
        info["_final_info"] = mask

    def unpack(self, arrays: tuple) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._simple:
            # One obs array and flat info: the common case, without the general path's branches.
            return (
                arrays[self._obs],
                arrays[self._reward],
                arrays[self._terminated],
                arrays[self._truncated],
                dict(zip(self._info_keys, self._info_getter(arrays))),
            )
        return (
            self.obs(arrays),
            arrays[self._reward],
            arrays[self._terminated],
            arrays[self._truncated],
            self.info(arrays),
        )
