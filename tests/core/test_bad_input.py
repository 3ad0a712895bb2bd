"""Bad input gets a clear Python exception, and an open pool keeps working afterwards.

The tests that take ``make_pool`` (or the ``cartpole`` fixture) run over both backends
(tests/conftest.py); those without it check the native tasks' own kwargs or the native pool itself.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import parallel_pool
from parallel_pool import PoolClosedError, _native, options


def _still_works(env: parallel_pool.GymnasiumEnv) -> None:
    """A full round of valid calls after the error."""
    if env.is_async:
        while env._native.outstanding >= env.batch_size:
            env.recv()
        env.reset()
        return
    n = env.num_envs
    if env.spec.action_fields[0].space == "discrete":
        action = np.zeros(n, dtype=np.int64)
    else:
        action = np.zeros((n, *env.spec.action_fields[0].shape), dtype=np.float32)
    _, _, _, _, info = env.step(action)
    np.testing.assert_array_equal(info["env_id"], np.arange(n))


@pytest.fixture
def cartpole(make_pool):
    # On both backends (conftest.py): the native CartPole and Gymnasium's, in a worker process.
    env = make_pool("CartPole-v1", num_envs=4, seed=0)
    env.reset()
    yield env
    env.close()


@pytest.fixture
def pendulum():
    # Native only: NaN actions are refused by the native env's declaration; the Python backend
    # leaves them to the Python env, as Gymnasium does.
    env = parallel_pool.make("Pendulum-v1", num_envs=3, seed=0)
    env.reset()
    yield env
    env.close()


@pytest.mark.parametrize(
    "action, error, match",
    [
        (np.zeros(3, dtype=np.int64), ValueError, r"shape \(4,\) for 4 env\(s\), got \(3,\)"),
        (np.zeros(5, dtype=np.int64), ValueError, "shape"),
        (np.zeros((4, 1), dtype=np.int64), ValueError, "shape"),
        (np.int64(0), ValueError, "shape"),
        (np.zeros(4, dtype=np.float32), TypeError, "dtype int64"),
        (np.array(["a", "b", "c", "d"]), TypeError, "dtype"),
        (np.array([0, 1, 2, 0]), ValueError, r"must be in \[0, 1\], got 2"),
        (np.array([0, -1, 0, 0]), ValueError, r"must be in \[0, 1\], got -1"),
        ("left", TypeError, "dtype"),
        (None, TypeError, "dtype int64"),
    ],
)
def test_bad_discrete_actions(cartpole, action, error, match) -> None:
    with pytest.raises(error, match=match):
        cartpole.step(action)
    _still_works(cartpole)


def test_castable_actions_are_accepted(cartpole, pendulum) -> None:
    cartpole.step(np.array([0, 1, 0, 1], dtype=np.int32))  # int32 for int64: one cast
    cartpole.step([1, 0, 1, 0])  # a list
    pendulum.step(np.zeros((3, 1), dtype=np.float64))  # float64 for float32


def test_nan_in_continuous_action_is_rejected(pendulum) -> None:
    action = np.zeros((3, 1), dtype=np.float32)
    action[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        pendulum.step(action)
    _still_works(pendulum)


def test_out_of_bounds_continuous_action_is_clipped_as_gymnasium_does(make_pool) -> None:
    # Gymnasium's Pendulum clips the torque to [-2, 2]; so do we (not an error).
    env1 = make_pool("Pendulum-v1", num_envs=1, seed=4)
    env2 = make_pool("Pendulum-v1", num_envs=1, seed=4)
    env1.reset()
    env2.reset()
    a = env1.step(np.array([[100.0]], dtype=np.float32))
    b = env2.step(np.array([[2.0]], dtype=np.float32))
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1][0] == b[1][0]
    env1.close()
    env2.close()


def test_bad_env_ids_in_send(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    env.async_reset()
    env.recv()
    _, _, _, _, info = env.recv()
    free = info["env_id"]  # received, so not pending
    a = np.zeros(2, dtype=np.int64)
    for ids, match in [
        (np.array([0, 7]), "out of range"),
        (np.array([-1, 0]), "out of range"),
        (np.array([2**40, 0]), "out of range"),
        (np.array([free[0], free[0]]), "appears twice"),
        (np.array([0.5, 1.5]), "integers"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            env.send(a, ids)
    with pytest.raises(ValueError, match="1-d"):
        env.send(a, np.int32(0))
    # All four are received: send to two, then again to the same two before recv.
    env.send(a, free)
    others = np.setdiff1d(np.arange(4), free)
    with pytest.raises(ValueError, match="not been received"):
        env.send(a, free)
    with pytest.raises(ValueError, match="not been received"):
        env.async_reset()  # a second async_reset hangs EnvPool; here it is an error
    env.recv()
    del others
    env.close()


def test_fewer_actions_than_env_ids(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    env.async_reset()
    _, _, _, _, info = env.recv()
    with pytest.raises(ValueError, match="shape"):
        env.send(np.zeros(1, dtype=np.int64), info["env_id"])
    env.send(np.zeros(2, dtype=np.int64), info["env_id"])
    env.recv()
    env.close()


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step", "disabled"])
def test_the_first_step_of_a_pool_never_reset_resets_it(autoreset_mode: str, make_pool) -> None:
    """As EnvPool's: the first step of an env never reset resets it (the action ignored): its row
    is the reset's observation with reward 0 and both flags False; the next step steps."""
    env = make_pool("CartPole-v1", num_envs=2, seed=3, autoreset_mode=autoreset_mode)
    ref = make_pool("CartPole-v1", num_envs=2, seed=3, autoreset_mode=autoreset_mode)
    try:
        obs, rew, term, trunc, info = env.step(np.ones(2, dtype=np.int64))
        ref_obs, _ = ref.reset()
        np.testing.assert_array_equal(obs, ref_obs)
        assert not rew.any() and not term.any() and not trunc.any()
        np.testing.assert_array_equal(info["elapsed_step"], [0, 0])
        np.testing.assert_array_equal(env.step(np.ones(2, dtype=np.int64))[0],
                                      ref.step(np.ones(2, dtype=np.int64))[0])
    finally:
        env.close()
        ref.close()


