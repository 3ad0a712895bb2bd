"""The PettingZoo front-end: a multi-agent pool with PettingZoo's Parallel API, batched over envs.

``PettingZooPool`` is what PettingZoo's ``parallel_env()`` is for one env, for ``num_envs`` envs at
once: ``reset()`` returns ``(observations, infos)`` and ``step(actions)`` returns ``(observations,
rewards, terminations, truncations, infos)``, each a dict keyed by agent name whose values are
arrays with one row per env of the batch. ``parallel_pool.make_pettingzoo_env`` is the one-env view,
a ``pettingzoo.ParallelEnv`` (``pettingzoo_env.py``).

Layout: the native env writes one per-player row per agent (player ``p`` is agent ``p``), in the
order its envs finished; ``info["players"]["env_id"]`` and ``["agent_index"]`` say whose each row is,
and the front-end puts them back in batch order. An agent's observation is its first
``obs_dims[p]`` values of the row (rows are zero-padded to the largest agent's size); its action is
an int (``Discrete(action_sizes[p])``) or ``action_sizes[p]`` floats in ``[0, 1]``.

Autoreset: as the other front-ends' modes. ``"next_step"`` (default): every agent stays in
``agents``; an env whose episode ended (``terminations`` or ``truncations`` True for its row) is
reset by its next step, which ignores that step's actions and returns the first observation with
zero rewards. ``"disabled"``: reset such envs yourself (``reset(env_id=...)``). ``"same_step"`` is
not offered (multi-agent envs' final observations have no row to go in).

Example:
    >>> import numpy as np, parallel_pool
    >>> env = parallel_pool.make_pettingzoo("simple_spread_v3", num_envs=4, seed=0)
    >>> obs, infos = env.reset()
    >>> obs["agent_0"].shape
    (4, 18)
    >>> actions = {agent: np.zeros(4, dtype=np.int64) for agent in env.agents}
    >>> obs, rewards, terminations, truncations, infos = env.step(actions)
    >>> rewards["agent_0"].shape, infos["agent_0"]["env_id"]
    ((4,), array([0, 1, 2, 3], dtype=int32))
    >>> env.close()
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from parallel_pool.errors import EnvError
from parallel_pool.gymnasium_env import GymnasiumEnv
from parallel_pool.spec import EnvSpec

# step()'s result: observations, rewards, terminations, truncations and infos, each keyed by agent.
PettingZooStep = tuple[
    dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, Any]
]


def agent_layout(spec: EnvSpec) -> tuple[list[str], list[int], list[int]]:
    """The agents of a multi-agent task, from its spec's tables: names, observation sizes and action
    sizes (a discrete action's number of values, or a continuous one's length)."""
    if "agent_names" not in spec.tables:
        raise ValueError(
            f"{spec.task_id} has no named agents: the PettingZoo front-end serves multi-agent tasks "
            "that declare them (the MPE family's simple_* tasks)"
        )
    names: list[str] = []
    current: list[str] = []
    for code in spec.tables["agent_names"].astype(int):
        if code == 0:
            names.append("".join(current))
            current = []
        else:
            current.append(chr(code))
    obs_dims = [int(n) for n in spec.tables["obs_dims"]]
    action_sizes = [int(n) for n in spec.tables["action_sizes"]]
    return names, obs_dims, action_sizes


class PettingZooPool:
    """A batch of multi-agent envs with PettingZoo's Parallel API; values are batched over envs.

    Sync mode (``batch_size == num_envs``): ``step(actions)`` steps every env, row ``i`` is env ``i``.
    Async mode (``batch_size < num_envs``): ``send(actions, env_id)`` returns at once, ``recv()``
    returns the first ``batch_size`` envs to finish; ``infos[agent]["env_id"]`` says which.

    ``actions[agent]`` holds one row per env sent: ints (discrete tasks) or float rows of the
    agent's action size. ``infos[agent]`` is the batch's info dict (``env_id``, ``elapsed_step``,
    ``episode`` stats when asked), the same dict for every agent.
    """

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        if kwargs.get("autoreset_mode") == "same_step":
            raise ValueError(
                "the PettingZoo front-end offers autoreset_mode 'next_step' and 'disabled', not 'same_step'"
            )
        self.pool = GymnasiumEnv(task_id, **kwargs)
        try:
            names, self.obs_dims, self.action_sizes = agent_layout(self.pool.spec)
        except ValueError:
            self.pool.close()
            raise
        self.spec = self.pool.spec
        self.possible_agents: list[str] = names
        self.agents: list[str] = list(names)
        self.num_envs = self.pool.num_envs
        self.batch_size = self.pool.batch_size
        self.is_async = self.pool.is_async
        self.autoreset_mode = self.pool.autoreset_mode
        self.render_mode = self.pool.render_mode
        self.metadata: dict[str, Any] = {
            "name": task_id,
            "is_parallelizable": True,
            "render_modes": [] if self.render_mode is None else [self.render_mode],
        }
        action_field = self.spec.action_fields[0]
        self.continuous = action_field.space == "box"
        self._num_players = self.spec.max_num_players
        self._action_row = action_field.shape[0] if self.continuous else 0
        self._observation_spaces: dict[str, gymnasium.Space] = {
            name: gymnasium.spaces.Box(-np.inf, np.inf, (dim,), np.float32) for name, dim in zip(names, self.obs_dims)
        }
        self._action_spaces: dict[str, gymnasium.Space] = {
            name: gymnasium.spaces.Box(0.0, 1.0, (size,), np.float32)
            if self.continuous
            else gymnasium.spaces.Discrete(size)
            for name, size in zip(names, self.action_sizes)
        }

    def observation_space(self, agent: str) -> gymnasium.Space:
        """One env's observation space of ``agent`` (the same object on every call)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        """One env's action space of ``agent`` (the same object on every call)."""
        return self._action_spaces[agent]

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    # --- the calls ---
    def reset(
        self, seed: Any = None, options: dict[str, Any] | None = None, env_id: Any = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """Resets every env (or those in ``env_id``) and returns ``(observations, infos)``.

        ``seed`` as the other front-ends': an int gives env ``i`` the seed ``seed + i`` (mpe2's env
        reset with that seed), a list one per env. In async mode ``reset()`` returns the first
        ``batch_size`` envs to finish resetting, as ``GymnasiumEnv.reset`` does."""
        try:
            obs, info = self.pool.reset(env_id, seed=seed, options=options)
        except EnvError as e:
            obs, info = e.result
            raise EnvError(e.errors, (self._observations(obs, info), self._infos(info))) from None
        return self._observations(obs, info), self._infos(info)

    def step(self, actions: dict[str, Any], env_id: Any = None) -> PettingZooStep:
        """Steps the envs in ``env_id`` (all if None) with ``actions`` (one row per env per agent)."""
        n = self.num_envs if env_id is None else len(np.atleast_1d(env_id))
        try:
            return self._unpack(self.pool.step(self._actions(actions, n), env_id))
        except EnvError as e:
            raise EnvError(e.errors, self._unpack(e.result)) from None

    def send(self, actions: dict[str, Any], env_id: Any = None) -> None:
        """Queues one step for each env in ``env_id`` (all if None) and returns at once."""
        n = self.num_envs if env_id is None else len(np.atleast_1d(env_id))
        self.pool.send(self._actions(actions, n), env_id)

    def recv(self, timeout: float | None = None) -> PettingZooStep:
        """Waits for the next ``batch_size`` results; ``infos[agent]["env_id"]`` says which envs."""
        try:
            return self._unpack(self.pool.recv(timeout))
        except EnvError as e:
            raise EnvError(e.errors, self._unpack(e.result)) from None

    def async_reset(self, seed: Any = None, env_id: Any = None) -> None:
        """Queues a reset of every env (or those in ``env_id``); the results come through ``recv``."""
        self.pool.async_reset(seed=seed, env_id=env_id)

    def render(self, env_id: Any = None) -> np.ndarray:
        """The frames of the envs in ``env_id``, ``(n, height, width, 3)``, as ``GymnasiumEnv.render``
        (None: env ``render_env_id`` alone); a task that does not render raises ValueError."""
        return self.pool.render(env_id)

    def close(self) -> None:
        self.pool.close()

    @property
    def closed(self) -> bool:
        return self.pool.closed

    def __enter__(self) -> PettingZooPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PettingZooPool({self.pool!r}, agents={self.possible_agents})"

    # --- conversions ---
    def _actions(self, actions: dict[str, Any], n: int) -> np.ndarray:
        """Per-agent rows as the pool's per-player action array ``(n, max_num_players[, size])``."""
        if not isinstance(actions, dict):
            raise TypeError(
                f"actions must be a dict keyed by agent ({self.possible_agents}), got {type(actions).__name__}"
            )
        unknown = sorted(set(actions) - set(self.possible_agents))
        if unknown:
            raise ValueError(f"unknown agent(s) {unknown}; the agents are {self.possible_agents}")
        if self.continuous:
            out = np.zeros((n, self._num_players, self._action_row), np.float32)
        else:
            out = np.zeros((n, self._num_players), np.int64)
        for p, agent in enumerate(self.possible_agents):
            if agent not in actions:
                raise ValueError(f"no action for agent {agent!r}: every agent acts at every step")
            size = self.action_sizes[p]
            if self.continuous:
                value = np.asarray(actions[agent], dtype=np.float32)
                if value.shape != (n, size):
                    raise ValueError(f"action of {agent!r} must have shape ({n}, {size}), got {value.shape}")
                out[:, p, :size] = value
            else:
                value = np.asarray(actions[agent])
                if value.shape != (n,) or value.dtype.kind not in "iu":
                    raise ValueError(
                        f"action of {agent!r} must be {n} integer(s), shape ({n},), got {value.dtype} {value.shape}"
                    )
                if value.size and (value.min() < 0 or value.max() >= size):
                    raise ValueError(f"action of {agent!r} must be in [0, {size}), got {value}")
                out[:, p] = value
        return out

    def _by_agent(self, rows: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Per-player rows as ``(batch, agent, ...)`` in batch order: the rows of env
        ``info["env_id"][i]`` at ``[i]``, agent ``p``'s at ``[i, p]``. (An env that raised before
        writing has no rows: zeros there.)"""
        env_ids = info["env_id"]
        if self._num_players == 1:
            return rows.reshape(len(env_ids), 1, *rows.shape[1:])
        position = np.empty(self.num_envs, np.intp)
        position[env_ids] = np.arange(len(env_ids))
        players = info["players"]
        out = np.zeros((len(env_ids), self._num_players, *rows.shape[1:]), rows.dtype)
        out[position[players["env_id"]], players["agent_index"]] = rows
        return out

    def _observations(self, obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        grouped = self._by_agent(obs, info)
        return {agent: grouped[:, p, : self.obs_dims[p]] for p, agent in enumerate(self.possible_agents)}

    def _infos(self, info: dict[str, Any]) -> dict[str, dict[str, Any]]:
        common = {key: value for key, value in info.items() if key != "players"}
        return {agent: common for agent in self.possible_agents}

    def _unpack(self, result: tuple[Any, Any, Any, Any, dict[str, Any]]) -> PettingZooStep:
        obs, _, terminated, truncated, info = result
        grouped = self._by_agent(obs, info)
        rewards = self._by_agent(info["players"]["reward"], info)
        agents = self.possible_agents
        return (
            {agent: grouped[:, p, : self.obs_dims[p]] for p, agent in enumerate(agents)},
            {agent: rewards[:, p] for p, agent in enumerate(agents)},
            {agent: terminated for agent in agents},
            {agent: truncated for agent in agents},
            self._infos(info),
        )
