"""The keyword arguments of ``make``: pool options, the task's own config, autoreset modes and seeds.

Python owns the kwargs: their names, their types, their defaults and the derivation of one seed per
env. The ranges of the pool options (``num_envs >= 1``, ``batch_size <= num_envs``, ...) are the
native core's to check, when it builds the pool.

Example:
    >>> from parallel_pool import options
    >>> base_id, pool, env_config = options.resolve("CartPole-v1", {"num_envs": 4, "max_episode_steps": 100})
    >>> pool["batch_size"], env_config
    (4, {'max_episode_steps': 100})
    >>> options.env_seeds(7, 3)
    [7, 8, 9]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from parallel_pool import tasks

# Keyword arguments every task accepts, with their defaults; the rest are the task's own config.
POOL_DEFAULTS: dict[str, Any] = {
    "num_envs": 1,
    "batch_size": None,
    "num_threads": 0,
    "seed": None,
    "thread_affinity_offset": -1,
    "autoreset_mode": "next_step",
    "episode_stats": False,
    # One dict of the task's own kwargs per env, over the common ones (a different gravity or map
    # per env); they may change an env's dynamics, not its spaces.
    "env_kwargs": None,
    # EnvPool's render size: render() returns (render_height, render_width, 3) frames, the task's
    # frame shrunk with OpenCV's INTER_AREA (base.py); 0: the task's own size. A family that sizes
    # its own frames takes them as its config instead (ViZDoom's keys; MuJoCo's width/height).
    "render_width": 0,
    "render_height": 0,
    # The env render() draws when it is given no env ids (EnvPool's render_env_id).
    "render_env_id": 0,
}

# Families whose renderer draws at the size their config asks for (width, height): there,
# render_width/render_height are synonyms of those keys rather than a resize of the frame.
_RENDER_SIZE_SYNONYMS = {"mujoco": ("width", "height"), "dm_control": ("width", "height")}

AUTORESET_MODES = ("next_step", "same_step", "disabled")
# Gymnasium's AutoresetMode values, accepted as well as our names.
_GYMNASIUM_AUTORESET = {"NextStep": "next_step", "SameStep": "same_step", "Disabled": "disabled"}
_MAX_SEED = 2**64 - 1


def gymnasium_autoreset_mode(mode: str) -> AutoresetMode:
    """Our autoreset mode name as Gymnasium's ``AutoresetMode``."""
    return {v: AutoresetMode(k) for k, v in _GYMNASIUM_AUTORESET.items()}[mode]


