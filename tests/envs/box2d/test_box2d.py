"""Alignment of the native Box2D tasks with Gymnasium's own (the oracle: box2d-py 2.3.8 + Gymnasium).

Gymnasium draws terrain, initial forces, wind and engine dispersion from ``np_random``; our envs
reproduce NumPy's ``Generator(PCG64(SeedSequence(seed)))`` stream in C++ and run the same Box2D
(built from the same box2d-py source with the same float settings). So the same seed gives the same
episode: every env of a pool made with ``seed=s`` is mirrored by a Gymnasium env first reset with
``seed=s + i`` (what Gymnasium's vector envs give env ``i``), both are driven by the same actions,
and observations, rewards, ``terminated`` and ``truncated`` are compared **exactly** over full
episodes (no tolerance: Box2D is deterministic and our float64 arithmetic on its float32 values
follows Gymnasium's evaluation order). Autoreset is next-step, as in Gymnasium's vector envs.

The oracle must be installed (the ``test`` extra installs box2d-py): without it these tests fail.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from async_batches import run_async_batches
from gymnasium.envs.box2d.bipedal_walker import BipedalWalkerHeuristics
from gymnasium.envs.box2d.lunar_lander import heuristic as lander_heuristic

import parallel_pool

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]


class Mirror:
    """Gymnasium's env ``i`` of a vector env: reset with ``seed + i`` once, then next-step autoreset."""

    def __init__(self, task_id: str, seed: int, **kwargs: Any) -> None:
        self.env = gymnasium.make(task_id, **kwargs)
        self.seed = seed
        self.done = True
        self.first = True
        self.last_action: Any = None  # what the async test last sent this env

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self.seed if self.first else None)
        self.first = False
        self.done = False
        return obs

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool]:
        if self.done:
            return self.reset(), 0.0, False, False
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self.done = bool(terminated or truncated)
        return obs, float(reward), bool(terminated), bool(truncated)


def as_gym_action(action: np.ndarray) -> Any:
    return int(action) if action.ndim == 0 else action


# --- policies: (one env's obs, rng) -> action ------------------------------------------------------


def random_policy(space: gymnasium.Space) -> Policy:
    if isinstance(space, gymnasium.spaces.Discrete):
        return lambda obs, rng: np.int64(rng.integers(0, space.n))
    # 1.5x the bounds: Gymnasium clips continuous actions, so must we.
    return lambda obs, rng: rng.uniform(-1.5, 1.5, size=space.shape).astype(np.float32)


def lander_policy(continuous: bool, explore: float) -> Policy:
    """Gymnasium's own heuristic (it lands), with a share of random actions to vary the states."""
    unwrapped = types.SimpleNamespace(unwrapped=types.SimpleNamespace(continuous=continuous))
    space = gymnasium.spaces.Box(-1, 1, (2,), np.float32) if continuous else gymnasium.spaces.Discrete(4)
    rand = random_policy(space)

    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if rng.random() < explore:
            return rand(obs, rng)
        act = lander_heuristic(unwrapped, obs)
        return np.asarray(act, np.float32) if continuous else np.int64(act)

    return policy


# --- the comparison -------------------------------------------------------------------------------


def new_stats() -> dict[str, int]:
    return {"transitions": 0, "terminated": 0, "truncated": 0, "positive_end": 0}


def compare(tag: Any, ours: tuple, theirs: tuple, stats: dict[str, int]) -> None:
    obs, reward, terminated, truncated = ours
    g_obs, g_reward, g_terminated, g_truncated = theirs
    assert obs.dtype == np.float32 and np.asarray(g_obs).dtype == np.float32, tag
    assert np.array_equal(obs, g_obs), (tag, obs, g_obs)
    assert float(reward) == g_reward, (tag, float(reward), g_reward)
    assert bool(terminated) == g_terminated, tag
    assert bool(truncated) == g_truncated, tag
    stats["transitions"] += 1
    stats["terminated"] += int(terminated)
    stats["truncated"] += int(truncated)
    stats["positive_end"] += int(bool(terminated) and float(reward) > 0)


