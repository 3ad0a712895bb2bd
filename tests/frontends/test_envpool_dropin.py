"""make()'s pools where EnvPool's go: Gymnasium's vector wrappers, CleanRL's setup lines, gym's keys.

EnvPool's pools are ``gymnasium.vector.VectorEnv`` (and ``gymnasium.Env``) instances whose
``observation_space``/``action_space`` are single-env spaces; CleanRL's EnvPool scripts assign
``single_*_space``, ``num_envs`` and ``is_vector_env`` and wrap the pool in their own
``gymnasium.Wrapper``; the gym front-end's info has ``"TimeLimit.truncated"``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import vector as vector_wrappers

import parallel_pool


def test_pools_are_vector_envs_and_envs() -> None:
    for env_type in ("gymnasium", "gym"):
        env = parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=3)
        try:
            assert isinstance(env, gymnasium.vector.VectorEnv) and isinstance(env, gymnasium.Env)
            assert env.is_vector_env is True and env.num_envs == 3
            assert env.single_observation_space == env.observation_space
            assert env.observation_space.shape == (4,)  # single-env spaces, as EnvPool's
            assert env.single_action_space == env.action_space == gymnasium.spaces.Discrete(2)
            assert env.spec.id == "CartPole-v1" and str(env) == f"<{type(env).__name__}<CartPole-v1>>"
            assert env.unwrapped is env
        finally:
            env.close()
    # Gymnasium's VectorEnv.close() assigns `closed`: True closes the pool, which stays closed.
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    env.closed = False  # open already: nothing to do
    env.closed = True
    assert env.closed
    with pytest.raises(ValueError, match="reopened"):
        env.closed = False
    # The dm_env front-end is not a Gymnasium env.
    dm = parallel_pool.make("CartPole-v1", env_type="dm", num_envs=2)
    assert not isinstance(dm, gymnasium.vector.VectorEnv)
    dm.close()


def wrap(env: Any) -> Any:
    """Gymnasium's vector wrappers, stacked as a user would."""
    env = vector_wrappers.NormalizeObservation(env)
    env = vector_wrappers.TransformObservation(
        env, lambda obs: np.clip(obs, -5.0, 5.0), observation_space=env.observation_space
    )
    return vector_wrappers.RecordEpisodeStatistics(env)


# TransformObservation warns that a pool's observation_space is not its batched single space: the
# single-env spaces are EnvPool's convention, and this test passes the space explicitly.
@pytest.mark.filterwarnings("ignore:.*batched single observation space")
def test_gymnasium_vector_wrappers_wrap_a_pool_as_they_wrap_sync_vector_env(step_alike: Any) -> None:
    """The same wrappers over our pool and over Gymnasium's SyncVectorEnv of its own LunarLander
    (ours is the same seed for seed, bit for bit) give the same numbers step by step: normalized,
    clipped observations and episode statistics."""
    n = 4
    ours = wrap(parallel_pool.make("LunarLander-v3", num_envs=n))
    theirs = wrap(gymnasium.make_vec("LunarLander-v3", num_envs=n, vectorization_mode="sync"))
    rng = np.random.default_rng(0)
    episodes = 0
    try:
        obs, _ = ours.reset(seed=7)
        ref_obs, _ = theirs.reset(seed=7)
        np.testing.assert_array_equal(obs, ref_obs)
        for _ in range(400):
            # The same float32 inputs and the same float64 running statistics: equal.
            (*_, info), (*_, ref_info) = step_alike(ours, theirs, rng.integers(0, 4, n))
            assert ("episode" in info) == ("episode" in ref_info)
            if "episode" in info:
                episodes += int(info["_episode"].sum())
                np.testing.assert_array_equal(info["_episode"], ref_info["_episode"])
                np.testing.assert_array_equal(info["episode"]["r"], ref_info["episode"]["r"])
                np.testing.assert_array_equal(info["episode"]["l"], ref_info["episode"]["l"])
        assert episodes >= 10
        np.testing.assert_array_equal(ours.env.env.obs_rms.mean, theirs.env.env.obs_rms.mean)
    finally:
        ours.close()
        theirs.close()


