"""Tianshou 2.x: TianshouVectorEnv under Collector/AsyncCollector, against DummyVectorEnv on
Gymnasium's CartPole, a DQN that solves CartPole, and the high-level API's EnvFactory."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import AsyncCollector, Batch, Collector, VectorReplayBuffer
from tianshou.env import BaseVectorEnv, DummyVectorEnv
from tianshou.highlevel.env import DiscreteEnvironments, EnvMode
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from parallel_pool.integrations.tianshou import (
    ParallelPoolEnvFactory,
    PoolSingleEnv,
    TianshouVectorEnv,
)

MAX_STEPS = 30  # short episodes: time limits as well as terminations
X_LIMIT, THETA_LIMIT = 2.4, 12 * 2 * np.pi / 360  # CartPole's termination bounds
RESET_BOUND = 0.05  # CartPole's reset distribution: U(-0.05, 0.05) per state variable


class UniformPolicy(DiscreteQLearningPolicy):
    """Acts uniformly at random (epsilon 1), through the policy path rather than ``random=True``.

    Tianshou 2.0.1's AsyncCollector indexes each env's "policy" entry and hidden state, and fails
    (on its own DummyVectorEnv too) for policies without them, as feed-forward ones and
    ``random=True`` are; this policy returns both.
    """

    def forward(self, batch: Batch, state: Any = None, model: Any = None) -> Batch:
        result = super().forward(batch, None, model)
        result.policy = Batch(tag=np.zeros(len(batch.obs)))
        result.state = np.zeros((len(batch.obs), 1), dtype=np.float32)
        return result


def _policy(env: BaseVectorEnv) -> DQN:
    torch.manual_seed(0)
    space = env.action_space[0]
    net = Net(state_shape=(4,), action_shape=space.n, hidden_sizes=[16])
    policy = UniformPolicy(model=net, action_space=space, eps_training=1.0, eps_inference=1.0)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3))


def _check_buffer(buffer: VectorReplayBuffer, num_envs: int) -> dict[str, int]:
    """Each env's transitions chain: the next obs follows obs_next, except after an episode end,
    where obs_next is the true last observation and the next obs a fresh reset."""
    counts = {"terminated": 0, "truncated": 0}
    for sub in buffer.buffers[:num_envs]:
        batch = sub[np.arange(len(sub))]
        for t in range(len(sub)):
            if batch.terminated[t]:
                counts["terminated"] += 1
                x, theta = batch.obs_next[t][0], batch.obs_next[t][2]
                assert abs(x) > X_LIMIT or abs(theta) > THETA_LIMIT
            elif batch.truncated[t]:
                counts["truncated"] += 1
            if batch.done[t] and t + 1 < len(sub):
                assert np.all(np.abs(batch.obs[t + 1]) <= RESET_BOUND)
            elif t + 1 < len(sub):
                np.testing.assert_array_equal(batch.obs[t + 1], batch.obs_next[t])
    return counts


# The Python backend in async mode only (the costlier one to get right; 300 episodes take ~20 s).
@pytest.mark.parametrize("wait_num, task", [(None, "CartPole-v1"), (3, "CartPole-v1"), (3, "gymnasium:CartPole-v1")])
def test_collector_matches_dummy_vector_env(wait_num: int | None, task: str) -> None:
    """Random-policy episode statistics agree with DummyVectorEnv's on Gymnasium's CartPole; ours
    the native task, or Gymnasium's own env on the Python backend (``gymnasium:<id>``)."""
    n = 6
    ours = TianshouVectorEnv(task, num_envs=n, wait_num=wait_num, seed=0, max_episode_steps=MAX_STEPS)
    ref = DummyVectorEnv([lambda: gym.make("CartPole-v1", max_episode_steps=MAX_STEPS) for _ in range(n)],
                         wait_num=wait_num)
    ref.seed(0)
    ours.seed(0)
    stats = {}
    for name, venv in (("ours", ours), ("ref", ref)):
        buffer = VectorReplayBuffer(20_000, n)
        collector_cls = AsyncCollector if wait_num else Collector
        with pytest.warns(UserWarning) if wait_num else _no_warning():
            collector = collector_cls(_policy(venv), venv, buffer, exploration_noise=True)
        collector.reset(gym_reset_kwargs={"seed": 1})
        result = collector.collect(n_episode=300)
        stats[name] = result
        counts = _check_buffer(buffer, n)
        assert counts["terminated"] > 100 and counts["truncated"] > 10, counts
    ours_returns, ref_returns = stats["ours"].returns, stats["ref"].returns
    assert len(ours_returns) >= 300 and len(ref_returns) >= 300
    # Means agree within noise (5 standard errors of the difference), and the spreads are alike.
    se = np.sqrt(ours_returns.var() / len(ours_returns) + ref_returns.var() / len(ref_returns))
    assert abs(ours_returns.mean() - ref_returns.mean()) < 5 * se, (ours_returns.mean(), ref_returns.mean())
    assert 0.8 < ours_returns.std() / ref_returns.std() < 1.25
    np.testing.assert_array_equal(stats["ours"].lens, stats["ours"].returns)  # reward 1 per step
    assert ((stats["ours"].lens == MAX_STEPS).mean() - (stats["ref"].lens == MAX_STEPS).mean()) < 0.1
    ours.close()


