"""Stable-Baselines3: ParallelPoolVecEnv against DummyVecEnv/SubprocVecEnv on Gymnasium's CartPole.

Our envs draw reset states from their own RNG, so each Gymnasium twin is told the state of its
native env before every step and starts its next episode there (the way tests/core/test_autoreset.py
re-syncs); from then on both evolve the same way (classic control matches within 1e-5), and every
output of the two VecEnvs, under the same SB3 wrappers, is compared.
"""

from __future__ import annotations

import sys
import time
import warnings
from typing import Any, Callable

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    SubprocVecEnv,
    VecEnv,
    VecEnvWrapper,
    VecFrameStack,
    VecMonitor,
    VecNormalize,
)

import parallel_pool
from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

# The envs below are sent to the workers by value: the workers need not import this file (nor torch).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

NUM_ENVS = 4
MAX_STEPS = 30  # short episodes: truncations and terminations both happen often
ATOL = 1e-5


class Twin(gym.Wrapper):
    """Gymnasium's CartPole that starts its next episode in a given state (its native twin's)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.next_state: np.ndarray | None = None

    def set_next_state(self, state: np.ndarray) -> None:
        self.next_state = np.array(state, dtype=np.float64)

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(**kwargs)
        if self.next_state is not None:
            self.env.unwrapped.state = self.next_state.copy()
            obs = self.next_state.astype(np.float32)
        return obs, info


def make_twin() -> gym.Env:
    return Twin(gym.make("CartPole-v1", max_episode_steps=MAX_STEPS))


class Tap(VecEnvWrapper):
    """Remembers the raw observations of the VecEnv below the wrappers under test."""

    def reset(self) -> Any:
        self.last_obs = self.venv.reset()
        return self.last_obs

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        self.last_obs = obs
        return obs, rewards, dones, infos


def _ours() -> ParallelPoolVecEnv:
    return ParallelPoolVecEnv("CartPole-v1", num_envs=NUM_ENVS, seed=3, max_episode_steps=MAX_STEPS)


def _compare_infos(infos: list[dict], ref_infos: list[dict], dones: np.ndarray) -> None:
    for i, (info, ref) in enumerate(zip(infos, ref_infos)):
        assert set(info) == set(ref), (i, info, ref)
        assert info["TimeLimit.truncated"] is ref["TimeLimit.truncated"]
        if dones[i]:
            np.testing.assert_allclose(info["terminal_observation"], ref["terminal_observation"], atol=1e-4)
            assert info["terminal_observation"].dtype == ref["terminal_observation"].dtype
        if "episode" in ref:
            ep, ref_ep = info["episode"], ref["episode"]
            assert set(ep) == {"r", "l", "t"}
            assert ep["r"] == ref_ep["r"] and type(ep["r"]) is type(ref_ep["r"]) is np.float32
            assert ep["l"] == ref_ep["l"] and type(ep["l"]) is type(ref_ep["l"]) is np.int32
            assert isinstance(ep["t"], float) and ep["t"] >= 0


def run_side_by_side(
    ours: VecEnv, ref: VecEnv, wrap: Callable[[VecEnv], VecEnv], wrap_ref: Callable[[VecEnv], VecEnv],
    steps: int, seed: int = 0,
) -> tuple[VecEnv, VecEnv, int, int]:
    """Steps both VecEnvs under their wrappers with the same actions and compares every output."""
    rng = np.random.default_rng(seed)
    tap = Tap(ours)
    ours_w, ref_w = wrap(tap), wrap_ref(ref)
    obs = ours_w.reset()
    for i in range(NUM_ENVS):
        ref.env_method("set_next_state", tap.last_obs[i], indices=[i])
    ref_obs = ref_w.reset()
    np.testing.assert_allclose(obs, ref_obs, atol=ATOL)
    terminations = truncations = 0
    for _ in range(steps):
        actions = rng.integers(0, 2, NUM_ENVS)
        obs, rewards, dones, infos = ours_w.step(actions)
        # The native envs have reset (same step) where an episode ended: the twins start there too.
        for i in range(NUM_ENVS):
            ref.env_method("set_next_state", tap.last_obs[i], indices=[i])
        ref_obs, ref_rewards, ref_dones, ref_infos = ref_w.step(actions)
        np.testing.assert_array_equal(dones, ref_dones)
        np.testing.assert_allclose(rewards, ref_rewards, rtol=1e-6)
        np.testing.assert_allclose(obs, ref_obs, atol=1e-4)
        _compare_infos(infos, ref_infos, dones)
        truncated = np.array([info["TimeLimit.truncated"] for info in infos])
        truncations += int(truncated.sum())
        terminations += int((dones & ~truncated).sum())
    assert terminations > 5 and truncations > 5, (terminations, truncations)
    return ours_w, ref_w, terminations, truncations


def _identity(venv: VecEnv) -> VecEnv:
    return venv


def test_steps_match_dummy_vec_env_with_vec_monitor() -> None:
    # No VecMonitor on ours: the pool's own episode statistics must equal VecMonitor's.
    ours, ref = _ours(), DummyVecEnv([make_twin] * NUM_ENVS)
    run_side_by_side(ours, ref, _identity, VecMonitor, steps=400)
    ours.close()


def test_steps_match_subproc_vec_env() -> None:
    ref = SubprocVecEnv([make_twin] * NUM_ENVS, start_method="fork")
    ours = _ours()
    try:
        run_side_by_side(ours, ref, _identity, VecMonitor, steps=250, seed=1)
    finally:
        ref.close()
        ours.close()


def test_vec_monitor_on_top_still_works() -> None:
    ours, ref = _ours(), DummyVecEnv([make_twin] * NUM_ENVS)
    # As over Monitor-wrapped envs, VecMonitor warns that it overwrites the statistics below it.
    with pytest.warns(UserWarning, match="Monitor"):
        run_side_by_side(ours, ref, VecMonitor, VecMonitor, steps=200)
    ours.close()


def test_vec_frame_stack_matches() -> None:
    ours, ref = _ours(), DummyVecEnv([make_twin] * NUM_ENVS)
    ours_w, _, _, _ = run_side_by_side(
        ours, ref, lambda v: VecFrameStack(v, 3), lambda v: VecFrameStack(VecMonitor(v), 3), steps=300
    )
    assert ours_w.observation_space.shape == (12,)
    ours.close()


def test_vec_normalize_matches_and_saves(tmp_path) -> None:
    ours, ref = _ours(), DummyVecEnv([make_twin] * NUM_ENVS)

    def norm(venv: VecEnv) -> VecNormalize:
        return VecNormalize(venv, gamma=0.9)

    ours_w, ref_w, _, _ = run_side_by_side(ours, ref, norm, lambda v: norm(VecMonitor(v)), steps=300)
    np.testing.assert_allclose(ours_w.obs_rms.mean, ref_w.obs_rms.mean, atol=1e-5)
    np.testing.assert_allclose(ours_w.obs_rms.var, ref_w.obs_rms.var, rtol=1e-4)
    np.testing.assert_allclose(ours_w.ret_rms.var, ref_w.ret_rms.var, rtol=1e-6)
    assert ours_w.obs_rms.count == ref_w.obs_rms.count

    path = tmp_path / "vecnormalize.pkl"
    ours_w.save(str(path))
    loaded = VecNormalize.load(str(path), ParallelPoolVecEnv("CartPole-v1", num_envs=NUM_ENVS, seed=7))
    assert isinstance(loaded.venv, ParallelPoolVecEnv)
    np.testing.assert_array_equal(loaded.obs_rms.mean, ours_w.obs_rms.mean)
    np.testing.assert_array_equal(loaded.obs_rms.var, ours_w.obs_rms.var)
    loaded.training = False
    raw = loaded.venv.reset()
    np.testing.assert_allclose(loaded.normalize_obs(raw), ours_w.normalize_obs(raw))
    obs, rewards, dones, infos = loaded.step(np.zeros(NUM_ENVS, dtype=np.int64))
    np.testing.assert_allclose(obs, ours_w.normalize_obs(loaded.get_original_obs()))
    loaded.close()
    ours.close()


def test_reset_seed_and_pending_step() -> None:
    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=3, seed=0)
    assert envs.seed(5) == [5, 6, 7]
    obs = envs.reset()
    pool = parallel_pool.make("CartPole-v1", num_envs=3, seed=5)
    np.testing.assert_array_equal(obs, pool.reset()[0])
    pool.close()
    # Without a new seed() the next reset draws new episodes.
    assert not np.array_equal(envs.reset(), obs)
    # A reset while a step is in flight cancels that step, as SB3 documents.
    envs.step_async(np.zeros(3, dtype=np.int64))
    envs.seed(5)
    np.testing.assert_array_equal(envs.reset(), obs)
    with pytest.raises(ValueError, match="options"):
        envs.set_options({"low": -0.1})
        envs.reset()
    envs.close()
    with pytest.raises(parallel_pool.PoolClosedError):
        envs.step(np.zeros(3, dtype=np.int64))


def test_attributes_methods_and_wrappers() -> None:
    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=3, seed=0, max_episode_steps=40)
    assert envs.render_mode == "rgb_array"  # CartPole draws Gymnasium's frames
    assert envs.get_attr("render_mode") == ["rgb_array"] * 3
    assert envs.get_attr("max_episode_steps", indices=[0, 2]) == [40, 40]
    assert envs.get_attr("action_space", indices=1) == [gym.spaces.Discrete(2)]
    assert envs.has_attr("observation_space") and not envs.has_attr("no_such_attribute")
    with pytest.raises(AttributeError):
        envs.get_attr("no_such_attribute")
    envs.set_attr("difficulty", 3, indices=[1])
    assert envs.get_attr("difficulty", indices=1) == [3]
    with pytest.raises(AttributeError):
        envs.get_attr("difficulty", indices=0)
    with pytest.raises(AttributeError, match="fixed"):
        envs.set_attr("max_episode_steps", 5)
    envs.set_attr("double", lambda x: 2 * x)
    assert envs.env_method("double", 4, indices=[0, 1]) == [8, 8]
    assert envs.env_method("get_wrapper_attr", "max_episode_steps", indices=0) == [40]
    with pytest.raises(AttributeError, match="supports"):
        envs.env_method("teleport")

    envs.reset()
    (obs_a, info_a), = envs.env_method("reset", indices=[2], seed=11)
    (obs_b, _), = envs.env_method("reset", indices=[2], seed=11)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert obs_a.shape == (4,) and info_a == {} and envs.reset_infos[2] == {}

    assert envs.env_is_wrapped(Monitor) == [True, True, True]
    assert envs.env_is_wrapped(gym.wrappers.TimeLimit, indices=[0]) == [True]
    assert envs.env_is_wrapped(gym.Wrapper, indices=[0]) == [True]
    assert envs.env_is_wrapped(gym.wrappers.ClipAction) == [False, False, False]
    assert [frame.shape for frame in envs.env_method("render", indices=[0, 2])] == [(400, 600, 3)] * 2
    assert envs.render().shape == (800, 1200, 3)  # SB3's tiling of the three frames
    envs.close()

    # A task that draws no frames (the tutorial's Faulty-v0): None per env, and render() warns.
    faulty = ParallelPoolVecEnv("Faulty-v0", num_envs=3, episode_stats=False)
    assert faulty.render_mode is None and faulty.get_attr("render_mode") == [None, None, None]
    assert faulty.env_method("render") == [None, None, None]
    faulty.reset()
    with pytest.warns(UserWarning):
        assert faulty.render() is None
    faulty.close()

    plain = ParallelPoolVecEnv("Pendulum-v1", num_envs=2, episode_stats=False)
    assert plain.env_is_wrapped(Monitor) == [False, False]
    assert plain.env_is_wrapped(gym.wrappers.TimeLimit) == [True, True]
    plain.reset()
    for _ in range(200):
        _, _, dones, infos = plain.step(np.zeros((2, 1), dtype=np.float32))
    assert dones.all() and all("episode" not in info and info["TimeLimit.truncated"] for info in infos)
    plain.close()


def test_render_gives_the_pools_frames() -> None:
    # The tutorial env renders flat 8x8 frames; SB3 tiles them for render("rgb_array").
    envs = ParallelPoolVecEnv("GuessingGame-v0", num_envs=3, seed=0, max_num_players=1)
    assert envs.render_mode == "rgb_array" and envs.get_attr("render_mode") == ["rgb_array"] * 3
    envs.reset()
    envs.step(np.array([0, 1, 2]))
    images = envs.get_images()
    np.testing.assert_array_equal(np.stack(images), envs.pool.render(np.arange(envs.num_envs)))
    (frame,) = envs.env_method("render", indices=[2])
    np.testing.assert_array_equal(frame, images[2])
    tiled = envs.render()
    assert tiled.shape == (16, 16, 3)  # SB3's tile_images: 2x2 tiles, one blank
    np.testing.assert_array_equal(tiled[:8, 8:], images[1])
    envs.close()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="same_step"):
        ParallelPoolVecEnv("CartPole-v1", num_envs=2, autoreset_mode="next_step")
    with pytest.raises(ValueError, match="batch_size"):
        ParallelPoolVecEnv("CartPole-v1", num_envs=4, batch_size=2)
    with pytest.raises(ValueError, match="unknown keyword"):
        ParallelPoolVecEnv("CartPole-v1", num_envs=2, not_a_kwarg=1)


def test_ppo_and_evaluate_policy_run() -> None:
    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=4, seed=0)
    model = PPO("MlpPolicy", envs, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=1024)
    assert model.num_timesteps == 1024
    # The pool's episode statistics reach SB3's logger buffer (what "rollout/ep_rew_mean" shows).
    assert len(model.ep_info_buffer) > 0
    assert all(ep["r"] == ep["l"] for ep in model.ep_info_buffer)  # CartPole: reward 1 per step
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not wrapped with a Monitor" warning
        rewards, lengths = evaluate_policy(model, envs, n_eval_episodes=6, return_episode_rewards=True)
    assert len(rewards) == 6 and rewards == [float(n) for n in lengths]
    envs.close()


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 100k steps of training: 5-6 minutes on a loaded 2-core machine
def test_ppo_solves_cartpole_within_100k_steps() -> None:
    """RL Zoo's PPO hyperparameters for CartPole-v1, with ParallelPoolVecEnv in place of the 8 envs."""

    def linear(start: float) -> Callable[[float], float]:
        return lambda progress_remaining: progress_remaining * start

    envs = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=0)
    model = PPO(
        "MlpPolicy", envs, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
        learning_rate=linear(0.001), clip_range=linear(0.2), seed=0, device="cpu",
    )
    start = time.time()
    model.learn(total_timesteps=100_000)
    elapsed = time.time() - start
    assert model.num_timesteps <= 100_000 + 8 * 32
    training_mean = float(np.mean([ep["r"] for ep in model.ep_info_buffer]))
    eval_envs = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=1000)
    mean_return, _ = evaluate_policy(model, eval_envs, n_eval_episodes=40)
    print(f"\nSB3 PPO CartPole-v1 100k steps: {elapsed:.0f} s, last-100 training mean {training_mean:.1f}, "
          f"eval mean {mean_return:.1f}")
    assert mean_return >= 475
    envs.close()
    eval_envs.close()


