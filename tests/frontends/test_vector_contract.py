"""Gymnasium's ``VectorEnv`` contract on the strict view (``gymnasium.make_vec("parallel_pool/<id>")``)
and on ``make()``'s pools: ``call``/``get_attr``/``set_attr``, ``metadata``, per-env
``np_random_seed``, the reference's info, and a view whose construction failed."""

from __future__ import annotations

import gc

import gymnasium as gym
import numpy as np
import pytest

import parallel_pool
from parallel_pool.vector import ParallelPoolVectorEnv


def test_call_and_get_attr_read_a_native_envs_config_and_attributes() -> None:
    envs = gym.make_vec("parallel_pool/Pendulum-v1", num_envs=3, g=3.72)
    try:
        assert envs.get_attr("g") == (3.72, 3.72, 3.72)
        assert envs.call("g") == envs.get_attr("g")
        assert envs.get_attr("max_episode_steps") == (200,) * 3
        assert envs.get_attr("observation_space") == (envs.single_observation_space,) * 3
        assert envs.get_attr("render_mode") == ("rgb_array",) * 3  # classic control renders
        with pytest.raises(AttributeError, match="no attribute 'gravity'.*config keys"):
            envs.get_attr("gravity")
        with pytest.raises(TypeError, match="attribute, not a method"):
            envs.call("g", 1)
    finally:
        envs.close()


def test_get_attr_gives_each_envs_own_env_kwargs() -> None:
    env = parallel_pool.make("Pendulum-v1", num_envs=2, env_kwargs=[{"g": 1.0}, {"g": 2.0}])
    try:
        assert env.get_attr("g") == (1.0, 2.0)
    finally:
        env.close()


def test_set_attr_on_a_native_env_says_the_config_is_fixed() -> None:
    envs = gym.make_vec("parallel_pool/Pendulum-v1", num_envs=2)
    try:
        with pytest.raises(AttributeError, match="config is fixed when the pool is made.*g=..."):
            envs.set_attr("g", [9.81, 3.72])
        with pytest.raises(ValueError, match="length equal to the number of environments"):
            envs.set_attr("g", [9.81])
    finally:
        envs.close()


def test_call_render_gives_each_envs_frame() -> None:
    envs = gym.make_vec("parallel_pool/FrozenLake-v1", num_envs=2, render_mode="rgb_array")
    try:
        envs.reset(seed=0)
        frames = envs.call("render")
        assert isinstance(frames, tuple) and len(frames) == 2
        np.testing.assert_array_equal(np.stack(frames), np.stack(envs.render()))
    finally:
        envs.close()


@pytest.mark.parametrize(
    ("task_id", "fps"),
    [("CartPole-v1", 50), ("MountainCar-v0", 30), ("Acrobot-v1", 15), ("Pendulum-v1", 30),
     ("FrozenLake-v1", 4), ("LunarLander-v3", 50), ("Pong-v5", 30), ("Ant-v5", 20), ("HalfCheetah-v4", 20),
     ("Hopper-v5", 125), ("Walker2d-v5", 125), ("Reacher-v5", 50), ("MiniGrid-Empty-5x5-v0", 10)],
)
def test_metadata_has_the_reference_envs_render_fps(task_id: str, fps: int) -> None:
    if task_id not in parallel_pool.list_all_envs():
        pytest.skip(f"{task_id} is not in this build")
    if task_id.startswith("MiniGrid"):
        import minigrid  # noqa: F401  (registers its ids with Gymnasium)
    reference = gym.make(task_id) if task_id != "Pong-v5" else None  # ale_py's AtariEnv: 30
    if reference is not None:
        assert reference.metadata["render_fps"] == fps  # the number this test holds us to
        reference.close()
    envs = gym.make_vec(f"parallel_pool/{task_id}", num_envs=1)
    try:
        assert envs.metadata["render_fps"] == fps
        assert envs.metadata["render_modes"] == ["rgb_array"]
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    finally:
        envs.close()


