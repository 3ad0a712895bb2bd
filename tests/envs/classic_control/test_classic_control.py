"""Alignment of the native classic-control tasks with Gymnasium's own implementations.

Gymnasium is the oracle. The envs draw their reset states from NumPy's stream (np_random, in C++)
with Gymnasium's calls, so env ``i`` of a pool seeded ``s`` replays ``gymnasium.make(id)`` reset
with ``seed=s + i``, episode after episode: observations, rewards, ``terminated`` and
``truncated`` **equal**, with no tolerance (test_replays_gymnasium_episodes_from_the_same_seeds).
Besides, for every transition our pool makes, a Gymnasium env is put in the same state (rebuilt
from our observation) and stepped with the same action; next observation, reward, ``terminated``
and ``truncated`` must agree. Spaces, time limits, reset distributions and the constructor kwargs
are checked against Gymnasium as well.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.classic_control.pendulum import PendulumEnv, angle_normalize

import parallel_pool

TASKS = [
    "CartPole-v0",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Acrobot-v1",
]

# Max |our next obs - Gymnasium's next obs| per transition. Our envs keep their state in float64
# and only the observation is float32, so Gymnasium restarts each step from a state rounded to
# float32 (and, for Pendulum and Acrobot, angles recovered with atan2 from float32 cos/sin). Given
# the exact same float64 state the envs agree with Gymnasium to the bit (checked while writing
# them, over 20,000 transitions per task); the errors here come from that rounding alone. Measured
# over 7 seeds x 6,000 transitions per task: CartPole 2.4e-7, MountainCar 1.2e-7,
# MountainCarContinuous 6.0e-8, Pendulum 4.8e-7, Acrobot 1.9e-6 -- each one float32 ulp of the
# largest observed value (Acrobot: velocities up to 9*pi, ulp 1.9e-6). 1e-5 leaves margin for
# an unlucky rounding, and is still far below the effect of any change to the dynamics.
OBS_ATOL = 1e-5
# Rewards are float64. Gymnasium computes Pendulum's cost from the rebuilt (rounded) state, so its
# reward differs by up to 2 * pi * 6e-8 + 0.2 * 8 * 2.4e-7 < 8e-7 (measured 5.0e-7); every other
# task's reward agreed exactly.
REWARD_ATOL = 1e-6


def gym_make(task_id: str, **kwargs: Any) -> gymnasium.Env:
    """Gymnasium's raw env: no TimeLimit (we count steps) and no order/passive checkers."""
    return gymnasium.make(task_id, **kwargs).unwrapped


def set_gym_state(task_id: str, env: gymnasium.Env, obs: np.ndarray) -> None:
    """Puts Gymnasium's env in the state our observation shows."""
    if task_id.startswith("CartPole"):
        env.state = np.array(obs, dtype=np.float64)
        env.steps_beyond_terminated = None
    elif task_id == "MountainCar-v0":
        env.state = np.array(obs, dtype=np.float64)
    elif task_id == "MountainCarContinuous-v0":
        env.state = np.array(obs, dtype=np.float32)  # Gymnasium keeps this one in float32
    elif task_id == "Pendulum-v1":
        env.state = np.array([math.atan2(obs[1], obs[0]), obs[2]], dtype=np.float64)
    elif task_id == "Acrobot-v1":
        env.state = np.array([math.atan2(obs[1], obs[0]), math.atan2(obs[3], obs[2]), obs[4], obs[5]], dtype=np.float64)
    else:
        raise KeyError(task_id)


# --- policies: (obs batch, rng) -> action batch -----------------------------------------------

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def random_policy(task_id: str) -> Policy:
    space = gym_make(task_id).action_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return lambda obs, rng: rng.integers(0, space.n, size=len(obs), dtype=np.int64)
    # 1.5x the bounds: Gymnasium clips continuous actions, so must we.
    low, high = float(space.low[0]) * 1.5, float(space.high[0]) * 1.5
    return lambda obs, rng: rng.uniform(low, high, size=(len(obs), 1)).astype(np.float32)


