"""``env.xla()``: send/recv/step as XLA custom calls inside ``jax.jit`` and ``jax.lax`` loops.

A jitted rollout (``jax.lax.scan``/``fori_loop`` over ``step``, or over ``recv``/``send`` in async
mode) must equal the plain API's rollout of a pool made with the same seed and fed the same actions,
array by array, in every front-end's form: exactly, in JAX's dtypes (float64 fields arrive as float32
with JAX's default 32-bit mode, as NumPy's astype rounds them; as float64 with 64-bit types on). Bad
input is refused with a clear error when traced or when run; nothing crashes. jax, flax and optax
are in the test extra, so they are imported as every test dependency is (tests/repo/test_ci.py forbids
skipping a missing one).
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import parallel_pool
from parallel_pool import _native

STEPS = 60


def canonical(value: Any) -> np.ndarray:
    """A plain-API array in the dtype JAX gives it now (float64 -> float32 unless 64-bit is on)."""
    array = np.asarray(value)
    return array.astype(jax.dtypes.canonicalize_dtype(array.dtype))


def assert_same(xla_result: Any, plain_result: Any, where: str) -> None:
    """The same tree (tuples, dicts, named tuples) with equal leaves of the same JAX dtype."""
    xla_leaves, xla_tree = jax.tree_util.tree_flatten(xla_result)
    plain_leaves, plain_tree = jax.tree_util.tree_flatten(plain_result)
    # As strings: each dm_env pool makes its own Observation named tuple type.
    assert str(xla_tree) == str(plain_tree), f"{where}: {xla_tree} != {plain_tree}"
    for got, want in zip(xla_leaves, plain_leaves):
        want = canonical(want)
        got = np.asarray(got)
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=where)


def row(tree: Any, t: int) -> Any:
    return jax.tree_util.tree_map(lambda x: x[t], tree)


def make(task: str, env_type: str, **kwargs: Any) -> Any:
    if task == "Pong-v5":
        # Short episodes, so that the rollout crosses time limits and autoresets.
        kwargs.setdefault("max_episode_steps", 25)
    return parallel_pool.make(task, env_type=env_type, seed=3, **kwargs)


@contextlib.contextmanager
def reset_for_xla(env: Any) -> Iterator[tuple[Any, Any, Any, Any]]:
    """``env`` reset (``async_reset`` in async mode), then its ``xla()``: ``(handle, recv, send,
    step)``; ``env`` is closed after."""
    try:
        if env.is_async:
            env.async_reset()
        else:
            env.reset()
        yield env.xla()
    finally:
        env.close()


def scanned_steps(ours: Any, plain: Any, actions: np.ndarray) -> Any:
    """Both pools reset, then ``ours``' xla() step in a jitted ``lax.scan`` over ``actions``: its
    results, a row per step (``row``), for the caller to compare with ``plain``'s steps."""
    ours.reset()
    plain.reset()
    handle, recv, send, step = ours.xla()
    _, results = jax.jit(lambda h, a: jax.lax.scan(step, h, a))(handle, jnp.asarray(actions))
    return results


@pytest.mark.parametrize("env_type", ["gymnasium", "gym", "dm"])
@pytest.mark.parametrize("task", ["CartPole-v1", "Pong-v5"])
def test_a_jitted_scan_over_step_equals_the_plain_rollout(task: str, env_type: str) -> None:
    num_envs = 3
    ours, plain = make(task, env_type, num_envs=num_envs), make(task, env_type, num_envs=num_envs)
    try:
        n = plain.action_spec().num_values if env_type == "dm" else plain.action_space.n
        actions = np.random.default_rng(0).integers(0, n, (STEPS, num_envs))
        ours.reset()
        plain.reset()
        handle, recv, send, step = ours.xla()

        @jax.jit
        def rollout(handle: Any, actions: Any) -> Any:
            return jax.lax.scan(lambda h, a: step(h, a), handle, actions)

        handle, results = rollout(handle, jnp.asarray(actions))
        assert np.asarray(handle).tolist() == np.asarray(ours.xla()[0]).tolist()
        ends = 0
        for t in range(STEPS):
            expected = plain.step(actions[t])
            assert_same(row(results, t), expected, f"{task} {env_type} step {t}")
            done = expected.step_type == 2 if env_type == "dm" else expected[2] | expected[3]
            ends += int(np.sum(done))
        assert ends > 0  # the rollout crossed episode ends, and the autoresets after them
        # The jitted function runs again (it is not run once and cached): the next 60 steps.
        handle, results = rollout(handle, jnp.asarray(actions))
        for t in range(STEPS):
            assert_same(row(results, t), plain.step(actions[t]), f"{task} {env_type} second run, step {t}")
    finally:
        ours.close()
        plain.close()