def test_the_first_send_of_an_async_pool_never_reset_resets_it(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    try:
        env.send(np.zeros(4, dtype=np.int64), np.arange(4, dtype=np.int32))
        for _ in range(2):
            _, rew, term, trunc, info = env.recv()
            assert not rew.any() and not term.any() and not trunc.any()
            np.testing.assert_array_equal(info["elapsed_step"], [0, 0])
    finally:
        env.close()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"num_envs": 0}, ValueError, "num_envs must be >= 1"),
        ({"num_envs": -3}, ValueError, "num_envs"),
        ({"num_envs": "4"}, TypeError, "num_envs must be an int"),
        ({"num_envs": 2, "batch_size": 3}, ValueError, "batch_size"),
        ({"num_envs": 2, "batch_size": 0}, ValueError, "batch_size"),
        ({"num_threads": -1}, ValueError, "num_threads"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": "x"}, TypeError, "seed"),
        ({"num_envs": 2, "seed": [1]}, ValueError, "one per env"),
        ({"autoreset_mode": "sometimes"}, ValueError, "autoreset_mode"),
        ({"episode_stats": 1}, TypeError, "episode_stats"),
        ({"max_episode_steps": "long"}, TypeError, "max_episode_steps must be int"),
        ({"max_episode_steps": -1}, ValueError, "max_episode_steps"),
        ({"sutton_barto_reward": 1.5}, TypeError, "sutton_barto_reward"),
        ({"frame_skip": 4}, ValueError, r"unknown keyword argument\(s\) frame_skip.*valid ones: autoreset_mode"),
    ],
)
def test_bad_make_kwargs(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        parallel_pool.make("CartPole-v1", **kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_envs": 0}, "num_envs must be >= 1, got 0"),
        ({"num_envs": 4, "batch_size": 0}, "batch_size must be >= 1, got 0"),
        ({"num_envs": 4, "batch_size": 5}, "batch_size (5) must be <= num_envs (4)"),
        ({"num_threads": -1}, "num_threads must be >= 0, got -1"),
        ({"thread_affinity_offset": -2}, "thread_affinity_offset must be >= -1, got -2"),
    ],
)
def test_make_reports_the_cores_pool_option_ranges(kwargs, message) -> None:
    # Python checks the kwargs' names and types; their ranges are the native pool's alone
    # (test_the_engine_owns_the_pool_option_ranges below calls it directly).
    with pytest.raises(ValueError, match=re.escape(message)):
        parallel_pool.make("CartPole-v1", **kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_envs": 2.0}, "num_envs must be an int, got float"),
        ({"batch_size": True}, "batch_size must be an int, got bool"),
        ({"num_threads": "2"}, "num_threads must be an int, got str"),
        ({"thread_affinity_offset": None}, "thread_affinity_offset must be an int, got NoneType"),
    ],
)
def test_pool_option_types_are_checked_by_python(kwargs, message) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        options.resolve("CartPole-v1", kwargs)