class CleanRLRecordEpisodeStatistics(gymnasium.Wrapper):
    """CleanRL's ppo_atari_envpool.py wrapper, line for line, but on Gymnasium's 5-tuple."""

    def __init__(self, env: Any, deque_size: int = 100) -> None:
        super().__init__(env)
        self.num_envs = getattr(env, "num_envs", 1)
        self.episode_returns: Any = None
        self.episode_lengths: Any = None
        # get if the env has lives
        self.has_lives = False
        env.reset()
        info = env.step(np.zeros(self.num_envs, dtype=int))[-1]
        if info["lives"].sum() > 0:
            self.has_lives = True

    def reset(self, **kwargs: Any) -> Any:
        observations = super().reset(**kwargs)
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        self.lives = np.zeros(self.num_envs, dtype=np.int32)
        self.returned_episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.returned_episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        return observations

    def step(self, action: Any) -> Any:
        observations, rewards, terminated, truncated, infos = super().step(action)
        dones = np.logical_or(terminated, truncated)
        self.episode_returns += infos["reward"]
        self.episode_lengths += 1
        self.returned_episode_returns[:] = self.episode_returns
        self.returned_episode_lengths[:] = self.episode_lengths
        all_lives_exhausted = infos["lives"] == 0
        if self.has_lives:
            self.episode_returns *= 1 - all_lives_exhausted
            self.episode_lengths *= 1 - all_lives_exhausted
        else:
            self.episode_returns *= 1 - dones
            self.episode_lengths *= 1 - dones
        infos["r"] = self.returned_episode_returns
        infos["l"] = self.returned_episode_lengths
        return observations, rewards, terminated, truncated, infos


def test_cleanrls_envpool_setup_lines_run() -> None:
    num_envs = 4
    envs = parallel_pool.make("Pong-v5", env_type="gym", num_envs=num_envs, episodic_life=True, reward_clip=True,
                              seed=1)
    envs.num_envs = num_envs
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    envs.is_vector_env = True
    wrapped = CleanRLRecordEpisodeStatistics(envs)
    assert isinstance(wrapped.action_space, gymnasium.spaces.Discrete)
    assert wrapped.unwrapped.single_observation_space.shape == (4, 84, 84)  # gymnasium.Wrapper forwards no attributes
    try:
        obs, _ = wrapped.reset()
        assert obs.shape == (num_envs, 4, 84, 84)
        rng = np.random.default_rng(1)
        raw = np.zeros(num_envs)
        for _ in range(300):
            obs, reward, terminated, truncated, info = wrapped.step(rng.integers(0, 6, num_envs))
            raw += info["reward"]
            # reward_clip clips the reward, info["reward"] is the game's: CleanRL sums the latter.
            np.testing.assert_array_equal(reward, np.sign(info["reward"]))
            np.testing.assert_array_equal(info["r"], raw.astype(np.float32))
            np.testing.assert_array_equal(info["TimeLimit.truncated"], truncated & ~terminated)
        assert not wrapped.has_lives  # Pong has no lives: CleanRL's wrapper resets on done
    finally:
        wrapped.close()
    # Assigned spaces are what the pool reports from then on; unassigned, they follow the spaces.
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    box = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    env.single_observation_space = box
    assert env.single_observation_space is box and env.single_action_space == env.action_space
    env.close()


@pytest.mark.parametrize("env_type", ["gym", "gymnasium"])
def test_time_limit_truncated_is_in_the_gym_front_ends_info(env_type: str) -> None:
    env = parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=3, seed=0, max_episode_steps=5)
    try:
        env.reset()
        seen = False
        for _ in range(12):
            _, _, terminated, truncated, info = env.step(np.zeros(3, dtype=np.int64))
            if env_type == "gymnasium":
                assert "TimeLimit.truncated" not in info
                continue
            np.testing.assert_array_equal(info["TimeLimit.truncated"], truncated & ~terminated)
            seen |= bool(info["TimeLimit.truncated"].any())
        assert seen or env_type == "gymnasium"
    finally:
        env.close()


def test_spec_config_reads_as_attributes_as_envpools() -> None:
    spec = parallel_pool.make_spec("CartPole-v1", num_envs=4, max_episode_steps=100)
    assert spec.config.max_episode_steps == spec.config["max_episode_steps"] == 100
    assert spec.config.num_envs == 4 and spec.config._asdict()["num_envs"] == 4
    with pytest.raises(AttributeError, match="no key 'no_such_key'"):
        _ = spec.config.no_such_key
    env = parallel_pool.make("Pong-v5", num_envs=2) if "Pong-v5" in parallel_pool.list_all_envs() else None
    if env is not None:
        try:
            assert env.spec.config.stack_num == 4 and env.config["stack_num"] == 4
        finally:
            env.close()