def test_dm_discount_is_zero_on_a_lost_life() -> None:
    """dm_env's TimeStep from xla(): Atari's zero_discount_on_life_loss as the plain API computes it."""
    steps, kwargs = 200, {"num_envs": 1, "seed": 0, "zero_discount_on_life_loss": True}
    ours, plain = parallel_pool.make_dm("Breakout-v5", **kwargs), parallel_pool.make_dm("Breakout-v5", **kwargs)
    try:
        actions = np.random.default_rng(0).integers(0, 4, (steps, 1))
        results = scanned_steps(ours, plain, actions)
        lost = 0
        for t in range(steps):
            expected = plain.step(actions[t])
            assert_same(row(results, t), expected, f"Breakout dm step {t}")
            lost += int(expected.observation.life_loss[0] and expected.step_type[0] == 1)
        assert lost > 0 and not np.asarray(results.discount).all()
    finally:
        ours.close()
        plain.close()


def test_with_64_bit_types_the_arrays_keep_their_dtypes() -> None:
    """float64 rewards (Atari's info["reward"] too) and int64 actions cross unconverted."""
    ours, plain = make("Pong-v5", "gymnasium", num_envs=2), make("Pong-v5", "gymnasium", num_envs=2)
    try:
        actions = np.random.default_rng(1).integers(0, 6, (STEPS, 2))
        ours.reset()
        plain.reset()
        with jax.enable_x64(True):
            handle, recv, send, step = ours.xla()
            step_jit = jax.jit(step)
            for t in range(STEPS):
                handle, result = step_jit(handle, jnp.asarray(actions[t], dtype=jnp.int64))
                assert result[1].dtype == jnp.float64 and result[4]["reward"].dtype == jnp.float64
                assert_same(result, plain.step(actions[t]), f"x64 step {t}")
    finally:
        ours.close()
        plain.close()


def test_a_fori_loop_of_sends_and_recvs_equals_the_plain_rollout() -> None:
    """send then recv (what step is), in a fori_loop that keeps a running sum of rewards and ends."""
    num_envs = 4
    ours, plain = make("CartPole-v1", "gym", num_envs=num_envs), make("CartPole-v1", "gym", num_envs=num_envs)
    try:
        actions = np.random.default_rng(2).integers(0, 2, (STEPS, num_envs))
        ours.reset()
        plain.reset()
        handle, recv, send, step = ours.xla()

        @jax.jit
        def rollout(handle: Any, actions: Any) -> Any:
            def body(t: Any, carry: Any) -> Any:
                handle, total, ends = carry
                handle = send(handle, actions[t])
                handle, (obs, reward, terminated, truncated, info) = recv(handle)
                return handle, total + reward, ends + (terminated | info["TimeLimit.truncated"])

            zeros = jnp.zeros(num_envs)
            return jax.lax.fori_loop(0, STEPS, body, (handle, zeros, zeros.astype(jnp.int32)))

        handle, total, ends = rollout(handle, jnp.asarray(actions))
        want_total, want_ends = np.zeros(num_envs), np.zeros(num_envs, dtype=np.int32)
        for t in range(STEPS):
            _, reward, terminated, truncated, info = plain.step(actions[t])
            want_total += reward
            want_ends += terminated | info["TimeLimit.truncated"]
        np.testing.assert_array_equal(np.asarray(total), want_total.astype(np.float32))
        np.testing.assert_array_equal(np.asarray(ends), want_ends)
        assert want_ends.sum() > 0
    finally:
        ours.close()
        plain.close()


def per_env_rows(batches: Any, env_ids: np.ndarray) -> dict[int, list[Any]]:
    """The rows of a sequence of batches, grouped by env id in arrival order."""
    rows: dict[int, list[Any]] = {}
    for t in range(env_ids.shape[0]):
        for k, env_id in enumerate(env_ids[t]):
            rows.setdefault(int(env_id), []).append(jax.tree_util.tree_map(lambda x, t=t, k=k: x[t][k], batches))
    return rows


