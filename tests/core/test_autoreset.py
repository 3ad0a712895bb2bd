"""Autoreset modes against Gymnasium's own SyncVectorEnv, on the same episode ends.

Our envs draw reset states from their own RNG, so after every reset the Gymnasium sub-env is put in
our state; from then on both evolve the same way (classic control matches within 1e-5) and reach
the same episode ends, and every output of the two vector envs is compared.

Every test runs over both backends (the ``make_pool`` fixture): on the Python backend our envs are
Gymnasium's own CartPole-v1 in worker processes, put in the same states.
"""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import parallel_pool

NUM_ENVS = 4
MAX_STEPS = 30  # short episodes: both truncations and terminations happen often
ATOL = 1e-5


def _gym_vec(mode: AutoresetMode, stats: bool) -> gym.vector.VectorEnv:
    envs = SyncVectorEnv(
        [lambda: gym.make("CartPole-v1", max_episode_steps=MAX_STEPS) for _ in range(NUM_ENVS)],
        autoreset_mode=mode,
    )
    return RecordEpisodeStatistics(envs) if stats else envs


def _sync_state(gvec: gym.vector.VectorEnv, obs: np.ndarray, rows) -> None:
    for i in rows:
        gvec.unwrapped.envs[i].unwrapped.state = np.array(obs[i], dtype=np.float64)


def _ours(make_pool, mode: str, stats: bool) -> parallel_pool.GymnasiumEnv:
    return make_pool(
        "CartPole-v1", num_envs=NUM_ENVS, seed=3, max_episode_steps=MAX_STEPS, autoreset_mode=mode,
        episode_stats=stats,
    )


def _reset_both(make_pool, mode: str, stats: bool) -> tuple[parallel_pool.GymnasiumEnv, gym.vector.VectorEnv]:
    """Ours and Gymnasium's vector env in autoreset ``mode``, reset to the same states."""
    env, gvec = _ours(make_pool, mode, stats), _gym_vec(AutoresetMode[mode.upper()], stats)
    obs, _ = env.reset()
    gvec.reset(seed=0)
    _sync_state(gvec, obs, range(NUM_ENVS))
    return env, gvec


# Gymnasium's vector RecordEpisodeStatistics learned same-step autoreset after 1.1; before that it
# counted the first step of the next episode into the last one. Ours follows the fixed semantics,
# checked below against an independent count, and against Gymnasium's wrapper where it has them.
GYMNASIUM_STATS_KNOW_SAME_STEP = "SAME_STEP" in inspect.getsource(RecordEpisodeStatistics.step)


def _compare_episode_stats(info: dict, ginfo: dict) -> None:
    assert ("episode" in info) == ("episode" in ginfo)
    if "episode" in ginfo:
        np.testing.assert_array_equal(info["_episode"], ginfo["_episode"])
        np.testing.assert_allclose(info["episode"]["r"], ginfo["episode"]["r"])
        np.testing.assert_array_equal(info["episode"]["l"], ginfo["episode"]["l"])


@pytest.mark.parametrize("stats", [False, True])
def test_next_step_matches_gymnasium(stats: bool, rng: np.random.Generator, make_pool) -> None:
    env, gvec = _reset_both(make_pool, "next_step", stats)
    prev_done = np.zeros(NUM_ENVS, dtype=bool)
    ends = autoresets = 0
    for _ in range(600):
        action = rng.integers(0, 2, NUM_ENVS)
        obs, rew, term, trunc, info = env.step(action)
        gobs, grew, gterm, gtrunc, ginfo = gvec.step(action)
        # The step after an episode end is a reset in both: reward 0, not done, elapsed 0.
        np.testing.assert_array_equal(info["elapsed_step"][prev_done], 0)
        np.testing.assert_allclose(obs[~prev_done], gobs[~prev_done], atol=ATOL)
        np.testing.assert_array_equal(rew, grew)
        np.testing.assert_array_equal(term, gterm)
        np.testing.assert_array_equal(trunc, gtrunc)
        _compare_episode_stats(info, ginfo)
        autoresets += prev_done.sum()
        _sync_state(gvec, obs, np.flatnonzero(prev_done))
        prev_done = term | trunc
        ends += prev_done.sum()
    assert ends > 20 and autoresets > 20
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    env.close()


