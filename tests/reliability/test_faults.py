"""Faults through every front-end and integration, in sync and async mode.

``Faulty-v0`` (the tutorial family's fault-injection env, ``native/envs/tutorial/faulty.h``) raises
in ``Step`` or ``Reset``, returns NaN or sleeps at a chosen step of a chosen env. What every
front-end does with it is the README's "Reliability" contract:

- ``step``/``recv``/``reset`` raise ``parallel_pool.EnvError`` naming the env ids and messages, with
  ``result`` the whole batch in the call's own return form;
- the failed env's row holds zeros (observation and info), reward 0, not terminated or truncated;
- the failed env starts a new episode on its next step;
- NaN passes through unchanged, into the episode statistics too;
- nothing hangs (every wait here is bounded) and nothing is lost: every other env's result
  arrives, and in async mode every env sent comes back exactly once.

Every row is compared with ``FaultyModel``, a Python model of Faulty-v0 under the pool's
next-step autoreset, env by env (``info["env_id"]``), whatever order async batches come in.

Every test runs over both backends (the ``make_pool`` fixture): the native Faulty-v0, and its Python
twin (tests/python_twins.py) in the Python backend's worker processes, whose error messages are the
same text after the traceback the worker adds (``error_pattern``).
The Ray layer's fault tests are in tests/integrations/test_integration_ray.py (they need its cluster).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import dm_env
import gymnasium
import numpy as np
import pytest

import parallel_pool
from parallel_pool import EnvError

TASK = "Faulty-v0"
# A Python env's error message: where it ran, its traceback, and last the exception (a RuntimeError).
PYTHON_ERROR = r"\(Python env, worker \d+, pid \d+\)\n(?s:.*)RuntimeError: "
RECV_TIMEOUT = 20.0  # seconds: a lost result fails the test instead of hanging it
NAN = float("nan")


# --- the model ------------------------------------------------------------------------------------
@dataclass
class Row:
    """One env's row of a batch, as the pool returns it."""

    obs: list[float]
    reward: float
    terminated: bool
    truncated: bool
    elapsed_step: int
    failed: bool = False
    episode: tuple[float, int] | None = None  # (return, length) on the step that ends an episode


class FaultyModel:
    """What env ``env_id`` of a Faulty-v0 pool returns, call by call, under next_step autoreset."""

    def __init__(self, env_id: int, episode_length: int = 10, max_episode_steps: int = 100, fault_env_id: int = -1,
                 raise_on_step: int = -1, raise_on_reset: int = -1, nan_on_step: int = -1,
                 nan_in: str = "both", **_: Any) -> None:
        self.faulty = fault_env_id in (-1, env_id)
        self.episode_length, self.max_episode_steps = episode_length, max_episode_steps
        self.raise_on_step, self.raise_on_reset, self.nan_on_step = raise_on_step, raise_on_reset, nan_on_step
        self.nan_obs, self.nan_reward = nan_in != "reward", nan_in != "obs"
        self.resets = self.steps = self.elapsed = 0
        self.over = True  # a new env's first job resets it
        self.ep_return, self.ep_length = 0.0, 0
        self.errors: list[str] = []  # the messages the pool must report, in order
        self.nans = 0  # steps that returned NaN

    def reset(self) -> Row:
        self.resets += 1
        self.elapsed = 0
        self.ep_return, self.ep_length = 0.0, 0
        if self.faulty and self.resets == self.raise_on_reset:
            self.over = True
            self.errors.append(f"Faulty-v0: Reset() raised on this env's reset {self.resets} (raise_on_reset)")
            return Row([0.0] * 3, 0.0, False, False, 0, failed=True)
        self.over = False
        return Row([self.resets, 0.0, -1.0], 0.0, False, False, 0)

    def step(self, action: int) -> Row:
        if self.over:
            return self.reset()  # the action is ignored
        self.steps += 1
        self.elapsed += 1
        if self.faulty and self.steps == self.raise_on_step:
            self.over = True
            self.errors.append(f"Faulty-v0: Step() raised on this env's step {self.steps} (raise_on_step)")
            return Row([0.0] * 3, 0.0, False, False, self.elapsed, failed=True)
        nan = self.faulty and self.steps == self.nan_on_step
        self.nans += nan
        obs = [NAN] * 3 if nan and self.nan_obs else [self.resets, self.elapsed, action]
        reward = NAN if nan and self.nan_reward else 1.0
        terminated = self.elapsed >= self.episode_length
        truncated = not terminated and self.elapsed >= self.max_episode_steps
        self.ep_return += reward
        self.ep_length += 1
        self.over = terminated or truncated
        episode = (self.ep_return, self.ep_length) if self.over else None
        return Row(obs, reward, terminated, truncated, self.elapsed, episode=episode)