def test_unknown_task_and_env_type() -> None:
    with pytest.raises(ValueError, match="unknown task id 'Pong-v99'"):
        parallel_pool.make("Pong-v99")
    with pytest.raises(ValueError, match="env_type"):
        parallel_pool.make("CartPole-v1", env_type="torch")
    with pytest.raises(TypeError, match="task_id"):
        parallel_pool.make(3)


def test_bad_reset_arguments(cartpole) -> None:
    with pytest.raises(TypeError, match="numpy array"):
        cartpole.reset(options={"reset_mask": [True, False, False, False]})
    with pytest.raises(ValueError, match="shape"):
        cartpole.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(ValueError, match="at least one True"):
        cartpole.reset(options={"reset_mask": np.zeros(4, dtype=bool)})
    with pytest.raises(ValueError, match="seed"):
        cartpole.reset(seed=-5)
    _still_works(cartpole)


def test_bad_timeout(cartpole, make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=2, batch_size=1)
    env.async_reset()
    with pytest.raises(ValueError, match="timeout"):
        env.recv(timeout=-1)
    env.recv(timeout=5)
    env.close()


def test_every_call_after_close_raises(make_pool) -> None:
    env = make_pool("CartPole-v1", num_envs=2)
    env.reset()
    env.close()
    for call in (
        lambda: env.reset(),
        lambda: env.step(np.zeros(2, dtype=np.int64)),
        lambda: env.send(np.zeros(2, dtype=np.int64)),
        lambda: env.recv(),
        lambda: env.async_reset(),
        lambda: env._native.reset_now(),
    ):
        with pytest.raises(PoolClosedError):
            call()
    assert isinstance(PoolClosedError("x"), RuntimeError)


def test_dict_actions_for_single_action_env(cartpole) -> None:
    with pytest.raises(ValueError, match="action keys"):
        cartpole.step({"a": np.zeros(4, dtype=np.int64), "b": np.zeros(4, dtype=np.int64)})
    cartpole.step({"action": np.zeros(4, dtype=np.int64)})