def goal_policy(task_id: str) -> Policy:
    """A policy that reaches the episode's end by termination, or (CartPole) survives to the time
    limit, so both kinds of ending are compared; 10% random actions keep the states varied."""
    rand = random_policy(task_id)

    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if task_id.startswith("CartPole"):
            act = (3.0 * obs[:, 2] + obs[:, 3] > 0).astype(np.int64)  # balance the pole
        elif task_id == "MountainCar-v0":
            act = np.where(obs[:, 1] >= 0, 2, 0).astype(np.int64)  # push along the velocity
        elif task_id == "MountainCarContinuous-v0":
            act = (np.sign(obs[:, 1] + 1e-12) * rng.uniform(0.5, 1.5, len(obs)))[:, None].astype(np.float32)
        elif task_id == "Acrobot-v1":
            act = np.where(obs[:, 5] > 0, 2, 0).astype(np.int64)  # pump energy into the second joint
        else:
            return rand(obs, rng)
        explore = rng.random(len(obs)) < 0.1
        act[explore] = rand(obs, rng)[explore]
        return act

    return policy


# --- the transition-by-transition comparison ----------------------------------------------------


def check_transition(task_id: str, gym: gymnasium.Env, obs: np.ndarray, action: np.ndarray, next_obs: np.ndarray,
                     reward: float, terminated: bool, truncated: bool, elapsed: int, max_steps: int,
                     stats: dict[str, Any]) -> None:
    """One of our transitions against Gymnasium's from the same state (``obs``) and action;
    ``elapsed`` is the episode's step count after it. Adds to ``stats``."""
    set_gym_state(task_id, gym, obs)
    g_obs, g_reward, g_terminated, _, _ = gym.step(action if action.ndim > 0 else int(action))
    g_truncated = elapsed >= max_steps
    err = float(np.max(np.abs(next_obs.astype(np.float64) - np.asarray(g_obs, np.float64))))
    assert err <= OBS_ATOL, (task_id, obs, action, next_obs, g_obs)
    assert abs(float(reward) - float(g_reward)) <= REWARD_ATOL, (task_id, obs, action, reward, g_reward)
    assert bool(terminated) == bool(g_terminated), (task_id, obs, action, next_obs)
    assert bool(truncated) == bool(g_truncated), (task_id, elapsed)
    stats["obs_err"] = max(stats["obs_err"], err)
    stats["reward_err"] = max(stats["reward_err"], abs(float(reward) - float(g_reward)))
    stats["transitions"] += 1
    stats["terminated"] += int(terminated)
    stats["truncated"] += int(truncated)
    stats["both"] += int(terminated and truncated)


def new_stats() -> dict[str, Any]:
    return {"obs_err": 0.0, "reward_err": 0.0, "transitions": 0, "terminated": 0, "truncated": 0, "both": 0}