@pytest.mark.parametrize("env_type", ["gymnasium", "dm"])
@pytest.mark.parametrize("task", ["CartPole-v1", "Pong-v5"])
def test_async_recv_send_in_a_scan_equals_the_plain_rollout_env_by_env(task: str, env_type: str) -> None:
    """batch_size < num_envs: recv returns the first envs to finish (info's env_id), send steps
    them. Which envs come first depends on the threads, so each env's own sequence is compared;
    env i's k-th action is the same in both runs (a table indexed by env id and step count)."""
    num_envs, batch_size, batches = 6, 3, 40
    kwargs = {"num_envs": num_envs, "batch_size": batch_size, "num_threads": 2}
    ours, plain = make(task, env_type, **kwargs), make(task, env_type, **kwargs)
    n = plain.action_spec().num_values if env_type == "dm" else plain.action_space.n
    table = np.random.default_rng(3).integers(0, n, (num_envs, batches + 1))

    def env_ids_of(result: Any) -> Any:
        return result.observation.env_id if env_type == "dm" else result[4]["env_id"]

    try:
        ours.async_reset()
        handle, recv, send, step = ours.xla()

        @jax.jit
        def rollout(handle: Any, table: Any) -> Any:
            def body(carry: Any, _: Any) -> Any:
                handle, counts = carry
                handle, result = recv(handle)
                ids = env_ids_of(result)
                handle = send(handle, table[ids, counts[ids]], ids)
                return (handle, counts.at[ids].add(1)), result

            return jax.lax.scan(body, (handle, jnp.zeros(num_envs, jnp.int32)), None, length=batches)

        (handle, counts), results = rollout(handle, jnp.asarray(table))
        ours_rows = per_env_rows(results, np.asarray(env_ids_of(results)))

        plain.async_reset()
        counts_plain = np.zeros(num_envs, dtype=int)
        plain_batches = []
        for _ in range(batches):
            result = plain.recv()
            ids = np.asarray(env_ids_of(result)).copy()
            plain_batches.append(jax.tree_util.tree_map(np.copy, result))
            plain.send(table[ids, counts_plain[ids]], ids)
            counts_plain[ids] += 1
        stacked = jax.tree_util.tree_map(lambda *xs: np.stack(xs), *plain_batches)
        plain_rows = per_env_rows(stacked, np.asarray(env_ids_of(stacked)))
        assert set(ours_rows) == set(plain_rows) == set(range(num_envs))
        compared = 0
        for env_id in range(num_envs):
            for k, (got, want) in enumerate(zip(ours_rows[env_id], plain_rows[env_id])):
                assert_same(got, want, f"{task} {env_type} env {env_id} row {k}")
                compared += 1
        assert compared >= batches * batch_size // 2
        # The other envs are still in flight: the plain API receives them.
        assert ours._native.outstanding == num_envs
    finally:
        ours.close()
        plain.close()


def test_async_step_with_env_ids() -> None:
    """step(handle, action, env_id) in async mode: send those envs, return the next batch."""
    ours = make("CartPole-v1", "gymnasium", num_envs=4, batch_size=2)
    with reset_for_xla(ours) as (handle, recv, send, step):
        handle, (obs, _, _, _, info) = jax.jit(recv)(handle)
        ids = info["env_id"]
        handle, (obs, reward, terminated, truncated, info) = jax.jit(step)(handle, jnp.zeros(2, jnp.int32), ids)
        assert obs.shape == (2, 4) and reward.shape == (2,) and info["env_id"].shape == (2,)
        assert set(np.asarray(info["env_id"]).tolist()) <= set(range(4))
        # Outside jit too (JAX runs the custom calls eagerly).
        handle = send(handle, np.ones(2, np.int64), info["env_id"])
        handle, (obs, reward, terminated, truncated, info) = recv(handle)
        assert obs.shape == (2, 4) and set(np.asarray(info["env_id"]).tolist()) <= set(range(4))
        assert ours._native.outstanding == 2  # the two envs not received