# ---- env factories, as SubprocVecEnv takes them: a pool of Python envs -----------------------------


class SampledEnv(gym.Env):
    """Observations and rewards drawn from its own spaces and RNG (seeded by reset's seed); records
    each reset's seed and options; episodes of 4 steps; renders float frames, as SB3's test env does."""

    def __init__(self, action_space: gym.Space | None = None, render_mode: str | None = "rgb_array") -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float64)
        self.action_space = action_space if action_space is not None else gym.spaces.Discrete(2)
        self.render_mode = render_mode
        self.seeds: list[int | None] = []
        self.last_options: dict | None = None
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.seeds.append(seed)
        self.last_options = options
        self.t = 0
        return self.np_random.random(2), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        assert self.action_space.contains(action), action
        self.t += 1
        return self.np_random.random(2), float(self.np_random.random()), False, self.t >= 4, {}

    def render(self) -> np.ndarray:
        return np.full((4, 4, 3), 0.5)

    def scaled(self, x: float, factor: float = 1.0) -> float:
        return x * factor * len(self.seeds)


def sampled() -> gym.Env:
    return SampledEnv()


def monitored() -> gym.Env:
    return Monitor(SampledEnv())


def test_env_factories_step_as_dummy_vec_env() -> None:
    """ParallelPoolVecEnv(env_fns) for SubprocVecEnv(env_fns): the same seeds give the same episodes,
    terminal observations and TimeLimit flags as DummyVecEnv over the same factories."""
    ours = ParallelPoolVecEnv([sampled] * 3, num_workers=2)
    ref = DummyVecEnv([sampled] * 3)
    try:
        assert ours.num_envs == 3 and ours.render_mode == "rgb_array"
        assert ours.seed(5) == ref.seed(5) == [5, 6, 7]
        np.testing.assert_array_equal(ours.reset(), ref.reset())
        for t in range(9):
            action = np.array([t % 2, 1, 0])
            got, expect = ours.step(action), ref.step(action)
            np.testing.assert_array_equal(got[0], expect[0], err_msg=f"step {t}")
            # DummyVecEnv keeps rewards as float32 (SubprocVecEnv as the env's floats, as the pool).
            np.testing.assert_array_equal(got[1].astype(np.float32), expect[1], err_msg=f"step {t}")
            np.testing.assert_array_equal(got[2], expect[2], err_msg=f"step {t}")
            for info_a, info_b in zip(got[3], expect[3]):
                assert info_a["TimeLimit.truncated"] == info_b["TimeLimit.truncated"]
                assert ("terminal_observation" in info_a) == ("terminal_observation" in info_b)
                if "terminal_observation" in info_b:
                    np.testing.assert_array_equal(info_a["terminal_observation"], info_b["terminal_observation"])
    finally:
        ours.close()
        ref.close()
    with pytest.raises(ValueError, match="num_envs"):
        ParallelPoolVecEnv([sampled] * 2, num_envs=3)
    with pytest.raises(ValueError, match="illegal"):
        ParallelPoolVecEnv([sampled] * 2, start_method="illegal")


