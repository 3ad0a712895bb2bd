"""A Python env's own ``info`` on the Python backend, against Gymnasium's ``SyncVectorEnv``.

``InfoEnv`` writes every kind of entry: ints, floats, a NumPy scalar and array (typed rows, their
types inferred from a spare env's first reset and step, or declared), entries seen only on an
episode's last step, a str and a nested dict (the pickled row). The same env and seeds in
``SyncVectorEnv`` give the reference info of every batch, compared key by key, mask by mask, dtype
by dtype and exactly, in each autoreset mode (same_step's ``final_info`` included); async batches
are compared row by row with one Gymnasium env per pool env.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import parallel_pool
from parallel_pool import EnvError

NUM_ENVS = 4
TASK = "gymnasium:test_python_info:InfoEnv-v0"  # the workers import this module to make it
MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP,
         "disabled": AutoresetMode.DISABLED}
ENGINE_KEYS = {"env_id", "elapsed_step"}  # the pool's own entries, which SyncVectorEnv lacks


class InfoEnv(gym.Env):
    """Episodes of 3 to 7 steps (drawn at reset); action 2 costs a life. Info: ``lives`` (int) and
    ``pos`` (float32 array) always; ``x_velocity`` (float) and ``stage`` (np.int32) on steps; on the
    last step ``is_success`` (bool), ``label`` (str) and ``detail`` (a dict)."""

    observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
    action_space = spaces.Discrete(3)

    def __init__(self, big_label: bool = False) -> None:
        self.big_label = big_label
        self.t = self.length = self.lives = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.lives], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t, self.lives = 0, 3
        self.length = int(self.np_random.integers(3, 8))
        return self._obs(), {"lives": self.lives, "pos": np.array([self.t, self.length], np.float32)}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        if int(action) == 2:
            self.lives -= 1
        terminated = self.t >= self.length
        info: dict[str, Any] = {"lives": self.lives, "pos": np.array([self.t, self.length], np.float32),
                                "x_velocity": 0.5 * int(action), "stage": np.int32(self.t % 3)}
        if terminated:
            info["is_success"] = self.lives > 1
            info["label"] = ("ep-" + "x" * 10_000) if self.big_label else f"ep-{self.length}"
            info["detail"] = {"steps": self.t, "lives": self.lives}
        return self._obs(), 1.0, terminated, False, info


if "InfoEnv-v0" not in gym.registry:
    gym.register("InfoEnv-v0", entry_point=f"{__name__}:InfoEnv")


def assert_info_equal(ours: dict[str, Any], theirs: dict[str, Any], where: str) -> None:
    """``ours`` (without the engine's entries) is ``theirs``: the same keys, masks, dtypes and values."""
    ours = {k: v for k, v in ours.items() if k not in ENGINE_KEYS}
    assert sorted(ours) == sorted(theirs), where
    for key, expected in theirs.items():
        got = ours[key]
        if isinstance(expected, dict):
            assert isinstance(got, dict), f"{where}: {key}"
            assert_info_equal(got, expected, f"{where}: {key}")
        elif expected.dtype == object:
            assert got.dtype == object and got.shape == expected.shape, f"{where}: {key}"
            for g, e in zip(got, expected):
                if isinstance(e, dict):
                    assert_info_equal(g, e, f"{where}: {key}")
                elif e is None or isinstance(e, str):
                    assert g == e, f"{where}: {key}"
                else:
                    np.testing.assert_array_equal(g, e, err_msg=f"{where}: {key}")
        else:
            assert got.dtype == expected.dtype, f"{where}: {key} is {got.dtype}, expected {expected.dtype}"
            np.testing.assert_array_equal(got, expected, err_msg=f"{where}: {key}")


@pytest.mark.parametrize("mode", MODES)
def test_sync_info_is_sync_vector_envs(mode: str) -> None:
    """Typed rows (inferred) and the pickled row together: every batch's info is SyncVectorEnv's."""
    env = parallel_pool.make(TASK, num_envs=NUM_ENVS, num_workers=2, seed=5, autoreset_mode=mode, info_pickle=True)
    ref = SyncVectorEnv([lambda: gym.make("InfoEnv-v0")] * NUM_ENVS, autoreset_mode=MODES[mode])
    try:
        # Inferred from the spare env's reset and step: what both give (not the last step's entries).
        assert env.config["info_keys"] == {"lives": ((), "int64"), "pos": ((2,), "float32"),
                                           "x_velocity": ((), "float64"), "stage": ((), "int32")}
        obs, info = env.reset()
        ref_obs, ref_info = ref.reset(seed=5)
        np.testing.assert_array_equal(obs, ref_obs)
        assert_info_equal(info, ref_info, "reset")
        actions = np.random.default_rng(1).integers(0, 3, (80, NUM_ENVS))
        ends = 0
        for t, action in enumerate(actions):
            obs, _, term, trunc, info = env.step(action)
            ref_obs, _, ref_term, _, ref_info = ref.step(action)
            np.testing.assert_array_equal(obs, ref_obs)
            np.testing.assert_array_equal(term, ref_term)
            assert_info_equal(info, ref_info, f"step {t}")
            done = term | trunc
            ends += int(done.sum())
            if mode == "disabled" and done.any():
                # Ours returns the rows of the envs reset; SyncVectorEnv every row, the others masked.
                _, info = env.reset(options={"reset_mask": done})
                _, ref_info = ref.reset(options={"reset_mask": done})
                rows = {k: v[done] for k, v in ref_info.items() if not isinstance(v, dict)}
                assert_info_equal(info, rows, f"reset after step {t}")
        assert ends > 30
    finally:
        env.close()
        ref.close()


def test_declared_info_keys_without_the_pickled_row() -> None:
    """``info_keys`` declares the typed rows (no spare env): only those keys come, each where the
    env's info had it, as SyncVectorEnv gives them; with ``info_pickle=False`` the untyped entries
    are not carried."""
    declared = {"lives": np.int64, "is_success": np.bool_, "pos": ((2,), np.float32)}
    env = parallel_pool.make(TASK, num_envs=NUM_ENVS, num_workers=1, seed=0, autoreset_mode="same_step",
                             info_keys=declared, info_pickle=False)
    ref = SyncVectorEnv([lambda: gym.make("InfoEnv-v0")] * NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP)

    def typed(info: dict[str, Any]) -> dict[str, Any]:
        keep = set(declared) | {"_" + k for k in declared} | {"final_obs", "_final_obs", "_final_info"}
        out = {k: v for k, v in info.items() if k in keep}
        if "final_info" in info:
            out["final_info"] = typed(info["final_info"])
        return out

    try:
        assert_info_equal(env.reset()[1], typed(ref.reset(seed=0)[1]), "reset")
        successes = 0
        for t, action in enumerate(np.random.default_rng(2).integers(0, 3, (40, NUM_ENVS))):
            info = env.step(action)[4]
            ref_info = ref.step(action)[4]
            assert_info_equal(info, typed(ref_info), f"step {t}")
            assert "is_success" not in info  # the last step's entries are in final_info
            if "final_info" in info and "is_success" in info["final_info"]:
                successes += int(info["final_info"]["is_success"].sum())
        assert successes > 0
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("mode", MODES)
def test_async_info_rows_are_each_envs(mode: str) -> None:
    """Async batches (2 of 4 envs): each row's typed and pickled entries (and final_info) are its env's,
    stepped alone in Gymnasium with the same actions and autoreset."""
    num_envs, batch = 4, 2
    env = parallel_pool.make(TASK, num_envs=num_envs, batch_size=batch, num_workers=2, seed=7, autoreset_mode=mode,
                             info_pickle=True)
    oracles = [gym.make("InfoEnv-v0") for _ in range(num_envs)]
    expected = {i: oracles[i].reset(seed=7 + i)[1] for i in range(num_envs)}
    expected_final: dict[int, dict | None] = dict.fromkeys(range(num_envs))
    over = [False] * num_envs
    policy = np.random.default_rng(3)
    rows = finals = 0
    try:
        env.async_reset()
        for _ in range(60):
            obs, _, term, trunc, info = env.recv(timeout=30)
            for k, i in enumerate(info["env_id"].tolist()):
                where = f"env {i}"
                for key in ("lives", "pos", "x_velocity", "stage", "is_success", "label", "detail"):
                    has = key in expected[i]
                    assert (key in info and bool(info["_" + key][k])) == has, f"{where}: {key}"
                    if has and isinstance(expected[i][key], dict):
                        assert {k2: v[k] for k2, v in info[key].items() if not k2.startswith("_")} == expected[i][key]
                    elif has:
                        np.testing.assert_array_equal(info[key][k], expected[i][key], err_msg=f"{where}: {key}")
                final = expected_final[i]
                assert ("final_info" in info and bool(info["_final_info"][k])) == (final is not None), where
                if final is not None:
                    finals += 1
                    for key in ("lives", "is_success", "label"):
                        assert bool(info["final_info"]["_" + key][k]) and info["final_info"][key][k] == final[key]
                rows += 1
            ids, actions = [], []
            for k, i in enumerate(info["env_id"].tolist()):
                done = bool(term[k] or trunc[k])
                if mode == "disabled" and done:
                    env.async_reset(env_id=[i])
                    expected[i], expected_final[i] = oracles[i].reset()[1], None
                    continue
                a = int(policy.integers(0, 3))
                ids.append(i)
                actions.append(a)
                expected_final[i] = None
                if mode == "next_step" and over[i]:
                    expected[i], over[i] = oracles[i].reset()[1], False
                    continue
                _, _, te, tr, step_info = oracles[i].step(a)
                expected[i] = step_info
                if te or tr:
                    if mode == "same_step":
                        expected_final[i], expected[i] = step_info, oracles[i].reset()[1]
                    over[i] = True
            if ids:
                env.send(np.array(actions), np.array(ids))
        assert rows == 120 and (mode != "same_step" or finals > 5)
    finally:
        env.close()


def test_info_key_errors() -> None:
    with pytest.raises(ValueError, match="engine's own entry"):
        parallel_pool.make(TASK, num_envs=1, num_workers=1, info_keys={"env_id": np.int64})
    with pytest.raises(ValueError, match=r"\['is_success'\] are not numeric entries .* declare their types"):
        parallel_pool.make(TASK, num_envs=1, num_workers=1, info_keys=["lives", "is_success"])
    with pytest.raises(TypeError, match="uint32"):
        parallel_pool.make(TASK, num_envs=1, num_workers=1, info_keys={"lives": np.uint32})
    with pytest.raises(ValueError, match="info_pickle"):
        parallel_pool.make(TASK, num_envs=1, num_workers=1, info_pickle=-1)
    # A declared row the env's entry does not fit, and a pickled info larger than its row, are
    # that env's EnvError; the pool goes on.
    env = parallel_pool.make(TASK, num_envs=2, num_workers=1, seed=0, info_keys={"pos": ((3,), np.float32)})
    try:
        with pytest.raises(EnvError, match=r"info\['pos'\] does not fit its row \(float32, shape \(3,\)\)") as e:
            env.reset()
        assert e.value.env_ids == [0, 1]
    finally:
        env.close()
    env = parallel_pool.make(TASK, num_envs=2, num_workers=1, seed=0, info_pickle=200, big_label=True,
                             env_kwargs=[{}, {"big_label": False}])
    try:
        env.reset()
        for _ in range(8):  # every episode ends within 7 steps
            try:
                env.step(np.zeros(2, dtype=np.int64))
            except EnvError as e:
                assert e.env_ids == [0] and "larger than its row (200 bytes); pass a larger info_pickle=" in str(e)
                break
        else:
            pytest.fail("the big label never raised")
    finally:
        env.close()


def test_per_env_info_dicts_of_the_integrations_follow_the_masks() -> None:
    """An adapter's per-env info dict holds a typed key where the env's info had it."""
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    venv = ParallelPoolVecEnv(TASK, num_envs=2, seed=0, num_workers=1, info_keys={"lives": np.int64,
                                                                                 "is_success": np.bool_})
    oracles = [gym.make("InfoEnv-v0") for _ in range(2)]
    try:
        venv.reset()
        for i, o in enumerate(oracles):
            o.reset(seed=i)
        seen = 0
        for _ in range(8):
            _, _, dones, infos = venv.step(np.ones(2, dtype=np.int64))
            for i, o in enumerate(oracles):
                _, _, te, _, step_info = o.step(1)
                if te:
                    o.reset()
                    # SB3's same_step form: the final step's entries are the env's info dict.
                    assert dones[i] and infos[i]["is_success"] == step_info["is_success"]
                    seen += 1
                else:
                    assert "is_success" not in infos[i]
                assert infos[i]["lives"] == step_info["lives"]
        assert seen > 0
    finally:
        venv.close()


class MissionEnv(gym.Env):
    """A Dict observation with a text entry (pickled whole) or, with ``text=False``, a nested Dict of a
    uint16 Box and an int32 Discrete (a field per leaf, rebuilt): same_step's ``final_obs`` rows must
    be the env's own last observations, and the info beside them SyncVectorEnv's."""

    def __init__(self, text: bool = True) -> None:
        inner: spaces.Space = spaces.Text(16) if text else spaces.Dict(
            {"n": spaces.Discrete(9, dtype=np.int32), "grid": spaces.Box(0, 999, (2,), np.uint16)})
        self.observation_space = spaces.Dict({"pos": spaces.Box(0, 9, (1,), np.int64), "mission": inner})
        self.action_space = spaces.Discrete(2)
        self.text = text
        self.t = self.length = 0

    def _obs(self) -> dict[str, Any]:
        mission: Any = f"go {self.t} of {self.length}" if self.text else {
            "n": np.int32(self.t), "grid": np.array([self.t, 100 * self.length], np.uint16)}
        return {"pos": np.array([self.t]), "mission": mission}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t, self.length = 0, int(self.np_random.integers(2, 6))
        return self._obs(), {"length": self.length}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return self._obs(), 1.0, self.t >= self.length, False, {"length": self.length}


@pytest.mark.parametrize("text", [True, False], ids=["pickled", "nested"])
def test_same_step_final_obs_of_pickled_and_nested_observations(text: bool) -> None:
    def make() -> gym.Env:
        return MissionEnv(text)

    env = parallel_pool.make_python([make] * NUM_ENVS, num_workers=2, seed=3, autoreset_mode="same_step")
    ref = SyncVectorEnv([make] * NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        env.reset()
        ref.reset(seed=3)
        ends = 0
        for t in range(12):
            action = np.ones(NUM_ENVS, dtype=np.int64)
            obs, _, term, _, info = env.step(action)
            ref_obs, _, ref_term, _, ref_info = ref.step(action)
            np.testing.assert_array_equal(term, ref_term)
            np.testing.assert_array_equal(obs["pos"], ref_obs["pos"])
            if text:
                assert obs["mission"] == ref_obs["mission"]
            else:
                for key in ("n", "grid"):
                    assert obs["mission"][key].dtype == ref_obs["mission"][key].dtype
                    np.testing.assert_array_equal(obs["mission"][key], ref_obs["mission"][key])
            assert ("final_obs" in info) == ("final_obs" in ref_info), f"step {t}"
            if "final_obs" in ref_info:
                np.testing.assert_array_equal(info["_final_obs"], ref_info["_final_obs"])
                for got, expect in zip(info["final_obs"][term], ref_info["final_obs"][ref_term]):
                    np.testing.assert_array_equal(got["pos"], expect["pos"])
                    if text:
                        assert got["mission"] == expect["mission"]
                    else:
                        assert got["mission"]["n"] == expect["mission"]["n"]
                        np.testing.assert_array_equal(got["mission"]["grid"], expect["mission"]["grid"])
                        assert got["mission"]["grid"].dtype == np.uint16
                ends += int(term.sum())
        assert ends >= NUM_ENVS
    finally:
        env.close()
        ref.close()


class OptionsEnv(gym.Env):
    """Gymnasium's own test envs put the reset's ``options`` (None when none) in the info; odd envs
    also say ``"odd": True``, a key the others never have."""

    observation_space = spaces.Discrete(4)
    action_space = spaces.Discrete(2)

    def __init__(self, odd: bool = False) -> None:
        self.odd = odd

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        info: dict[str, Any] = {"options": options}
        if self.odd:
            info["odd"] = True
        return 0, info

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict]:
        return 1, 0.0, False, False, {"options": None, "text": "step"}


def test_the_default_info_is_sync_vector_envs_with_none_and_keys_of_some_envs() -> None:
    """With no info option the strict view's info is SyncVectorEnv's, None values and keys that only
    some envs return (with their masks) included."""
    fns = [lambda i=i: OptionsEnv(odd=i % 2 == 1) for i in range(NUM_ENVS)]
    envs = parallel_pool.ParallelPoolVectorEnv.from_env_fns(fns, num_workers=1)
    ref = SyncVectorEnv(fns)
    try:
        for options in (None, {"level": 3}):
            info = envs.reset(seed=0, options=options)[1]
            their_info = ref.reset(seed=0, options=options)[1]
            assert_info_equal(info, their_info, f"reset with {options}")
        info = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[4]
        assert_info_equal(info, ref.step(np.zeros(NUM_ENVS, dtype=np.int64))[4], "step")
    finally:
        envs.close()
        ref.close()