def action_of(env_id: int, count: int) -> int:
    """Each env's fixed sequence of actions: its ``count``-th action."""
    return (env_id + count) % 2


# --- the front-ends, one way to read their results ------------------------------------------------
SYNC_KINDS = ["gymnasium", "gym", "dm", "vector"]
ASYNC_KINDS = ["gymnasium", "gym", "dm"]  # the vector view is sync, as Gymnasium's VectorEnv


def make(make_pool: Any, kind: str, num_envs: int, **kwargs: Any) -> Any:
    """A pool of ``num_envs`` Faulty-v0 envs on ``make_pool``'s backend, through front-end ``kind``
    (closed after the test)."""
    task, kwargs = make_pool.args(TASK, num_envs=num_envs, **kwargs)
    if kind == "gymnasium":
        env = parallel_pool.make(task, **kwargs)
    elif kind == "gym":
        env = parallel_pool.make(task, env_type="gym", **kwargs)
    elif kind == "dm":
        env = parallel_pool.make_dm(task, **kwargs)
    else:
        assert kind == "vector"
        # The engine's info keys (env_id, elapsed_step), which these tests read, on request.
        kwargs["engine_info"] = True
        # gymnasium.make_vec("parallel_pool/<id>") knows the native ids; the view it makes is this
        # class, which takes a Python env's id too.
        env = (gymnasium.make_vec(f"parallel_pool/{task}", **kwargs) if make_pool.backend == "native"
               else parallel_pool.ParallelPoolVectorEnv(task, **kwargs))
    make_pool.pools.append(env)
    return env


def error_pattern(backend: str, env_id: int, message: str) -> str:
    """A regex of env ``env_id``'s entry in an EnvError's text, ``message`` the native env's (a regex)."""
    return f"env {env_id}: " + (PYTHON_ERROR if backend == "python" else "") + message


def same_error(backend: str, got: str, expected: str) -> bool:
    """Whether an env's reported message is the native env's ``expected`` (after the Python
    traceback's text for the Python twin)."""
    if backend == "python":
        return re.fullmatch(PYTHON_ERROR + re.escape(expected) + r"\n", got) is not None
    return got == expected


@dataclass
class Batch:
    """A result of any front-end, as per-row arrays."""

    env_id: np.ndarray
    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    elapsed_step: np.ndarray
    episode: dict[int, tuple[float, int]]  # row -> (return, length) where an episode ended


def read(kind: str, result: Any, reset: bool) -> Batch:
    """Checks that ``result`` has the call's return form for ``kind`` and reads it."""
    if kind == "dm":
        assert isinstance(result, dm_env.TimeStep)
        o = result.observation
        last = result.step_type == dm_env.StepType.LAST
        episode = {}
        if hasattr(o, "episode_mask"):
            episode = {int(k): (float(o.episode_r[k]), int(o.episode_l[k])) for k in np.flatnonzero(o.episode_mask)}
        # dm_env: LAST with discount 0 is a termination, with discount 1 a truncation.
        return Batch(o.env_id, o.obs, result.reward, last & (result.discount == 0), last & (result.discount == 1),
                     o.elapsed_step, episode)
    assert isinstance(result, tuple) and len(result) == (2 if reset else 5)
    if reset:
        obs, info = result
        n = len(obs)
        reward, terminated, truncated = np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    else:
        obs, reward, terminated, truncated, info = result
    episode = {}
    if "_episode" in info:
        episode = {int(k): (float(info["episode"]["r"][k]), int(info["episode"]["l"][k]))
                   for k in np.flatnonzero(info["_episode"])}
    return Batch(info["env_id"], obs, reward, terminated, truncated, info["elapsed_step"], episode)


def call(kind: str, fn: Callable[[], Any], reset: bool) -> tuple[Batch, list[tuple[int, str]]]:
    """Runs one call; returns its batch and the errors it raised (as EnvError, result in its form)."""
    try:
        return read(kind, fn(), reset), []
    except EnvError as e:
        assert e.errors, "an EnvError names at least one env"
        assert e.env_ids == [env_id for env_id, _ in e.errors]
        for env_id, message in e.errors:
            assert f"env {env_id}: {message}" in str(e)
        batch = read(kind, e.result, reset)
        # In the batch's row order, whichever env failed first (the threads' timing must not show).
        failed = set(e.env_ids)
        assert e.env_ids == [int(i) for i in batch.env_id if int(i) in failed], (e.env_ids, batch.env_id)
        return batch, e.errors


