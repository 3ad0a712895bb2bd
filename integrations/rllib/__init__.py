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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ray.tune.registry import register_env

from parallel_pool.vector import ParallelPoolVectorEnv

__all__ = ["VECTORIZE_MODE", "env_creator", "register"]

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
