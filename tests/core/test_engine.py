"""The engine's contract: batch order, async bookkeeping, determinism, errors, close, recycling.

The tests that take ``make_pool`` run over both backends (tests/conftest.py); on the Python backend
the tutorial tasks are their Python twins (tests/python_twins.py), which have one player. A test
without it says why it is the native engine's alone.
"""

from __future__ import annotations

import collections
import threading
import time

import dm_env
import numpy as np
import pytest

import parallel_pool
from parallel_pool import EnvError, PoolClosedError


def test_sync_rows_are_env_order(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=8, seed=0)
    _, info = env.reset()
    np.testing.assert_array_equal(info["env_id"], np.arange(8))
    for _ in range(50):
        _, _, _, _, info = env.step(np.ones(8, dtype=np.int64))
        np.testing.assert_array_equal(info["env_id"], np.arange(8))
    # A subset in sync mode comes back in the order sent.
    env.close()


def test_async_bookkeeping_over_a_million_steps() -> None:
    """num_envs=16, batch_size=4: every recv has 4 distinct envs; each env is stepped exactly once
    per send (elapsed_step advances by one, or restarts after an episode end); sends and receives
    per env agree at the end. (Native only: a million Python steps would take minutes; the Python
    backend's bookkeeping, the same engine's, is checked by test_async_never_loses_a_job.)"""
    num_envs, batch = 16, 4
    env = parallel_pool.make("CartPole-v1", num_envs=num_envs, batch_size=batch, seed=1, num_threads=2)
    sends = np.zeros(num_envs, dtype=np.int64)
    recvs = np.zeros(num_envs, dtype=np.int64)
    last_elapsed = np.full(num_envs, -1)
    last_done = np.zeros(num_envs, dtype=bool)
    env.async_reset()
    sends += 1
    actions = np.random.default_rng(0).integers(0, 2, (1024, batch))
    total = 0
    k = 0
    while total < 1_000_000:
        _, _, term, trunc, info = env.recv()
        ids = info["env_id"]
        assert len(ids) == batch and len(np.unique(ids)) == batch
        recvs[ids] += 1
        elapsed = info["elapsed_step"]
        expected = np.where(last_done[ids] | (last_elapsed[ids] < 0), 0, last_elapsed[ids] + 1)
        np.testing.assert_array_equal(elapsed, expected)
        last_elapsed[ids] = elapsed
        last_done[ids] = term | trunc
        env.send(actions[k % 1024], ids)
        sends[ids] += 1
        total += batch
        k += 1
    # Drain what is in flight: every env's sends are matched by receives.
    while env._native.outstanding:
        _, _, _, _, info = env.recv()
        recvs[info["env_id"]] += 1
    np.testing.assert_array_equal(sends, recvs)
    assert sends.sum() >= 1_000_000
    env.close()


def _per_env_stream(make_pool, num_threads: int, seed: int, batch_size: int = 8) -> dict[int, list]:
    env = make_pool("Pendulum-v1", num_envs=8, batch_size=batch_size, seed=seed, num_threads=num_threads)
    rng = np.random.default_rng(99)
    streams: dict[int, list] = collections.defaultdict(list)
    if batch_size == 8:
        obs, info = env.reset()
        for _ in range(300):
            obs, rew, term, trunc, info = env.step(rng.uniform(-2, 2, (8, 1)).astype(np.float32))
            for i, e in enumerate(info["env_id"]):
                streams[int(e)].append((obs[i].copy(), rew[i], term[i], trunc[i]))
    else:
        env.async_reset()
        per_env_actions = {e: np.random.default_rng(e).uniform(-2, 2, (1000, 1)).astype(np.float32) for e in range(8)}
        counts = collections.Counter()
        # Until every env has 30 transitions: which envs a batch holds depends on the scheduling (a
        # thread preempted while it holds an env's job holds that env back for a while), each env's
        # own stream does not. Each env's k-th action is the same whatever the order.
        for _ in range(100_000):
            if len(streams) == 8 and min(len(s) for s in streams.values()) >= 30:
                break
            obs, rew, term, trunc, info = env.recv()
            ids = info["env_id"]
            for i, e in enumerate(ids):
                streams[int(e)].append((obs[i].copy(), rew[i], term[i], trunc[i]))
            env.send(np.stack([per_env_actions[int(e)][counts[int(e)] % 1000] for e in ids]), ids)
            for e in ids:
                counts[int(e)] += 1
        streams = {e: s[:30] for e, s in streams.items()}
    env.close()
    return streams


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for e in a:
        assert len(a[e]) == len(b[e])
        for x, y in zip(a[e], b[e]):
            np.testing.assert_array_equal(x[0], y[0])
            assert x[1:] == y[1:]