class _no_warning:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_n_episode_collect_drops_surplus_envs() -> None:
    """Near the end of an n_episode collect the Collector steps a subset of the envs."""
    envs = TianshouVectorEnv("CartPole-v1", num_envs=4, seed=0)
    collector = Collector(_policy(envs), envs, VectorReplayBuffer(5_000, 4))
    collector.reset()
    for _ in range(3):
        result = collector.collect(n_episode=7, random=True)
        assert result.n_collected_episodes == 7
    result = collector.collect(n_step=40, random=True)
    assert result.n_collected_steps == 40
    _check_buffer(collector.buffer, 4)
    envs.close()


def test_vector_env_api() -> None:
    envs = TianshouVectorEnv("CartPole-v1", num_envs=4, seed=0, max_episode_steps=5)
    assert isinstance(envs, BaseVectorEnv) and len(envs) == 4 and not envs.is_async
    assert envs.observation_space[0] == gym.make("CartPole-v1").observation_space
    assert [s.n for s in envs.action_space] == [2, 2, 2, 2]
    assert envs.get_env_attr("max_episode_steps", [1, 2]) == [5, 5]
    envs.set_env_attr("note", "x", 1)
    assert envs.get_env_attr("note", 1) == ["x"]
    with pytest.raises(AttributeError):
        envs.set_env_attr("max_episode_steps", 9)
    ref = DummyVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(4)])
    assert envs.seed(3) == ref.seed(3)  # seeds the action samplers, as Tianshou's workers do
    assert [s.sample() for s in envs.action_space] == [s.sample() for s in ref.action_space]
    obs, info = envs.reset(seed=0)
    assert obs.shape == (4, 4) and [i["env_id"] for i in info] == [0, 1, 2, 3]
    obs2, _ = envs.reset(seed=0)
    np.testing.assert_array_equal(obs, obs2)
    obs_sub, info_sub = envs.reset([3, 1], seed=0)  # a real reset of a subset, rows in the order asked
    np.testing.assert_array_equal(obs_sub, obs[[3, 1]])
    assert [i["env_id"] for i in info_sub] == [3, 1]
    for _ in range(5):
        obs_next, rew, terminated, truncated, info = envs.step(np.zeros(4, dtype=np.int64))
        assert info.dtype == object and [i["env_id"] for i in info] == [0, 1, 2, 3]
    assert truncated.all()
    # Tianshou sees the episode's last observation; reset() hands over the next episode's first.
    assert not np.any(np.all(np.abs(obs_next) <= RESET_BOUND, axis=1))
    first, _ = envs.reset([2, 0])
    assert np.all(np.abs(first) <= RESET_BOUND)
    with pytest.raises(ValueError, match="action"):
        envs.step(None)
    assert [frame.shape for frame in envs.render()] == [(400, 600, 3)] * 4  # CartPole draws Gymnasium's frames
    envs.close()
    quiet = TianshouVectorEnv("Faulty-v0", num_envs=2, seed=0)  # a task that draws no frames
    quiet.reset()
    assert quiet.render() == [None] * 2
    quiet.close()
    rendering = TianshouVectorEnv("GuessingGame-v0", num_envs=2, seed=0, max_num_players=1)
    rendering.reset()
    frames = rendering.render()
    assert len(frames) == 2 and all(f.shape == (8, 8, 3) for f in frames)
    np.testing.assert_array_equal(np.stack(frames), rendering.pool.render(np.arange(rendering.pool.num_envs)))
    rendering.close()
    with pytest.raises(AssertionError):
        envs.step(np.zeros(4, dtype=np.int64))

    with pytest.raises(ValueError, match="multiple"):
        TianshouVectorEnv("CartPole-v1", num_envs=5, wait_num=2)
    with pytest.raises(ValueError, match="timeout"):
        TianshouVectorEnv("CartPole-v1", num_envs=4, wait_num=2, timeout=0.1)


