"""``call``/``get_attr``/``set_attr`` of a native pool (a ``BasePoolEnv``): what an env of a C++ task
exposes by name.

A Python env's pool forwards these to the env objects in its workers (``python_envs.py``). A native
env has no Python object: its attributes are its config (``spec.config``, with each env's own
``env_kwargs``) and the few that every Gymnasium env has (``ATTRIBUTES``), and its one method is
``render``. They are fixed when the pool is made, so ``set_attr`` raises, saying so.
"""

from __future__ import annotations

from typing import Any, NoReturn

# The attributes of every env of a native pool besides its config keys.
ATTRIBUTES = ("action_space", "metadata", "np_random_seed", "observation_space", "render_mode", "spec")


def native_call(pool: Any, name: str, args: tuple, kwargs: dict[str, Any], env_ids: list[int]) -> tuple:
    """Gymnasium's ``call(name, *args, **kwargs)`` on the envs ``env_ids`` of a native pool: the
    attribute's value per env, or the method's result per env (``render`` only)."""
    if name == "render":
        if args or kwargs:
            raise TypeError("render() takes no arguments")
        return tuple(pool.render(env_ids))
    if args or kwargs:
        raise TypeError(f"{name!r} of a native env is an attribute, not a method: call it without arguments")
    return tuple(native_get(pool, name, i) for i in env_ids)


def native_get(pool: Any, name: str, env_id: int) -> Any:
    """One env's attribute ``name``."""
    if name == "np_random_seed":
        return pool._env_seeds[env_id]
    if name in ATTRIBUTES:
        return getattr(pool, name)
    if name == "P" and "P" in pool.spec.tables:
        return pool.P
    per_env = pool.spec.config.get("env_kwargs")
    if per_env and name in per_env[env_id]:
        return per_env[env_id][name]
    if name in pool.spec.env_config:
        return pool.spec.env_config[name]
    raise AttributeError(
        f"a {pool.task_id} env has no attribute {name!r}: a native env's attributes are its config keys "
        f"({', '.join(sorted(pool.spec.env_config)) or 'none'}) and {', '.join(ATTRIBUTES)}; its method is render"
    )


def native_set(pool: Any, name: str) -> NoReturn:
    """A native env's attributes are fixed: the error that says how to get another value."""
    what = "a config key" if name in pool.spec.env_config else "not an attribute it has"
    raise AttributeError(
        f"cannot set {name!r} on a native {pool.task_id} env ({what}): a native env's config is fixed when "
        f"the pool is made; make a new pool with {name}=... (or env_kwargs=[...] for one value per env)"
    )