@pytest.mark.parametrize("batch_size", [8, 2])
def test_same_seed_same_stream_for_any_thread_count(batch_size: int, make_pool) -> None:
    ref = _per_env_stream(make_pool, 1, seed=5, batch_size=batch_size)
    for threads in (1, 2, 4):
        _assert_same(ref, _per_env_stream(make_pool, threads, seed=5, batch_size=batch_size))
    other = _per_env_stream(make_pool, 2, seed=6, batch_size=batch_size)
    assert not np.array_equal(ref[0][0][0], other[0][0][0])


def test_reset_seed_reseeds(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, seed=0)
    a, _ = env.reset(seed=123)
    env.step(np.ones(4, dtype=np.int64))
    b, _ = env.reset(seed=123)
    c, _ = env.reset()  # no seed: the streams go on
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)
    # Gymnasium's convention: an int seed gives env i the seed + i; a list gives one per env.
    d, _ = env.reset(seed=[123, 124, 125, 126])
    np.testing.assert_array_equal(a, d)
    e, _ = make_pool("CartPole-v1", num_envs=4, seed=123).reset()
    np.testing.assert_array_equal(a, e)
    env.close()


def error_text(backend: str, message: str) -> str:
    """A regex of an env's error ``message`` (a regex) as the backend reports it: a Python env's after
    where it ran and its traceback."""
    return (r"\(Python env, worker \d+, pid \d+\)\n(?s:.*)RuntimeError: " if backend == "python" else "") + message


def test_env_exception_is_raised_in_python_and_pool_goes_on(make_pool) -> None:
    # Four players natively (per-player rows); the Python twin has one.
    players = 4 if make_pool.backend == "native" else 1
    env = make_pool("GuessingGame-v0", num_envs=4, seed=0, raise_on_step=3, episode_length=50, max_num_players=players)
    env.reset()
    action = np.zeros((4, 4) if players > 1 else 4, dtype=np.int64)
    env.step(action)
    env.step(action)
    with pytest.raises(EnvError, match="env 0: " + error_text(make_pool.backend, "tutorial env raised on step 3")) \
            as excinfo:
        env.step(action)
    assert sorted(excinfo.value.env_ids) == [0, 1, 2, 3]
    # The batch is not lost: the result is what step() would have returned.
    obs, reward, terminated, truncated, info = excinfo.value.result
    assert obs.shape[1:] == (2,) and reward.shape == (4,)  # per-player obs: no rows from failed envs
    np.testing.assert_array_equal(info["env_id"], np.arange(4))
    np.testing.assert_array_equal(info["elapsed_step"], 3)
    # The failed envs start new episodes on their next step; the pool keeps working.
    _, _, _, _, info = env.step(action)
    np.testing.assert_array_equal(info["elapsed_step"], 0)
    _, _, _, _, info = env.step(action)
    np.testing.assert_array_equal(info["elapsed_step"], 1)
    env.close()


def test_env_error_result_takes_each_front_ends_form(make_pool) -> None:
    env = make_pool("GuessingGame-v0", batch_size=2, num_envs=4, seed=0, raise_on_step=1, max_num_players=1)
    env.async_reset()
    with pytest.raises(EnvError) as excinfo:
        for _ in range(4):
            _, _, _, _, info = env.recv()
            env.send(np.zeros(2, dtype=np.int64), info["env_id"])
    obs, _, _, _, info = excinfo.value.result  # recv's 5-tuple
    assert len(obs) == 2 and set(excinfo.value.env_ids) <= set(info["env_id"])
    env.close()
    task, kwargs = make_pool.args("GuessingGame-v0", num_envs=4, seed=0, raise_on_step=1, max_num_players=1)
    dm = parallel_pool.make_dm(task, **kwargs)
    dm.reset()
    with pytest.raises(EnvError) as excinfo:
        dm.step(np.zeros(4, dtype=np.int64))
    assert isinstance(excinfo.value.result, dm_env.TimeStep)
    dm.close()