def test_state_and_action_array_specs() -> None:
    spec = parallel_pool.make_spec("CartPole-v1")
    state = spec.state_array_spec
    assert state["obs"].shape == (4,) and state["obs"].dtype == np.float32
    np.testing.assert_array_equal(state["obs"].maximum, spec.observation_space.high)
    assert state["info:env_id"].dtype == np.int32 and state["info:env_id"].shape == ()
    assert {"reward", "terminated", "truncated", "info:elapsed_step", "info:players.env_id"} <= set(state)
    action = spec.action_array_spec
    # EnvPool's three: the env ids a send names, then the action.
    assert list(action) == ["env_id", "players.env_id", "action"]
    assert action["env_id"].dtype == np.int32 and action["players.env_id"].shape == (-1,)
    assert action["action"].dtype == np.int64 and (action["action"].minimum, action["action"].maximum) == (0, 1)
    # A Dict action (per key) and bounded Box actions.
    pendulum = parallel_pool.make_spec("Pendulum-v1").action_array_spec["action"]
    assert pendulum.shape == (1,) and pendulum.minimum == -2.0 and pendulum.maximum == 2.0


def test_make_dm_is_a_dm_env_environment() -> None:
    import dm_env

    env = parallel_pool.make_dm("CartPole-v1", num_envs=2)
    try:
        assert isinstance(env, dm_env.Environment)
        ts = env.reset()
        assert (ts.step_type == dm_env.StepType.FIRST).all() and env.observation_spec().obs.shape == (4,)
    finally:
        env.close()


def test_the_package_ships_py_typed() -> None:
    from pathlib import Path

    assert (Path(parallel_pool.__file__).parent / "py.typed").is_file()


def test_render_takes_envpools_env_ids_keyword() -> None:
    env = parallel_pool.make("CartPole-v1", num_envs=3)
    try:
        env.reset(seed=0)
        np.testing.assert_array_equal(env.render(env_ids=[2, 0]), env.render([2, 0]))
        with pytest.raises(ValueError, match="not both"):
            env.render([0], env_ids=[1])
        # No env ids: EnvPool's render_env_id (default 0) alone.
        np.testing.assert_array_equal(env.render(), env.render([0]))
        # One env id alone, as EnvPool takes it: that env's frame, in a batch of one.
        np.testing.assert_array_equal(env.render(env_ids=1), env.render([1]))
        assert env.render(np.int32(2)).shape == (1, 400, 600, 3)
    finally:
        env.close()


@pytest.mark.parametrize("make", ["make_gymnasium", "make_dm"])
def test_sync_step_of_some_envs_returns_their_rows(make: str) -> None:
    """EnvPool steps a subset of the envs in sync mode: their rows come back, in the order given,
    and each env goes on from its own state (the same as stepping them all)."""
    kwargs = {"num_envs": 4, "seed": 3, "max_episode_steps": 5}
    env = getattr(parallel_pool, make)("CartPole-v1", **kwargs)
    ref = parallel_pool.make_gymnasium("CartPole-v1", **kwargs)
    try:
        env.reset()
        ref_obs, _ = ref.reset()
        for ids in ([3, 1], [0], [2, 0, 1], [0, 1, 2, 3]):
            out = env.step(np.ones(len(ids), dtype=np.int64), np.array(ids))
            actions = np.zeros(4, dtype=np.int64)
            actions[ids] = 1
            ref_obs, ref_rew, *_ = ref.step(actions)  # the others step with 0: compare only ours
            if make == "make_dm":
                obs, env_id = out.observation.obs, out.observation.env_id
            else:
                obs, env_id = out[0], out[4]["env_id"]
            np.testing.assert_array_equal(env_id, ids)
            if ids == [3, 1]:
                np.testing.assert_array_equal(obs, ref_obs[ids])
        if make == "make_gymnasium":
            # The time limit (5) counts each env's own steps: env 0 has taken 3, env 3 two.
            env.step(np.ones(2, dtype=np.int64), np.array([0, 3]))
            _, _, terminated, truncated, _ = env.step(np.ones(2, dtype=np.int64), np.array([3, 0]))
            np.testing.assert_array_equal(truncated | terminated, [False, True])
    finally:
        env.close()
        ref.close()