def test_mujoco_render_fps_follows_frame_skip() -> None:
    reference = gym.make("Ant-v5", frame_skip=10)
    envs = gym.make_vec("parallel_pool/Ant-v5", num_envs=1, frame_skip=10)
    try:
        assert envs.metadata["render_fps"] == reference.metadata["render_fps"] == 10
    finally:
        envs.close()
        reference.close()


def test_vector_wrappers_that_need_render_fps_accept_the_view() -> None:
    from gymnasium.wrappers.vector import HumanRendering  # refuses a vector env without render_fps

    envs = gym.make_vec("parallel_pool/LunarLander-v3", num_envs=2, render_mode="rgb_array")
    try:
        # HumanRendering checks render_fps and render_mode at construction (its window opens at render).
        wrapped = HumanRendering(envs)
        assert wrapped.metadata["render_fps"] == 50
    finally:
        envs.close()


def test_np_random_seed_is_each_envs_seed() -> None:
    envs = gym.make_vec("parallel_pool/CartPole-v1", num_envs=3, seed=10)
    try:
        assert envs.np_random_seed == (10, 11, 12)
        envs.reset(seed=42)
        assert envs.np_random_seed == (42, 43, 44)  # as SyncVectorEnv's after reset(seed=42)
        envs.reset()
        assert envs.np_random_seed == (42, 43, 44)
        envs.reset(seed=[5, 6, 7])
        assert envs.get_attr("np_random_seed") == (5, 6, 7)
        envs.reset(seed=100, options={"reset_mask": np.array([False, True, False])})
        assert envs.np_random_seed == (5, 101, 7)
    finally:
        envs.close()
    reference = gym.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync")
    reference.reset(seed=42)
    assert reference.np_random_seed == (42, 43, 44)
    reference.close()


def test_seed_seeds_the_next_reset() -> None:
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    try:
        assert env.seed(7) == [7, 8]
        first, _ = env.reset()
        expected, _ = env.reset(seed=7)
        np.testing.assert_array_equal(first, expected)
        assert env.np_random_seed == (7, 8)
        again, _ = env.reset()  # seed() applies to one reset
        assert not np.array_equal(again, expected)
    finally:
        env.close()


def test_the_strict_views_info_is_the_reference_envs() -> None:
    ours = gym.make_vec("parallel_pool/CartPole-v1", num_envs=2)
    theirs = gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    try:
        _, info = ours.reset(seed=0)
        _, their_info = theirs.reset(seed=0)
        assert info == their_info == {}
        *_, info = ours.step(np.zeros(2, dtype=np.int64))
        *_, their_info = theirs.step(np.zeros(2, dtype=np.int64))
        assert info == their_info == {}
    finally:
        ours.close()
        theirs.close()
    # The engine's keys on request.
    envs = gym.make_vec("parallel_pool/CartPole-v1", num_envs=2, engine_info=True)
    try:
        _, info = envs.reset(seed=0)
        np.testing.assert_array_equal(info["env_id"], [0, 1])
        *_, info = envs.step(np.zeros(2, dtype=np.int64))
        np.testing.assert_array_equal(info["elapsed_step"], [1, 1])
    finally:
        envs.close()
    # make()'s pools keep EnvPool's keys.
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    try:
        _, info = env.reset()
        assert set(info) >= {"env_id", "elapsed_step"}
    finally:
        env.close()


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_view_whose_construction_failed_finalizes_quietly() -> None:
    """A bad kwarg makes __init__ raise before the pool exists: the finalizer (VectorEnv.__del__,
    which closes) must not raise again about the missing pool (pytest reports an exception raised
    in a finalizer as an unraisable-exception warning, an error here)."""
    with pytest.raises(ValueError, match="unknown"):
        ParallelPoolVectorEnv("CartPole-v1", num_envs=2, no_such_option=1)
    with pytest.raises(ValueError, match="batch_size"):
        ParallelPoolVectorEnv("CartPole-v1", num_envs=2, batch_size=1)
    gc.collect()