def test_async_step_and_reset() -> None:
    envs = TianshouVectorEnv("Pendulum-v1", num_envs=6, wait_num=2, seed=0, max_episode_steps=7)
    assert envs.is_async
    obs, _ = envs.reset()
    assert obs.shape == (6, 3)
    obs, rew, terminated, truncated, info = envs.step(np.zeros((6, 1), np.float32), np.arange(6))
    assert len(obs) == 2
    ids = [i["env_id"] for i in info]
    assert sorted(envs.waiting_id + envs.ready_id) == list(range(6)) and set(ids) <= set(envs.ready_id)
    with pytest.raises(ValueError, match="stepping now"):
        envs.step(np.zeros((1, 1), np.float32), [envs.waiting_id[0]])
    # A received env mid-episode is reset at once; the steps in flight are untouched.
    first, info0 = envs.reset([ids[0]])
    assert first.shape == (1, 3) and info0[0]["env_id"] == ids[0]
    with pytest.raises(ValueError, match="recv"):
        envs.reset([envs.waiting_id[0]])  # still stepping
    obs, _ = envs.step(None)[0], None  # wait only
    assert len(obs) == 2
    # A full reset first drains the steps in flight.
    obs, info = envs.reset()
    assert obs.shape == (6, 3) and envs.waiting_id == [] and sorted(envs.ready_id) == list(range(6))
    envs.close()


def test_dqn_solves_cartpole() -> None:
    """DQN with Tianshou's CartPole test settings reaches a test return of 195."""
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny MLP: one thread is fastest
    try:
        train_envs = TianshouVectorEnv("CartPole-v1", num_envs=10, seed=0)
        test_envs = TianshouVectorEnv("CartPole-v1", num_envs=10, seed=1000)
        space = train_envs.action_space[0]
        net = Net(state_shape=(4,), action_shape=space.n, hidden_sizes=[128, 128, 128])
        policy = DiscreteQLearningPolicy(model=net, action_space=space, eps_training=0.1, eps_inference=0.05)
        algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9, n_step_return_horizon=3,
                        target_update_freq=320)
        train_collector = Collector(algorithm, train_envs, VectorReplayBuffer(20_000, 10), exploration_noise=True)
        test_collector = Collector(algorithm, test_envs)
        train_collector.reset()
        train_collector.collect(n_step=640, random=True)
        start = time.time()
        result = algorithm.run_training(OffPolicyTrainerParams(
            training_collector=train_collector, test_collector=test_collector, max_epochs=10, epoch_num_steps=10_000,
            collection_step_num_env_steps=10, update_step_num_gradient_steps_per_sample=0.1,
            test_step_num_episodes=20, batch_size=64, stop_fn=lambda mean_return: mean_return >= 195,
            verbose=False, show_progress=False, test_in_training=True,
        ))
        print(f"\nTianshou DQN CartPole-v1: best test return {result.best_reward:.1f} after "
              f"{train_collector.collect_step} steps, {time.time() - start:.0f} s")
        assert result.best_reward >= 195
    finally:
        torch.set_num_threads(threads)
        train_envs.close()
        test_envs.close()


def test_env_factory_for_the_high_level_api() -> None:
    factory = ParallelPoolEnvFactory("CartPole-v1", max_episode_steps=50)
    envs = factory.create_envs(num_training_envs=4, num_test_envs=3, create_watch_env=True, seed=0)
    assert isinstance(envs, DiscreteEnvironments)
    assert isinstance(envs.env, PoolSingleEnv) and envs.get_action_shape() == 2
    assert isinstance(envs.training_envs, TianshouVectorEnv) and len(envs.training_envs) == 4
    assert isinstance(envs.test_envs, TianshouVectorEnv) and not envs.test_envs.is_async
    assert len(envs.test_envs) == 3 and envs.test_envs.get_env_attr("max_episode_steps", 0) == [50]
    watch = envs.watch_env
    assert isinstance(watch, DummyVectorEnv)
    obs, _ = watch.reset()
    assert obs.shape == (1, 4)
    # Same seed, same environments.
    again = factory.create_venv(3, EnvMode.TEST, seed=5)
    other = factory.create_venv(3, EnvMode.TEST, seed=5)
    np.testing.assert_array_equal(again.reset()[0], other.reset()[0])
    single = PoolSingleEnv("CartPole-v1", max_episode_steps=3)
    single.reset(seed=0)
    for _ in range(3):
        _, reward, terminated, truncated, info = single.step(0)
    assert truncated and reward == 1.0 and info["elapsed_step"] == 3
    with pytest.raises(ValueError):
        single.step(0)  # no autoreset: a finished episode must be reset
    for venv in (envs.training_envs, envs.test_envs, again, other):
        venv.close()