@pytest.mark.parametrize("stats", [False, True])
def test_same_step_matches_gymnasium(stats: bool, rng: np.random.Generator, make_pool) -> None:
    env, gvec = _reset_both(make_pool, "same_step", stats)
    ends = 0
    returns = np.zeros(NUM_ENVS)
    lengths = np.zeros(NUM_ENVS, dtype=np.int64)
    for _ in range(600):
        action = rng.integers(0, 2, NUM_ENVS)
        obs, rew, term, trunc, info = env.step(action)
        gobs, grew, gterm, gtrunc, ginfo = gvec.step(action)
        done = term | trunc
        np.testing.assert_allclose(obs[~done], gobs[~done], atol=ATOL)
        np.testing.assert_array_equal(rew, grew)
        np.testing.assert_array_equal(term, gterm)
        np.testing.assert_array_equal(trunc, gtrunc)
        assert ("final_obs" in info) == ("final_obs" in ginfo)
        if done.any():
            ends += done.sum()
            np.testing.assert_array_equal(info["_final_obs"], ginfo["_final_obs"])
            np.testing.assert_array_equal(info["_final_info"], ginfo["_final_info"])
            assert info["final_obs"].dtype == object and ginfo["final_obs"].dtype == object
            for i in range(NUM_ENVS):
                if done[i]:
                    np.testing.assert_allclose(info["final_obs"][i], ginfo["final_obs"][i], atol=ATOL)
                else:
                    assert info["final_obs"][i] is None and ginfo["final_obs"][i] is None
            # The reset happened in the same step: a new episode starts at elapsed_step 0.
            np.testing.assert_array_equal(info["elapsed_step"][done], 0)
        returns += rew
        lengths += 1
        if stats:
            assert ("episode" in info) == bool(done.any())
            if done.any():
                np.testing.assert_array_equal(info["_episode"], done)
                np.testing.assert_allclose(info["episode"]["r"], np.where(done, returns, 0.0))
                np.testing.assert_array_equal(info["episode"]["l"], np.where(done, lengths, 0))
            if GYMNASIUM_STATS_KNOW_SAME_STEP:
                _compare_episode_stats(info, ginfo)
        returns[done] = 0
        lengths[done] = 0
        _sync_state(gvec, obs, np.flatnonzero(done))
    assert ends > 20
    env.close()


def test_disabled_matches_gymnasium(rng: np.random.Generator, make_pool) -> None:
    env, gvec = _reset_both(make_pool, "disabled", False)
    ends = 0
    for _ in range(400):
        action = rng.integers(0, 2, NUM_ENVS)
        obs, rew, term, trunc, info = env.step(action)
        gobs, grew, gterm, gtrunc, _ = gvec.step(action)
        np.testing.assert_allclose(obs, gobs, atol=ATOL)  # no reset happens on its own
        np.testing.assert_array_equal(rew, grew)
        np.testing.assert_array_equal(term, gterm)
        np.testing.assert_array_equal(trunc, gtrunc)
        done = term | trunc
        if done.any():
            ends += done.sum()
            # Both refuse to step an env whose episode is over until it is reset. Gymnasium asserts
            # env by env, after stepping the envs before it, so only its flags are checked here;
            # ours refuses before stepping anything, so the next comparisons still hold.
            with pytest.raises(ValueError, match="reset"):
                env.step(action)
            np.testing.assert_array_equal(gvec.unwrapped._autoreset_envs, done)
            obs, info = env.reset(options={"reset_mask": done})
            gvec.reset(options={"reset_mask": done})
            # Our reset returns the rows of the envs reset, in env order.
            np.testing.assert_array_equal(info["env_id"], np.flatnonzero(done))
            _sync_state_rows(gvec, obs, np.flatnonzero(done))
    assert ends > 10
    env.close()


def _sync_state_rows(gvec: gym.vector.VectorEnv, rows_obs: np.ndarray, ids: np.ndarray) -> None:
    for row, i in enumerate(ids):
        gvec.unwrapped.envs[i].unwrapped.state = np.array(rows_obs[row], dtype=np.float64)


def test_vector_view_reset_mask_keeps_other_rows(make_pool) -> None:
    task, kwargs = make_pool.args("CartPole-v1", num_envs=3, autoreset_mode="disabled")
    # gymnasium.make_vec names native tasks; its view, this class, takes a Python env's id too.
    envs = (gym.make_vec(f"parallel_pool/{task}", **kwargs) if make_pool.backend == "native"
            else parallel_pool.ParallelPoolVectorEnv(task, **kwargs))
    obs, _ = envs.reset(seed=7)
    mask = np.array([False, True, False])
    obs2, info = envs.reset(options={"reset_mask": mask})
    assert obs2.shape == (3, 4)
    np.testing.assert_array_equal(obs2[~mask], obs[~mask])
    assert not np.array_equal(obs2[1], obs[1])
    envs.close()
