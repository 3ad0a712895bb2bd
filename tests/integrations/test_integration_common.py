"""parallel_pool.integrations.common: the helpers every adapter shares, on their own."""

from __future__ import annotations

import numpy as np
import pytest

import parallel_pool
from parallel_pool.integrations import common


def test_take_rows_of_arrays_and_nested_dicts() -> None:
    a = np.arange(12).reshape(4, 3)
    batch = {"obs": a, "info": {"lives": np.array([3, 2, 1, 0])}}
    np.testing.assert_array_equal(common.take_rows(a, 2), [6, 7, 8])
    np.testing.assert_array_equal(common.take_rows(a, slice(1, 3)), a[1:3])
    mask = np.array([True, False, False, True])
    picked = common.take_rows(batch, mask)
    np.testing.assert_array_equal(picked["obs"], a[[0, 3]])
    np.testing.assert_array_equal(picked["info"]["lives"], [3, 0])
    ids = np.array([3, 1])
    np.testing.assert_array_equal(common.take_rows(batch, ids)["info"]["lives"], [0, 2])
    np.testing.assert_array_equal(common.take_rows([[1, 2], [3, 4]], 1), [3, 4])  # a list is an array too


def test_row_info_keeps_the_keys_the_batch_has() -> None:
    info = {"lives": np.array([3, 2]), "env_id": np.array([0, 1])}
    assert common.row_info(info, ["lives", "missing"], 1) == {"lives": 2}
    assert common.row_info(info, [], 0) == {}


def test_row_info_keys_are_the_per_env_info_fields() -> None:
    assert common.row_info_keys(parallel_pool.make_spec("CartPole-v1")) == []
    spec = parallel_pool.make_spec("GuessingGame-v0")
    keys = common.row_info_keys(spec)
    assert keys == [f.key for f in spec.info_fields if not f.per_player]
    assert len(keys) < len(spec.info_fields)  # the tutorial env has per-player info fields too


def test_fill_seeds_fills_only_the_gaps() -> None:
    assert common.fill_seeds([None, None, None]) is None
    assert common.fill_seeds([1, 2]) == [1, 2]
    seeds = common.fill_seeds([7, None, np.int64(9)])
    assert seeds is not None and seeds[0] == 7 and seeds[2] == 9
    assert all(type(s) is int for s in seeds) and 0 <= seeds[1] < 2**32


def test_kwarg_checks() -> None:
    common.reject_kwargs({"seed": 0}, ("num_envs", "batch_size"), "{key} is mine")
    with pytest.raises(ValueError, match="^batch_size is mine$"):
        common.reject_kwargs({"seed": 0, "batch_size": 2}, ("num_envs", "batch_size"), "{key} is mine")
    for given in ({}, {"batch_size": None}, {"batch_size": 4}):
        kwargs = {"seed": 0, **given}
        common.check_sync_batch_size(kwargs, 4, "sync only")
        assert kwargs == {"seed": 0}  # batch_size is the adapter's to set
    with pytest.raises(ValueError, match="sync only"):
        common.check_sync_batch_size({"batch_size": 2}, 4, "sync only")
    for none in (None, {}, [{}, {}]):
        common.check_no_reset_options(none)
    for given in ({"reset_mask": 1}, [{}, {"x": 1}]):
        with pytest.raises(ValueError, match="no reset options"):
            common.check_no_reset_options(given)


def test_require_single_player_closes_a_multi_player_pool() -> None:
    pool = parallel_pool.make_gymnasium("GuessingGame-v0", num_envs=2)
    assert pool.spec.max_num_players > 1
    with pytest.raises(ValueError, match="GuessingGame-v0 is multi-player; my adapter has one row per env"):
        common.require_single_player(pool, "my adapter")
    assert pool.closed
    single = parallel_pool.make_gymnasium("CartPole-v1", num_envs=2)
    common.require_single_player(single, "my adapter")
    assert not single.closed
    single.close()


def test_env_attributes_lookup_order_and_fixed_names() -> None:
    pool = parallel_pool.make_gymnasium("CartPole-v1", num_envs=3, max_episode_steps=7)
    answers = {"reward_range": lambda i: (i, i + 1), "max_episode_steps": lambda i: -i}
    attrs = common.EnvAttributes(pool, "MyVecEnv", answers)
    try:
        assert attrs.get("reward_range", 2) == (2, 3)  # the adapter's own answer
        assert attrs.get("max_episode_steps", 1) == -1  # ... before the config
        assert attrs.get("num_envs", 0) == 3  # the config
        assert attrs.get("action_space", 0) is pool.action_space  # the pool's attribute
        assert attrs.has("metadata", 0) and not attrs.has("no_such_thing", 0)
        with pytest.raises(AttributeError, match="native CartPole-v1 envs have no attribute '_native'"):
            attrs.get("_native", 0)  # private attributes are not exposed
        attrs.set("reward_range", "mine", [0])  # not fixed: the pool has no such attribute
        attrs.set("callback", len, np.array([1, 2]))
        assert attrs.get("reward_range", 0) == "mine" and attrs.get("reward_range", 1) == (1, 2)
        assert attrs.stored("callback", 0) is None and attrs.stored("callback", 2) is len
        for fixed in ("max_episode_steps", "num_threads", "observation_space", "render_mode"):
            assert attrs.is_fixed(fixed)
            with pytest.raises(AttributeError, match=rf"'{fixed}' is fixed .* pass it to MyVecEnv\(\.\.\.\)"):
                attrs.set(fixed, 1, [0])
    finally:
        pool.close()


def test_render_frames_one_per_env() -> None:
    quiet = parallel_pool.make_gymnasium("Faulty-v0", num_envs=3)  # a task that draws no frames
    quiet.reset()
    assert common.render_frames(quiet) == [None, None, None]
    assert common.render_frames(quiet, [2]) == [None]
    quiet.close()
    pool = parallel_pool.make_gymnasium("GuessingGame-v0", num_envs=3, seed=0, max_num_players=1)
    pool.reset()
    frames = common.render_frames(pool)
    assert len(frames) == 3 and all(f is not None and f.shape == pool.spec.render_shape for f in frames)
    (last,) = common.render_frames(pool, [2])
    np.testing.assert_array_equal(last, frames[2])
    pool.close()
