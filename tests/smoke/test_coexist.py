"""Installed beside dm_control and Gymnasium's MuJoCo envs (``.ci/wheels --smoke`` installs the wheel
with its dm_control extra and ``gymnasium[mujoco]``): all three run on the one MuJoCo, and our
CheetahRun-v1 and Ant-v5 stay aligned with them.

Compared exactly: the same libmujoco runs from the same state with the same actions on both sides
(tests/envs/dm_control/test_dm_control.py and tests/envs/mujoco/test_mujoco.py measure no difference
over whole episodes), except
CheetahRun-v1's reward, which passes through dm_control's ``rewards.tolerance`` and may differ in its
last bits (``REWARD_RTOL``, as tests/envs/dm_control/test_dm_control.py's, which says why).
"""

from __future__ import annotations

import importlib.util
import sys
import warnings

import numpy as np
import pytest

import parallel_pool

REWARD_RTOL = 1e-15


@pytest.mark.skipif(
    sys.version_info >= (3, 13) and importlib.util.find_spec("dm_control") is None,
    reason="dm_control cannot be installed from wheels on Python 3.13 (labmaze 1.0.6 has no cp313 wheel); "
    "this runs on the 3.11 and 3.12 wheels, and test_wheel.py checks the extra's error here",
)
def test_dm_control_steps_and_cheetah_run_is_aligned() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # glfw's "no display" warning
        from dm_control import suite

    seed = 3
    theirs = suite.load("cheetah", "run", task_kwargs={"random": seed})
    env = parallel_pool.make_dm("CheetahRun-v1", num_envs=1, seed=seed)
    spec = theirs.action_spec()
    actions = np.random.default_rng(seed)
    try:
        ours, first = env.reset(), theirs.reset()
        for key, value in first.observation.items():
            np.testing.assert_array_equal(getattr(ours.observation, key)[0], value, err_msg=f"reset: {key}")
        for t in range(100):
            action = actions.uniform(spec.minimum, spec.maximum)
            step, ours = theirs.step(action), env.step(action[None])
            for key, value in step.observation.items():
                np.testing.assert_array_equal(getattr(ours.observation, key)[0], value, err_msg=f"step {t}: {key}")
            np.testing.assert_allclose(ours.reward[0], step.reward, rtol=REWARD_RTOL, atol=0, err_msg=f"step {t}")
    finally:
        env.close()


def test_gymnasium_ant_v5_is_aligned() -> None:
    import gymnasium

    gym = gymnasium.make("Ant-v5").unwrapped
    pool = parallel_pool.make("Ant-v5", num_envs=1, seed=0, expose_physics_state=True)
    actions = np.random.default_rng(0)
    try:
        obs, info = pool.reset()
        # Gymnasium's env starts from our reset state (the reset noise is drawn by each side's RNG).
        gym.reset(seed=0)
        gym.set_state(info["qpos"][0], info["qvel"][0])
        np.testing.assert_array_equal(obs[0], gym._get_obs())
        for t in range(100):
            action = actions.uniform(-1.0, 1.0, gym.action_space.shape).astype(np.float32)
            obs, reward, terminated, _, _ = pool.step(action[None])
            gym_obs, gym_reward, gym_terminated, _, _ = gym.step(action)
            np.testing.assert_array_equal(obs[0], gym_obs, err_msg=f"step {t}")
            assert reward[0] == gym_reward and bool(terminated[0]) == gym_terminated, f"step {t}"
            if gym_terminated:
                break
    finally:
        pool.close()
        gym.close()
