"""The Python-env backend (``make_python``, ``make("gymnasium:<id>")``): gymnasium.Envs in worker
processes behind the native engine.

The oracle is Gymnasium itself: the same env factories, seeds and actions in ``SyncVectorEnv`` (or
in one plain env per pool env) give the same transitions, compared exactly (the same Python code
runs on both sides, so any difference is the backend's). Faults: env exceptions, killed workers,
timeouts, and workers that outlive a killed or interrupted parent.
"""

from __future__ import annotations

import copy
import functools
import inspect
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import parallel_pool
from parallel_pool.integrations.sb3 import ParallelPoolVecEnv
from parallel_pool.python_envs import space_fields

# The envs below are sent to the workers by value: the workers need not import this file.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

NUM_ENVS = 4
# Gymnasium's vector RecordEpisodeStatistics counts same-step episodes right only after 1.1 (see
# test_autoreset.py); where it does not, the native engine's stats (tested there) are not compared.
GYMNASIUM_STATS_KNOW_SAME_STEP = "SAME_STEP" in inspect.getsource(RecordEpisodeStatistics.step)
MAX_STEPS = 25  # short episodes: truncations and terminations both happen often


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1", max_episode_steps=MAX_STEPS)


class CountingEnv(gym.Env):
    """A small env with every supported space kind: Dict observation, Dict action, and faults on
    demand (``raise_on_step``, ``sleep_s``)."""

    def __init__(self, raise_on_step: int = 0, sleep_s: float = 0.0, length: int = 7) -> None:
        self.observation_space = spaces.Dict({
            "pos": spaces.Box(-10.0, 10.0, (2,), np.float64),
            "count": spaces.Discrete(100),
            "flags": spaces.MultiBinary(3),
            "cells": spaces.MultiDiscrete([3, 4]),
        })
        self.action_space = spaces.Dict({"move": spaces.Box(-1.0, 1.0, (2,), np.float32), "pick": spaces.Discrete(3)})
        self.raise_on_step = raise_on_step
        self.sleep_s = sleep_s
        self.length = length
        self.count = 0
        self.pos = np.zeros(2)

    def _obs(self) -> dict[str, Any]:
        return {
            "pos": self.pos.copy(),
            "count": self.count,
            "flags": np.array([self.count % 2, self.count % 3 == 0, 1], dtype=np.int8),
            "cells": np.array([self.count % 3, self.count % 4], dtype=np.int64),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.count = 0
        self.pos = self.np_random.uniform(-1, 1, 2)
        return self._obs(), {}

    def step(self, action: dict) -> tuple[Any, float, bool, bool, dict]:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        self.count += 1
        if self.count == self.raise_on_step:
            raise ZeroDivisionError(f"step {self.count} of a CountingEnv")
        self.pos = np.clip(self.pos + action["move"], -10, 10)
        reward = float(action["pick"]) + float(self.pos.sum())
        return self._obs(), reward, self.count >= self.length, False, {}


@pytest.mark.parametrize("stats", [False, True])
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
def test_matches_sync_vector_env_transition_by_transition(
    mode: str, stats: bool, rng: np.random.Generator, step_alike: Any
) -> None:
    gym_mode = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP,
                "disabled": AutoresetMode.DISABLED}[mode]
    gvec: gym.vector.VectorEnv = SyncVectorEnv([cartpole] * NUM_ENVS, autoreset_mode=gym_mode)
    if stats:
        gvec = RecordEpisodeStatistics(gvec)
    env = parallel_pool.make_python([cartpole] * NUM_ENVS, num_workers=2, seed=5, autoreset_mode=mode,
                                    episode_stats=stats)
    try:
        assert env.metadata["autoreset_mode"] == gym_mode
        obs, _ = env.reset()
        gobs, _ = gvec.reset(seed=5)
        np.testing.assert_array_equal(obs, gobs)
        ends = finals = 0
        returns, lengths = np.zeros(NUM_ENVS), np.zeros(NUM_ENVS, dtype=np.int64)
        was_reset = np.zeros(NUM_ENVS, dtype=bool)
        for _ in range(300):
            (_, rew, term, trunc, info), (*_, ginfo) = step_alike(env, gvec, rng.integers(0, 2, NUM_ENVS))
            assert ("final_obs" in info) == ("final_obs" in ginfo)
            if "final_obs" in ginfo:
                np.testing.assert_array_equal(info["_final_obs"], ginfo["_final_obs"])
                for i in np.flatnonzero(ginfo["_final_obs"]):
                    np.testing.assert_array_equal(info["final_obs"][i], ginfo["final_obs"][i])
                    finals += 1
            done = term | trunc
            # Episode stats against an independent count, and against Gymnasium's wrapper where it
            # counts right (it zeroes every env's count on a reset_mask reset, so not in "disabled").
            counted = ~was_reset
            returns[counted] += rew[counted]
            lengths[counted] += 1
            if stats:
                assert ("episode" in info) == done.any()
            if stats and done.any():
                np.testing.assert_array_equal(info["_episode"], done)
                np.testing.assert_array_equal(info["episode"]["r"], np.where(done, returns, 0))
                np.testing.assert_array_equal(info["episode"]["l"], np.where(done, lengths, 0))
                if mode == "next_step" or (mode == "same_step" and GYMNASIUM_STATS_KNOW_SAME_STEP):
                    np.testing.assert_array_equal(info["episode"]["r"], ginfo["episode"]["r"])
                    np.testing.assert_array_equal(info["episode"]["l"], ginfo["episode"]["l"])
            returns[done], lengths[done] = 0, 0
            # next_step: the step after an episode end is a reset, not counted.
            was_reset = done if mode == "next_step" else np.zeros(NUM_ENVS, dtype=bool)
            ends += int(done.sum())
            if mode == "disabled" and done.any():
                obs, _ = env.reset(options={"reset_mask": done})  # the rows of the envs reset
                gobs, _ = gvec.reset(options={"reset_mask": done})
                np.testing.assert_array_equal(obs, gobs[done])
        assert ends > 10  # many episode ends were compared
        if mode == "same_step":
            assert finals == ends
    finally:
        env.close()
        gvec.close()