def run_sync(task_id: str, policies: list[Policy], steps: int, seed: int, **kwargs: Any) -> dict[str, int]:
    """A sync pool of len(policies) envs against Gymnasium mirrors, step by step."""
    n = len(policies)
    pool = parallel_pool.make(task_id, num_envs=n, seed=seed, **kwargs)
    mirrors = [Mirror(task_id, seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    stats = new_stats()
    try:
        obs, _ = pool.reset()
        for i in range(n):
            assert np.array_equal(obs[i], mirrors[i].reset()), (task_id, kwargs, "reset", i)
        for t in range(steps):
            actions = np.stack([policies[i](obs[i], rng) for i in range(n)])
            obs, reward, terminated, truncated, _ = pool.step(actions)
            for i in range(n):
                theirs = mirrors[i].step(as_gym_action(actions[i]))
                compare((task_id, kwargs, seed, t, i), (obs[i], reward[i], terminated[i], truncated[i]), theirs, stats)
    finally:
        pool.close()
    print(f"{task_id} {kwargs}: {stats}")
    return stats


def run_async(task_id: str, policies: list[Policy], batches: int, seed: int, **kwargs: Any) -> dict[str, int]:
    """An async pool (batch_size = num_envs / 2): each env's rows, in whatever order they come,
    against its own Gymnasium mirror."""
    n = len(policies)
    pool = parallel_pool.make(task_id, num_envs=n, batch_size=n // 2, seed=seed, **kwargs)
    mirrors = [Mirror(task_id, seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    stats = new_stats()

    def next_actions(_: int, batch: tuple) -> np.ndarray:
        obs, reward, terminated, truncated, info = batch
        actions = []
        for k, i in enumerate(info["env_id"]):
            m = mirrors[i]
            if m.first:
                assert np.array_equal(obs[k], m.reset()), (task_id, "reset", i)
            else:
                theirs = m.step(as_gym_action(m.last_action))
                compare((task_id, kwargs, seed, i), (obs[k], reward[k], terminated[k], truncated[k]), theirs, stats)
            m.last_action = policies[i](obs[k], rng)
            actions.append(m.last_action)
        return np.stack(actions)

    run_async_batches(pool, batches, next_actions)
    print(f"{task_id} async {kwargs}: {stats}")
    return stats


# --- LunarLander ---------------------------------------------------------------------------------

LANDER_CASES = [
    ("LunarLander-v3", {}),
    ("LunarLanderContinuous-v3", {}),
    ("LunarLander-v3", {"enable_wind": True}),
    ("LunarLanderContinuous-v3", {"enable_wind": True, "wind_power": 20.0, "turbulence_power": 2.0}),
    ("LunarLander-v3", {"gravity": -5.0, "enable_wind": True, "wind_power": 5.0, "turbulence_power": 0.5}),
    ("LunarLander-v3", {"continuous": True, "gravity": -11.5}),
    ("LunarLanderContinuous-v3", {"continuous": False}),
]


def lander_policies(task_id: str, kwargs: dict[str, Any]) -> list[Policy]:
    continuous = kwargs.get("continuous", task_id == "LunarLanderContinuous-v3")
    space = gymnasium.make(task_id, **kwargs).action_space
    # Two envs at random (they crash or fly off), four landing with 5% random actions.
    return [random_policy(space)] * 2 + [lander_policy(continuous, 0.05)] * 4


@pytest.mark.parametrize(("task_id", "kwargs"), LANDER_CASES)
def test_lunar_lander_episodes_match_gymnasium(task_id: str, kwargs: dict[str, Any]) -> None:
    stats = run_sync(task_id, lander_policies(task_id, kwargs), steps=700, seed=3, **kwargs)
    assert stats["terminated"] >= 8, stats
    # Calm landings (the lander comes to rest: +100) are reached and compared; with wind the lander
    # may never fall asleep before the episode's end.
    if not kwargs.get("enable_wind"):
        assert stats["positive_end"] >= 1, stats


@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5])
def test_lunar_lander_many_seeds_and_time_limit(seed: int) -> None:
    # A short time limit so truncation is compared too; seeds beyond 32 bits go through NumPy's
    # SeedSequence as two words.
    policies = lander_policies("LunarLander-v3", {})
    stats = run_sync("LunarLander-v3", policies, steps=400, seed=seed, max_episode_steps=150)
    assert stats["truncated"] >= 1 and stats["terminated"] >= 1, stats


@pytest.mark.parametrize(("task_id", "kwargs"), [LANDER_CASES[0], LANDER_CASES[3]])
def test_lunar_lander_async_pool_matches_gymnasium(task_id: str, kwargs: dict[str, Any]) -> None:
    stats = run_async(task_id, lander_policies(task_id, kwargs), batches=800, seed=11, **kwargs)
    assert stats["transitions"] > 2000 and stats["terminated"] >= 4, stats


def test_lunar_lander_spaces_and_registration() -> None:
    for task_id in ("LunarLander-v3", "LunarLanderContinuous-v3"):
        pool = parallel_pool.make(task_id, num_envs=1)
        gym = gymnasium.make(task_id)
        assert pool.observation_space == gym.observation_space
        assert pool.action_space == gym.action_space
        assert pool.spec.max_episode_steps == gym.spec.max_episode_steps == 1000
        assert pool.spec.reward_threshold == gym.spec.reward_threshold
        pool.close()
    # continuous=True makes LunarLander-v3 continuous, as gymnasium.make("LunarLander-v3", continuous=True).
    pool = parallel_pool.make("LunarLander-v3", num_envs=1, continuous=True)
    assert pool.action_space == gymnasium.make("LunarLander-v3", continuous=True).action_space
    pool.close()
    # Gymnasium's constructor refuses a gravity outside (-12, 0); so does make().
    with pytest.raises(ValueError, match="gravity"):
        parallel_pool.make("LunarLander-v3", num_envs=1, gravity=-13.0)


def test_lunar_lander_vector_seeding_matches_gymnasium_vector_env() -> None:
    # Gymnasium's SyncVectorEnv.reset(seed=s) seeds env i with s + i; reset(seed=...) of our pool
    # re-seeds the same way (a new terrain, as Gymnasium's).
    gym = gymnasium.make_vec("LunarLander-v3", num_envs=3, vectorization_mode="sync")
    pool = parallel_pool.make("LunarLander-v3", num_envs=3, seed=0)
    pool.reset()
    for seed in (5, 123):
        g_obs, _ = gym.reset(seed=seed)
        obs, _ = pool.reset(seed=seed)
        assert np.array_equal(obs, g_obs)
    pool.close()
    gym.close()


# --- BipedalWalker -------------------------------------------------------------------------------


def walker_policy(explore: float) -> Policy:
    """Gymnasium's own walking heuristic (BipedalWalkerHeuristics: it walks the normal terrain to
    the time limit), one state machine per env, with a share of random actions."""
    heuristics = BipedalWalkerHeuristics()
    rand = random_policy(gymnasium.spaces.Box(-1, 1, (4,), np.float32))

    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        act = np.asarray(heuristics.step_heuristic(obs), np.float32)
        return rand(obs, rng) if rng.random() < explore else act

    return policy


def walker_policies() -> list[Policy]:
    space = gymnasium.spaces.Box(-1, 1, (4,), np.float32)
    # Two envs at random (they fall), two walking (one with 2% random actions).
    return [random_policy(space)] * 2 + [walker_policy(0.0), walker_policy(0.02)]


@pytest.mark.parametrize(
    ("task_id", "kwargs", "steps"),
    [
        # 1,650 steps: the walkers reach the 1,600-step time limit (truncated) and start again.
        ("BipedalWalker-v3", {}, 1650),
        # Stumps, stairs and pits: the heuristic falls at one, and its next episodes meet others.
        ("BipedalWalkerHardcore-v3", {}, 900),
        ("BipedalWalker-v3", {"hardcore": True}, 400),
        ("BipedalWalkerHardcore-v3", {"hardcore": False, "max_episode_steps": 300}, 700),
    ],
)
def test_bipedal_walker_episodes_match_gymnasium(task_id: str, kwargs: dict[str, Any], steps: int) -> None:
    stats = run_sync(task_id, walker_policies(), steps=steps, seed=5, **kwargs)
    assert stats["terminated"] >= 4, stats
    if (task_id == "BipedalWalker-v3" and not kwargs) or "max_episode_steps" in kwargs:
        assert stats["truncated"] >= 1, stats


def test_bipedal_walker_async_pool_matches_gymnasium() -> None:
    stats = run_async("BipedalWalkerHardcore-v3", walker_policies(), batches=600, seed=21)
    assert stats["transitions"] > 1000 and stats["terminated"] >= 2, stats


def test_bipedal_walker_spaces_and_registration() -> None:
    for task_id, max_steps in (("BipedalWalker-v3", 1600), ("BipedalWalkerHardcore-v3", 2000)):
        pool = parallel_pool.make(task_id, num_envs=1)
        gym = gymnasium.make(task_id)
        assert pool.observation_space == gym.observation_space
        assert pool.action_space == gym.action_space
        assert pool.spec.max_episode_steps == gym.spec.max_episode_steps == max_steps
        assert pool.spec.reward_threshold == gym.spec.reward_threshold
        pool.close()
