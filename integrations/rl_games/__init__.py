"""rl_games: a vecenv type and env configurations, so a YAML/dict config names a parallel_pool task.

Call ``register()`` once before building the ``Runner``. It registers the vecenv type
``"PARALLEL_POOL"`` and the env configurations ``"parallel_pool"`` (task in ``env_config``, as
rl_games' own ``envpool`` entry) and ``"parallel_pool/<task>"`` for every task::

    config:
      env_name: parallel_pool/CartPole-v1     # or: env_name: parallel_pool
      num_actors: 16                          #     env_config: {env_name: CartPole-v1}
      env_config: {seed: 0}                   # any parallel_pool.make kwarg

The pool runs in same-step autoreset mode, as rl_games expects: after a done, ``obs`` is the next
episode's first observation. ``infos`` is a dict of batches: ``time_outs`` (truncated, not
terminated: for ``value_bootstrap``), ``scores`` (the finished episode's return, where one ended,
for rl_games' ``scores/mean``), and the task's info fields (Atari's ``lives`` only with
``has_lives: True``, as rl_games' envpool adapter does).

An exception inside an env is raised from ``step``/``reset`` as ``parallel_pool.EnvError`` naming
the env ids and messages, with ``result`` the call's return value in this adapter's form
(``(obs, rewards, dones, infos)``, or ``obs``); the failed envs' rows hold zeros and are not done,
and each failed env starts a new episode on its next step. NaN passes through unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rl_games.common import env_configurations, vecenv
from rl_games.common.ivecenv import IVecEnv

import parallel_pool
from parallel_pool.errors import EnvError
from parallel_pool.integrations.common import reject_kwargs, row_info_keys

__all__ = ["CONFIG_NAME", "VECENV_TYPE", "RlGamesVecEnv", "register"]

VECENV_TYPE = "PARALLEL_POOL"
CONFIG_NAME = "parallel_pool"


class RlGamesVecEnv(IVecEnv):
    """``num_actors`` envs of a parallel_pool task as an rl_games vec env.

    ``kwargs`` are the config's ``env_config``: ``env_name`` (the task id, unless the config name
    ``parallel_pool/<task>`` gives it), ``has_lives`` (keep Atari's ``lives`` in infos), and any
    ``parallel_pool.make`` kwarg.

    Example:
        >>> import numpy as np
        >>> from parallel_pool.integrations.rl_games import RlGamesVecEnv
        >>> env = RlGamesVecEnv("parallel_pool", 4, env_name="CartPole-v1", seed=0)
        >>> env.reset().shape
        (4, 4)
        >>> obs, rewards, dones, infos = env.step(np.zeros(4, dtype=np.int64))
        >>> sorted(infos)
        ['scores', 'time_outs']
        >>> env.close()
    """

    def __init__(self, config_name: str, num_actors: int, **kwargs: Any) -> None:
        task_id = kwargs.pop("env_name", None)
        if config_name.startswith(CONFIG_NAME + "/"):
            task_id = task_id or config_name[len(CONFIG_NAME) + 1:]
        if task_id is None:
            raise ValueError("name the task: env_config: {env_name: <task id>}, or env_name: parallel_pool/<task id>")
        self.has_lives = bool(kwargs.pop("has_lives", False))
        reject_kwargs(kwargs, ("autoreset_mode", "batch_size", "num_envs"),
                      "{key} is set by the rl_games adapter (num_actors envs, same_step autoreset)")
        kwargs.setdefault("episode_stats", True)
        self.env = parallel_pool.make_gymnasium(task_id, num_envs=num_actors, autoreset_mode="same_step", **kwargs)
        self.task_id = task_id
        self.num_actors = num_actors
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        self._info_keys = row_info_keys(self.env.spec)
        if not self.has_lives and "lives" in self._info_keys:
            self._info_keys.remove("lives")
        self._scores = np.zeros(num_actors, dtype=np.float64)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, dict[str, Any]]:
        try:
            batch = self.env.step(np.asarray(actions))
        except EnvError as e:
            raise EnvError(e.errors, self._step_return(*e.result)) from None
        return self._step_return(*batch)

    def _step_return(self, obs: Any, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                     info: dict[str, Any]) -> tuple[Any, np.ndarray, np.ndarray, dict[str, Any]]:
        dones = terminated | truncated
        infos: dict[str, Any] = {key: info[key] for key in self._info_keys if key in info}
        if dones.any():
            final_info = info["final_info"]
            for key in self._info_keys:
                if key in final_info:
                    # A Python env's key may be in the final step's info only (zeros elsewhere).
                    current = info[key] if key in info else np.zeros_like(final_info[key])
                    ended = dones.reshape(dones.shape + (1,) * (current.ndim - 1))
                    infos[key] = np.where(ended, final_info[key], current)
            if "episode" in info:
                self._scores = np.where(info["_episode"], info["episode"]["r"], self._scores)
        infos["time_outs"] = truncated & ~terminated
        infos["scores"] = self._scores
        return obs, rewards, dones, infos

    def reset(self) -> Any:
        try:
            obs, _ = self.env.reset()
        except EnvError as e:
            raise EnvError(e.errors, e.result[0]) from None
        return obs

    def seed(self, seed: int) -> None:
        """Re-seeds every env (env ``i`` gets ``seed + i``) at once, with a reset."""
        self.env.reset(seed=seed)

    def get_number_of_agents(self) -> int:
        return 1

    def get_env_info(self) -> dict[str, Any]:
        return {"action_space": self.action_space, "observation_space": self.observation_space, "agents": 1}

    def close(self) -> None:
        self.env.close()


def _create(config_name: str, num_actors: int, **kwargs: Any) -> RlGamesVecEnv:
    return RlGamesVecEnv(config_name, num_actors, **kwargs)


def register() -> list[str]:
    """Registers the vecenv type and the env configurations with rl_games; returns the config names.

    Safe to call more than once; tasks registered with parallel_pool later get their
    ``parallel_pool/<task>`` entry on the next call.
    """
    vecenv.register(VECENV_TYPE, _create)
    names = [CONFIG_NAME] + [f"{CONFIG_NAME}/{task}" for task in parallel_pool.list_all_envs()]
    for name in names:
        env_configurations.register(name, {
            # The player (rl_games' evaluation) builds its env here: one env unless num_actors is given.
            "env_creator": lambda name=name, **kw: RlGamesVecEnv(name, kw.pop("num_actors", 1), **kw),
            "vecenv_type": VECENV_TYPE,
        })
    return names