def test_recv_timeout_then_result_still_arrives(make_pool) -> None:
    env = make_pool("GuessingGame-v0", num_envs=2, batch_size=1, seed=0, step_sleep_us=100_000, num_threads=1,
                    max_num_players=1)
    env.async_reset()
    env.recv()
    env.recv()
    env.send(np.zeros(1, dtype=np.int64), np.array([0]))
    with pytest.raises(TimeoutError):
        env.recv(timeout=0.01)
    _, _, _, _, info = env.recv(timeout=5)
    assert list(info["env_id"]) == [0]
    env.close()


def test_recv_with_nothing_in_flight_raises_instead_of_blocking(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    with pytest.raises(RuntimeError, match="wait for ever"):
        env.recv()
    env.async_reset()
    env.recv()
    env.recv()
    with pytest.raises(RuntimeError, match="wait for ever"):
        env.recv()
    env.close()


def test_close_with_work_in_flight_joins_and_later_calls_raise(make_pool) -> None:
    env = make_pool("GuessingGame-v0", num_envs=8, batch_size=2, seed=0, step_sleep_us=20_000, max_num_players=1)
    env.async_reset()
    env.recv()
    env.send(np.zeros(2, dtype=np.int64), env.recv()[4]["env_id"])
    start = time.perf_counter()
    env.close()
    assert time.perf_counter() - start < 5
    assert env.closed
    env.close()  # idempotent
    for call in (
        lambda: env.reset(),
        lambda: env.step(np.zeros(8, dtype=np.int64)),
        lambda: env.send(np.zeros(2, dtype=np.int64), np.array([2, 3])),
        lambda: env.recv(),
        lambda: env.async_reset(),
    ):
        with pytest.raises(PoolClosedError, match="closed"):
            call()
    task, kwargs = make_pool.args("CartPole-v1", num_envs=2)
    with parallel_pool.make(task, **kwargs) as ctx:
        ctx.reset()
    assert ctx.closed


def test_close_from_another_thread_wakes_a_waiting_recv(make_pool) -> None:
    env = make_pool("GuessingGame-v0", num_envs=2, batch_size=2, seed=0, step_sleep_us=300_000, num_threads=1,
                    max_num_players=1)
    env.reset()
    env.send(np.zeros(2, dtype=np.int64))
    errors = []

    def wait() -> None:
        try:
            env.recv()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            errors.append(e)

    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.05)
    env.close()
    t.join(timeout=10)
    assert not t.is_alive()


def test_outputs_are_zero_copy_views_and_blocks_are_recycled(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, seed=0)
    obs, _ = env.reset()
    assert not obs.flags.owndata  # a view into the native output block
    kept = obs.copy()
    for _ in range(1000):
        env.step(np.zeros(4, dtype=np.int64))
    # The first result is still valid while we hold it; it was not overwritten.
    np.testing.assert_array_equal(obs, kept)
    allocated = env._native.blocks_allocated
    for _ in range(1000):
        env.step(np.zeros(4, dtype=np.int64))
    assert env._native.blocks_allocated == allocated  # steady state: no new blocks
    env.close()
    # Arrays outlive the pool.
    np.testing.assert_array_equal(obs, kept)


def test_multi_player_rows() -> None:
    """(Native only: per-player rows are the native engine's; a Python env has one row per env.)"""
    env = parallel_pool.make("GuessingGame-v0", num_envs=6, seed=0, max_num_players=3)
    obs, info = env.reset()
    players = info["players"]["env_id"]
    counts = info["num_players"]
    assert obs.shape == (counts.sum(), 2)
    np.testing.assert_array_equal(np.bincount(players, minlength=6), counts)
    total = np.zeros(6)
    for _ in range(5):
        action = np.random.default_rng(0).integers(0, 4, (6, 3))
        obs, rew, term, trunc, info = env.step(action)
        players = info["players"]["env_id"]
        # The env reward is the sum of its players' rewards.
        np.testing.assert_allclose(np.bincount(players, weights=info["players"]["reward"], minlength=6), rew)
        total += rew
    assert env.action_space.n == 4
    env.close()


def test_make_spec_and_config() -> None:
    spec = parallel_pool.make_spec("CartPole-v1", num_envs=3)
    assert spec.config["num_envs"] == 3
    assert spec.config["max_episode_steps"] == 500
    assert spec.reward_threshold == 475
    env = parallel_pool.make("CartPole-v1", num_envs=3, max_episode_steps=7)
    assert env.config["max_episode_steps"] == 7
    assert "CartPole-v1" in repr(env) and "num_envs=3" in repr(env)
    assert env.single_observation_space is env.observation_space
    assert len(env) == 3
    env.close()


