"""Making pools and specs by task id, registering new task ids, and listing every task with Gymnasium.

Each task is registered with Gymnasium as ``parallel_pool/<task id>``, with a vector entry point,
so ``gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=8)`` returns our ``VectorEnv``. The
registration reads the task's metadata only: it builds no spec (building one compiles a MuJoCo model).

Example:
    >>> import parallel_pool
    >>> parallel_pool.register("CartPole-long", "CartPole-v1", max_episode_steps=2000)
    ['CartPole-long']
    >>> env = parallel_pool.make("CartPole-long", num_envs=2)
    >>> env.config["max_episode_steps"]
    2000
    >>> env.close()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium

from parallel_pool import _native, tasks
from parallel_pool.base import BasePoolEnv
from parallel_pool.dm_env import DmEnv
from parallel_pool.families import load_env_library
from parallel_pool.gymnasium_env import GymEnv, GymnasiumEnv
from parallel_pool.options import resolve
from parallel_pool.pettingzoo_api import PettingZooPool
from parallel_pool.pettingzoo_env import PettingZooParallelEnv
from parallel_pool.python_envs import GYMNASIUM_PREFIX, PYTHON_ALIASES, PythonEnvSource, gymnasium_spec
from parallel_pool.spec import EnvSpec

# make(env_type=...) -> the front-end it makes.
_ENV_TYPES: dict[str, type[BasePoolEnv]] = {"gymnasium": GymnasiumEnv, "gym": GymEnv, "dm": DmEnv}
GYMNASIUM_NAMESPACE = "parallel_pool"


def make(task_id: str, env_type: str = "gymnasium", **kwargs: Any) -> BasePoolEnv:
    """Makes a pool of ``num_envs`` envs of ``task_id``.

    ``env_type`` is ``"gymnasium"`` (default), ``"gym"`` or ``"dm"``. Common kwargs: ``num_envs``,
    ``batch_size`` (default ``num_envs``: sync), ``num_threads`` (0: one per CPU), ``seed``,
    ``max_episode_steps``, ``thread_affinity_offset``, ``autoreset_mode``, ``episode_stats``; plus
    the task's own config (``parallel_pool.make_spec(task_id).config`` lists them all).

    Example:
        >>> import parallel_pool
        >>> env = parallel_pool.make("Pendulum-v1", num_envs=8, batch_size=4, seed=0, g=9.81)
        >>> env.close()
    """
    if env_type not in _ENV_TYPES:
        raise ValueError(f"env_type must be one of {sorted(_ENV_TYPES)}, got {env_type!r}")
    return _ENV_TYPES[env_type](task_id, **kwargs)


def make_gymnasium(task_id: str, **kwargs: Any) -> GymnasiumEnv:
    """``make(task_id, env_type="gymnasium", ...)``."""
    return GymnasiumEnv(task_id, **kwargs)


def make_gym(task_id: str, **kwargs: Any) -> GymEnv:
    """``make(task_id, env_type="gym", ...)``."""
    return GymEnv(task_id, **kwargs)


def make_dm(task_id: str, **kwargs: Any) -> DmEnv:
    """``make(task_id, env_type="dm", ...)``."""
    return DmEnv(task_id, **kwargs)


def make_pettingzoo(task_id: str, **kwargs: Any) -> PettingZooPool:
    """Makes a pool of ``num_envs`` envs of a multi-agent task (the MPE family's) with PettingZoo's
    Parallel API, batched: dicts keyed by agent whose values have one row per env. Kwargs as
    ``make``'s (``autoreset_mode`` ``"next_step"`` or ``"disabled"``); ``pettingzoo_api.py`` has the
    details.

    Example:
        >>> import parallel_pool
        >>> env = parallel_pool.make_pettingzoo("simple_adversary_v3", num_envs=8, batch_size=4, seed=0)
        >>> env.possible_agents
        ['adversary_0', 'agent_0', 'agent_1']
        >>> env.close()
    """
    return PettingZooPool(task_id, **kwargs)


def make_pettingzoo_env(task_id: str, **kwargs: Any) -> PettingZooParallelEnv:
    """Makes one env of a multi-agent task as a ``pettingzoo.ParallelEnv`` (needs ``pettingzoo``),
    the drop-in for mpe2's ``<task>.parallel_env(**kwargs)``; kwargs as ``make``'s but ``num_envs``,
    ``batch_size`` and ``autoreset_mode`` (a view is one env; its episode ends as PettingZoo's do).

    Example:
        >>> import parallel_pool
        >>> env = parallel_pool.make_pettingzoo_env("simple_spread_v3", N=4)
        >>> obs, infos = env.reset(seed=0)
        >>> sorted(obs)
        ['agent_0', 'agent_1', 'agent_2', 'agent_3']
        >>> env.close()
    """
    return PettingZooParallelEnv(task_id, **kwargs)


def make_python(
    envs: str | Sequence[Callable[[], gymnasium.Env]], env_type: str = "gymnasium", **kwargs: Any
) -> BasePoolEnv:
    """Makes a pool of Python envs (any ``gymnasium.Env``), each run in a worker process, behind the
    same API as ``make``'s native pools (``python_envs.py`` has the design).

    ``envs`` is a Gymnasium env id (each env is ``gymnasium.make(envs, **kwargs)``, kwargs that are
    not pool options going to ``gymnasium.make``; ``make("gymnasium:<id>")`` is the same) or a list of
    factories, one per env, as ``AsyncVectorEnv`` takes (picklable with cloudpickle). Pool kwargs as
    ``make``'s (``num_envs``, ``batch_size``, ``seed``, ``autoreset_mode``, ``episode_stats``,
    ``num_threads``: default two per worker, at most one per env), plus ``num_workers`` (processes;
    default one per CPU but one, at least 1 and at most ``num_envs``), and, with an env id,
    ``env_kwargs`` (one dict per env, over the common kwargs), ``max_episode_steps`` and ``render_mode``.

    Example:
        >>> import gymnasium, parallel_pool
        >>> env = parallel_pool.make_python([lambda: gymnasium.make("CartPole-v1")] * 2, seed=0)
        >>> obs, info = env.reset()
        >>> obs.shape
        (2, 4)
        >>> env.close()
    """
    if env_type not in _ENV_TYPES:
        raise ValueError(f"env_type must be one of {sorted(_ENV_TYPES)}, got {env_type!r}")
    if isinstance(envs, str):
        env_id = envs[len(GYMNASIUM_PREFIX):] if envs.startswith(GYMNASIUM_PREFIX) else envs
        source = PythonEnvSource(env_id=env_id)
    else:
        source = PythonEnvSource(env_fns=list(envs))
    return _ENV_TYPES[env_type](source, **kwargs)


def make_spec(task_id: str, spec_class: type[EnvSpec] = EnvSpec, **kwargs: Any) -> EnvSpec:
    """The spec a pool made with these kwargs would have, without making the pool (an instance of
    ``spec_class``, an ``EnvSpec`` subclass)."""
    base_id, pool, env_config = resolve(task_id, kwargs)
    spec = spec_class(task_id, _native.make_spec(base_id, env_config), pool)
    spec.apply_render_size()
    return spec


def register(task_id: str, base_task: str | None = None, *, library: str | None = None,
             **default_kwargs: Any) -> list[str]:
    """Registers new task ids; returns them.

    - ``register("CartPole-long", "CartPole-v1", max_episode_steps=2000)``: an alias of a task with
      other defaults.
    - ``register("", library="/path/libmy_env.so")``: loads a C++ env library built outside this
      repository against ``parallel_pool.get_include()``; it registers its own task ids through
      its ``parallel_pool_register`` function (``task_id`` is ignored and may be empty).
    - ``register("CartPole-py", "gymnasium:CartPole-v1", num_workers=2)``: a name for a Python env
      (any Gymnasium id, ``"module:MyEnv-v0"`` too) with default kwargs, run by the Python-env
      backend: ``make("CartPole-py")``, and ``gymnasium.make_vec("parallel_pool/CartPole-py")``,
      which is how ``make_vec`` names a Python env. Its kwargs are checked when a pool is made.

    Each new id is also registered with Gymnasium as ``parallel_pool/<id>`` for ``gymnasium.make_vec``.
    """
    if library is not None:
        if base_task is not None or default_kwargs:
            raise ValueError("register(library=...) takes no base_task or default kwargs")
        path = os.fspath(library)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no env library at {path!r}")
        new_ids = load_env_library(os.path.abspath(path))
    else:
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("task_id must be a non-empty str")
        if base_task is None:
            raise ValueError("register(task_id, base_task, **defaults) needs the task to alias")
        if task_id in tasks.list_all_envs() or task_id in PYTHON_ALIASES:
            raise ValueError(f"task id {task_id!r} is already registered")
        if base_task.startswith(GYMNASIUM_PREFIX) or base_task in PYTHON_ALIASES:
            gymnasium_spec(base_task)  # an unknown Gymnasium id fails now
            base, base_kwargs = PYTHON_ALIASES.get(base_task, (base_task, {}))
            PYTHON_ALIASES[task_id] = (base, {**base_kwargs, **default_kwargs})
        else:
            resolve(base_task, default_kwargs)  # validates the base task and the kwargs' names and types now
            tasks.add_alias(task_id, base_task, default_kwargs)
        new_ids = [task_id]
    register_with_gymnasium(new_ids)
    return new_ids


def register_with_gymnasium(task_ids: Iterable[str]) -> None:
    """Registers each task as ``parallel_pool/<task id>`` with Gymnasium (once; a known id is skipped).

    Reads each task's metadata (its reward threshold) without building its spec. The Gymnasium
    plug-in (``_parallel_pool_gymnasium``) registers the installed tasks the same way, from the
    build-time manifest, when Gymnasium is imported; the ids it registered are skipped here.
    ``gymnasium.make`` (one env) raises an error that names ``make_vec``.
    """
    for task_id in task_ids:
        env_id = f"{GYMNASIUM_NAMESPACE}/{task_id}"
        if env_id in gymnasium.registry or "/" in task_id:
            continue  # registered, or EnvPool's "phys2d/..." ids: Gymnasium's ids take one namespace
        if task_id in PYTHON_ALIASES:
            threshold = gymnasium_spec(task_id).reward_threshold
        else:
            threshold = tasks.task_info(task_id)["reward_threshold"]
        gymnasium.register(
            id=env_id,
            entry_point="parallel_pool.vector:make_single_env",
            vector_entry_point="parallel_pool.vector:make_vector_env",
            kwargs={"task_id": task_id},
            max_episode_steps=None,
            reward_threshold=threshold,
        )