def test_async_rows_match_one_gymnasium_env_per_pool_env(async_rows) -> None:
    num_envs, batch = 8, 4
    env = parallel_pool.make_python([cartpole] * num_envs, batch_size=batch, num_workers=2, seed=11)
    oracles = [cartpole() for _ in range(num_envs)]
    oracle_obs = [o.reset(seed=11 + i)[0] for i, o in enumerate(oracles)]
    oracle_done = [False] * num_envs
    policy = np.random.default_rng(0)
    rows = 0
    try:
        for (obs, rew, term, trunc, info), actions in async_rows(
            env, lambda i, o: np.int64(policy.integers(0, 2)), batches=150
        ):
            assert obs.shape == (batch, 4)
            for k, i in enumerate(info["env_id"]):
                oracle = oracles[i]
                if actions[k] is None:  # the first reset
                    expect = (oracle_obs[i], 0.0, False, False)
                elif oracle_done[i]:  # next_step autoreset: this step reset the env
                    expect = (oracle.reset()[0], 0.0, False, False)
                    oracle_done[i] = False
                else:
                    o, r, te, tr, _ = oracle.step(actions[k])
                    expect = (o, r, te, tr)
                    oracle_done[i] = te or tr
                np.testing.assert_array_equal(obs[k], expect[0])
                assert (rew[k], term[k], trunc[k]) == expect[1:]
                rows += 1
        assert rows == (150 + num_envs // batch) * batch
    finally:
        env.close()


def test_dict_spaces_round_trip_and_env_spaces_are_kept() -> None:
    env = parallel_pool.make_python([CountingEnv] * 3, num_workers=2, seed=1)
    oracles = [CountingEnv() for _ in range(3)]
    try:
        assert env.observation_space == CountingEnv().observation_space
        assert env.action_space == CountingEnv().action_space
        obs, _ = env.reset()
        for i, o in enumerate(oracles):
            expect, _ = o.reset(seed=1 + i)
            for key in expect:
                np.testing.assert_array_equal(obs[key][i], expect[key])
            assert obs[key].dtype == env.observation_space[key].dtype
        for t in range(12):
            action = {"move": np.full((3, 2), 0.25 * t - 1, np.float32), "pick": np.array([0, 1, 2])}
            obs, rew, term, trunc, _ = env.step(action)
            for i, o in enumerate(oracles):
                if t == 7:  # the step after the length-7 episode ended: next_step autoreset
                    expect, r, te = o.reset()[0], 0.0, False
                else:
                    expect, r, te, _, _ = o.step({"move": action["move"][i], "pick": int(action["pick"][i])})
                for key in expect:
                    np.testing.assert_array_equal(obs[key][i], expect[key], err_msg=f"{key} step {t}")
                assert rew[i] == r and term[i] == te
    finally:
        env.close()


class OneKeyEnv(gym.Env):
    """A Dict observation of a single key: the flat unpacking path's one-key case."""

    observation_space = spaces.Dict({"x": spaces.Box(-1e9, 1e9, (3,), np.float64)})
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return {"x": np.full(3, 0.0)}, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1 + int(action)
        return {"x": np.full(3, float(self.t))}, 1.0, self.t > 5, False, {}


@pytest.mark.parametrize("batch_size", [None, 1])
def test_a_one_key_dict_observation_is_a_dict_of_that_key(batch_size: int | None) -> None:
    env = parallel_pool.make_python([OneKeyEnv] * 2, num_workers=1, batch_size=batch_size)
    try:
        obs, info = env.reset() if batch_size is None else (env.async_reset(), env.recv())[1][::4]
        assert list(obs) == ["x"] and obs["x"].shape == (len(info["env_id"]), 3) and not obs["x"].any()
        if batch_size is None:
            obs, rew, term, trunc, info = env.step(np.array([0, 1]))
            np.testing.assert_array_equal(obs["x"], [[1.0] * 3, [2.0] * 3])
        else:
            env.send(np.array([1]), info["env_id"])
            obs, rew, term, trunc, info = env.recv()
            assert list(obs) == ["x"] and obs["x"].shape == (1, 3)
        assert list(info) == ["env_id", "elapsed_step"]
    finally:
        env.close()


def test_spec_fields_of_each_space_kind() -> None:
    fields = dict(space_fields(CountingEnv().observation_space, "obs"))
    assert fields["pos"]["name"] == "obs:pos" and fields["pos"]["dtype"] == "float64"
    assert fields["count"]["space"] == "discrete" and fields["count"]["high"] == [99]
    assert fields["flags"]["dtype"] == "int8" and fields["flags"]["shape"] == (3,)
    assert fields["cells"]["high"] == [2.0, 3.0]
    # A space that is not of a fixed size is pickled into one byte row.
    ((key, text),) = space_fields(spaces.Text(5), "obs")
    assert key is None and text["dtype"] == "uint8" and text["name"] == "obs"
    # A dtype the engine lacks rides in the signed integer field of its size, unchecked.
    ((_, wide),) = space_fields(spaces.Box(0, 1, (2,), np.uint32), "obs")
    assert wide["dtype"] == "int32" and wide["shape"] == (2,) and wide["low"] == []
    ((_, small),) = space_fields(spaces.Discrete(4, dtype=np.int8), "action")
    assert small["dtype"] == "int8" and small["space"] == "discrete" and small["high"] == [3]


def test_front_ends_gym_dm_and_vector_view() -> None:
    dm = parallel_pool.make_python("CartPole-v1", env_type="dm", num_envs=2, num_workers=1, seed=0)
    ts = dm.reset()
    expect, _ = gym.make("CartPole-v1").reset(seed=0)
    np.testing.assert_array_equal(ts.observation.obs[0], expect)
    ts = dm.step(np.array([0, 1]))
    assert list(ts.observation.env_id) == [0, 1]
    dm.close()
    env = parallel_pool.make("gymnasium:CartPole-v1", env_type="gym", num_envs=2, num_workers=1, seed=0)
    env.reset()
    info = env.step(np.array([0, 1]))[4]
    assert "TimeLimit.truncated" in info
    env.close()
    vec = parallel_pool.ParallelPoolVectorEnv("gymnasium:CartPole-v1", num_envs=3, num_workers=1)
    assert vec.observation_space.shape == (3, 4)
    obs, _ = vec.reset(seed=0)
    np.testing.assert_array_equal(obs[0], expect)
    vec.step(vec.action_space.sample())
    vec.close()


def test_env_kwargs_per_env_and_make_kwargs() -> None:
    env = parallel_pool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=1, seed=0,
                             env_kwargs=[{"max_episode_steps": 3}, {"max_episode_steps": 5}])
    env.reset()
    truncated_at = {}
    for t in range(1, 6):
        _, _, term, trunc, _ = env.step(np.zeros(2, dtype=np.int64))
        for i in np.flatnonzero(trunc & ~term):
            truncated_at.setdefault(int(i), t)
    assert truncated_at == {0: 3, 1: 5}
    env.close()
    # Kwargs that are not pool options go to gymnasium.make.
    env = parallel_pool.make("gymnasium:Pendulum-v1", num_envs=1, num_workers=1, g=3.0, seed=0)
    ref = gym.make("Pendulum-v1", g=3.0)
    np.testing.assert_array_equal(env.reset()[0][0], ref.reset(seed=0)[0])
    np.testing.assert_array_equal(env.step(np.ones((1, 1), np.float32))[0][0], ref.step(np.ones(1, np.float32))[0])
    env.close()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown keyword"):
        parallel_pool.make_python([cartpole] * 2, bogus=1)
    with pytest.raises(ValueError, match="must equal len"):
        parallel_pool.make_python([cartpole] * 2, num_envs=3)
    with pytest.raises(TypeError, match="callables"):
        parallel_pool.make_python([1, 2])
    with pytest.raises(ValueError, match="one dict per env"):
        parallel_pool.make("gymnasium:CartPole-v1", num_envs=2, env_kwargs=[{}])
    with pytest.raises(RuntimeError, match="NoSuchEnv"):
        parallel_pool.make("gymnasium:NoSuchEnv-v0", num_envs=1)
    env = parallel_pool.make_python([cartpole] * 2, num_workers=1, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"must be in \[0, 1\]"):
        env.step(np.array([0, 2]))
    env.step(np.array([0, 1]))  # the pool goes on
    env.close()


def test_render_frames_match_the_env() -> None:
    env = parallel_pool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=1, seed=4, render_mode="rgb_array")
    ref = [gym.make("CartPole-v1", render_mode="rgb_array") for _ in range(2)]
    try:
        assert env.render_mode == "rgb_array" and env.spec.render_shape == (400, 600, 3)
        env.reset()
        for i, r in enumerate(ref):
            r.reset(seed=4 + i)
        env.step(np.array([1, 0]))
        ref[0].step(1)
        ref[1].step(0)
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (2, 400, 600, 3)
        for i, r in enumerate(ref):
            np.testing.assert_array_equal(frames[i], r.render())
    finally:
        env.close()


