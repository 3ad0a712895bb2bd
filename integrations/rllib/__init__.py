"""RLlib: each env runner steps one native pool, as its ``gymnasium.vector.VectorEnv``.

``register("CartPole-v1")`` registers the env name ``"parallel_pool/CartPole-v1"`` with
``ray.tune.registry.register_env``. RLlib's ``SingleAgentEnvRunner`` calls the creator with
``{"num_envs": num_envs_per_env_runner, **env_config}`` when the config asks for
``gym_env_vectorize_mode="vector_entry_point"``, and the creator returns a
``ParallelPoolVectorEnv`` (next-step autoreset, which RLlib's episode bookkeeping expects): the
runner's ``num_envs_per_env_runner`` envs are one native pool, not that many Python envs.

Example:
    >>> from ray.rllib.algorithms.ppo import PPOConfig
    >>> from parallel_pool.integrations.rllib import register
    >>> config = (
    ...     PPOConfig()
    ...     .environment(register("CartPole-v1"), env_config={"max_episode_steps": 500})
    ...     .env_runners(num_envs_per_env_runner=8, gym_env_vectorize_mode="vector_entry_point")
    ... )

On a cluster, ``env_runners_on_every_node(config, num_envs_per_env_runner=N)`` sets one env runner
per alive node, each asking for a whole node's CPUs so that Ray places exactly one on each node;
each runner steps one native pool of ``N`` envs with those CPUs as its threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ray.tune.registry import register_env

from parallel_pool.vector import ParallelPoolVectorEnv

__all__ = ["VECTORIZE_MODE", "env_creator", "env_runners_on_every_node", "register"]

# The RLlib setting that hands the creator ``num_envs`` and takes a VectorEnv back.
VECTORIZE_MODE = "vector_entry_point"
_PREFIX = "parallel_pool/"


def env_creator(task_id: str, **default_kwargs: Any) -> Callable[[dict[str, Any]], ParallelPoolVectorEnv]:
    """The creator RLlib calls with ``{"num_envs": N, **env_config}``: one pool of N envs.

    ``env_config`` entries (and ``default_kwargs``, which they override) are ``parallel_pool.make``
    kwargs: ``max_episode_steps``, ``num_threads``, task config, ... Seeding is RLlib's: it calls
    ``reset(seed=...)`` with a seed per env runner, which the pool honours.
    """

    def create(config: dict[str, Any]) -> ParallelPoolVectorEnv:
        kwargs = {**default_kwargs, **dict(config)}
        if "num_envs" not in kwargs:
            raise ValueError(
                f"{_PREFIX}{task_id} is a vector env: configure RLlib with "
                f".env_runners(num_envs_per_env_runner=N, gym_env_vectorize_mode={VECTORIZE_MODE!r})"
            )
        num_envs = int(kwargs.pop("num_envs"))
        return ParallelPoolVectorEnv(task_id, num_envs=num_envs, **kwargs)

    return create


def register(task_id: str, name: str | None = None, **default_kwargs: Any) -> str:
    """Registers ``task_id`` with RLlib as ``name`` (default ``"parallel_pool/<task_id>"``); returns
    the name to pass to ``AlgorithmConfig.environment``."""
    import parallel_pool
    from parallel_pool.python_envs import GYMNASIUM_PREFIX, PYTHON_ALIASES, gymnasium_spec

    # An unknown task or kwarg fails here, not in a runner. A Python env's id is looked up in
    # Gymnasium's registry (its kwargs are the env's own, checked when the pool's workers build it).
    if task_id.startswith(GYMNASIUM_PREFIX) or task_id in PYTHON_ALIASES:
        gymnasium_spec(task_id)
    else:
        parallel_pool.make_spec(task_id, **default_kwargs)
    name = name or f"{_PREFIX}{task_id}"
    register_env(name, env_creator(task_id, **default_kwargs))
    return name


def env_runners_on_every_node(config: Any, num_envs_per_env_runner: int, cpus_per_node: int | None = None) -> Any:
    """``config.env_runners(...)`` with one remote env runner on each alive node of the Ray cluster.

    Each runner asks for ``cpus_per_node`` CPUs (default: the smallest alive node's CPU count), so
    that no node can hold two of them: on nodes of one size, Ray places exactly one on each node
    (on nodes of different sizes a bigger node may get two and a smaller none: pass
    ``cpus_per_node`` then, or give the runners a custom resource each node has once). Each runner
    steps one native pool of ``num_envs_per_env_runner`` envs whose threads default to the node's
    CPUs. Call it after ``ray.init``.
    """
    import ray

    alive = [node for node in ray.nodes() if node.get("Alive")]
    if not alive:
        raise RuntimeError("env_runners_on_every_node needs a Ray cluster: call ray.init(...) first")
    if cpus_per_node is None:
        cpus_per_node = int(min(node.get("Resources", {}).get("CPU", 1) for node in alive))
    return config.env_runners(
        num_env_runners=len(alive),
        num_cpus_per_env_runner=cpus_per_node,
        num_envs_per_env_runner=num_envs_per_env_runner,
        gym_env_vectorize_mode=VECTORIZE_MODE,
    )