def test_register_alias() -> None:
    ids = parallel_pool.register("CartPole-short-test", "CartPole-v1", max_episode_steps=3)
    assert ids == ["CartPole-short-test"]
    assert "CartPole-short-test" in parallel_pool.list_all_envs()
    env = parallel_pool.make("CartPole-short-test", num_envs=2)
    env.reset()
    for _ in range(3):
        _, _, _, trunc, _ = env.step(np.zeros(2, dtype=np.int64))
    assert trunc.all()
    env.close()
    with pytest.raises(ValueError, match="already registered"):
        parallel_pool.register("CartPole-short-test", "CartPole-v1")
    with pytest.raises(ValueError, match="unknown keyword"):
        parallel_pool.register("CartPole-bad-test", "CartPole-v1", nope=1)


@pytest.mark.parametrize("num_envs, batch_size", [(64, 32), (16, 8), (32, 31)])
def test_async_never_loses_a_job(num_envs: int, batch_size: int, make_pool) -> None:
    """Regression: a push that met a queue cell still being released was dropped, and recv hung.
    Every recv here must complete; a lost job shows up as a TimeoutError, not a hang. (The Python
    backend's steps are some 50x slower: fewer recvs keep its run short.)"""
    env = make_pool("CartPole-v1", num_envs=num_envs, batch_size=batch_size, seed=0, num_threads=2)
    env.async_reset()
    action = np.zeros(batch_size, dtype=np.int64)
    for _ in range(20_000 if make_pool.backend == "native" else 1_000):
        _, _, _, _, info = env.recv(timeout=10)
        env.send(action, info["env_id"])
    env.close()


def test_async_reset_of_given_envs_returns_exactly_their_rows(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=8, batch_size=4, seed=0, num_threads=2)
    reference = make_pool("CartPole-v1", num_envs=8, seed=0)
    ref_obs, _ = reference.reset(seed=100)
    env.async_reset()
    _, _, _, _, info = env.recv()
    first = info["env_id"].copy()
    env.send(np.ones(4, dtype=np.int64), first)  # 4 steps in flight, 4 resets not yet received
    _, _, _, _, info = env.recv()
    received = info["env_id"].copy()
    in_flight = sorted(set(range(8)) - set(received))
    with pytest.raises(ValueError, match="recv"):
        env.reset(env_id=np.array(in_flight[:1]))
    # Reset two received envs now: exactly their rows, in the order asked, seeded as asked.
    ids = received[[2, 0]]
    obs, info = env.reset(env_id=ids, seed=100)
    np.testing.assert_array_equal(info["env_id"], ids)
    np.testing.assert_array_equal(info["elapsed_step"], [0, 0])
    np.testing.assert_array_equal(obs, ref_obs[ids])
    # The envs in flight were not disturbed: the next recv returns exactly them.
    _, _, _, _, info = env.recv()
    assert sorted(info["env_id"]) == in_flight
    # async_reset of some envs queues just those.
    env.async_reset(seed=100, env_id=ids)
    env.send(np.zeros(2, dtype=np.int64), received[[1, 3]])
    obs, _, _, _, info = env.recv()
    assert sorted(info["env_id"]) == sorted(received)
    rows = [list(info["env_id"]).index(i) for i in ids]
    np.testing.assert_array_equal(obs[rows], ref_obs[ids])
    env.close()
    reference.close()