def test_env_exception_names_the_env_with_its_traceback_and_others_go_on() -> None:
    fns = [CountingEnv, lambda: CountingEnv(raise_on_step=2), CountingEnv]
    env = parallel_pool.make_python(fns, num_workers=2, seed=0)
    action = {"move": np.zeros((3, 2), np.float32), "pick": np.zeros(3, np.int64)}
    env.reset()
    env.step(action)
    with pytest.raises(parallel_pool.EnvError) as err:
        env.step(action)
    assert err.value.env_ids == [1]
    message = err.value.errors[0][1]
    assert "Traceback" in message and "ZeroDivisionError: step 2 of a CountingEnv" in message
    obs, rew, term, _, info = err.value.result
    assert list(obs["count"]) == [2, 0, 2]  # the failed row holds zeros; the others their step
    obs, _, _, _, info = env.step(action)  # env 1 resets, the others go on
    assert list(obs["count"]) == [3, 0, 3] and list(info["elapsed_step"]) == [3, 0, 3]
    env.close()


def test_killed_worker_is_reported_and_restarted() -> None:
    env = parallel_pool.make_python([cartpole] * 4, num_workers=2, seed=0)
    env.reset()
    env.step(np.zeros(4, dtype=np.int64))
    victim = env.workers.pids[1]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while env.workers.dead() == {} and time.monotonic() < deadline:
        time.sleep(0.01)
    assert env.workers.dead() == {1: [1, 3]}  # round robin: env i on worker i % 2
    with pytest.raises(parallel_pool.EnvError) as err:
        env.step(np.zeros(4, dtype=np.int64))
    assert err.value.env_ids == [1, 3]
    assert f"worker process 1 (pid {victim}, envs 1, 3) has died" in err.value.errors[0][1]
    obs = err.value.result[0]
    assert np.all(obs[[1, 3]] == 0) and np.all(obs[[0, 2]] != 0)
    # Still dead: refused again, at once, rather than hanging.
    with pytest.raises(parallel_pool.EnvError):
        env.step(np.zeros(4, dtype=np.int64))
    assert env.workers.restart() == [1, 3]
    assert env.workers.dead() == {} and env.workers.pids[1] != victim
    obs, _, _, _, info = env.step(np.zeros(4, dtype=np.int64))
    assert list(info["elapsed_step"]) == [4, 0, 4, 0]  # the restarted envs start new episodes
    obs, _ = env.reset(seed=3)  # and can be re-seeded as any env
    np.testing.assert_array_equal(obs[3], cartpole().reset(seed=6)[0])
    env.close()


def test_recv_timeout_then_the_result_still_arrives() -> None:
    env = parallel_pool.make_python([lambda: CountingEnv(sleep_s=0.5)] * 2, batch_size=1, num_workers=2, seed=0)
    env.async_reset()
    env.recv(timeout=10)
    env.recv(timeout=10)
    env.send({"move": np.zeros((1, 2), np.float32), "pick": np.zeros(1, np.int64)}, np.array([0]))
    with pytest.raises(TimeoutError):
        env.recv(timeout=0.05)
    obs, _, _, _, info = env.recv(timeout=10)
    assert list(info["env_id"]) == [0] and obs["count"][0] == 1
    env.close()


def test_close_stops_the_workers_even_with_a_step_in_flight() -> None:
    env = parallel_pool.make_python([lambda: CountingEnv(sleep_s=0.3)] * 2, batch_size=1, num_workers=2, seed=0)
    pids = env.workers.pids
    env.async_reset()
    env.recv(timeout=10)
    env.recv(timeout=10)
    env.send({"move": np.zeros((1, 2), np.float32), "pick": np.zeros(1, np.int64)}, np.array([0]))
    env.close()
    for pid in pids:
        assert _gone(pid)
    with pytest.raises(parallel_pool.PoolClosedError):
        env.reset()
    env.close()  # idempotent