def test_sync_step_of_a_subset_that_cannot_fill_a_batch_is_refused_before_queueing(cartpole) -> None:
    """Regression: a sync step of fewer envs than batch_size queued them, then recv refused, and
    those envs stayed pending for ever. With nothing in flight such a step is EnvPool's step of some
    envs (their rows come back); with other envs sent, it must complete their batch."""
    _, _, _, _, info = cartpole.step(np.zeros(2, dtype=np.int64), np.array([1, 0]))
    np.testing.assert_array_equal(info["env_id"], [1, 0])
    cartpole.send(np.zeros(1, dtype=np.int64), np.array([2]))
    with pytest.raises(ValueError, match=r"cannot fill a batch of 4 \(1 in flight\)"):
        cartpole.step(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    assert cartpole._native.outstanding == 1  # nothing more was queued
    _, _, _, _, info = cartpole.step(np.zeros(3, dtype=np.int64), np.array([3, 0, 1]))
    np.testing.assert_array_equal(info["env_id"], [2, 3, 0, 1])
    _still_works(cartpole)


@pytest.mark.parametrize("env_type", ["gymnasium", "dm"])
def test_async_step_that_cannot_fill_a_batch_is_refused_before_queueing(env_type, make_pool) -> None:
    """Regression (found by tests/core/test_properties.py): an async step of too few envs sent them, and
    then its recv raised RuntimeError ("would wait for ever"), leaving those envs in flight."""
    env = make_pool("CartPole-v1", env_type=env_type, num_envs=4, batch_size=3, seed=0)
    env.async_reset()
    result = env.recv()  # three envs received, one still in flight
    free = result.observation.env_id if env_type == "dm" else result[4]["env_id"]
    with pytest.raises(ValueError, match=r"cannot fill a batch of 3 \(1 in flight\)"):
        env.step(np.zeros(1, dtype=np.int64), free[:1])
    assert env._native.outstanding == 1  # nothing was queued
    result = env.step(np.zeros(2, dtype=np.int64), free[:2])  # with the one in flight: a batch
    ids = result.observation.env_id if env_type == "dm" else result[4]["env_id"]
    assert sorted(ids) == sorted([*free[:2], *np.setdiff1d(np.arange(4), free)])
    assert env._native.outstanding == 0
    env.close()


def test_env_ids_beyond_int32_never_wrap_to_a_valid_id(make_pool) -> None:
    """Env ids are int32 in the engine: a wider id is refused, never narrowed (2**32 + 1 is not 1)."""
    env = make_pool("GuessingGame-v0", num_envs=4, batch_size=2, seed=0, max_num_players=1)  # it renders
    env.async_reset()
    env.recv()
    env.recv()
    a = np.zeros(2, dtype=np.int64)
    for ids in (
        np.array([2**32 + 1, 0]),
        np.array([2**32, 1]),
        np.array([-(2**32) + 2, 3]),
        np.array([2**64 - 1, 0], dtype=np.uint64),
        np.array([2**63 + 1, 0], dtype=np.uint64),
        [2**40, 0],
    ):
        with pytest.raises(ValueError, match="out of range"):
            env.send(a, ids)
        with pytest.raises(ValueError, match="out of range"):
            env.async_reset(env_id=ids)
        with pytest.raises(ValueError, match="out of range"):
            env.reset(ids)
        with pytest.raises(ValueError, match="out of range"):
            env.render(ids)
    assert env._native.outstanding == 0  # nothing was queued
    env.send(a, np.array([0, 1], dtype=np.uint64))  # unsigned ids that fit are fine
    env.recv()
    env.close()


def test_a_reset_seed_with_a_bad_env_id_names_the_id(make_pool) -> None:
    """Regression: with a seed, an out-of-range env id was an IndexError from a Python list."""
    env = make_pool("CartPole-v1", num_envs=4, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="env id 7 is out of range"):
        env.reset(np.array([7]), seed=0)
    with pytest.raises(ValueError, match="env id -1 is out of range"):
        env.async_reset(seed=0, env_id=[-1])
    _still_works(env)
    env.close()


def test_a_reset_seed_goes_to_the_env_id_it_belongs_to(make_pool) -> None:
    """``seed=s`` gives env ``i`` the seed ``s + i``, also when only some envs are reset."""
    env = make_pool("CartPole-v1", num_envs=4, seed=0)
    fresh = make_pool("CartPole-v1", num_envs=4, seed=0)
    env.reset()
    obs, _ = env.reset(np.array([3, 1]), seed=100)
    fresh_obs, _ = fresh.reset(seed=100)
    np.testing.assert_array_equal(obs, fresh_obs[[3, 1]])
    env.close()
    fresh.close()


@pytest.mark.parametrize("call", ["send", "step", "async_reset", "reset"])
def test_a_scalar_env_id_is_refused_with_one_message(cartpole, call) -> None:
    """Only render() takes one env id alone (EnvPool's render(env_ids=0)): a step, send or reset of
    one env is a batch of one, and a scalar there is more likely a mistake."""
    a = np.zeros(1, dtype=np.int64)
    calls = {
        "send": lambda: cartpole.send(a, 2),
        "step": lambda: cartpole.step(a, np.int64(2)),
        "async_reset": lambda: cartpole.async_reset(env_id=2),
        "reset": lambda: cartpole.reset(np.int32(2), seed=0),
    }
    with pytest.raises(ValueError, match=r"env_id must be a 1-d array of env ids, got a scalar (np\.int\d+\()?2"):
        calls[call]()
    with pytest.raises(ValueError, match=r"1-d array of env ids, got an array of shape \(1, 2\)"):
        cartpole.send(np.zeros(2, dtype=np.int64), [[0, 1]])
    _still_works(cartpole)


def test_render_takes_one_env_id_alone(make_pool) -> None:
    game = make_pool("GuessingGame-v0", num_envs=4, seed=0, max_num_players=1)  # a Python pool too
    try:
        game.reset()
        one = game.render(2)
        assert len(one) == 1
        np.testing.assert_array_equal(np.asarray(one), np.asarray(game.render(np.array([2]))))
        with pytest.raises(ValueError, match="1-d array of env ids, got an array of shape"):
            game.render([[0, 1]])
    finally:
        game.close()


def test_a_closed_pool_raises_before_any_other_check(make_pool) -> None:
    """Closed is checked first: bad arguments to a closed pool still get PoolClosedError, and no
    work (action conversion, seed drawing) is done."""
    env = make_pool("CartPole-v1", num_envs=2)
    env.reset()
    env.close()
    for call in (
        lambda: env.step(np.zeros(7, dtype=np.float32)),
        lambda: env.step(np.zeros(2, dtype=np.int64), np.int32(0)),
        lambda: env.send(None, [9, 9]),
        lambda: env.recv(timeout=1),
        lambda: env.render(np.int32(3)),
        lambda: env.reset(seed=-5),
        lambda: env.reset(options={"reset_mask": [True]}),
        lambda: env.async_reset(seed="x"),
        lambda: env._native.reset_now([7], [1, 2, 3]),
    ):
        with pytest.raises(PoolClosedError, match="the pool is closed"):
            call()


def _native_pool(**kwargs):
    args = {
        "task_id": "CartPole-v1",
        "config": {},
        "num_envs": 4,
        "batch_size": None,
        "num_threads": 1,
        "thread_affinity_offset": -1,
        "seeds": None,
        "autoreset_mode": "next_step",
        "episode_stats": False,
    }
    args.update(kwargs)
    if args["seeds"] is None:
        args["seeds"] = list(range(max(args["num_envs"], 0)))
    task_id, config = args.pop("task_id"), args.pop("config")
    return _native.Pool(task_id, config, _native.PoolOptions(**args))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_envs": 0}, "num_envs must be >= 1, got 0"),
        ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
        ({"batch_size": 5}, r"batch_size \(5\) must be <= num_envs \(4\)"),
        ({"num_threads": -1}, "num_threads must be >= 0, got -1"),
        ({"thread_affinity_offset": -2}, "thread_affinity_offset must be >= -1, got -2"),
        ({"autoreset_mode": "sometimes"}, r"autoreset_mode must be one of \('next_step', 'same_step', 'disabled'\)"),
        ({"seeds": [1, 2]}, "need one seed per env"),
    ],
)
def test_the_engine_owns_the_pool_option_ranges(kwargs, message) -> None:
    """The native pool refuses bad options itself, with the messages of the Python API."""
    with pytest.raises(ValueError, match=f"^{message}"):
        _native_pool(**kwargs)


def test_the_engine_resolves_batch_size_and_seeds_per_env() -> None:
    pool = _native_pool(batch_size=None)
    assert pool.batch_size == 4
    pool.reset(None, None)
    pool.recv(None)
    with pytest.raises(ValueError, match=r"one seed per env of the pool \(4\), got 1"):
        pool.reset_now([1], [5])
    pool.close()
