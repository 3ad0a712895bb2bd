"""The front-ends: EnvPool-style Gymnasium API, the strict Gymnasium VectorEnv, gym and dm_env."""

from __future__ import annotations

import dm_env
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import VectorEnv
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

import parallel_pool
from parallel_pool.errors import PoolClosedError


def test_envpool_style_spaces_are_single_env(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=5)
    ref = gym.make("CartPole-v1")
    assert env.observation_space == ref.observation_space
    assert env.action_space == ref.action_space
    assert env.action_space.n == 2
    assert env.single_action_space is env.action_space
    obs, _ = env.reset()
    assert obs.shape == (5, 4) and obs.dtype == np.float32
    _, rew, term, trunc, _ = env.step(np.zeros(5, dtype=np.int64))
    assert rew.dtype == np.float64 and term.dtype == bool and trunc.dtype == bool
    env.close()


def test_make_vec_gives_a_strict_vector_env() -> None:
    envs = gym.make_vec("parallel_pool/CartPole-v1", num_envs=4)
    assert isinstance(envs, VectorEnv)
    assert isinstance(envs.unwrapped, parallel_pool.ParallelPoolVectorEnv)
    assert envs.num_envs == 4
    assert envs.observation_space.shape == (4, 4)
    assert envs.action_space == gym.spaces.MultiDiscrete([2, 2, 2, 2])
    assert envs.single_observation_space == gym.make("CartPole-v1").observation_space
    assert envs.spec.id == "parallel_pool/CartPole-v1"
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    for _ in range(20):
        obs, rew, term, trunc, info = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(obs)
    envs.close()
    assert envs.closed


def test_make_vec_kwargs_and_gymnasium_wrappers() -> None:
    envs = gym.make_vec("parallel_pool/Pendulum-v1", num_envs=3, g=9.81, max_episode_steps=10)
    assert envs.unwrapped.pool.config["g"] == 9.81
    envs = RecordEpisodeStatistics(NormalizeObservation(envs))
    envs.reset(seed=1)
    episodes = 0
    for _ in range(25):
        _, _, _, trunc, info = envs.step(envs.action_space.sample())
        if "episode" in info:
            episodes += info["_episode"].sum()
            np.testing.assert_array_equal(info["episode"]["l"][info["_episode"]], 10)
    assert episodes == 6
    envs.close()


def test_gym_env_type(make_pool) -> None:
    env = make_pool("CartPole-v1", env_type="gym", num_envs=2)
    assert isinstance(env, parallel_pool.GymEnv)
    env.reset()
    assert len(env.step(np.zeros(2, dtype=np.int64))) == 5
    env.close()


def test_dm_env_front_end_step_types_and_discounts(make_pool) -> None:
    env = make_pool("CartPole-v1", env_type="dm", num_envs=2, seed=0, max_episode_steps=15)
    assert isinstance(env.observation_spec().obs, dm_env.specs.BoundedArray)
    assert env.action_spec() == dm_env.specs.DiscreteArray(2, dtype=np.int64, name="action")
    ts = env.reset()
    # The spec of TimeStep.observation (EnvPool's form): the same named tuple, info entries included.
    assert env.observation_spec()._fields == ts.observation._fields
    for spec, value in zip(env.observation_spec(), ts.observation):
        spec.validate(value[0])
    np.testing.assert_array_equal(ts.step_type, dm_env.StepType.FIRST)
    prev_last = np.zeros(2, dtype=bool)
    saw_terminal = saw_truncation = False
    for _ in range(200):
        ts = env.step(np.ones(2, dtype=np.int64))
        last = ts.step_type == dm_env.StepType.LAST
        first = ts.step_type == dm_env.StepType.FIRST
        np.testing.assert_array_equal(first, prev_last)  # LAST is followed by FIRST
        # terminated: discount 0; truncated (time limit): discount 1.
        terminal = last & (ts.observation.elapsed_step < 15)
        truncated = last & (ts.observation.elapsed_step == 15)
        np.testing.assert_array_equal(ts.discount[terminal], 0.0)
        np.testing.assert_array_equal(ts.discount[truncated], 1.0)
        saw_terminal |= terminal.any()
        saw_truncation |= truncated.any()
        prev_last = last
    assert saw_terminal
    np.testing.assert_array_equal(ts.observation.env_id, [0, 1])
    env.close()
    env = make_pool("Pendulum-v1", env_type="dm", num_envs=2, seed=0, max_episode_steps=5)
    env.reset()
    for _ in range(5):
        ts = env.step(np.zeros((2, 1), dtype=np.float32))
    np.testing.assert_array_equal(ts.step_type, dm_env.StepType.LAST)
    np.testing.assert_array_equal(ts.discount, 1.0)
    env.close()