def check_rows(batch: Batch, errors: list[tuple[int, str]], models: dict[int, FaultyModel],
               expected: dict[int, Row], backend: str) -> None:
    """Every row of ``batch`` against the model's row of its env; the errors against the model's."""
    failed = {env_id for env_id, _ in errors}
    assert len(failed) == len(errors), f"an env reported twice: {errors}"
    for k, env_id in enumerate(batch.env_id.tolist()):
        row = expected[env_id]
        where = f"env {env_id} (row {k})"
        np.testing.assert_array_equal(batch.obs[k], np.asarray(row.obs, dtype=np.float32), err_msg=where)
        np.testing.assert_array_equal(batch.reward[k], row.reward, err_msg=where)
        assert (bool(batch.terminated[k]), bool(batch.truncated[k])) == (row.terminated, row.truncated), where
        assert int(batch.elapsed_step[k]) == row.elapsed_step, where
        assert (env_id in failed) == row.failed, where
        if row.episode is None:
            assert k not in batch.episode, where
        else:
            np.testing.assert_array_equal(batch.episode[k], row.episode, err_msg=where)
    for env_id, message in errors:
        assert env_id in expected, f"env {env_id} failed outside its batch"
        assert same_error(backend, message, models[env_id].errors[-1]), message


# Two fault plans on env 2: a failed first reset, a failed step and a NaN (obs and reward); and a
# failed automatic reset (its 3rd reset, after the episode that the failed step cut short and a
# full one), a failed step and a NaN in the observation only.
PLANS = {
    "first_reset": dict(fault_env_id=2, raise_on_reset=1, raise_on_step=3, nan_on_step=5, episode_length=4),
    "auto_reset": dict(fault_env_id=2, raise_on_reset=3, raise_on_step=2, nan_on_step=6, nan_in="obs",
                       episode_length=4),
}


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("kind", SYNC_KINDS)
def test_sync_faults_every_front_end(kind: str, plan: str, make_pool) -> None:
    """Sync: 14 steps of 4 envs, env 2 faulty; every row, error and episode statistic as modelled."""
    config = PLANS[plan]
    num_envs = 4
    models = {i: FaultyModel(i, **config) for i in range(num_envs)}
    with closing(make(make_pool, kind, num_envs, seed=0, episode_stats=True, **config)) as env:
        expected = {i: m.reset() for i, m in models.items()}
        batch, errors = call(kind, lambda: env.reset(), reset=True)
        check_rows(batch, errors, models, expected, make_pool.backend)
        np.testing.assert_array_equal(batch.env_id, np.arange(num_envs))
        seen_errors = len(errors)
        for count in range(14):
            actions = np.array([action_of(i, count) for i in range(num_envs)])
            expected = {i: m.step(int(actions[i])) for i, m in models.items()}
            batch, errors = call(kind, lambda a=actions: env.step(a), reset=False)
            check_rows(batch, errors, models, expected, make_pool.backend)
            np.testing.assert_array_equal(batch.env_id, np.arange(num_envs))  # sync: row i is env i
            seen_errors += len(errors)
        # Env 2 failed twice (a reset and a step) and returned its NaN; no other env failed.
        assert seen_errors == len(models[2].errors) == 2 and models[2].nans == 1
        assert not any(models[i].errors or models[i].nans for i in (0, 1, 3))


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("kind", ASYNC_KINDS)
def test_async_faults_every_front_end(kind: str, plan: str, make_pool) -> None:
    """Async (6 envs, batches of 2, 2 threads): 40 batches; every row as modelled in its env's own
    order, each error in the batch of its env, and every env sent comes back exactly once."""
    config = PLANS[plan]
    num_envs, batch_size = 6, 2
    models = {i: FaultyModel(i, **config) for i in range(num_envs)}
    expected = {i: m.reset() for i, m in models.items()}
    sent = np.ones(num_envs, dtype=int)  # the resets
    received = np.zeros(num_envs, dtype=int)
    errors_seen = 0
    with closing(make(make_pool, kind, num_envs, batch_size=batch_size, num_threads=2, seed=0, episode_stats=True,
                      **config)) as env:
        env.async_reset()
        for _ in range(40):
            batch, errors = call(kind, lambda: env.recv(timeout=RECV_TIMEOUT), reset=False)
            assert len(batch.env_id) == batch_size
            check_rows(batch, errors, models, {i: expected[i] for i in batch.env_id.tolist()}, make_pool.backend)
            errors_seen += len(errors)
            ids = batch.env_id.copy()
            received[ids] += 1
            # Every env of the batch, the failed ones too, can be sent again at once.
            actions = np.array([action_of(int(i), int(sent[i])) for i in ids])
            for i, a in zip(ids.tolist(), actions.tolist()):
                expected[i] = models[i].step(a)
            env.send(actions, ids)
            sent[ids] += 1
        # Nothing lost: what is still in flight arrives, then every env came back once per send.
        for _ in range(num_envs // batch_size):
            batch, errors = call(kind, lambda: env.recv(timeout=RECV_TIMEOUT), reset=False)
            check_rows(batch, errors, models, {i: expected[i] for i in batch.env_id.tolist()}, make_pool.backend)
            errors_seen += len(errors)
            received[batch.env_id] += 1
        np.testing.assert_array_equal(received, sent)
        with pytest.raises(RuntimeError, match="wait for ever"):
            env.recv(timeout=RECV_TIMEOUT)
        # The faulty env did fail (40 batches reach all its faults), as many times as modelled.
        assert errors_seen == len(models[2].errors) == 2 and models[2].nans == 1


@pytest.mark.parametrize("kind", SYNC_KINDS)
def test_the_error_and_the_next_step_spelled_out(kind: str, make_pool) -> None:
    """The contract in one readable case: env 1's 2nd step raises."""
    with closing(make(make_pool, kind, 3, seed=0, raise_on_step=2, fault_env_id=1)) as env:
        env.reset()
        env.step(np.ones(3, dtype=np.int64))
        pattern = r"1 env\(s\) raised: " + error_pattern(
            make_pool.backend, 1, r"Faulty-v0: Step\(\) raised on this env's step 2 \(raise_on_step\)")
        with pytest.raises(EnvError, match=pattern) as excinfo:
            env.step(np.ones(3, dtype=np.int64))
        assert excinfo.value.env_ids == [1]
        batch = read(kind, excinfo.value.result, reset=False)  # the step's own return form
        np.testing.assert_array_equal(batch.obs, [[1, 2, 1], [0, 0, 0], [1, 2, 1]])  # the failed row: zeros
        np.testing.assert_array_equal(batch.reward, [1, 0, 1])
        assert not batch.terminated.any() and not batch.truncated.any()
        np.testing.assert_array_equal(batch.elapsed_step, [2, 2, 2])  # the step that raised
        if kind == "dm":  # the failed row is a MID step with discount 1
            np.testing.assert_array_equal(excinfo.value.result.step_type, dm_env.StepType.MID)
        batch = read(kind, env.step(np.zeros(3, dtype=np.int64)), reset=False)
        # Env 1 started its 2nd episode (the action was ignored); the others went on.
        np.testing.assert_array_equal(batch.obs, [[1, 3, 0], [2, 0, -1], [1, 3, 0]])
        np.testing.assert_array_equal(batch.reward, [1, 0, 1])
        np.testing.assert_array_equal(batch.elapsed_step, [3, 0, 3])


def test_the_vector_views_masked_reset_after_a_failed_step(make_pool) -> None:
    """A masked reset returns every env's row: the ones not reset are the failed step's rows."""
    with closing(make(make_pool, "vector", 3, raise_on_step=1, fault_env_id=1)) as envs:
        envs.reset(seed=0)
        with pytest.raises(EnvError):
            envs.step(np.ones(3, dtype=np.int64))
        obs, info = envs.reset(options={"reset_mask": np.array([True, False, False])})
        np.testing.assert_array_equal(obs, [[2, 0, -1], [0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize("kind", SYNC_KINDS)
def test_a_failed_reset_has_the_reset_form(kind: str, make_pool) -> None:
    with closing(make(make_pool, kind, 3, seed=0, raise_on_reset=1, fault_env_id=0)) as env:
        pattern = error_pattern(make_pool.backend, 0, r"Faulty-v0: Reset\(\) raised on this env's reset 1")
        with pytest.raises(EnvError, match=pattern) as excinfo:
            env.reset()
        batch = read(kind, excinfo.value.result, reset=True)  # (obs, info), or a TimeStep
        np.testing.assert_array_equal(batch.obs, [[0, 0, 0], [1, 0, -1], [1, 0, -1]])
        batch = read(kind, env.step(np.ones(3, dtype=np.int64)), reset=False)
        np.testing.assert_array_equal(batch.obs, [[2, 0, -1], [1, 1, 1], [1, 1, 1]])  # env 0 reset again


@pytest.mark.parametrize("nan_in", ["obs", "reward", "both"])
def test_nan_passes_through_unchanged(nan_in: str, make_pool) -> None:
    """NaN is the env's output, not an error: it reaches the user as written, and an episode with
    a NaN reward has a NaN return."""
    with closing(make_pool(TASK, num_envs=2, seed=0, nan_on_step=2, nan_in=nan_in, fault_env_id=0, episode_length=3,
                           episode_stats=True)) as env:
        env.reset()
        env.step(np.ones(2, dtype=np.int64))
        obs, reward, _, _, _ = env.step(np.ones(2, dtype=np.int64))
        assert np.isnan(obs[0]).all() == (nan_in != "reward") and not np.isnan(obs[1]).any()
        assert math.isnan(reward[0]) == (nan_in != "obs") and reward[1] == 1.0
        _, _, terminated, _, info = env.step(np.ones(2, dtype=np.int64))
        assert terminated.all()
        assert math.isnan(info["episode"]["r"][0]) == (nan_in != "obs") and info["episode"]["r"][1] == 3.0
        np.testing.assert_array_equal(info["episode"]["l"], [3, 3])


def test_a_sleeping_env_holds_up_nothing_but_itself(make_pool) -> None:
    """Env 0 sleeps 0.5 s per step: in async mode the others' results come first, a short timeout
    raises TimeoutError, and the sleeper's result still arrives; close() waits for it. (Two worker
    threads, so that one is free while the other sleeps: with one, jobs run first come first served.)"""
    # (On the Python backend, one worker process per env: a process steps its envs one at a time.)
    env = make_pool(TASK, num_envs=3, batch_size=1, num_threads=3, seed=0, step_sleep_us=500_000, fault_env_id=0,
                    **({"num_workers": 3} if make_pool.backend == "python" else {}))
    try:
        env.async_reset()
        for _ in range(3):
            env.recv(timeout=RECV_TIMEOUT)
        env.send(np.ones(3, dtype=np.int64), np.arange(3))
        first = [int(env.recv(timeout=RECV_TIMEOUT)[4]["env_id"][0]) for _ in range(2)]
        assert sorted(first) == [1, 2]
        with pytest.raises(TimeoutError):
            env.recv(timeout=0.01)
        obs, _, _, _, info = env.recv(timeout=RECV_TIMEOUT)
        assert info["env_id"].tolist() == [0]
        np.testing.assert_array_equal(obs, [[1, 1, 1]])
        env.send(np.ones(1, dtype=np.int64), np.array([0]))
    finally:
        start = time.perf_counter()
        env.close()  # joins the worker sleeping in env 0's step
        assert time.perf_counter() - start < RECV_TIMEOUT


# --- the integrations -------------------------------------------------------------------------------
# SB3, Tianshou and rl_games run the pool in same_step autoreset mode: the step that ends an
# episode returns the next episode's first observation (the last one in their own info entry).
# Each takes a task id and make() kwargs, as a user writes them: ``faulty`` gives those of the
# backend under test.


def faulty(make_pool: Any, num_envs: int, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    """The task id and kwargs of a pool of ``num_envs`` Faulty-v0 envs on ``make_pool``'s backend, for
    an integration that takes the number of envs itself (it is not in the kwargs)."""
    task, kwargs = make_pool.args(TASK, num_envs=num_envs, **kwargs)
    del kwargs["num_envs"]
    return task, kwargs


def step_error(make_pool: Any, env: Any, env_id: int, action: Any) -> Any:
    """``env.step(action)`` raising env ``env_id``'s EnvError (Faulty-v0's Step()): its result, in
    the step's form."""
    with pytest.raises(EnvError, match=error_pattern(make_pool.backend, env_id, r"Faulty-v0: Step")) as excinfo:
        env.step(action)
    return excinfo.value.result


def second_step_error(make_pool: Any, envs: Any, num_envs: int, env_id: int) -> Any:
    """``envs`` reset and stepped twice (every action 1), env ``env_id`` raising on its 2nd step:
    the second step's ``step_error``."""
    envs.reset()
    envs.step(np.ones(num_envs, dtype=np.int64))
    return step_error(make_pool, envs, env_id, np.ones(num_envs, dtype=np.int64))


def reset_error(make_pool: Any, env: Any, env_id: int) -> Any:
    """``env.reset()`` raising env ``env_id``'s EnvError (Faulty-v0's Reset()): its result, in the
    reset's form."""
    with pytest.raises(EnvError, match=error_pattern(make_pool.backend, env_id, r"Faulty-v0: Reset\(\)")) as excinfo:
        env.reset()
    return excinfo.value.result


def test_sb3_surfaces_the_error_in_sb3s_form(make_pool) -> None:
    from stable_baselines3.common.vec_env import VecCheckNan

    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    task, kw = faulty(make_pool, 3, seed=0, raise_on_step=2, fault_env_id=1, episode_length=3)
    with closing(ParallelPoolVecEnv(task, num_envs=3, **kw)) as envs:
        obs, rewards, dones, infos = second_step_error(make_pool, envs, 3, env_id=1)  # VecEnvStepReturn
        np.testing.assert_array_equal(obs, [[1, 2, 1], [0, 0, 0], [1, 2, 1]])
        np.testing.assert_array_equal(rewards, [1, 0, 1])
        assert not dones.any() and len(infos) == 3 and infos[1]["TimeLimit.truncated"] is False
        obs, rewards, dones, infos = envs.step(np.zeros(3, dtype=np.int64))
        # Envs 0 and 2 end their episodes (the next one's first obs, the last in infos); env 1
        # started its 2nd episode on this step.
        np.testing.assert_array_equal(obs, [[2, 0, -1], [2, 0, -1], [2, 0, -1]])
        np.testing.assert_array_equal(dones, [True, False, True])
        np.testing.assert_array_equal(infos[0]["terminal_observation"], [1, 3, 0])
        assert infos[0]["episode"]["r"] == 3.0 and "episode" not in infos[1]
    task, kw = faulty(make_pool, 2, seed=0, raise_on_reset=1, fault_env_id=0)
    with closing(ParallelPoolVecEnv(task, num_envs=2, **kw)) as envs:
        np.testing.assert_array_equal(reset_error(make_pool, envs, 0), [[0, 0, 0], [1, 0, -1]])  # reset's form: obs
        obs, _, _, _ = envs.step(np.ones(2, dtype=np.int64))
        np.testing.assert_array_equal(obs, [[2, 0, -1], [1, 1, 1]])
    # NaN passes through, into the episode's return too; SB3's VecCheckNan is the way to catch it.
    task, kw = faulty(make_pool, 2, seed=0, nan_on_step=1, fault_env_id=0, episode_length=2)
    with closing(ParallelPoolVecEnv(task, num_envs=2, **kw)) as envs:
        envs.reset()
        obs, rewards, _, _ = envs.step(np.ones(2, dtype=np.int64))
        assert np.isnan(obs[0]).all() and np.isnan(rewards[0]) and rewards[1] == 1.0
        _, _, dones, infos = envs.step(np.ones(2, dtype=np.int64))
        assert dones.all() and np.isnan(infos[0]["episode"]["r"]) and infos[1]["episode"]["r"] == 2.0
    task, kw = faulty(make_pool, 2, seed=0, nan_on_step=1, fault_env_id=0)
    with closing(VecCheckNan(ParallelPoolVecEnv(task, num_envs=2, **kw), raise_exception=True)) as checked:
        checked.reset()
        with pytest.raises(ValueError, match="(?i)nan"):
            checked.step(np.ones(2, dtype=np.int64))


def test_tianshou_sync_surfaces_the_error_in_tianshous_form(make_pool) -> None:
    from parallel_pool.integrations.tianshou import TianshouVectorEnv

    task, kw = faulty(make_pool, 3, seed=0, raise_on_step=2, fault_env_id=1)
    with closing(TianshouVectorEnv(task, num_envs=3, **kw)) as envs:
        obs, rew, terminated, truncated, infos = second_step_error(make_pool, envs, 3, env_id=1)
        np.testing.assert_array_equal(obs, [[1, 2, 1], [0, 0, 0], [1, 2, 1]])
        np.testing.assert_array_equal(rew, [1, 0, 1])
        assert [info["env_id"] for info in infos] == [0, 1, 2] and not (terminated | truncated).any()
        obs, _, _, _, _ = envs.step(np.zeros(3, dtype=np.int64))
        np.testing.assert_array_equal(obs, [[1, 3, 0], [2, 0, -1], [1, 3, 0]])


def test_tianshou_single_env_surfaces_the_error_in_gymnasiums_form(make_pool) -> None:
    """The high-level API's single env (no autoreset): the error's result is its one-env 5-tuple,
    and the env must be reset before it steps again."""
    from parallel_pool.integrations.tianshou import PoolSingleEnv

    task, kw = faulty(make_pool, 1, raise_on_step=2)
    with closing(PoolSingleEnv(task, **kw)) as env:
        env.reset(seed=0)
        env.step(1)
        obs, reward, terminated, truncated, info = step_error(make_pool, env, 0, 1)
        np.testing.assert_array_equal(obs, [0, 0, 0])
        assert (reward, terminated, truncated, info["elapsed_step"]) == (0.0, False, False, 2)
        with pytest.raises(ValueError, match="reset it first"):
            env.step(1)
        obs, _ = env.reset()
        np.testing.assert_array_equal(obs, [2, 0, -1])


def _tianshou_step(envs: Any, actions: Any, ids: Any, errors: list[tuple[int, str]]) -> tuple:
    try:
        return envs.step(actions, ids)
    except EnvError as e:
        errors += e.errors
        return e.result


def test_tianshou_async_receives_a_failed_batch_and_loses_nothing(make_pool) -> None:
    """wait_num=2 of 4 envs, every env raising on its 2nd step and on its 2nd reset (its first
    automatic one): the envs of a failed batch can be stepped again at once (they are not left
    "stepping now"), and every env stepped comes back once."""
    from parallel_pool.integrations.tianshou import TianshouVectorEnv

    num_envs = 4
    task, kw = faulty(make_pool, num_envs, wait_num=2, seed=0, raise_on_step=2, raise_on_reset=2, episode_length=3)
    with closing(TianshouVectorEnv(task, num_envs=num_envs, **kw)) as envs:
        envs.reset()
        errors: list[tuple[int, str]] = []
        sent = np.zeros(num_envs, dtype=int)
        received = np.zeros(num_envs, dtype=int)
        ready = list(range(num_envs))
        for _ in range(30):
            ids = np.array(ready)
            sent[ids] += 1
            before = len(errors)
            _, _, terminated, truncated, infos = _tianshou_step(envs, np.ones(len(ids), dtype=np.int64), ids, errors)
            got = [int(info["env_id"]) for info in infos]
            assert {env_id for env_id, _ in errors[before:]} <= set(got)  # each error in its env's batch
            received[got] += 1
            for k in np.flatnonzero(terminated | truncated):
                envs.reset(np.array([got[k]]))  # Tianshou resets an env whose episode ended
            ready = got
        while envs.waiting_id:  # step(None) only waits
            _, _, _, _, infos = _tianshou_step(envs, None, None, errors)
            received[[int(info["env_id"]) for info in infos]] += 1
        np.testing.assert_array_equal(received, sent)
        # Each env raised on its 2nd step, then on its 2nd reset (after the episode the failure cut
        # short, its next one ran to its end and the reset inside that step raised).
        assert sorted(env_id for env_id, _ in errors) == sorted(2 * list(range(num_envs)))
    # A reset of every env receives every batch before it raises: no env is left in flight.
    task, kw = faulty(make_pool, num_envs, wait_num=2, seed=0, raise_on_reset=1, fault_env_id=3)
    with closing(TianshouVectorEnv(task, num_envs=num_envs, **kw)) as envs:
        obs, infos = reset_error(make_pool, envs, 3)
        np.testing.assert_array_equal(obs, [[1, 0, -1]] * 3 + [[0, 0, 0]])
        assert [info["env_id"] for info in infos] == [0, 1, 2, 3]
        _, _, _, _, infos = envs.step(np.ones(num_envs, dtype=np.int64), np.arange(num_envs))
        assert len(infos) == 2


def test_rl_games_surfaces_the_error_in_its_form(make_pool) -> None:
    from parallel_pool.integrations.rl_games import RlGamesVecEnv

    task, kw = faulty(make_pool, 3, seed=0, raise_on_step=2, fault_env_id=2)
    with closing(RlGamesVecEnv("parallel_pool", 3, env_name=task, **kw)) as env:
        obs, rewards, dones, infos = second_step_error(make_pool, env, 3, env_id=2)
        np.testing.assert_array_equal(obs, [[1, 2, 1], [1, 2, 1], [0, 0, 0]])
        np.testing.assert_array_equal(rewards, [1, 1, 0])
        assert not dones.any() and set(infos) >= {"time_outs", "scores", "steps"}
        obs, _, _, _ = env.step(np.ones(3, dtype=np.int64))
        np.testing.assert_array_equal(obs[2], [2, 0, -1])
    task, kw = faulty(make_pool, 2, seed=0, raise_on_reset=1, fault_env_id=1)
    with closing(RlGamesVecEnv("parallel_pool", 2, env_name=task, **kw)) as env:
        np.testing.assert_array_equal(reset_error(make_pool, env, 1), [[1, 0, -1], [0, 0, 0]])


def test_acme_environments_surface_the_error_as_a_timestep(make_pool) -> None:
    from parallel_pool.integrations.acme import BatchedEnvironment, Environment

    task, kw = faulty(make_pool, 2, seed=0, raise_on_step=1, fault_env_id=0)
    with closing(BatchedEnvironment(task, num_envs=2, **kw)) as env:
        env.reset()
        ts = step_error(make_pool, env, 0, np.ones(2, dtype=np.int64))
        assert isinstance(ts, dm_env.TimeStep)
        np.testing.assert_array_equal(ts.observation, [[0, 0, 0], [1, 1, 1]])
        np.testing.assert_array_equal(ts.step_type, [dm_env.StepType.MID] * 2)
        np.testing.assert_array_equal(env.info["env_id"], [0, 1])
        ts = env.step(np.ones(2, dtype=np.int64))
        np.testing.assert_array_equal(ts.step_type, [dm_env.StepType.FIRST, dm_env.StepType.MID])
    task, kw = faulty(make_pool, 1, seed=0, raise_on_reset=1)
    with closing(Environment(task, **kw)) as single:
        ts = reset_error(make_pool, single, 0)
        assert ts.first() and ts.reward is None
        np.testing.assert_array_equal(ts.observation, [0, 0, 0])
        ts = single.step(1)  # the next step starts the episode (its action ignored)
        assert ts.first()
        np.testing.assert_array_equal(ts.observation, [2, 0, -1])
        ts = single.step(1)
        assert ts.mid() and float(ts.reward) == 1.0


def test_rllib_vector_entry_point_and_env_runner(make_pool) -> None:
    """RLlib's env runner steps our VectorEnv: without ``restart_failed_sub_environments`` it raises
    (RLlib's own ``RuntimeError``, the EnvError its ``__cause__``); with it, RLlib closes the pool,
    makes a new one, resets every env, and sampling goes on."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from parallel_pool.integrations.rllib import VECTORIZE_MODE, env_creator, register

    task, kw = faulty(make_pool, 2, raise_on_step=1, fault_env_id=1)
    with closing(env_creator(task, **kw)({"num_envs": 2})) as vec:
        vec.reset(seed=0)
        obs = step_error(make_pool, vec, 1, np.ones(2, dtype=np.int64))[0]
        np.testing.assert_array_equal(obs, [[1, 1, 1], [0, 0, 0]])
    task, kw = faulty(make_pool, 4, raise_on_step=5, fault_env_id=1)  # 4: the runner's envs
    name = register(task, **kw)
    rllib_logger = logging.getLogger("ray.rllib")
    level = rllib_logger.level
    rllib_logger.setLevel(logging.CRITICAL)  # RLlib logs each env failure with its traceback
    try:
        for restart in (False, True):
            config = (
                PPOConfig()
                .environment(name)
                .env_runners(num_envs_per_env_runner=4, gym_env_vectorize_mode=VECTORIZE_MODE)
                .fault_tolerance(restart_failed_sub_environments=restart)
            )
            runner = SingleAgentEnvRunner(config=config)
            try:
                pool = runner.env.unwrapped.pool
                # 4 steps of 4 envs: env 1 has not reached its 5th step yet.
                runner.sample(num_timesteps=16, random_actions=True)
                if not restart:
                    with pytest.raises(RuntimeError) as raised:
                        runner.sample(num_timesteps=16, random_actions=True)
                    assert isinstance(raised.value.__cause__, EnvError)
                    assert raised.value.__cause__.env_ids == [1]
                    continue
                # Env 1's 5th step raises; RLlib replaces the pool and samples 16 steps from scratch
                # (the new pool's env 1 does not reach its own 5th step).
                episodes = runner.sample(num_timesteps=16, random_actions=True)
                assert sum(len(e) for e in episodes) >= 16
                assert pool.closed and runner.env.unwrapped.pool is not pool
            finally:
                runner.stop()
    finally:
        rllib_logger.setLevel(level)
