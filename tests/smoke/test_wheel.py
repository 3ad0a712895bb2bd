"""The smoke suite of an installed wheel (``.ci/wheels --smoke``), also part of the full suite.

Needs nothing but the package with its ``dm_control`` and ``vizdoom`` extras, NumPy, pytest and the
suite's conftest (NumPy and pytest only):
every family is built into the package, makes its tasks, steps them in sync and async mode, and
renders where it can.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np
import pytest

import parallel_pool
from parallel_pool import families

# dm_control cannot be installed from wheels on Python 3.13 (its dependency labmaze 1.0.6 has no cp313
# wheel, and its sdist builds with Bazel): there its tasks must say which extra they need.
NO_DM_CONTROL = sys.version_info >= (3, 13) and importlib.util.find_spec("dm_control") is None

# One task per family (two where a family has kinds that run different code), and whether its
# frames need nothing beyond the package (MuJoCo's need EGL's library at run time: checked apart).
TASKS = {
    "classic_control": ["CartPole-v1", "Pendulum-v1"],
    "toy_text": ["FrozenLake-v1", "Blackjack-v1"],
    "box2d": ["LunarLander-v3", "CarRacing-v3"],
    "mujoco": ["Ant-v5"],
    "dm_control": ["CheetahRun-v1"],
    "atari": ["Pong-v5"],
    "minigrid": ["MiniGrid-Empty-5x5-v0", "BabyAI-GoToObj-v0"],
    "mpe": ["simple_spread_v3"],
    "vizdoom": ["Basic-v1"],
}


def test_every_family_is_there() -> None:
    assert families.NOT_BUILT == {}
    if NO_DM_CONTROL:
        assert set(families.SKIPPED) == {"dm_control"}
        assert {family for family, _, _ in parallel_pool.unavailable_envs().values()} == {"dm_control"}
    else:
        assert families.SKIPPED == {} and parallel_pool.unavailable_envs() == {}
    listed = parallel_pool.list_all_envs()
    for family, task_ids in TASKS.items():
        assert set(task_ids) <= set(listed) or (family == "dm_control" and NO_DM_CONTROL)
    assert len(listed) >= (348 if NO_DM_CONTROL else 399)


@pytest.mark.parametrize("task_id", [t for ids in TASKS.values() for t in ids])
def test_sync_async_and_render(task_id: str, valid_actions: Any, async_round_trips: Any) -> None:
    if NO_DM_CONTROL and task_id in TASKS["dm_control"]:
        with pytest.raises(parallel_pool.UnavailableTaskError, match=r"pip install 'parallel-pool\[dm_control\]'"):
            parallel_pool.make(task_id)
        return
    env = parallel_pool.make(task_id, num_envs=4, seed=0)
    try:
        obs, info = env.reset()
        assert list(info["env_id"]) == [0, 1, 2, 3]
        for i in range(5):
            obs, reward, terminated, truncated, info = env.step(valid_actions(env, 4, i))
        assert reward.shape[0] == 4
    finally:
        env.close()
    async_round_trips(task_id, num_envs=4, batch_size=2, sends=6)
    if parallel_pool.make_spec(task_id).render_shape is None:
        return
    env = parallel_pool.make(task_id, num_envs=2, seed=0, render_mode="rgb_array")
    try:
        env.reset()
        frames = env.render(np.arange(2))
        assert frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[0] == 2 and frames.shape[-1] == 3
        assert frames.any()
        np.testing.assert_array_equal(env.render(), frames[:1])  # no env ids: env 0 (render_env_id)
    finally:
        env.close()