def test_dm_env_needs_next_step_autoreset() -> None:
    with pytest.raises(ValueError, match="next_step"):
        parallel_pool.make_dm("CartPole-v1", autoreset_mode="same_step")


def test_async_reset_then_recv_loop_as_in_the_readme(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=8, batch_size=4, seed=0)
    env.async_reset()
    seen = set()
    for _ in range(100):
        obs, rew, term, trunc, info = env.recv()
        assert obs.shape == (4, 4)
        seen.update(info["env_id"].tolist())
        env.send(np.zeros(4, dtype=np.int64), info["env_id"])
    assert seen == set(range(8))
    env.close()


def test_list_all_envs() -> None:
    envs = parallel_pool.list_all_envs()
    for task in ("CartPole-v0", "CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1",
                 "Acrobot-v1"):
        assert task in envs
        assert f"parallel_pool/{task}" in gym.registry


def _check_frames(frames: np.ndarray, obs: np.ndarray, info: dict) -> None:
    # The tutorial env paints its state: red = last secret + 1, green = players, blue = steps.
    assert frames.shape == (len(obs), 8, 8, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(frames[:, 3, 5, 0], obs[:, 1] + 1)  # one player: a row per env
    np.testing.assert_array_equal(frames[:, 3, 5, 1], info["num_players"])
    np.testing.assert_array_equal(frames[:, 3, 5, 2], info["elapsed_step"] % 256)
    assert (frames == frames[:, :1, :1]).all()  # flat colour


def test_render_returns_the_requested_envs_current_frames(make_pool) -> None:
    env = make_pool("GuessingGame-v0", num_envs=3, seed=0, max_num_players=1)
    assert env.render_mode == "rgb_array" and env.metadata["render_modes"] == ["rgb_array"]
    assert env.spec.render_shape == (8, 8, 3)
    with pytest.raises(ValueError, match="before reset"):
        env.render()
    obs, info = env.reset()
    _check_frames(env.render(np.arange(env.num_envs)), obs, info)
    for _ in range(3):
        obs, _, _, _, info = env.step(np.arange(3))
    _check_frames(env.render(np.arange(env.num_envs)), obs, info)
    subset = env.render(np.array([2, 0]))
    np.testing.assert_array_equal(subset, env.render(np.arange(env.num_envs))[[2, 0]])
    for bad in ([0, 0], [3], [-1]):
        with pytest.raises(ValueError, match="env id"):
            env.render(np.array(bad))
    env.close()
    with pytest.raises(PoolClosedError):
        env.render()


def test_render_in_async_mode_needs_received_envs(make_pool) -> None:
    env = make_pool("GuessingGame-v0", num_envs=4, batch_size=2, seed=0, max_num_players=1)
    env.async_reset()
    obs, _, _, _, info = env.recv()
    _check_frames(env.render(info["env_id"]), obs, info)
    in_flight = np.setdiff1d(np.arange(4), info["env_id"])
    with pytest.raises(ValueError, match="recv"):
        env.render(in_flight)  # those two envs are still in flight
    env.close()


def test_render_mode_is_checked_and_non_rendering_tasks_say_so() -> None:
    """(Native only: a Python env's render_mode is its own, gymnasium.make's.)"""
    with pytest.raises(ValueError, match="rgb_array"):
        parallel_pool.make("GuessingGame-v0", num_envs=2, render_mode="human")
    # Faulty-v0 (the tutorial family's) draws no frames; CartPole renders (as Gymnasium's).
    with pytest.raises(ValueError, match="does not render"):
        parallel_pool.make("Faulty-v0", num_envs=2, render_mode="rgb_array")
    env = parallel_pool.make("Faulty-v0", num_envs=2, render_mode=None)
    assert env.render_mode is None and env.metadata["render_modes"] == []
    env.reset()
    with pytest.raises(ValueError, match="Faulty-v0 does not render"):
        env.render()
    env.close()


def test_vector_view_renders_a_tuple_of_frames(make_pool) -> None:
    task, kwargs = make_pool.args("GuessingGame-v0", num_envs=3, max_num_players=1, render_mode="rgb_array",
                                  engine_info=True)  # elapsed_step, which the frames paint
    # gymnasium.make_vec names native tasks; its view, this class, takes a Python env's id too.
    envs = (gym.make_vec(f"parallel_pool/{task}", **kwargs) if make_pool.backend == "native"
            else parallel_pool.ParallelPoolVectorEnv(task, **kwargs))
    assert envs.render_mode == "rgb_array"
    obs, info = envs.reset(seed=1)
    frames = envs.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    _check_frames(np.stack(frames), obs, info)
    envs.close()
    plain = gym.make_vec("parallel_pool/Faulty-v0", num_envs=2)  # a task that draws no frames
    plain.reset()
    assert plain.render_mode is None and plain.render() is None
    plain.close()