def test_per_env_methods_attributes_and_wrappers_reach_the_python_envs() -> None:
    envs = ParallelPoolVecEnv([sampled, monitored, sampled], num_workers=2, seed=0)
    try:
        assert envs.env_is_wrapped(Monitor) == [False, True, False]
        assert envs.env_is_wrapped(Monitor, indices=[1]) == [True]
        envs.reset()
        assert envs.env_method("scaled", 2.0, indices=[0, -1], factor=3.0) == [6.0, 6.0]
        assert envs.get_attr("t") == [0, 0, 0]
        envs.set_attr("t", 3, indices=[1])  # setattr on the outermost wrapper, as SubprocVecEnv does
        assert envs.get_attr("t") == [0, 3, 0]
        envs.env_method("set_wrapper_attr", "t", 2, indices=[0])
        assert envs.get_attr("t", indices=0) == [2]
        assert envs.has_attr("last_options") and not envs.has_attr("no_such_attribute")
        with pytest.raises(AttributeError, match="no_such_attribute"):
            envs.get_attr("no_such_attribute")
        with pytest.raises(TypeError):
            envs.env_method("scaled")  # a missing argument: the env's own TypeError
        (obs_a, _), = envs.env_method("reset", indices=[2], seed=11)
        (obs_b, _), = envs.env_method("reset", indices=[2], seed=11, options={"level": 1})
        np.testing.assert_array_equal(obs_a, obs_b)
        assert envs.get_attr("last_options") == [None, None, {"level": 1}]
        envs.step(np.zeros(3, dtype=np.int64))  # the pool knows env 2 was reset
        # DummyVecEnv's envs[i]: that env's attributes and methods.
        proxy = envs.envs[1]
        proxy.t = 7
        assert proxy.t == 7 and envs.get_attr("t", indices=[1]) == [7]
        assert proxy.scaled(2.0, factor=5.0) == 10.0
        assert len(envs.envs) == 3
    finally:
        envs.close()
    with pytest.raises(parallel_pool.PoolClosedError):
        envs.get_attr("t")