def resolve(task_id: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Splits kwargs into pool options and env config, applying defaults; rejects unknown keys.

    Returns the native task id (an alias's kwargs are applied under the caller's), the pool options
    (every key of ``POOL_DEFAULTS``, ``batch_size`` resolved) and the env config (only the keys given).
    """
    if not isinstance(task_id, str):
        raise TypeError(f"task_id must be a str, got {type(task_id).__name__}")
    base_id, alias_kwargs = tasks.lookup(task_id)
    kwargs = {**alias_kwargs, **kwargs}
    info = tasks.task_info(task_id)
    env_defaults = info["defaults"]
    kwargs = _render_size_synonyms(task_id, info.get("family"), kwargs)
    kwargs = _fixed_envpool_keys(task_id, info.get("family"), kwargs, env_defaults)
    unknown = sorted(set(kwargs) - set(POOL_DEFAULTS) - set(env_defaults))
    if unknown:
        valid = ", ".join(sorted(set(POOL_DEFAULTS) | set(env_defaults)))
        raise ValueError(f"unknown keyword argument(s) {', '.join(unknown)} for {task_id!r}; valid ones: {valid}")
    # A key the task declares itself (ViZDoom's render_width) is its config, not a pool option.
    pool = {k: v if k in env_defaults else kwargs.get(k, v) for k, v in POOL_DEFAULTS.items()}
    env = _check_env_config(task_id, {k: kwargs[k] for k in env_defaults if k in kwargs}, env_defaults)
    _check_pool_options(pool)
    if pool["env_kwargs"] is not None:
        per_env = []
        for i, own in enumerate(pool["env_kwargs"]):
            bad = sorted(set(own) - set(env_defaults))
            if bad:
                raise ValueError(
                    f"env_kwargs[{i}]: unknown or pool-wide keyword argument(s) {', '.join(bad)} for {task_id!r}; "
                    f"valid per env: {', '.join(sorted(env_defaults))}"
                )
            per_env.append(_check_env_config(task_id, dict(own), env_defaults))
        pool["env_kwargs"] = per_env
    return base_id, pool, env


def _fixed_envpool_keys(
    task_id: str, family: str | None, kwargs: dict[str, Any], env_defaults: dict[str, Any]
) -> dict[str, Any]:
    """EnvPool's Atari ``use_inter_area_resize``, taken and dropped where it changes nothing: our
    Atari resizes with an area filter (OpenCV's INTER_AREA, EnvPool's True), and a frame kept at the
    screen's 210x160 is not resized at all. EnvPool's False resizes bilinearly, which is not built."""
    if family != "atari" or "use_inter_area_resize" not in kwargs:
        return kwargs
    kwargs = dict(kwargs)
    area = kwargs.pop("use_inter_area_resize")
    size = tuple(kwargs.get(k, env_defaults[k]) for k in ("img_height", "img_width"))
    if not area and size != (210, 160):
        raise ValueError(f"{task_id}: use_inter_area_resize=False (a bilinear resize) is not supported; "
                         "the frames are resized with an area filter (True), or kept at 210x160")
    return kwargs


def _render_size_synonyms(task_id: str, family: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """render_width/render_height as the keys of a family that renders at its config's size
    (MuJoCo's width/height); 0 there keeps the config's default, as it means the native size."""
    keys = _RENDER_SIZE_SYNONYMS.get(family or "")
    if keys is None:
        return kwargs
    kwargs = dict(kwargs)
    for ours, theirs in zip(("render_width", "render_height"), keys):
        if ours not in kwargs:
            continue
        value = check_render_size(ours, kwargs.pop(ours))
        if value == 0:
            continue
        if theirs in kwargs and kwargs[theirs] != value:
            raise ValueError(f"{task_id}: {ours}={value} and {theirs}={kwargs[theirs]!r} disagree; "
                             f"{ours} is a synonym of {theirs} here (the renderer draws at that size)")
        kwargs[theirs] = value
    return kwargs


def _check_env_config(task_id: str, env: dict[str, Any], env_defaults: dict[str, Any]) -> dict[str, Any]:
    for key, value in env.items():
        if isinstance(env_defaults[key], str):
            env[key] = value = _as_config_str(key, value)
        _check_config_type(task_id, key, value, env_defaults[key])
    return env


def _as_config_str(key: str, value: Any) -> Any:
    """A str key's value as the native config holds it: None (not given, e.g. FrozenLake's
    desc=None, map_name=None) is "", a sequence of str (desc=["SFFF", ...]) its lines joined
    by "\\n", and a dict of name -> (n, min, max) (EnvPool's ViZDoom delta_button_config)
    "NAME n min max;..."."""
    if value is None:
        return ""
    if isinstance(value, dict):
        entries = []
        for name, steps in value.items():
            try:
                count, low, high = steps
                ok = (isinstance(name, str) and name and not set(name) & set(" ;") and not isinstance(count, bool)
                      and int(count) == count and count >= 0)
                entries.append(f"{name} {int(count)} {float(low)!r} {float(high)!r}")
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(f"{key} must be a dict of button name -> (n >= 0, min, max), "
                                 f"got {{{name!r}: {steps!r}}}")
        return ";".join(entries)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, bytes)) for v in value):
        return "\n".join(v.decode() if isinstance(v, bytes) else v for v in value)
    return value


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


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return int(value)


def check_render_size(name: str, value: Any) -> int:
    """A render_width/render_height: an int >= 0 (0: the task's own size). ValueError otherwise,
    a wrong type included (EnvPool's size is a plain int config value)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be an int >= 0 (0: the task's own frame size), got {value!r}")
    return int(value)


def _check_pool_options(pool: dict[str, Any]) -> None:
    # Types only: the native pool checks the ranges (and raises ValueError) when it is built.
    pool["num_envs"] = _check_int("num_envs", pool["num_envs"])
    if pool["batch_size"] is None:
        # The core applies the same default; it is resolved here too because make_spec() reports
        # the pool options of a pool it never builds.
        pool["batch_size"] = pool["num_envs"]
    pool["batch_size"] = _check_int("batch_size", pool["batch_size"])
    pool["num_threads"] = _check_int("num_threads", pool["num_threads"])
    pool["thread_affinity_offset"] = _check_int("thread_affinity_offset", pool["thread_affinity_offset"])
    if pool["autoreset_mode"] not in AUTORESET_MODES:
        # Accept Gymnasium's AutoresetMode enum as well as its string value.
        value = getattr(pool["autoreset_mode"], "value", pool["autoreset_mode"])
        value = _GYMNASIUM_AUTORESET.get(value, value)
        if value not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {AUTORESET_MODES}, got {pool['autoreset_mode']!r}")
        pool["autoreset_mode"] = value
    if not isinstance(pool["episode_stats"], (bool, np.bool_)):
        raise TypeError(f"episode_stats must be a bool, got {type(pool['episode_stats']).__name__}")
    pool["episode_stats"] = bool(pool["episode_stats"])
    pool["render_env_id"] = _check_int("render_env_id", pool["render_env_id"])
    if not 0 <= pool["render_env_id"] < max(pool["num_envs"], 1):
        raise ValueError(f"render_env_id must be an env id in [0, num_envs={pool['num_envs']}), "
                         f"got {pool['render_env_id']}")
    for key in ("render_width", "render_height"):
        # The frame's bounds are known only with the task's frame (BasePoolEnv checks them).
        pool[key] = check_render_size(key, pool[key])
    env_kwargs = pool["env_kwargs"]
    if env_kwargs is not None:
        if not isinstance(env_kwargs, (list, tuple)) or not all(isinstance(d, dict) for d in env_kwargs):
            raise TypeError(f"env_kwargs must be a list of dicts, one per env, got {type(env_kwargs).__name__}")
        if len(env_kwargs) != pool["num_envs"]:
            raise ValueError(f"env_kwargs needs one dict per env ({pool['num_envs']}), got {len(env_kwargs)}")
        pool["env_kwargs"] = [dict(d) for d in env_kwargs]


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