def run_alignment(task_id: str, policies: list[Policy], steps: int, seed: int, **kwargs: Any) -> dict[str, Any]:
    """Steps a pool of len(policies) envs (env i follows policies[i]) and Gymnasium side by side.

    Returns the measured maximum errors and counts of episode endings.
    """
    num_envs = len(policies)
    max_steps = gymnasium.spec(task_id).max_episode_steps
    pool = parallel_pool.make(task_id, num_envs=num_envs, seed=seed, **kwargs)
    gyms = [gym_make(task_id, **kwargs) for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    stats = new_stats()
    try:
        obs, _ = pool.reset()
        elapsed = np.zeros(num_envs, dtype=np.int64)  # Gymnasium's TimeLimit counter, per env
        done = np.zeros(num_envs, dtype=bool)
        for _ in range(steps):
            actions = np.stack([policies[i](obs[i : i + 1], rng)[0] for i in range(num_envs)])
            next_obs, reward, terminated, truncated, _ = pool.step(actions)
            for i in range(num_envs):
                if done[i]:
                    # Autoreset step (next_step mode): a fresh episode, nothing to compare with.
                    assert reward[i] == 0 and not terminated[i] and not truncated[i]
                    elapsed[i] = 0
                    continue
                elapsed[i] += 1
                check_transition(task_id, gyms[i], obs[i], actions[i], next_obs[i], reward[i], terminated[i],
                                 truncated[i], int(elapsed[i]), max_steps, stats)
            done = terminated | truncated
            obs = next_obs
    finally:
        pool.close()
    print(f"{task_id} {kwargs or ''}: {stats}")
    return stats


@pytest.mark.parametrize("task_id", TASKS)
def test_alignment_random_and_goal_policies(task_id: str) -> None:
    # Two envs act at random, two follow goal_policy; 4 x 1,500 = 6,000 transitions per task.
    policies = [random_policy(task_id)] * 2 + [goal_policy(task_id)] * 2
    stats = run_alignment(task_id, policies, steps=1500, seed=0)
    assert stats["transitions"] > 5000
    if task_id != "Pendulum-v1":  # Pendulum never terminates
        assert stats["terminated"] >= 5, stats
    if task_id != "CartPole-v0" and task_id != "CartPole-v1":
        assert stats["truncated"] >= 1, stats


# --- the same seeds replay the same episodes ---------------------------------------------------


def gym_action(action: np.ndarray) -> Any:
    return int(action) if action.ndim == 0 else action


def assert_same_obs(ours: np.ndarray, theirs: np.ndarray, tag: Any) -> None:
    assert ours.dtype == np.float32 and np.asarray(theirs).dtype == np.float32, tag
    assert np.array_equal(ours, theirs), (tag, ours, theirs)


@pytest.mark.parametrize("task_id", TASKS)
def test_replays_gymnasium_episodes_from_the_same_seeds(task_id: str) -> None:
    """Env i of a pool made with seed=s against ``gymnasium.make(task_id)`` reset with seed=s + i:
    the same actions give the same transitions, exactly, across episode ends. The pool's next_step
    autoreset returns the new episode's first observation on the step after an end, where the
    reference resets without a seed (its np_random stream goes on, as a vector env's does). Then
    ``reset()`` without a seed continues every stream, and ``reset(seed=s2)`` restarts env i's at
    s2 + i, as Gymnasium's ``reset(seed=...)`` does. Tolerance 0: the same float64 dynamics and
    float32 casts as Gymnasium, from the same NumPy draws."""
    num_envs, seed, steps = 4, 11, 1000
    policies = [random_policy(task_id)] * 2 + [goal_policy(task_id)] * 2
    pool = parallel_pool.make(task_id, num_envs=num_envs, seed=seed)
    refs = [gymnasium.make(task_id) for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    ends = 0
    try:
        obs, _ = pool.reset()
        for i, ref in enumerate(refs):
            assert_same_obs(obs[i], ref.reset(seed=seed + i)[0], (task_id, "reset", i))
        done = np.zeros(num_envs, dtype=bool)
        for t in range(steps):
            actions = np.stack([policies[i](obs[i : i + 1], rng)[0] for i in range(num_envs)])
            obs, reward, terminated, truncated, _ = pool.step(actions)
            for i, ref in enumerate(refs):
                if done[i]:
                    g_obs, _ = ref.reset()
                    g_reward, g_terminated, g_truncated = 0.0, False, False
                else:
                    g_obs, g_reward, g_terminated, g_truncated, _ = ref.step(gym_action(actions[i]))
                tag = (task_id, t, i, actions[i])
                assert_same_obs(obs[i], g_obs, tag)
                assert float(reward[i]) == float(g_reward), (tag, reward[i], g_reward)
                assert (bool(terminated[i]), bool(truncated[i])) == (bool(g_terminated), bool(g_truncated)), tag
            done = terminated | truncated
            ends += int(done.sum())
        assert ends >= 4, ends  # every task ends episodes (the time limits at least) within 1,000 steps

        obs, _ = pool.reset()  # no seed: each env's stream goes on
        for i, ref in enumerate(refs):
            assert_same_obs(obs[i], ref.reset()[0], (task_id, "reset, no seed", i))
        obs, _ = pool.reset(seed=1234)
        for i, ref in enumerate(refs):
            assert_same_obs(obs[i], ref.reset(seed=1234 + i)[0], (task_id, "reset(seed=1234)", i))
    finally:
        pool.close()
        for ref in refs:
            ref.close()


# Async: time limits short enough that, in ASYNC_BATCHES batches, the random envs and the goal
# policy's reach them, and long enough for the goal policy's terminations (MountainCar's take
# ~100-170 steps, Acrobot's ~70-130).
ASYNC_MAX_STEPS = {"CartPole-v0": 60, "CartPole-v1": 60, "MountainCar-v0": 200, "MountainCarContinuous-v0": 200,
                   "Pendulum-v1": 60, "Acrobot-v1": 200}
ASYNC_BATCHES = 600


@pytest.mark.parametrize("task_id", TASKS)
def test_alignment_async(task_id: str, async_rows: Any) -> None:
    """Async mode (8 envs, batches of 4 in whatever order they finish): every env's transitions
    against Gymnasium's, row by row by info["env_id"], each env with its own policy and action
    stream; the same tolerances as sync mode (the env code is the same: only the engine's
    batching differs, which must not change a value)."""
    num_envs, max_steps = 8, ASYNC_MAX_STEPS[task_id]
    policies = [random_policy(task_id)] * 4 + [goal_policy(task_id)] * 4
    rngs = [np.random.default_rng([5, i]) for i in range(num_envs)]
    gyms = [gym_make(task_id) for _ in range(num_envs)]
    last_obs: dict[int, np.ndarray] = {}
    elapsed = np.zeros(num_envs, dtype=np.int64)
    done = np.ones(num_envs, dtype=bool)  # the first row of each env is its reset
    stats = new_stats()
    pool = parallel_pool.make(task_id, num_envs=num_envs, batch_size=4, num_threads=2, seed=5,
                              max_episode_steps=max_steps)
    try:
        rows = async_rows(pool, lambda i, obs: policies[i](obs[None], rngs[i])[0], ASYNC_BATCHES, seed=5)
        for (obs, reward, terminated, truncated, info), actions in rows:
            for k, i in enumerate(info["env_id"].tolist()):
                if done[i]:  # a reset row: the first, or next_step's autoreset
                    assert reward[k] == 0 and not terminated[k] and not truncated[k]
                    assert info["elapsed_step"][k] == 0
                    elapsed[i] = 0
                else:
                    elapsed[i] += 1
                    check_transition(task_id, gyms[i], last_obs[i], np.asarray(actions[k]), obs[k], reward[k],
                                     terminated[k], truncated[k], int(elapsed[i]), max_steps, stats)
                done[i] = terminated[k] or truncated[k]
                last_obs[i] = obs[k].copy()
    finally:
        pool.close()
    print(f"{task_id} async: {stats}")
    assert stats["transitions"] > ASYNC_BATCHES * 4 * 0.9, stats
    assert stats["truncated"] >= 1, stats
    if task_id != "Pendulum-v1":  # Pendulum never terminates
        assert stats["terminated"] >= 1, stats


def test_alignment_cartpole_reaches_time_limit() -> None:
    # The balancing policy alone keeps CartPole-v0 up for its whole 200 steps.
    stats = run_alignment("CartPole-v0", [goal_policy("CartPole-v0")] * 4, steps=1000, seed=1)
    assert stats["truncated"] >= 4, stats


@pytest.mark.parametrize(
    ("task_id", "kwargs"),
    [
        ("Pendulum-v1", {"g": 9.81}),
        ("CartPole-v1", {"sutton_barto_reward": True}),
        ("MountainCar-v0", {"goal_velocity": 0.03}),
        ("MountainCarContinuous-v0", {"goal_velocity": 0.03}),
    ],
)
def test_alignment_with_kwargs(task_id: str, kwargs: dict[str, Any]) -> None:
    policies = [random_policy(task_id)] * 2 + [goal_policy(task_id)] * 2
    stats = run_alignment(task_id, policies, steps=1000, seed=2, **kwargs)
    if task_id != "Pendulum-v1":
        assert stats["terminated"] >= 3, stats


def test_kwargs_change_the_dynamics() -> None:
    """The kwargs reach the env: with the same seed and actions, g, goal_velocity and
    sutton_barto_reward each change what the env returns."""

    def rollout(
        task_id: str, steps: int, action: np.ndarray, **kwargs: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pool = parallel_pool.make(task_id, num_envs=2, seed=3, **kwargs)
        try:
            pool.reset()
            out = [pool.step(action)[:3] for _ in range(steps)]
        finally:
            pool.close()
        return tuple(np.stack(x) for x in zip(*out))  # type: ignore[return-value]

    push = np.full((2, 1), 1.0, np.float32)
    obs_10, _, _ = rollout("Pendulum-v1", 5, push)
    obs_981, _, _ = rollout("Pendulum-v1", 5, push, g=9.81)
    assert not np.array_equal(obs_10, obs_981)

    right = np.ones(2, np.int64)
    _, rew, term = rollout("CartPole-v1", 30, right, sutton_barto_reward=True)
    assert set(np.unique(rew)) <= {0.0, -1.0} and np.all(rew[term] == -1.0) and term.any()

    # goal_velocity above the maximum speed: the goal policy, which reaches it otherwise, never terminates.
    rng = np.random.default_rng(0)
    for task_id in ("MountainCar-v0", "MountainCarContinuous-v0"):
        for goal_velocity, can_terminate in ((0.0, True), (0.5, False)):
            pool = parallel_pool.make(task_id, num_envs=2, seed=0, goal_velocity=goal_velocity)
            try:
                obs, _ = pool.reset()
                any_terminated = False
                for _ in range(400):
                    obs, _, terminated, _, _ = pool.step(goal_policy(task_id)(obs, rng))
                    any_terminated |= bool(terminated.any())
            finally:
                pool.close()
            assert any_terminated == can_terminate, (task_id, goal_velocity)


# --- spaces, specs, time limits ---------------------------------------------------------------


@pytest.mark.parametrize("task_id", TASKS)
def test_spaces_and_spec_match_gymnasium(task_id: str) -> None:
    g = gymnasium.make(task_id)
    pool = parallel_pool.make(task_id, num_envs=2)
    try:
        for ours, theirs in (
            (pool.single_observation_space, g.observation_space),
            (pool.single_action_space, g.action_space),
        ):
            assert ours == theirs, (ours, theirs)
            assert type(ours) is type(theirs)
            assert ours.dtype == theirs.dtype
            if isinstance(theirs, gymnasium.spaces.Box):
                assert ours.shape == theirs.shape
                np.testing.assert_array_equal(ours.low, theirs.low)
                np.testing.assert_array_equal(ours.high, theirs.high)
            else:
                assert (ours.n, ours.start) == (theirs.n, theirs.start)
        assert pool.single_action_space.dtype == (
            np.int64 if isinstance(g.action_space, gymnasium.spaces.Discrete) else np.float32
        )
        assert pool.single_observation_space.dtype == np.float32
    finally:
        pool.close()
    spec = parallel_pool.make_spec(task_id)
    assert spec.max_episode_steps == g.spec.max_episode_steps
    assert spec.config["max_episode_steps"] == g.spec.max_episode_steps
    assert spec.reward_threshold == g.spec.reward_threshold


@pytest.mark.parametrize(
    ("task_id", "action"),
    [
        ("Pendulum-v1", np.zeros((3, 1), np.float32)),  # never terminates
        ("MountainCar-v0", np.ones(3, np.int64)),  # no push: never reaches the goal
        ("MountainCarContinuous-v0", np.zeros((3, 1), np.float32)),
        ("Acrobot-v1", np.ones(3, np.int64)),  # no torque: hangs down
    ],
)
def test_time_limit_truncates_at_gymnasium_max_episode_steps(task_id: str, action: np.ndarray) -> None:
    limit = gymnasium.spec(task_id).max_episode_steps
    pool = parallel_pool.make(task_id, num_envs=3, seed=0)
    try:
        pool.reset()
        for _ in range(2):  # two episodes back to back
            for t in range(1, limit + 1):
                _, reward, terminated, truncated, _ = pool.step(action)
                assert not terminated.any()
                assert np.all(truncated == (t == limit)), (t, truncated)
            _, reward, terminated, truncated, _ = pool.step(action)  # the autoreset step
            assert np.all(reward == 0) and not terminated.any() and not truncated.any()
    finally:
        pool.close()


def test_max_episode_steps_override_and_both_flags() -> None:
    """max_episode_steps=5 truncates CartPole after 5 steps; an episode that terminates on its
    last allowed step reports terminated and truncated together, as Gymnasium's TimeLimit does."""
    assert parallel_pool.make_spec("CartPole-v1", max_episode_steps=5).max_episode_steps == 5
    pool = parallel_pool.make("CartPole-v1", num_envs=4, seed=0, max_episode_steps=5)
    try:
        pool.reset()
        for _ in range(3):
            for t in range(1, 6):
                _, _, terminated, truncated, _ = pool.step(np.zeros(4, np.int64))
                assert not terminated.any()  # 5 steps are too few to fall from upright
                assert np.all(truncated == (t == 5))
            pool.step(np.zeros(4, np.int64))  # autoreset
    finally:
        pool.close()

    # Always pushing right, env 0 falls after T steps; with max_episode_steps=T both flags are set.
    def steps_to_fall(limit: int) -> tuple[int, bool, bool]:
        p = parallel_pool.make("CartPole-v1", num_envs=1, seed=7, max_episode_steps=limit)
        try:
            p.reset()
            for t in range(1, limit + 1):
                _, _, term, trunc, _ = p.step(np.ones(1, np.int64))
                if term[0] or trunc[0]:
                    return t, bool(term[0]), bool(trunc[0])
        finally:
            p.close()
        raise AssertionError("no episode end")

    fall, term, trunc = steps_to_fall(500)
    assert term and not trunc and fall < 50
    assert steps_to_fall(fall) == (fall, True, True)
    assert steps_to_fall(fall - 1) == (fall - 1, False, True)


# --- reset distributions ------------------------------------------------------------------------

# Per task: how to turn an observation into the variables Gymnasium draws uniformly, and their
# ranges (from the reset() of each Gymnasium env).
RESET_VARIABLES: dict[str, tuple[Callable[[np.ndarray], np.ndarray], list[tuple[float, float]]]] = {
    "CartPole-v0": (lambda o: o, [(-0.05, 0.05)] * 4),
    "CartPole-v1": (lambda o: o, [(-0.05, 0.05)] * 4),
    "MountainCar-v0": (lambda o: o[:, :1], [(-0.6, -0.4)]),
    "MountainCarContinuous-v0": (lambda o: o[:, :1], [(-0.6, -0.4)]),
    "Pendulum-v1": (lambda o: np.stack([np.arctan2(o[:, 1], o[:, 0]), o[:, 2]], 1), [(-np.pi, np.pi), (-1.0, 1.0)]),
    "Acrobot-v1": (
        lambda o: np.stack([np.arctan2(o[:, 1], o[:, 0]), np.arctan2(o[:, 3], o[:, 2]), o[:, 4], o[:, 5]], 1),
        [(-0.1, 0.1)] * 4,
    ),
}


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(
        np.max(np.abs(np.searchsorted(a, grid, "right") / len(a) - np.searchsorted(b, grid, "right") / len(b)))
    )


@pytest.mark.parametrize("task_id", TASKS)
def test_reset_distribution(task_id: str) -> None:
    n = 2000
    pool = parallel_pool.make(task_id, num_envs=n, seed=123)
    try:
        ours, _ = pool.reset()
    finally:
        pool.close()
    g = gym_make(task_id)
    theirs = np.stack([g.reset(seed=s)[0] for s in range(n)])
    if task_id.startswith("MountainCar"):
        assert np.all(ours[:, 1] == 0) and np.all(theirs[:, 1] == 0)
    to_vars, ranges = RESET_VARIABLES[task_id]
    ours_v, theirs_v = to_vars(ours.astype(np.float64)), to_vars(theirs.astype(np.float64))
    for j, (low, high) in enumerate(ranges):
        x = ours_v[:, j]
        width = high - low
        tol = 1e-6 * max(1.0, abs(low), abs(high))  # float32 obs and atan2 of float32 cos/sin
        assert x.min() >= low - tol and x.max() <= high + tol, (j, x.min(), x.max())
        # P(no draw in the outer 1% at one end) = 0.99**2000 ~ 2e-9.
        assert x.min() < low + 0.01 * width and x.max() > high - 0.01 * width, (j, x.min(), x.max())
        mean, std = (low + high) / 2, width / math.sqrt(12)
        assert abs(x.mean() - mean) < 5 * std / math.sqrt(n), (j, x.mean())
        # The sample std of a uniform has relative standard error sqrt(0.2 / n) ~ 1%; allow 5 of them.
        assert abs(x.std() / std - 1) < 5 * math.sqrt(0.2 / n), (j, x.std(), std)
        # Same distribution as Gymnasium's: KS critical value at alpha = 1e-6 is 0.085 for 2000 + 2000.
        assert ks_statistic(x, theirs_v[:, j]) < math.sqrt(-math.log(0.5e-6) * (2 * n) / (2 * n * n)), j
    # Every env draws its own initial state.
    assert len(np.unique(ours, axis=0)) == n


class PendulumV0(PendulumEnv):  # type: ignore[misc]
    """gym 0.21's Pendulum-v0 (EnvPool's too): Gymnasium's Pendulum-v1 but for one line's place,
    the angle moving by the speed before the speed is clipped to max_speed."""

    def step(self, u: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        th, thdot = self.state
        g, m, length, dt = self.g, self.m, self.l, self.dt
        u = np.clip(u, -self.max_torque, self.max_torque)[0]
        self.last_u = u
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
        newthdot = thdot + (3 * g / (2 * length) * np.sin(th) + 3.0 / (m * length**2) * u) * dt
        newth = th + newthdot * dt
        newthdot = np.clip(newthdot, -self.max_speed, self.max_speed)
        self.state = np.array([newth, newthdot])
        return self._get_obs(), -costs, False, False, {}


def test_pendulum_v0_replays_gym_0_21s_pendulum() -> None:
    """Pendulum-v0 against Gymnasium's Pendulum with gym 0.21's step (PendulumV0), from the same
    seeds, exactly; and it differs from Pendulum-v1 once the speed reaches its clip."""
    num_envs, seed, steps = 3, 5, 600
    pool = parallel_pool.make("Pendulum-v0", num_envs=num_envs, seed=seed)
    v1 = parallel_pool.make("Pendulum-v1", num_envs=num_envs, seed=seed)
    refs = [gymnasium.wrappers.TimeLimit(PendulumV0(), 200) for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    differs = False
    try:
        obs, _ = pool.reset()
        v1.reset()
        for i, ref in enumerate(refs):
            assert_same_obs(obs[i], ref.reset(seed=seed + i)[0], ("reset", i))
        done = np.zeros(num_envs, dtype=bool)
        for t in range(steps):
            # Full torque along the motion (it spins up to the speed clip), now and then reversed.
            push = np.where(obs[:, 2:3] >= 0, 2.0, -2.0) * rng.choice([1, -1], p=[0.9, 0.1], size=(num_envs, 1))
            actions = push.astype(np.float32)
            obs, reward, terminated, truncated, _ = pool.step(actions)
            differs |= not np.array_equal(obs, v1.step(actions)[0])
            for i, ref in enumerate(refs):
                if done[i]:
                    g_obs, _ = ref.reset()
                    g_reward, g_truncated = 0.0, False
                else:
                    g_obs, g_reward, _, g_truncated, _ = ref.step(actions[i])
                assert_same_obs(obs[i], g_obs, (t, i))
                assert float(reward[i]) == float(g_reward), (t, i)
                assert (bool(terminated[i]), bool(truncated[i])) == (False, bool(g_truncated)), (t, i)
            done = terminated | truncated
        assert differs
    finally:
        pool.close()
        v1.close()