def test_seed_and_set_options_reach_the_next_reset_only() -> None:
    envs = ParallelPoolVecEnv([sampled] * 3, num_workers=1)
    try:
        envs.reset()
        assert envs.get_attr("seeds") == [[None]] * 3  # no seed given: None, as SubprocVecEnv passes
        seeds = envs.seed()  # SB3 draws a 32-bit base seed
        assert all(0 <= s < 2**32 + 3 for s in seeds)
        envs.set_options({"hello": 1})
        assert envs.get_attr("last_options") == [None] * 3
        envs.reset()
        assert [s[-1] for s in envs.get_attr("seeds")] == seeds
        assert envs.get_attr("last_options") == [{"hello": 1}] * 3
        envs.reset()
        assert envs.get_attr("last_options") == [None] * 3
        assert [s[-1] for s in envs.get_attr("seeds")] == [None] * 3
        envs.set_options([{"other": 2}, {}, {"hello": 1}])
        envs.reset()
        assert envs.get_attr("last_options") == [{"other": 2}, None, {"hello": 1}]
    finally:
        envs.close()


@pytest.mark.parametrize("space", [
    gym.spaces.Dict({"move": gym.spaces.Box(-1.0, 1.0, (2,), np.float32), "pick": gym.spaces.Discrete(3)}),
    gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.MultiBinary(2))),
], ids=["dict", "tuple"])
def test_dict_and_tuple_actions_per_env_and_batched(space: gym.Space) -> None:
    def make() -> gym.Env:
        return SampledEnv(action_space=space)

    envs = ParallelPoolVecEnv([make] * 3, num_workers=1, seed=0)
    try:
        envs.reset()
        space.seed(0)
        envs.step([space.sample() for _ in range(3)])  # SB3's form: one action per env (the env checks it)
        batched = gym.vector.utils.batch_space(space, 3)
        batched.seed(0)
        envs.step(batched.sample())  # Gymnasium's batched form
        assert envs.get_attr("t") == [2, 2, 2]
    finally:
        envs.close()


def test_render_and_get_images_of_float_frames() -> None:
    envs = ParallelPoolVecEnv([sampled] * 3, num_workers=1, seed=0)
    try:
        images = envs.get_images()  # before any reset, as SubprocVecEnv's
        assert len(images) == 3 and all(i.dtype == np.float64 and i.shape == (4, 4, 3) for i in images)
        envs.reset()
        np.testing.assert_array_equal(envs.render(mode="rgb_array"), envs.render())
        assert envs.render().shape == (8, 8, 3)  # SB3's tile_images: 2x2 tiles, one blank
        np.testing.assert_array_equal(envs.pool.render(np.arange(envs.num_envs)), np.stack(images))
        with pytest.warns(UserWarning):
            envs.render(mode="something_else")
    finally:
        envs.close()
    quiet = ParallelPoolVecEnv([lambda: SampledEnv(render_mode=None)] * 2, num_workers=1)
    try:
        with pytest.warns(UserWarning):
            assert quiet.get_images() == [None, None]
    finally:
        quiet.close()
