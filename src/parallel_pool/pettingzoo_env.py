"""The one-env view of a multi-agent task: a ``pettingzoo.ParallelEnv`` over a native pool of one env.

It behaves as mpe2's ``parallel_env()``: ``reset(seed=s)`` is mpe2's env reset with seed ``s``,
observations are float32 arrays of each agent's size, rewards Python floats, and when the episode
ends every agent leaves ``agents`` (call ``reset()`` to start the next one). Without ``pettingzoo``
installed, making a view raises ImportError (the batched ``PettingZooPool`` needs no PettingZoo).

Example:
    >>> import parallel_pool
    >>> env = parallel_pool.make_pettingzoo_env("simple_tag_v3", seed=0)
    >>> obs, infos = env.reset(seed=0)
    >>> env.agents
    ['adversary_0', 'adversary_1', 'adversary_2', 'agent_0']
    >>> obs, rewards, terminations, truncations, infos = env.step({a: env.action_space(a).sample() for a in env.agents})
    >>> env.close()
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from parallel_pool.pettingzoo_api import PettingZooPool

try:
    from pettingzoo import ParallelEnv
except ImportError:  # pettingzoo is optional: without it the view refuses to be made
    ParallelEnv = object

# Pool options a one-env view fixes.
_FIXED = ("num_envs", "batch_size", "autoreset_mode")


class PettingZooParallelEnv(ParallelEnv):
    """One env of a multi-agent task with PettingZoo's Parallel API (``parallel_api_test`` passes)."""

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        if ParallelEnv is object:
            raise ImportError("make_pettingzoo_env needs pettingzoo: pip install pettingzoo")
        fixed = sorted(set(kwargs) & set(_FIXED))
        if fixed:
            raise ValueError(f"a one-env view fixes {', '.join(fixed)}; use make_pettingzoo for batches")
        self._pool = PettingZooPool(task_id, num_envs=1, autoreset_mode="disabled", **kwargs)
        self.possible_agents: list[str] = list(self._pool.possible_agents)
        self.agents: list[str] = []
        self.render_mode: str | None = self._pool.pool.render_mode  # "rgb_array" for tasks that render
        self.metadata = {
            "name": task_id,
            "is_parallelizable": True,
            "render_modes": [] if self.render_mode is None else [self.render_mode],
        }
        self.observation_spaces = {a: self._pool.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self._pool.action_space(a) for a in self.possible_agents}
        self.state_space = gymnasium.spaces.Box(-np.inf, np.inf, (sum(self._pool.obs_dims),), np.float32)
        self._last_obs: dict[str, np.ndarray] = {}

    def observation_space(self, agent: str) -> gymnasium.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        obs, _ = self._pool.reset(seed=seed)
        self.agents = list(self.possible_agents)
        self._last_obs = {agent: obs[agent][0] for agent in self.possible_agents}
        return dict(self._last_obs), {agent: {} for agent in self.agents}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        if not self.agents:
            raise RuntimeError("the episode is over (no agent is left): call reset() to start the next one")
        missing = [agent for agent in self.possible_agents if agent not in actions]
        if missing:
            raise ValueError(f"no action for agent(s) {missing}: every agent acts at every step")
        batch = {agent: np.asarray(actions[agent])[None] for agent in self.possible_agents}
        obs, rewards, terminations, truncations, _ = self._pool.step(batch)
        self._last_obs = {agent: obs[agent][0] for agent in self.possible_agents}
        terminated, truncated = bool(terminations[self.agents[0]][0]), bool(truncations[self.agents[0]][0])
        agents = self.agents
        if terminated or truncated:
            self.agents = []
        return (
            {agent: self._last_obs[agent] for agent in agents},
            {agent: float(rewards[agent][0]) for agent in agents},
            {agent: terminated for agent in agents},
            {agent: truncated for agent in agents},
            {agent: {} for agent in agents},
        )

    def state(self) -> np.ndarray:
        """Every agent's last observation, concatenated (mpe2's ``state()``)."""
        if not self._last_obs:
            raise RuntimeError("call reset() first")
        return np.concatenate([self._last_obs[agent] for agent in self.possible_agents])

    def render(self) -> np.ndarray:
        """mpe2's ``rgb_array`` frame, ``(700, 700, 3)`` uint8 (tasks whose agents are all silent)."""
        if self.render_mode is None:
            raise NotImplementedError(
                f"{self.metadata['name']} does not render: mpe2 writes its speaking agents' words with "
                "pygame.freetype, which parallel_pool does not reproduce"
            )
        return self._pool.render()[0]

    def close(self) -> None:
        self._pool.close()