def test_calls_are_neither_dropped_nor_merged() -> None:
    """Side effects: a send whose returned handle is unused still runs, and two recvs given the
    same handle both run (XLA would otherwise drop the one and merge the other two)."""
    env = make("CartPole-v1", "gymnasium", num_envs=4, batch_size=2)
    with reset_for_xla(env) as (handle, recv, send, step):

        @jax.jit
        def two_recvs(handle: Any) -> Any:
            (_, first), (_, second) = recv(handle), recv(handle)
            return first[4]["env_id"], second[4]["env_id"]

        first, second = two_recvs(handle)
        assert sorted(np.concatenate([first, second]).tolist()) == [0, 1, 2, 3]
        assert env._native.outstanding == 0

        @jax.jit
        def send_and_forget(handle: Any) -> Any:
            send(handle, jnp.zeros(4, jnp.int32))
            return jnp.int32(0)

        send_and_forget(handle).block_until_ready()
        assert env._native.outstanding == 4


def test_episode_stats_are_always_in_info() -> None:
    """The plain API adds info["episode"] only when an episode ended; xla()'s info always has it
    (a traced function's keys cannot depend on values), with _episode saying which rows ended."""
    ours = make("CartPole-v1", "gymnasium", num_envs=2, episode_stats=True)
    plain = make("CartPole-v1", "gymnasium", num_envs=2, episode_stats=True)
    try:
        actions = np.random.default_rng(4).integers(0, 2, (STEPS, 2))
        results = scanned_steps(ours, plain, actions)
        seen = 0
        for t in range(STEPS):
            obs, reward, terminated, truncated, info = plain.step(actions[t])
            got = row(results, t)
            assert_same(got[:4], (obs, reward, terminated, truncated), f"step {t}")
            if "episode" in info:
                seen += 1
                np.testing.assert_array_equal(got[4]["_episode"], info["_episode"])
                mask = info["_episode"]
                for key in ("r", "l"):
                    got_stat = np.asarray(got[4]["episode"][key])[mask]
                    np.testing.assert_array_equal(got_stat, canonical(info["episode"][key])[mask])
            else:
                assert not np.asarray(got[4]["_episode"]).any()
        assert seen > 0
    finally:
        ours.close()
        plain.close()


# ---- errors: clear, at trace time where the shapes tell, at run time otherwise; never a crash ----


def test_bad_input_is_refused_when_traced() -> None:
    env = make("CartPole-v1", "gymnasium", num_envs=3)
    with reset_for_xla(env) as (handle, recv, send, step):
        with pytest.raises(ValueError, match=r"action 'action' must have shape \(3,\) for 3 env\(s\), got \(2,\)"):
            jax.jit(step)(handle, jnp.zeros(2, jnp.int32))
        with pytest.raises(TypeError, match="action 'action' must have dtype int64 .* got float32"):
            jax.jit(step)(handle, jnp.zeros(3, jnp.float32))
        with pytest.raises(TypeError, match="handle must be the uint8 array of shape"):
            jax.jit(step)(jnp.zeros(3, jnp.int32), jnp.zeros(3, jnp.int32))
        with pytest.raises(ValueError, match="env_id must be a 1-d array"):
            send(handle, jnp.zeros(3, jnp.int32), jnp.zeros((3, 1), jnp.int32))
        with pytest.raises(TypeError, match="env_id must be integers"):
            send(handle, jnp.zeros(3, jnp.int32), jnp.zeros(3, jnp.float32))
        with pytest.raises(ValueError, match=r"expected action keys \['action'\]"):
            step(handle, {"move": jnp.zeros(3, jnp.int32)})


def test_bad_values_are_raised_when_run() -> None:
    env = make("CartPole-v1", "gymnasium", num_envs=2, batch_size=1)
    with reset_for_xla(env) as (handle, recv, send, step):
        send_jit, recv_jit = jax.jit(send), jax.jit(recv)
        handle, (_, _, _, _, info) = recv_jit(handle)
        env_id = np.asarray(info["env_id"])
        # An action out of the Discrete(2) range: the core's check, raised by JAX.
        with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: .*action"):
            send_jit(handle, jnp.array([5]), env_id).block_until_ready()
        # An env still in flight (the other one, never received), and an unknown env id.
        other = np.array([1 - int(env_id[0])])
        with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: send: env .*not been received yet"):
            send_jit(handle, jnp.array([0]), other).block_until_ready()
        with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: .*out of range"):
            send_jit(handle, jnp.array([0]), np.array([7])).block_until_ready()
        # The pool still works after the errors.
        handle = send_jit(handle, jnp.array([1]), env_id)
        handle, (_, _, _, _, info) = recv_jit(handle)
        handle, _ = recv_jit(handle)
        # Nothing in flight: recv raises instead of waiting for ever.
        with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: .*wait for ever"):
            recv_jit(handle)[0].block_until_ready()