class ExitingEnv(CountingEnv):
    """A CountingEnv whose ``exit_on_step``-th step ends its worker process (no answer, no cleanup),
    once: the file ``marker`` says it happened, so a restarted worker's env does not."""

    def __init__(self, marker: str, exit_on_step: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.marker = marker
        self.exit_on_step = exit_on_step

    def step(self, action: dict) -> tuple[Any, float, bool, bool, dict]:
        if self.count + 1 == self.exit_on_step and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(3)
        return super().step(action)


def _counting_actions(n: int) -> dict[str, np.ndarray]:
    return {"move": np.zeros((n, 2), np.float32), "pick": np.zeros(n, np.int64)}


def test_a_batch_on_one_worker_that_fails_part_way() -> None:
    # Six envs on one worker: each batch is handed over whole; envs 1 and 4 raise in the middle of it.
    fns = [CountingEnv, lambda: CountingEnv(raise_on_step=2), CountingEnv, CountingEnv,
           lambda: CountingEnv(raise_on_step=2), CountingEnv]
    env = parallel_pool.make_python(fns, num_workers=1, seed=0)
    env.reset()
    env.step(_counting_actions(6))
    with pytest.raises(parallel_pool.EnvError) as err:
        env.step(_counting_actions(6))
    assert err.value.env_ids == [1, 4]
    assert all("ZeroDivisionError: step 2 of a CountingEnv" in text for _, text in err.value.errors)
    obs = err.value.result[0]
    assert list(obs["count"]) == [2, 0, 2, 2, 0, 2]
    obs, _, _, _, info = env.step(_counting_actions(6))
    assert list(obs["count"]) == [3, 0, 3, 3, 0, 3] and list(info["elapsed_step"]) == [3, 0, 3, 3, 0, 3]
    env.close()


@pytest.mark.parametrize("batch_size", [4, 2])
def test_a_worker_that_dies_mid_batch(batch_size: int, tmp_path) -> None:
    # Four envs on one worker, which steps them in turn: env 1's first step ends the process, so
    # env 0's step (done before) keeps its result and envs 1-3 are reported with the death.
    fns = [CountingEnv, lambda: ExitingEnv(str(tmp_path / "exited"), exit_on_step=1), CountingEnv, CountingEnv]
    # One thread posts the jobs (the pool's or, in sync mode, recv's caller): they reach the worker in order.
    env = parallel_pool.make_python(fns, num_workers=1, num_threads=1, batch_size=batch_size, seed=0)
    pid = env.workers.pids[0]
    env.async_reset()
    for _ in range(4 // batch_size):
        env.recv(timeout=20)
    env.send(_counting_actions(4), np.arange(4))
    rows: dict[int, int] = {}
    failed: list[int] = []
    start = time.monotonic()
    for _ in range(4 // batch_size):
        try:
            obs, _, _, _, info = env.recv(timeout=20)
        except parallel_pool.EnvError as err:
            failed += err.env_ids
            assert all(f"worker process 0 (pid {pid}, envs 0, 1, 2, 3) has died" in t for _, t in err.errors)
            obs, _, _, _, info = err.result
        rows.update(zip(info["env_id"].tolist(), obs["count"].tolist()))
    assert time.monotonic() - start < 5  # the death is seen once, not waited for per env
    assert sorted(failed) == [1, 2, 3]
    assert rows == {0: 1, 1: 0, 2: 0, 3: 0}
    assert env.workers.dead() == {0: [0, 1, 2, 3]}
    assert env.workers.restart() == [0, 1, 2, 3]
    # The new worker's envs are new: envs 1-3 (failed) reset on this step; env 0 (whose step went
    # through before the death) cannot go on with its episode: it is an error, and resets next.
    env.send(_counting_actions(4), np.arange(4))
    failed = []
    elapsed = {}
    for _ in range(4 // batch_size):
        try:
            obs, _, _, _, info = env.recv(timeout=20)
        except parallel_pool.EnvError as err:
            failed += err.env_ids
            assert "env 0 has not been reset since its worker process was (re)started" in err.errors[0][1]
            obs, _, _, _, info = err.result
        elapsed.update(zip(info["env_id"].tolist(), info["elapsed_step"].tolist()))
    assert failed == [0]
    assert {e: elapsed[e] for e in (1, 2, 3)} == {1: 0, 2: 0, 3: 0}
    env.send(_counting_actions(4), np.arange(4))
    for _ in range(4 // batch_size):
        obs, _, _, _, info = env.recv(timeout=20)
        elapsed.update(zip(info["env_id"].tolist(), info["elapsed_step"].tolist()))
    assert elapsed == {0: 0, 1: 1, 2: 1, 3: 1}
    env.close()


def test_close_with_a_whole_batch_handed_to_a_worker() -> None:
    env = parallel_pool.make_python([lambda: CountingEnv(sleep_s=0.2)] * 4, num_workers=1, seed=0)
    pids = env.workers.pids
    env.reset()
    env.send(_counting_actions(4), np.arange(4))  # ~0.8 s of steps, all handed to the one worker
    time.sleep(0.05)
    start = time.monotonic()
    env.close()
    assert time.monotonic() - start < 10
    for pid in pids:
        assert _gone(pid)
    with pytest.raises(parallel_pool.PoolClosedError):
        env.step(_counting_actions(4))


def test_recv_timeout_with_a_batch_handed_to_a_worker() -> None:
    env = parallel_pool.make_python([lambda: CountingEnv(sleep_s=0.1)] * 4, num_workers=1, batch_size=2, seed=0)
    env.async_reset()
    env.recv(timeout=20)
    env.recv(timeout=20)
    env.send(_counting_actions(4), np.arange(4))
    with pytest.raises(TimeoutError):
        env.recv(timeout=0.05)
    seen = []
    for _ in range(2):
        obs, _, _, _, info = env.recv(timeout=20)
        seen += info["env_id"].tolist()
        assert list(obs["count"]) == [1, 1]
    assert sorted(seen) == [0, 1, 2, 3]
    env.close()


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` has exited (a zombie left for a non-reaping init counts as exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


_PARENT = textwrap.dedent("""
    import signal, sys, time, numpy as np, parallel_pool
    # A terminal's Ctrl-C, as a user has it: Python's handler even when SIGINT came in ignored (the
    # children of a background job inherit SIG_IGN, and Python then installs none).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if __name__ == "__main__":
        env = parallel_pool.make("gymnasium:CartPole-v1", num_envs=4, num_workers=2, seed=0)
        env.reset()
        print(" ".join(map(str, env.workers.pids)), flush=True)
        while True:
            env.step(np.zeros(4, dtype=np.int64))
            time.sleep(0.001)
""")


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_no_orphan_workers_when_the_parent_is_killed_or_interrupted(tmp_path, how: str) -> None:
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = parent.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2, (line, parent.stderr.read() if parent.poll() is not None else "")
        time.sleep(0.2)
        parent.send_signal(getattr(signal, how))
        parent.wait(timeout=20)
        if how == "SIGINT":
            assert "KeyboardInterrupt" in parent.stderr.read()
        for pid in pids:
            assert _gone(pid), f"worker {pid} outlived its parent ({how})"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_integrations_take_a_python_env_id() -> None:
    """The integrations make their pools by task id: "gymnasium:<id>" gives them the Python backend
    (SB3 here: same-step autoreset with terminal_observation, VecMonitor's episode info)."""
    venv = ParallelPoolVecEnv("gymnasium:CartPole-v1", num_envs=2, seed=0, num_workers=1, max_episode_steps=5)
    ref = [gym.make("CartPole-v1", max_episode_steps=5) for _ in range(2)]
    obs = venv.reset()
    np.testing.assert_array_equal(obs, np.stack([r.reset(seed=i)[0] for i, r in enumerate(ref)]))
    for _ in range(5):
        obs, _, dones, infos = venv.step(np.zeros(2, dtype=np.int64))
    assert dones.all()
    for i, r in enumerate(ref):
        final = [r.step(0)[0] for _ in range(5)][-1]
        np.testing.assert_array_equal(infos[i]["terminal_observation"], final)
        assert infos[i]["episode"]["l"] == 5 and infos[i]["TimeLimit.truncated"]
        np.testing.assert_array_equal(obs[i], r.reset()[0])  # the next episode, unseeded: its stream goes on
    venv.close()


def test_default_workers_leave_the_parent_a_core_and_threads_by_mode(monkeypatch) -> None:
    from parallel_pool import python_envs

    for cpus, num_envs, expected in [(1, 8, 1), (2, 8, 1), (4, 8, 3), (16, 8, 8), (16, 1, 1), (None, 4, 1)]:
        monkeypatch.setattr(python_envs.os, "cpu_count", lambda cpus=cpus: cpus)
        assert python_envs.default_num_workers(num_envs) == expected, (cpus, num_envs)
    monkeypatch.setattr(python_envs.os, "cpu_count", lambda: 4)
    # Sync: the caller alone hands out and collects the batch; async: two threads per worker.
    for batch_size, threads in [(None, 1), (4, 6)]:
        env = parallel_pool.make_python([cartpole] * 8, seed=0, batch_size=batch_size)
        try:
            assert env.workers.num_workers == 3
            assert env.spec.config["num_threads"] == threads
        finally:
            env.close()


class BusyCartPole(gym.Wrapper):
    """CartPole whose every step also burns ``busy_s`` of CPU time: a costly env."""

    def __init__(self, busy_s: float = 2e-4) -> None:
        super().__init__(cartpole())
        self.busy_s = busy_s

    def step(self, action: Any) -> Any:
        start = time.thread_time()
        while time.thread_time() - start < self.busy_s:
            pass
        return self.env.step(action)


def raising_step_cartpole() -> gym.Env:
    return CountingEnv(raise_on_step=1)


def test_sync_workers_follow_the_spare_envs_step_time(monkeypatch, rng: np.random.Generator) -> None:
    """Sync mode, default worker count: a worker on every CPU when each one's share of a batch of
    the spare env's steps is long (the steps then outweigh wake-ups of workers that cannot spin),
    else one per CPU but one (spinning hand-offs); the workers not needed end before they build
    envs. A given num_workers, declared info keys (no spare env) and async mode keep the default."""
    from parallel_pool import python_envs

    share = python_envs._SHARE_FOR_EVERY_CPU_S
    for cpus, num_envs, step_s, expected in [
        (2, 8, 6e-6, 1), (2, 32, 6e-6, 1), (2, 64, 6e-6, 1), (2, 8, 25e-6, 1), (2, 32, 25e-6, 2),
        (2, 2, 2 * share, 2), (2, 2, share / 2, 1), (2, 1, 1.0, 1), (2, 64, None, 1), (1, 64, 1.0, 1),
        (4, 8, 6e-6, 3), (4, 8, 1e-3, 4), (4, 3, 1e-3, 3),
    ]:
        monkeypatch.setattr(python_envs.os, "cpu_count", lambda cpus=cpus: cpus)
        assert python_envs.sync_num_workers(num_envs, step_s) == expected, (cpus, num_envs, step_s)
    monkeypatch.setattr(python_envs.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(python_envs.os, "sched_getaffinity", lambda pid: {0, 1})
    import multiprocessing

    # A costly env: two workers, neither side spinning (3 processes on 2 CPUs), the same
    # transitions as SyncVectorEnv; the spare env's step time is the busy wait and more.
    def children() -> set[int]:
        return {p.pid for p in multiprocessing.active_children()}  # (reaps those that ended)

    before = children()
    env = parallel_pool.make_python([BusyCartPole] * 4, seed=5)
    gvec = SyncVectorEnv([BusyCartPole] * 4)
    try:
        assert env.workers.num_workers == 2 and env.spec.config["num_workers"] == 2
        assert env.workers.probed_step_s >= 2e-4
        assert env.spec.config["spin"] is False
        assert children() - before == set(env.workers.pids)
        np.testing.assert_array_equal(env.reset()[0], gvec.reset(seed=5)[0])
        for _ in range(40):
            action = rng.integers(0, 2, 4)
            for ours, theirs in zip(env.step(action)[:4], gvec.step(action)[:4], strict=True):
                np.testing.assert_array_equal(ours, theirs)
    finally:
        env.close()
        gvec.close()
    # A cheap env: one worker, spinning; the second process started for the choice has ended.
    before = children()
    env = parallel_pool.make_python([cartpole] * 4, seed=0)
    try:
        assert env.workers.num_workers == 1 and env.spec.config["spin"] is True
        assert 0 < env.workers.probed_step_s < 1e-4
        assert children() - before == set(env.workers.pids)
    finally:
        env.close()
    for kwargs in ({"num_workers": 1}, {"info_keys": {}}, {"batch_size": 2}):
        env = parallel_pool.make_python([BusyCartPole] * 4, seed=0, **kwargs)
        try:
            assert env.workers.num_workers == 1 and env.workers.probed_step_s is None, kwargs
        finally:
            env.close()
    # A spare env whose step raises is not timed: the default stands, and the pool works.
    env = parallel_pool.make_python([raising_step_cartpole] * 4, seed=0)
    try:
        assert env.workers.num_workers == 1 and env.workers.probed_step_s is None
        env.reset()
    finally:
        env.close()


def test_spin_is_chosen_from_the_cpus_and_can_be_forced(monkeypatch) -> None:
    from parallel_pool import python_envs

    # The pool's threads spin only when every thread that may wait on a worker, and every worker,
    # has a CPU (async: the caller waits in recv besides the pool's num_threads - 1 workers, at
    # least one); the workers spin when they fit the CPUs beside one core for the parent.
    parent, worker = python_envs._SPIN_PARENT_US, python_envs._SPIN_WORKER_US
    for cpus, threads, workers, sync, budgets in [
        (2, 1, 1, True, (parent, worker)), (2, 2, 1, True, (0, worker)), (1, 1, 1, True, (0, 0)),
        (4, 1, 3, True, (parent, worker)), (2, 1, 1, False, (0, worker)), (2, 2, 1, False, (0, worker)),
        (2, 2, 2, False, (0, 0)), (4, 2, 2, False, (parent, worker)), (4, 2, 3, False, (0, worker)),
        (4, 6, 3, False, (0, worker)), (4, 8, 4, False, (0, 0)),
    ]:
        monkeypatch.setattr(python_envs.os, "sched_getaffinity", lambda pid, cpus=cpus: set(range(cpus)))
        assert python_envs._spin_budgets(None, threads, workers, sync) == budgets, (cpus, threads, workers, sync)
    assert python_envs._spin_budgets(True, 8, 8, False) == (python_envs._SPIN_PARENT_US, python_envs._SPIN_WORKER_US)
    assert python_envs._spin_budgets(False, 1, 1, True) == (0, 0)
    with pytest.raises(TypeError, match="spin must be None"):
        parallel_pool.make_python([cartpole] * 2, spin=1)
    monkeypatch.setattr(python_envs.os, "sched_getaffinity", lambda pid: {0, 1})
    env = parallel_pool.make_python([cartpole] * 2, seed=0)  # sync, one thread, one worker: 2 CPUs
    try:
        assert env.spec.config["spin"] is True
        assert env.workers._channel.spin == (python_envs._SPIN_PARENT_US, python_envs._SPIN_WORKER_US)
    finally:
        env.close()
    # Async on 2 CPUs: the caller, the pool's thread and the worker do not fit, the worker alone does.
    env = parallel_pool.make_python([cartpole] * 2, seed=0, batch_size=1)
    try:
        assert env.spec.config["spin"] is True
        assert env.workers._channel.spin == (0, python_envs._SPIN_WORKER_US)
    finally:
        env.close()
    env = parallel_pool.make_python([cartpole] * 2, seed=0, spin=False)
    try:
        assert env.spec.config["spin"] is False and env.workers._channel.spin == (0, 0)
    finally:
        env.close()


@pytest.mark.parametrize("batch_size", [None, 2])
def test_spinning_pools_match_sync_vector_env_and_see_a_dead_worker(batch_size: int | None,
                                                                   rng: np.random.Generator) -> None:
    """Both sides spinning (forced, whatever the CPUs), sync and async: the same transitions as
    SyncVectorEnv, with pauses longer than the budgets between some steps (the waits then sleep
    and must still be woken), and a killed worker reported, not waited on for ever."""
    env = parallel_pool.make_python([cartpole] * 4, num_workers=1, seed=3, batch_size=batch_size, spin=True)
    gvec = SyncVectorEnv([cartpole] * 4)
    try:
        assert env.spec.config["spin"] is True
        gobs, _ = gvec.reset(seed=3)
        if batch_size is None:
            obs, _ = env.reset()
            np.testing.assert_array_equal(obs, gobs)
        else:
            env.async_reset()
            ids = np.arange(4)
            pending = {}
            # Collect the resets: every env's first row.
            while len(pending) < 4:
                obs, _, _, _, info = env.recv()
                pending.update({int(i): o for i, o in zip(info["env_id"], obs, strict=True)})
            np.testing.assert_array_equal(np.stack([pending[i] for i in ids]), gobs)
        for t in range(150):
            action = rng.integers(0, 2, 4)
            gobs, grew, gterm, gtrunc, _ = gvec.step(action)
            if batch_size is None:
                obs, rew, term, trunc, _ = env.step(action)
            else:
                env.send(action, ids)
                rows = {}
                while len(rows) < 4:
                    o, r, te, tr, info = env.recv()
                    for k, i in enumerate(info["env_id"]):
                        rows[int(i)] = (o[k], r[k], te[k], tr[k])
                obs, rew, term, trunc = (np.stack([rows[i][j] for i in ids]) for j in range(4))
            np.testing.assert_array_equal(obs, gobs)
            np.testing.assert_array_equal(rew, grew)
            np.testing.assert_array_equal(term, gterm)
            np.testing.assert_array_equal(trunc, gtrunc)
            if t % 50 == 49:
                time.sleep(0.02)
        os.kill(env.workers.pids[0], signal.SIGKILL)
        with pytest.raises(parallel_pool.EnvError) as err:
            if batch_size is None:
                env.step(np.zeros(4, dtype=np.int64))
            else:
                env.send(np.zeros(4, dtype=np.int64), ids)
                env.recv(timeout=30)
        assert "has died" in err.value.errors[0][1]
    finally:
        env.close()
        gvec.close()


class TupleActionEnv(gym.Env):
    """Tuple actions (a Discrete, a Box and a MultiDiscrete) and a Tuple observation that echoes them."""

    def __init__(self) -> None:
        self.action_space = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1.0, 1.0, (2,), np.float32),
                                          spaces.MultiDiscrete([2, 5])))
        self.observation_space = spaces.Tuple((spaces.Box(-10.0, 10.0, (2,), np.float64), spaces.Discrete(20)))
        self.pos = np.zeros(2)
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.pos, self.count = self.np_random.uniform(-1, 1, 2), 0
        return (self.pos.copy(), self.count), {}

    def step(self, action: tuple) -> tuple[Any, float, bool, bool, dict]:
        pick, move, cells = action
        assert self.action_space.contains(action), action
        self.count += 1 + int(cells[1])
        self.pos = np.clip(self.pos + move, -10, 10)
        reward = float(pick) * float(cells[0] + 1) + float(self.pos.sum())
        return (self.pos.copy(), self.count % 20), reward, self.count >= 12, False, {}


def test_tuple_actions_match_sync_vector_env() -> None:
    """A batch of Tuple actions is a tuple of arrays (Gymnasium's batch_space): through the pool and the
    vector view, every step is SyncVectorEnv's."""
    num_envs = 3
    ref = SyncVectorEnv([TupleActionEnv] * num_envs)
    env = parallel_pool.make_python([TupleActionEnv] * num_envs, num_workers=2, seed=2)
    view = parallel_pool.ParallelPoolVectorEnv(parallel_pool.python_envs.PythonEnvSource([TupleActionEnv] * num_envs),
                                               num_envs=num_envs, num_workers=1)
    try:
        assert env.action_space == TupleActionEnv().action_space and view.action_space == ref.action_space
        ref.action_space.seed(0)
        ref_obs, _ = ref.reset(seed=2)
        for ours in (env.reset()[0], view.reset(seed=2)[0]):
            for a, b in zip(ours, ref_obs):
                np.testing.assert_array_equal(a, b)
        for t in range(30):
            action = ref.action_space.sample()
            assert isinstance(action, tuple) and action[1].shape == (num_envs, 2)
            expect = ref.step(action)
            for got in (env.step(action), view.step(action)):
                for a, b in zip(got[0], expect[0]):
                    np.testing.assert_array_equal(a, b, err_msg=f"step {t}")
                for a, b in zip(got[1:4], expect[1:4]):
                    np.testing.assert_array_equal(a, b, err_msg=f"step {t}")
        with pytest.raises(ValueError, match="action"):
            env.step(action[:2])  # an entry missing
    finally:
        env.close()
        view.close()
        ref.close()


def test_nested_spaces_have_a_field_per_leaf_named_by_its_path() -> None:
    nested = spaces.Dict({"a": spaces.Tuple((spaces.Discrete(2), spaces.Box(0, 1, (3,), np.float16))),
                          "b": spaces.Discrete(3)})
    fields = space_fields(nested, "action")
    assert [(path, f["name"], f["dtype"]) for path, f in fields] == [
        (("a", 0), "action:a/0", "int64"), (("a", 1), "action:a/1", "int16"), ("b", "action:b", "int64")]
    # A key that would read as a path: its leaf is numbered instead.
    odd = spaces.Dict({"a/0": spaces.Discrete(2), "a": spaces.Tuple((spaces.Discrete(2),))})
    assert [f["name"] for _, f in space_fields(odd, "obs")] == ["obs:a/0", "obs:#1"]


def test_register_names_a_python_env_for_make_and_make_vec() -> None:
    """``register(name, "gymnasium:<id>", **defaults)``: ``make(name)`` and
    ``gymnasium.make_vec("parallel_pool/<name>")`` run the Gymnasium env on this backend."""
    assert parallel_pool.register("CartPole-py-test", "gymnasium:CartPole-v1", num_workers=1,
                                  max_episode_steps=5) == ["CartPole-py-test"]
    assert parallel_pool.register("CartPole-py-test-3", "CartPole-py-test", max_episode_steps=3) == [
        "CartPole-py-test-3"
    ]
    ref = gym.make("CartPole-v1")
    envs = gym.make_vec("parallel_pool/CartPole-py-test", num_envs=2)
    try:
        assert isinstance(envs, gym.vector.VectorEnv) and envs.spec.reward_threshold == 475
        obs, _ = envs.reset(seed=0)
        np.testing.assert_array_equal(obs[0], ref.reset(seed=0)[0])
        for t in range(1, 6):
            _, _, _, truncated, _ = envs.step(np.zeros(2, dtype=np.int64))
            assert truncated.all() == (t == 5)  # the alias's max_episode_steps
    finally:
        envs.close()
    env = parallel_pool.make("CartPole-py-test-3", num_envs=2, seed=0, num_workers=2)  # kwargs over the defaults
    try:
        assert env.task_id == "CartPole-py-test-3" and env.workers is not None and env.workers.num_workers == 2
        env.reset()
        truncated = [env.step(np.zeros(2, dtype=np.int64))[3].all() for _ in range(3)]
        assert truncated == [False, False, True]
    finally:
        env.close()
    with pytest.raises(ValueError, match="already registered"):
        parallel_pool.register("CartPole-py-test", "gymnasium:CartPole-v1")
    with pytest.raises(gym.error.Error, match="NoSuchEnv"):
        parallel_pool.register("NoSuch-py-test", "gymnasium:NoSuchEnv-v0")


def test_a_script_without_the_main_guard_is_told_so(tmp_path: Any) -> None:
    # make_python spawns its workers, which import the main module again: a script that makes a pool
    # at import (no `if __name__ == "__main__":`) fails, and the error says why and shows the guard
    # (it was "worker 0 ... closed its pipe while probing a spare env").
    script = tmp_path / "no_guard.py"
    script.write_text(textwrap.dedent("""
        import gymnasium, parallel_pool
        env = parallel_pool.make_python([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=1)
        env.close()
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()
    assert any("RuntimeError: worker 0 (envs 0, 1) exited while" in line for line in last), proc.stderr
    assert "re-ran the main module" in proc.stderr and 'if __name__ == "__main__":' in proc.stderr
    guarded = tmp_path / "guard.py"
    guarded.write_text(textwrap.dedent("""
        import gymnasium, parallel_pool
        if __name__ == "__main__":
            env = parallel_pool.make_python([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=1)
            env.reset(seed=0)
            env.close()
            print("ok")
    """))
    proc = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


# ---- every Gymnasium space, dtypes, frames, seeds, reset options, calls ---------------------------


class SpaceEnv(gym.Env):
    """Observations sampled from its own observation space (seeded by reset's seed), actions checked
    against its action space and echoed in ``info``-free rewards; episodes of 5 steps. Records each
    reset's seed and options (``seeds``, ``last_options``) for the seeding and options tests."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space | None = None,
                 frame: Any = None) -> None:
        # Copies: the factories share the space objects, and sampling draws from a space's own RNG.
        self.observation_space = copy.deepcopy(observation_space)
        self.action_space = copy.deepcopy(action_space) if action_space is not None else spaces.Discrete(2)
        self.render_mode = "rgb_array" if frame is not None else None
        self.frame = frame
        self.seeds: list[int | None] = []
        self.last_options: dict | None = None
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.seeds.append(seed)
        self.last_options = options
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        assert self.action_space.contains(action), (action, self.action_space)
        self.t += 1
        return self.observation_space.sample(), float(self.t), self.t >= 5, False, {}

    def render(self) -> Any:
        return self.frame

    def legacy_seed(self) -> int:
        """Seeds NumPy's legacy RNG with the last reset's seed, as older envs do (refuses 64-bit seeds)."""
        np.random.seed(self.seeds[-1])
        return int(np.random.randint(100))


FIXED = spaces.Dict({
    "a": spaces.Tuple((spaces.Discrete(5, start=2, dtype=np.int32), spaces.Box(0, 60000, (2,), np.uint16))),
    "b": spaces.Dict({"c": spaces.MultiBinary((2, 2)), "d": spaces.MultiDiscrete([3, 4], dtype=np.int16)}),
    "e": spaces.Box(-1.0, 1.0, (3,), np.float16),
})
OBS_SPACES = {
    "discrete_int32": spaces.Discrete(7, start=-3, dtype=np.int32),
    "box_uint16": spaces.Box(0, 65535, (3,), np.uint16),
    "box_uint64": spaces.Box(0, 2**60, (2,), np.uint64),
    "box_float16": spaces.Box(-2.0, 2.0, (2, 2), np.float16),
    "box_bool": spaces.Box(0, 1, (3,), np.bool_),
    "nested": FIXED,
    "text": spaces.Text(12),
    "sequence": spaces.Sequence(spaces.Box(-1.0, 1.0, (2,), np.float32)),
    "graph": spaces.Graph(spaces.Box(-1.0, 1.0, (3,), np.float32), spaces.Discrete(4)),
    "oneof": spaces.OneOf((spaces.Discrete(3), spaces.Box(-1.0, 1.0, (2,), np.float32))),
    "dict_with_text": spaces.Dict({"img": spaces.Box(0, 255, (2, 2), np.uint8), "mission": spaces.Text(8)}),
}
ACTION_SPACES = {
    "discrete_int8": spaces.Discrete(4, dtype=np.int8),
    "nested": FIXED,
    "text": spaces.Text(6),
}


def assert_same(got: Any, expect: Any, where: str = "") -> None:
    """Equal values of the same structure and dtypes (dicts, tuples, arrays, strs, graph instances)."""
    if isinstance(expect, dict):
        assert isinstance(got, dict) and list(got) == list(expect), (where, got)
        for key in expect:
            assert_same(got[key], expect[key], f"{where}[{key!r}]")
    elif isinstance(expect, spaces.GraphInstance):
        assert isinstance(got, spaces.GraphInstance), where
        for a, b in zip(got, expect):
            assert_same(a, b, where)
    elif isinstance(expect, tuple):
        assert isinstance(got, tuple) and len(got) == len(expect), (where, got)
        for i, (a, b) in enumerate(zip(got, expect)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(expect, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expect.dtype, (where, got, expect)
        np.testing.assert_array_equal(got, expect, err_msg=where)
    else:
        assert type(got) is type(expect) and got == expect, (where, got, expect)


@pytest.mark.parametrize("obs_name", list(OBS_SPACES))
def test_every_observation_space_matches_sync_vector_env(obs_name: str) -> None:
    """Each kind of space, nested, with any dtype: every batch equals SyncVectorEnv's (values, structure,
    dtypes), lies in the batched space, and iterates back into single observations."""
    space = OBS_SPACES[obs_name]
    fns = [functools.partial(SpaceEnv, space)] * 3
    ref = SyncVectorEnv(fns)
    env = parallel_pool.make_python(fns, num_workers=2, seed=4)
    try:
        assert env.observation_space is not None and env.observation_space == space
        batched = gym.vector.utils.batch_space(space, 3)
        assert_same(env.reset()[0], ref.reset(seed=4)[0], "reset")
        for t in range(7):  # an autoreset (next_step) included
            action = np.array([t % 2] * 3)
            got, expect = env.step(action), ref.step(action)
            assert_same(got[0], expect[0], f"step {t}")
            np.testing.assert_array_equal(got[1], expect[1])
            assert batched.contains(got[0])
            rows = list(gym.vector.utils.iterate(batched, got[0]))
            assert len(rows) == 3 and all(space.contains(row) for row in rows)
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("action_name", list(ACTION_SPACES))
def test_every_action_space_reaches_the_env_as_its_own_type(action_name: str) -> None:
    """Batched actions (Gymnasium's form) and a list of one action per env both reach each env as
    the space's own values (the env asserts ``contains``), as SyncVectorEnv hands them."""
    space = ACTION_SPACES[action_name]
    fns = [functools.partial(SpaceEnv, spaces.Discrete(2), space)] * 3
    ref = SyncVectorEnv(fns)
    env = parallel_pool.make_python(fns, num_workers=2, seed=1)
    try:
        assert env.action_space == space
        env.reset()
        ref.reset(seed=1)
        batched = gym.vector.utils.batch_space(space, 3)
        batched.seed(0)
        for t in range(6):
            action = batched.sample()
            got, expect = env.step(action), ref.step(action)
            assert_same(got[0], expect[0], f"step {t}")
            np.testing.assert_array_equal(got[1], expect[1])
        space.seed(1)
        env.step([space.sample() for _ in range(3)])
    finally:
        env.close()
        ref.close()


class LongDoubleEnv(gym.Env):
    """A dtype of 16 bytes (``np.longdouble``), which no engine dtype nor integer carries: its bytes do.
    Gymnasium's Box cannot sample it, so the observation echoes the action."""

    observation_space = spaces.Box(-10.0, 10.0, (2,), np.longdouble)
    action_space = spaces.Box(-1.0, 1.0, (2,), np.longdouble)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        return np.full(2, 1 / 3, np.longdouble), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        assert action.dtype == np.longdouble and action.shape == (2,), action
        return action * 3, 0.0, False, False, {}


def test_a_dtype_of_any_size_travels_as_its_bytes() -> None:
    env = parallel_pool.make_python([LongDoubleEnv] * 2, num_workers=1, seed=0)
    try:
        obs, _ = env.reset()
        assert obs.dtype == np.longdouble and obs.shape == (2, 2)
        np.testing.assert_array_equal(obs, np.full((2, 2), 1 / 3, np.longdouble))
        action = np.array([[0.1, 0.2], [0.3, 0.4]], np.longdouble) / 7
        obs = env.step(action)[0]
        assert obs.dtype == np.longdouble
        np.testing.assert_array_equal(obs, action * 3)
    finally:
        env.close()


def test_a_pickled_observation_too_large_for_its_row_names_the_option() -> None:
    fns = [functools.partial(SpaceEnv, spaces.Text(200, min_length=150))] * 2
    env = parallel_pool.make_python(fns, num_workers=1, obs_pickle=64, seed=0)
    try:
        assert env.config["obs_pickle"] == 64
        with pytest.raises(parallel_pool.EnvError, match="obs_pickle") as err:
            env.reset()
        assert err.value.result[0] == ("", "")  # the failed rows, blank as a fixed-size row's zeros
    finally:
        env.close()
    env = parallel_pool.make_python(fns, num_workers=1, seed=0)  # sized from a sample: fits
    try:
        obs, _ = env.reset()
        assert len(obs) == 2 and all(150 <= len(text) <= 200 for text in obs)
    finally:
        env.close()
    with pytest.raises(ValueError, match="obs_pickle"):
        parallel_pool.make_python(fns, num_workers=1, obs_pickle=0)


@pytest.mark.parametrize("frame", [np.zeros((4, 4, 3)), np.arange(10, dtype=np.int16).reshape(2, 5),
                                   np.full((3, 2, 3), 7, np.uint8), {"not": "an array"}],
                         ids=["float64", "int16", "uint8", "object"])
def test_render_frames_of_any_dtype_and_shape(frame: Any) -> None:
    env = parallel_pool.make_python([functools.partial(SpaceEnv, spaces.Discrete(3), frame=frame)] * 2,
                                    num_workers=1, seed=0)
    try:
        assert env.render_mode == "rgb_array"
        env.reset()
        frames = env.render(np.arange(env.num_envs))
        if isinstance(frame, np.ndarray):
            assert frames.shape == (2, *frame.shape) and frames.dtype == frame.dtype
            assert env.spec.render_shape == frame.shape
            np.testing.assert_array_equal(frames[1], frame)
        else:
            assert frames == [frame, frame]
    finally:
        env.close()


def test_without_a_seed_the_first_reset_gets_none_as_from_sync_vector_env() -> None:
    fns = [functools.partial(SpaceEnv, spaces.Discrete(3))] * 3
    ref = SyncVectorEnv(fns)
    ref.reset()
    env = parallel_pool.make_python(fns, num_workers=2)
    try:
        env.reset()
        assert env.get_attr("seeds") == tuple(ref.get_attr("seeds")) == ([None],) * 3
        env.call("legacy_seed")  # np.random.seed(None) is fine
        env.reset(seed=2**32 - 3)  # the largest seed NumPy's legacy RNG takes, per env
        assert env.get_attr("seeds") == ([None, 2**32 - 3], [None, 2**32 - 2], [None, 2**32 - 1])
        env.call("legacy_seed")
        env.reset()  # unseeded: each env goes on with its own stream
        assert [s[-1] for s in env.get_attr("seeds")] == [None] * 3
    finally:
        env.close()
        ref.close()
    env = parallel_pool.make_python(fns, num_workers=1, seed=7)
    try:
        env.reset()
        assert env.get_attr("seeds") == ([7], [8], [9])
    finally:
        env.close()
    env = parallel_pool.make_python(fns, num_workers=1)  # no seed, but the first reset is seeded
    try:
        env.reset(seed=9)
        assert env.get_attr("seeds") == ([9], [10], [11])
    finally:
        env.close()


@pytest.mark.parametrize("batch_size", [None, 2])
def test_reset_options_reach_the_envs_reset(batch_size: int | None) -> None:
    fns = [functools.partial(SpaceEnv, spaces.Discrete(3))] * 4
    env = parallel_pool.make_python(fns, num_workers=2, batch_size=batch_size, seed=0)
    try:
        if batch_size is None:
            env.reset(options={"level": 3})
            assert env.get_attr("last_options") == ({"level": 3},) * 4
            mask = np.array([True, False, True, False])
            env.reset(options={"reset_mask": mask, "level": 5})  # reset_mask is the pool's own key
            assert env.get_attr("last_options") == ({"level": 5}, {"level": 3}, {"level": 5}, {"level": 3})
            env.reset(options={"reset_mask": mask})
            assert env.get_attr("last_options") == (None, {"level": 3}, None, {"level": 3})
            env.reset()
            assert env.get_attr("last_options") == (None,) * 4
            env.set_reset_options([{"a": 1}, None, {"b": 2}, {}])
            env.reset()
            assert env.get_attr("last_options") == ({"a": 1}, None, {"b": 2}, None)
        else:
            env.async_reset(options={"level": 4})
            env.recv()
            env.recv()
            assert env.get_attr("last_options") == ({"level": 4},) * 4
            env.reset(env_id=[1], options={"level": 6})
            assert env.get_attr("last_options") == ({"level": 4}, {"level": 6}, {"level": 4}, {"level": 4})
        with pytest.raises(ValueError, match="one options dict"):
            env.set_reset_options([{}])
    finally:
        env.close()


class Labelled(gym.Wrapper):
    """A wrapper with an attribute of its own, over an env whose attributes calls reach through it."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.label = "outer"

    def whoami(self, suffix: str = "") -> str:
        return f"{self.label}{suffix}"

    def explode(self) -> None:
        raise KeyError("boom from the env")


def labelled_counting() -> gym.Env:
    return Labelled(CountingEnv(sleep_s=0.002))


def test_call_get_attr_and_set_attr_follow_gymnasium() -> None:
    env = parallel_pool.make_python([labelled_counting] * 5, num_workers=2, seed=0)
    ref = SyncVectorEnv([labelled_counting] * 5)
    try:
        env.reset()
        ref.reset(seed=0)
        assert env.call("whoami", "!") == tuple(ref.call("whoami", "!")) == ("outer!",) * 5
        assert env.call("whoami", env_ids=[4, 0], suffix="?") == ("outer?", "outer?")
        assert env.get_attr("length") == tuple(ref.get_attr("length")) == (7,) * 5  # the inner env's
        assert env.get_attr("np_random_seed") == tuple(ref.get_attr("np_random_seed"))
        env.set_attr("length", [1, 2, 3, 4, 5])
        assert env.get_attr("length") == (1, 2, 3, 4, 5)
        assert env.get_attr("length", env_ids=-1) == (5,)
        env.set_attr("length", 9, env_ids=[1, 3])
        assert env.get_attr("length") == (1, 9, 3, 9, 5)
        env.set_attr("length", 7)
        assert env.get_attr("count") == (0,) * 5
        action = {"move": np.zeros((5, 2), np.float32), "pick": np.zeros(5, np.int64)}
        env.step(action)
        assert env.get_attr("count") == (1,) * 5
        with pytest.raises(ValueError, match="length equal to the number of environments"):
            env.set_attr("length", [1, 2])
        with pytest.raises(AttributeError, match="no_such") as err:
            env.get_attr("no_such")
        assert "env 0" in str(err.value) and "Traceback" in str(err.value)
        with pytest.raises(KeyError, match="boom from the env"):
            env.call("explode", env_ids=[3])
        with pytest.raises(ValueError, match="step"):
            env.call("step", action)
        with pytest.raises(ValueError, match="out of range"):
            env.get_attr("count", env_ids=[5])
        env.step(action)  # the pool goes on after a call's error
        assert env.get_attr("count") == (2,) * 5
    finally:
        env.close()
        ref.close()
    with pytest.raises(parallel_pool.PoolClosedError):
        env.get_attr("count")
    # A native pool's envs: their config (tests/frontends/test_vector_contract.py has the rest).
    native = parallel_pool.make("CartPole-v1", num_envs=2)
    assert native.get_attr("max_episode_steps", env_ids=[1]) == (500,)
    with pytest.raises(AttributeError, match="config is fixed"):
        native.set_attr("max_episode_steps", 10)
    native.close()


def test_calls_while_async_steps_are_in_flight_are_serialized() -> None:
    """A thread calls into the envs while the main thread keeps steps in flight: every call sees an
    env between two steps (its step count equals what the pool returned or one of the steps after),
    and nothing deadlocks."""
    num_envs = 4
    env = parallel_pool.make_python([labelled_counting] * num_envs, num_workers=2, batch_size=2, seed=0)
    seen: list[tuple[int, ...]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            while not stop.is_set():
                seen.append(env.get_attr("count"))
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    thread = threading.Thread(target=caller)
    try:
        env.async_reset()
        thread.start()
        for _ in range(60):
            obs, _, _, _, info = env.recv(timeout=30)
            ids = info["env_id"]
            env.send({"move": np.zeros((len(ids), 2), np.float32), "pick": np.zeros(len(ids), np.int64)}, ids)
        stop.set()
        thread.join(30)
        assert not thread.is_alive() and not errors, errors
        assert len(seen) > 5
        assert all(all(0 <= c <= 7 for c in counts) for counts in seen)
    finally:
        stop.set()
        env.close()


def test_a_call_to_a_dead_worker_says_so_and_works_after_restart() -> None:
    env = parallel_pool.make_python([labelled_counting] * 2, num_workers=2, seed=0)
    try:
        env.reset()
        os.kill(env.workers.pids[1], signal.SIGKILL)
        env.workers._processes[1].join(10)
        with pytest.raises(RuntimeError, match="worker 1 .* has died"):
            env.get_attr("label")
        env.workers.restart()
        assert env.get_attr("label") == ("outer", "outer")
    finally:
        env.close()