# Tasks whose strict view's info has exactly the keys (and masks) of Gymnasium's own vector env,
# after a reset and after each step. (Dtypes may differ: README, "Differences".)
SAME_INFO_KEYS = ["CartPole-v1", "LunarLander-v3", "CarRacing-v3", "FrozenLake-v1", "Taxi-v3", "Blackjack-v1",
                  "Ant-v4", "Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Humanoid-v5", "HumanoidStandup-v5",
                  "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5", "Pusher-v5", "Swimmer-v5",
                  "Walker2d-v5"]


@pytest.mark.parametrize("task_id", SAME_INFO_KEYS)
def test_the_strict_views_info_keys_and_masks_are_gymnasiums(task_id: str) -> None:
    if task_id not in parallel_pool.list_all_envs():
        pytest.skip(f"{task_id} is not in this build")
    ours = gym.make_vec(f"parallel_pool/{task_id}", num_envs=2)
    theirs = gym.make_vec(task_id, num_envs=2, vectorization_mode="sync")
    try:
        _, info = ours.reset(seed=3)
        _, their_info = theirs.reset(seed=3)
        assert sorted(info) == sorted(their_info)
        theirs.action_space.seed(0)
        ended = np.zeros(2, dtype=bool)  # rows whose last step ended an episode (in ours or theirs)
        for _ in range(5):
            action = theirs.action_space.sample()
            _, _, terminated, truncated, info = ours.step(action)
            _, _, their_terminated, their_truncated, their_info = theirs.step(action)
            # A MuJoCo reset's noise is not Gymnasium's draw, so episodes may end at other steps; a
            # row that autoresets has the reset's info: compare the steps where neither did.
            if not ended.any():
                assert sorted(info) == sorted(their_info)
                for key in (k for k in info if k.startswith("_")):
                    np.testing.assert_array_equal(info[key], their_info[key], err_msg=key)
            ended = terminated | truncated | their_terminated | their_truncated
    finally:
        ours.close()
        theirs.close()


def test_a_flag_is_in_the_info_only_where_it_is_set() -> None:
    """CarRacing's "lap_finished": Gymnasium's step info has it only when a lap ends."""
    if "CarRacing-v3" not in parallel_pool.list_all_envs():
        pytest.skip("CarRacing-v3 is not in this build")
    envs = gym.make_vec("parallel_pool/CarRacing-v3", num_envs=2)
    try:
        envs.reset(seed=0)
        *_, info = envs.step(np.zeros((2, 3), dtype=np.float32))
        assert "lap_finished" not in info and "_lap_finished" not in info
        # A lap that ends in row 1 (driving one takes ~1,000 steps): the view's rule on such an info.
        info = envs.unwrapped._strip({"lap_finished": np.array([False, True])})
        np.testing.assert_array_equal(info["lap_finished"], [False, True])
        np.testing.assert_array_equal(info["_lap_finished"], [False, True])
    finally:
        envs.close()
    env = parallel_pool.make("CarRacing-v3", num_envs=2)  # make()'s pools: in every row
    try:
        env.reset(seed=0)
        *_, info = env.step(np.zeros((2, 3), dtype=np.float32))
        np.testing.assert_array_equal(info["lap_finished"], [False, False])
    finally:
        env.close()


def test_atari_info_has_ale_pys_keys_and_envpools_extra_ones_on_request() -> None:
    if "Pong-v5" not in parallel_pool.list_all_envs():
        pytest.skip("Pong-v5 is not in this build")
    envs = gym.make_vec("parallel_pool/Pong-v5", num_envs=2)
    try:
        _, info = envs.reset(seed=0)
        assert sorted(info) == ["_lives", "lives"]  # ale_py's also has frame numbers and seeds (README)
    finally:
        envs.close()
    envs = gym.make_vec("parallel_pool/Pong-v5", num_envs=2, engine_info=True)
    try:
        _, info = envs.reset(seed=0)
        assert {"reward", "terminated", "env_id", "elapsed_step"} <= set(info)
    finally:
        envs.close()