def test_step_of_some_envs_is_refused_where_no_batch_holds_it() -> None:
    env = parallel_pool.make_gymnasium("CartPole-v1", num_envs=4, batch_size=3)
    try:
        env.async_reset()
        received = env.recv()[-1]["env_id"]
        with pytest.raises(ValueError, match="cannot fill a batch of 3 \\(1 in flight\\)"):
            env.step(np.ones(1, dtype=np.int64), received[:1])
    finally:
        env.close()
    env = parallel_pool.make_gymnasium("CartPole-v1", num_envs=4)
    try:
        env.reset()
        env.send(np.ones(2, dtype=np.int64), np.array([0, 1]))
        with pytest.raises(ValueError, match="cannot fill a batch of 4 \\(2 in flight\\)"):
            env.step(np.ones(1, dtype=np.int64), np.array([2]))
        obs, *_ = env.step(np.ones(2, dtype=np.int64), np.array([2, 3]))  # completes the batch
        assert obs.shape == (4, 4)
    finally:
        env.close()


def test_acrobot_info_carries_envpools_joint_angles() -> None:
    env = parallel_pool.make_gymnasium("Acrobot-v1", num_envs=2, seed=0)
    try:
        obs, info = env.reset()
        for _ in range(3):
            np.testing.assert_allclose(np.cos(info["state"]), obs[:, [0, 2]], atol=1e-6)
            np.testing.assert_allclose(np.sin(info["state"]), obs[:, [1, 3]], atol=1e-6)
            assert info["state"].dtype == np.float32 and info["state"].shape == (2, 2)
            obs, _, _, _, info = env.step(np.array([0, 2]))
    finally:
        env.close()
    # An EnvPool key: not in the strict Gymnasium view's info, as not in Gymnasium's.
    view = gymnasium.make_vec("parallel_pool/Acrobot-v1", num_envs=2)
    try:
        assert "state" not in view.reset(seed=0)[1]
    finally:
        view.close()


def test_dm_control_frame_stack_stacks_state_observations() -> None:
    """EnvPool's frame_stack on a dm_control task without from_pixels: each observation entry gets
    a leading axis of k, oldest first, the reset's repeated; the newest row is the plain task's."""
    if "WalkerWalk-v1" not in parallel_pool.list_all_envs():
        pytest.skip("the dm_control family is not built")
    stacked = parallel_pool.make_dm("WalkerWalk-v1", num_envs=2, seed=0, frame_stack=3)
    plain = parallel_pool.make_dm("WalkerWalk-v1", num_envs=2, seed=0)
    try:
        spec = stacked.observation_spec()
        assert spec.orientations.shape == (3, 14) and spec.height.shape == (3,)
        assert stacked.spec.observation_spec()["height"].shape == (3,)  # the spec's: a dict, keys as attributes
        assert plain.observation_spec().velocity.shape == (9,)
        ts, ref = stacked.reset(), plain.reset()
        history = [ref.observation]
        for t in range(5):
            window = ([history[0]] * 3 + history)[-3:]  # the reset's observation pads the start
            for name in ("orientations", "height", "velocity"):
                for k in range(3):
                    np.testing.assert_array_equal(getattr(ts.observation, name)[:, k], getattr(window[k], name),
                                                  err_msg=f"{name} t={t} k={k}")
            action = np.full((2, 6), 0.1 * (t + 1))
            ts, ref = stacked.step(action), plain.step(action)
            history.append(ref.observation)
        with pytest.raises(ValueError, match="gray_scale shapes pixel observations"):
            parallel_pool.make_dm("WalkerWalk-v1", gray_scale=True)
    finally:
        stacked.close()
        plain.close()


def test_render_env_id_chooses_what_render_draws_by_default() -> None:
    env = parallel_pool.make_gym("CartPole-v1", num_envs=3, render_env_id=2, seed=1)
    try:
        env.reset()
        np.testing.assert_array_equal(env.render(), env.render(env_ids=2))
        assert not np.array_equal(env.render(), env.render(env_ids=0))  # the envs' poles differ
    finally:
        env.close()
    for bad in (3, -1):
        with pytest.raises(ValueError, match=r"render_env_id must be an env id in \[0, num_envs=3\)"):
            parallel_pool.make("CartPole-v1", num_envs=3, render_env_id=bad)