def test_async_reset_of_more_envs_than_a_batch_then_its_batches_go_on() -> None:
    """Regression (found by tests/core/test_properties.py): reset(env_id) in async mode wrote its rows into
    a block sized for batch_size rows, so resetting more envs than that wrote past it: every field
    past the batch's rows overwrote the next field (the overflowing observations landed in the
    per-player rewards) and the heap past the block ("corrupted double-linked list"). (Native only:
    per-player rows; test_async_reset_of_given_envs_returns_exactly_their_rows runs on both.)"""
    env = parallel_pool.make("GuessingGame-v0", num_envs=8, batch_size=2, seed=0, num_threads=2, max_num_players=3)
    reference = parallel_pool.make("GuessingGame-v0", num_envs=8, seed=0, max_num_players=3)
    ref_obs, ref_info = reference.reset(seed=100)
    env.async_reset()
    for _ in range(4):
        env.recv()
    ids = np.array([7, 0, 6, 1, 5, 2, 4, 3])
    for _ in range(3):
        obs, info = env.reset(env_id=ids, seed=100)
        np.testing.assert_array_equal(info["env_id"], ids)
        np.testing.assert_array_equal(info["elapsed_step"], np.zeros(8))
        np.testing.assert_array_equal(info["num_players"], ref_info["num_players"][ids])
        # Per-player rows (in the order the envs finished): each env's, as the reference's.
        assert sorted(info["players"]["env_id"]) == sorted(ref_info["players"]["env_id"])
        np.testing.assert_array_equal(info["players"]["reward"], 0.0)
        for i in ids:
            rows, ref_rows = info["players"]["env_id"] == i, ref_info["players"]["env_id"] == i
            np.testing.assert_array_equal(obs[rows], ref_obs[ref_rows])
        # The batches go on: every env comes back once, one step into its episode.
        env.send(np.zeros((8, 3), dtype=np.int64), ids)
        seen = []
        for _ in range(4):
            _, _, _, _, info = env.recv()
            seen += info["env_id"].tolist()
            np.testing.assert_array_equal(info["elapsed_step"], [1, 1])
        assert sorted(seen) == list(range(8))
    env.close()
    reference.close()


def test_env_kwargs_give_each_env_its_own_config(make_pool) -> None:
    """Per-env config (EnvPool #309): env i of the pool steps exactly as a pool of one env made with
    env i's kwargs (and env i's seed)."""
    per_env = [{"g": 9.81}, {"g": 3.0}, {"g": 15.0, "max_episode_steps": 4}]
    env = make_pool("Pendulum-v1", num_envs=3, seed=10, max_episode_steps=6, env_kwargs=per_env)
    singles = [
        make_pool("Pendulum-v1", num_envs=1, seed=10 + i, **{"max_episode_steps": 6, **kw})
        for i, kw in enumerate(per_env)
    ]
    assert env.config["env_kwargs"] == per_env and env.config["max_episode_steps"] == 6
    obs, _ = env.reset()
    for i, single in enumerate(singles):
        np.testing.assert_array_equal(obs[i], single.reset()[0][0])
    action = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    truncated_at: dict[int, int] = {}
    for t in range(1, 8):
        obs, rew, _, trunc, _ = env.step(action)
        for i, single in enumerate(singles):
            o, r, _, tr, _ = single.step(action[i : i + 1])
            np.testing.assert_array_equal(obs[i], o[0])
            assert rew[i] == r[0] and trunc[i] == tr[0]
            if tr[0]:
                truncated_at.setdefault(i, t)
    assert truncated_at == {0: 6, 1: 6, 2: 4}
    assert not np.array_equal(obs[0], obs[1])  # the gravities differ
    env.close()
    for single in singles:
        single.close()


def test_bad_env_kwargs() -> None:
    """(Native only: a native task checks each env's kwargs against its spec; a Python env's kwargs
    go to its constructor, test_python_backend.py checks what the backend checks itself.)"""
    with pytest.raises(ValueError, match="one dict per env"):
        parallel_pool.make("Pendulum-v1", num_envs=2, env_kwargs=[{"g": 1.0}])
    with pytest.raises(TypeError, match="list of dicts"):
        parallel_pool.make("Pendulum-v1", num_envs=1, env_kwargs={"g": 1.0})
    with pytest.raises(ValueError, match=r"env_kwargs\[1\]: unknown or pool-wide .* gravity"):
        parallel_pool.make("Pendulum-v1", num_envs=2, env_kwargs=[{}, {"gravity": 1.0}])
    with pytest.raises(ValueError, match=r"env_kwargs\[0\]: unknown or pool-wide .* seed"):
        parallel_pool.make("Pendulum-v1", num_envs=1, env_kwargs=[{"seed": 1}])
    with pytest.raises(TypeError, match="g must be float"):
        parallel_pool.make("Pendulum-v1", num_envs=1, env_kwargs=[{"g": "strong"}])
    # A per-env map that changes the observation space is refused: a batch has one pair of spaces.
    with pytest.raises(ValueError, match=r"env_kwargs\[1\] changes the env's spaces"):
        parallel_pool.make("FrozenLake-v1", num_envs=2, env_kwargs=[{"map_name": "4x4"}, {"map_name": "8x8"}])