def test_a_row_that_autoresets_has_the_resets_info() -> None:
    """InvertedPendulum-v5's "reward_survive" is in a step's info, not a reset's: the step after an
    episode's end (next-step autoreset) gives that row the reset's info, so the key is masked out
    there and zero, as in Gymnasium's vector envs."""
    envs = gym.make_vec("parallel_pool/InvertedPendulum-v5", num_envs=2, engine_info=True)
    try:
        envs.reset(seed=0)
        seen_reset_row = False
        for _ in range(200):
            _, _, terminated, truncated, info = envs.step(np.array([[3.0], [0.5]], dtype=np.float32))
            reset_rows = info["elapsed_step"] == 0
            if reset_rows.any() and not reset_rows.all():
                seen_reset_row = True
                np.testing.assert_array_equal(info["_reward_survive"], ~reset_rows)
                assert (info["reward_survive"][reset_rows] == 0).all()
        assert seen_reset_row
    finally:
        envs.close()


def test_async_vector_envs_split_calls() -> None:
    """reset_async/reset_wait and step_async/step_wait, with AsyncVectorEnv's errors."""
    from gymnasium.error import AlreadyPendingCallError, ClosedEnvironmentError, NoAsyncCallError

    envs = gym.make_vec("parallel_pool/CartPole-v1", num_envs=3)
    plain = gym.make_vec("parallel_pool/CartPole-v1", num_envs=3)
    try:
        with pytest.raises(NoAsyncCallError):
            envs.unwrapped.step_wait()
        envs.unwrapped.reset_async(seed=5)
        with pytest.raises(AlreadyPendingCallError):
            envs.unwrapped.step_async(np.zeros(3, dtype=np.int64))
        obs, info = envs.unwrapped.reset_wait()
        expected, _ = plain.reset(seed=5)
        np.testing.assert_array_equal(obs, expected)
        assert info == {}
        envs.unwrapped.step_async(np.ones(3, dtype=np.int64))
        got = envs.unwrapped.step_wait(timeout=10)
        want = plain.step(np.ones(3, dtype=np.int64))
        for a, b in zip(got[:4], want[:4]):
            np.testing.assert_array_equal(a, b)
        envs.unwrapped.reset_async(seed=1, options={"reset_mask": np.array([True, False, True])})
        obs, _ = envs.unwrapped.reset_wait()
        np.testing.assert_array_equal(obs[1], got[0][1])
    finally:
        envs.close()
        plain.close()
    with pytest.raises(ClosedEnvironmentError):
        envs.unwrapped.reset()
    with pytest.raises(ClosedEnvironmentError):
        envs.unwrapped.step_async(np.zeros(3, dtype=np.int64))


class SlowResetEnv(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        import time

        super().reset(seed=seed)
        time.sleep(0.5 if seed is not None and seed >= 100 else 0.0)
        return np.zeros(1, np.float32), {}

    def step(self, action):  # type: ignore[no-untyped-def]
        return np.zeros(1, np.float32), 0.0, False, False, {}


def test_a_wait_that_times_out_is_both_timeout_errors() -> None:
    import multiprocessing

    envs = ParallelPoolVectorEnv.from_env_fns([SlowResetEnv] * 2, num_workers=1)
    try:
        envs.reset(seed=0)
        envs.reset_async(seed=100)
        with pytest.raises(multiprocessing.TimeoutError) as caught:
            envs.reset_wait(timeout=0.05)
        assert isinstance(caught.value, TimeoutError)  # what our pools' recv raises
    finally:
        envs.close()