def test_an_env_that_raises_is_raised_by_jax_and_the_pool_goes_on() -> None:
    """The plain API's EnvError, here the call's error: naming the env and its message."""
    env = parallel_pool.make("Faulty-v0", num_envs=2, fault_env_id=1, raise_on_step=3)
    with reset_for_xla(env) as (handle, recv, send, step):
        step_jit = jax.jit(step)
        for _ in range(2):
            handle, _ = step_jit(handle, jnp.zeros(2, jnp.int32))
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"1 env\(s\) raised: env 1: Faulty-v0: Step\(\) raised"):
            step_jit(handle, jnp.zeros(2, jnp.int32))[0].block_until_ready()
        # The batch was received (as the plain API's): the next step goes on, env 1 reset.
        handle, (obs, reward, terminated, truncated, info) = step_jit(handle, jnp.zeros(2, jnp.int32))
        assert np.asarray(info["elapsed_step"]).tolist() == [4, 0]


def test_a_closed_pool_gives_a_clear_error() -> None:
    env = make("CartPole-v1", "gymnasium", num_envs=2)
    env.reset()
    handle, recv, send, step = env.xla()
    step_jit = jax.jit(step)
    handle, _ = step_jit(handle, jnp.zeros(2, jnp.int32))
    handle.block_until_ready()  # JAX dispatches asynchronously: the step is done before close()
    env.close()
    with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: the pool is closed"):
        step_jit(handle, jnp.zeros(2, jnp.int32))[0].block_until_ready()
    with pytest.raises(parallel_pool.PoolClosedError):
        env.xla()
    # A handle whose pool is gone altogether (garbage-collected) finds nothing.
    del env, recv, send, step, step_jit
    gc.collect()
    other = make("CartPole-v1", "gymnasium", num_envs=2)
    try:
        other.reset()
        _, _, _, other_step = other.xla()
        with pytest.raises(jax.errors.JaxRuntimeError, match="parallel_pool: the pool of this handle is .* gone"):
            jax.jit(other_step)(handle, jnp.zeros(2, jnp.int32))[0].block_until_ready()
    finally:
        other.close()


def test_pools_xla_cannot_serve_are_refused() -> None:
    same_step = make("CartPole-v1", "gymnasium", num_envs=2, autoreset_mode="same_step")
    players = parallel_pool.make("GuessingGame-v0", num_envs=2)
    try:
        with pytest.raises(ValueError, match="same_step"):
            same_step.xla()
        with pytest.raises(ValueError, match="one row per player"):
            players.xla()
    finally:
        same_step.close()
        players.close()


def test_a_build_without_xla_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """With PP_WITH_XLA=OFF the module has no _xla_targets; xla() says how to get it."""
    monkeypatch.delattr(_native, "_xla_targets")
    env = make("CartPole-v1", "gymnasium", num_envs=1)
    try:
        with pytest.raises(RuntimeError, match="PP_WITH_XLA=OFF"):
            env.xla()
    finally:
        env.close()


def test_importing_parallel_pool_does_not_import_jax(tmp_path: Path) -> None:
    code = (
        "import sys, parallel_pool; env = parallel_pool.make('CartPole-v1', num_envs=2); env.reset(); env.close(); "
        "assert 'jax' not in sys.modules, 'jax imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ppo_atari_xla_jax.py"


def test_the_xla_ppo_example_runs_in_smoke_mode(tmp_path: Path) -> None:
    """examples/ppo_atari_xla_jax.py trains for a few iterations through xla() and logs episodic
    returns (short episodes: --max-episode-steps)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONPATH", None)
    args = ["--total-timesteps", "192", "--num-envs", "2", "--num-steps", "32", "--num-minibatches", "2",
            "--update-epochs", "1", "--max-episode-steps", "20"]
    proc = subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if "avg_episodic_return=" in line]
    assert len(lines) == 3, proc.stdout
    assert "nan" not in lines[-1], proc.stdout  # episodes ended, and their returns were logged
