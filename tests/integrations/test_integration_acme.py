"""Acme-style dm_env adapters: the single-env view passes dm_env's own conformance tests, and a
batched loop gets the step types and discounts of the same episodes the Gymnasium front-end sees."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest
from absl.testing import absltest
from dm_env import test_utils

import parallel_pool
from parallel_pool.integrations.acme import BatchedEnvironment, Environment


class CartPoleConformance(test_utils.EnvironmentTestMixin, absltest.TestCase):
    def make_object_under_test(self) -> Environment:
        return Environment("CartPole-v1", seed=0, max_episode_steps=15)

    def make_action_sequence(self):
        # Long enough to cross several episode ends (terminations and time limits).
        rng = np.random.default_rng(0)
        for _ in range(120):
            yield np.int64(rng.integers(0, 2))


class PendulumConformance(test_utils.EnvironmentTestMixin, absltest.TestCase):
    def make_object_under_test(self) -> Environment:
        return Environment("Pendulum-v1", seed=0, max_episode_steps=10)

    def make_action_sequence(self):
        for k in range(45):
            yield np.array([np.sin(k)], dtype=np.float32)


def test_single_env_episode_ends() -> None:
    env = Environment("CartPole-v1", seed=1, max_episode_steps=25)
    ts = env.step(np.int64(0))  # a fresh env: step acts as reset
    assert ts.first() and ts.reward is None and ts.discount is None
    seen = {"terminated": 0, "truncated": 0}
    for _ in range(400):
        prev = ts
        ts = env.step(np.int64(0))
        if prev.last():
            assert ts.first()
            continue
        assert not ts.first()
        if ts.last():
            if env.info["elapsed_step"] == 25 and ts.discount == 1.0:
                seen["truncated"] += 1
            else:
                assert ts.discount == 0.0
                seen["terminated"] += 1
        else:
            assert ts.discount == 1.0 and ts.reward == 1.0
    assert seen["terminated"] > 0
    env.close()
    env = Environment("Pendulum-v1", seed=1, max_episode_steps=5)
    env.reset()
    types = [env.step(np.zeros(1, np.float32)) for _ in range(6)]
    assert [t.step_type for t in types] == [dm_env.StepType.MID] * 4 + [dm_env.StepType.LAST, dm_env.StepType.FIRST]
    assert types[4].discount == np.float32(1.0) and types[4].discount.dtype == np.float32  # truncated: bootstrap
    env.close()
    with pytest.raises(ValueError):
        Environment("CartPole-v1", num_envs=2)


@pytest.mark.parametrize("task", ["CartPole-v1", "gymnasium:CartPole-v1"])
def test_batched_loop_step_types_and_discounts(task: str) -> None:
    """An Acme-style loop over a batch, against the Gymnasium front-end on the same seed and actions;
    the native task, or Gymnasium's own env on the Python backend (``gymnasium:<id>``)."""
    n, limit = 6, 20
    env = BatchedEnvironment(task, num_envs=n, seed=4, max_episode_steps=limit)
    ref = parallel_pool.make(task, num_envs=n, seed=4, max_episode_steps=limit)
    assert isinstance(env, dm_env.Environment)
    assert env.observation_spec().shape == (n, 4)
    assert env.action_spec().shape == (n,) and env.action_spec().maximum.max() == 1
    rng = np.random.default_rng(0)
    ts = env.reset()
    ref_obs, _ = ref.reset()
    np.testing.assert_array_equal(ts.observation, ref_obs)
    assert (ts.step_type == dm_env.StepType.FIRST).all()
    env.observation_spec().validate(ts.observation)
    prev_last = np.zeros(n, dtype=bool)
    terminations = truncations = 0
    for _ in range(300):
        action = rng.integers(0, 2, n)
        ts = env.step(action)
        obs, rew, terminated, truncated, info = ref.step(action)
        np.testing.assert_array_equal(ts.observation, obs)
        env.reward_spec().validate(ts.reward)
        env.discount_spec().validate(ts.discount)
        # The row after LAST starts a new episode; the action is ignored there.
        np.testing.assert_array_equal(ts.step_type[prev_last], dm_env.StepType.FIRST)
        np.testing.assert_array_equal(ts.reward[prev_last], 0.0)
        mid = ~prev_last & ~(terminated | truncated)
        np.testing.assert_array_equal(ts.step_type[mid], dm_env.StepType.MID)
        np.testing.assert_array_equal(ts.discount[mid], 1.0)
        last = terminated | truncated
        np.testing.assert_array_equal(ts.step_type[last], dm_env.StepType.LAST)
        # Terminated: discount 0 (no bootstrap); truncated by the time limit: discount 1.
        np.testing.assert_array_equal(ts.discount[terminated], 0.0)
        np.testing.assert_array_equal(ts.discount[truncated & ~terminated], 1.0)
        np.testing.assert_array_equal(ts.reward, rew)
        np.testing.assert_array_equal(env.info["elapsed_step"], info["elapsed_step"])
        terminations += int(terminated.sum())
        truncations += int((truncated & ~terminated).sum())
        prev_last = last
    assert terminations > 10 and truncations > 10, (terminations, truncations)
    env.close()
    ref.close()


def test_batched_continuous_specs() -> None:
    env = BatchedEnvironment("Pendulum-v1", num_envs=3, seed=0)
    spec = env.action_spec()
    assert spec.shape == (3, 1) and spec.dtype == np.float32
    np.testing.assert_array_equal(spec.minimum, -2.0)
    ts = env.step(spec.generate_value())  # fresh env: step acts as reset
    assert (ts.step_type == dm_env.StepType.FIRST).all()
    ts = env.step(spec.generate_value())
    assert (ts.step_type == dm_env.StepType.MID).all()
    env.observation_spec().validate(ts.observation)
    env.close()
