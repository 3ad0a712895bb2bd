"""Alignment of the native dm_control suite tasks with ``dm_control.suite`` itself.

dm_control (1.0.52 or later, the dm_control extra) is the oracle. dm_control draws each episode's
initial state from the task's ``np.random.RandomState``; ours is ``core/numpy_random_state.h``, the
same stream in C++, so a pool env with seed ``s`` starts every episode where ``suite.load(domain,
task, task_kwargs={"random": s})`` does, and both then take the same actions. Observations (every
key), rewards, discounts and step types must agree over whole episodes, resets included. The
RandomState port itself is checked draw by draw against NumPy.

Tolerances (everything else is compared with ``==``, no tolerance):

- ``REWARD_RTOL`` for rewards that pass through ``np.exp`` (``rewards.tolerance``'s default
  gaussian sigmoid): on CPUs with AVX-512F NumPy evaluates float64 ``exp`` with its own SIMD code,
  which differs from libm's (ours) in the last bit for some arguments (measured here: 5% of
  random arguments, never more than 1 ulp). It does not feed back into the simulation.
- ``TOUCH_RTOL`` for the ``touch`` observations of hopper and finger (``np.log1p``: on AVX-512
  NumPy uses SVML's log1p, again 1 ulp from libm's for some arguments), quadruped's
  ``force_torque`` (``np.arcsinh``, the same) and escape's ``rangefinder`` (``np.tanh``: NumPy's
  own SIMD tanh, measured here up to 3 ulp from libm's, 1 in 3 random arguments in [0, 3]; 3 ulp of
  a value below 1 is under 7e-16 relative). None of them feeds back into the simulation.

QuadrupedEscape-v1's terrain (each episode's height field: a bowl times ``scipy.ndimage.zoom`` of
random bumps) is compared bit for bit (``==`` on the float32 field), and through whole episodes
(contacts with the terrain and the rangefinders' rays are where a wrong terrain shows). The
suite's escape task makes rendering contexts in every reset (``if physics.contexts`` creates
them), so the oracle renders through dm_control's EGL backend here (the ``egl`` fixture).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import parallel_pool

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # glfw's "no display" warning from dm_control's import
    import dm_control.suite as dm_control_suite  # the oracle (the test extra): never skipped

# 4 ulp at 1.0: one rounding difference in exp, carried through a product of up to three factors.
REWARD_RTOL = 1e-15
TOUCH_RTOL = 1e-15


@dataclass(frozen=True)
class DmTask:
    task_id: str
    domain: str
    task: str
    # Observation keys compared with TOUCH_RTOL instead of exactly (NumPy's SIMD log1p, arcsinh, tanh).
    log1p_keys: tuple[str, ...] = ()
    # Whether the reward passes through np.exp (REWARD_RTOL) or is exact.
    exp_reward: bool = True

    def __str__(self) -> str:
        return self.task_id


TASKS = [
    DmTask("AcrobotSwingup-v1", "acrobot", "swingup"),
    DmTask("AcrobotSwingupSparse-v1", "acrobot", "swingup_sparse", exp_reward=False),
    DmTask("BallInCupCatch-v1", "ball_in_cup", "catch", exp_reward=False),
    DmTask("CartpoleBalance-v1", "cartpole", "balance"),
    DmTask("CartpoleBalanceSparse-v1", "cartpole", "balance_sparse", exp_reward=False),
    DmTask("CartpoleSwingup-v1", "cartpole", "swingup"),
    DmTask("CartpoleSwingupSparse-v1", "cartpole", "swingup_sparse", exp_reward=False),
    DmTask("CartpoleTwoPoles-v1", "cartpole", "two_poles"),
    DmTask("CartpoleThreePoles-v1", "cartpole", "three_poles"),
    DmTask("CheetahRun-v1", "cheetah", "run", exp_reward=False),
    DmTask("DogStand-v1", "dog", "stand"),
    DmTask("DogWalk-v1", "dog", "walk"),
    DmTask("DogTrot-v1", "dog", "trot"),
    DmTask("DogRun-v1", "dog", "run"),
    DmTask("DogFetch-v1", "dog", "fetch"),
    DmTask("FingerSpin-v1", "finger", "spin", log1p_keys=("touch",), exp_reward=False),
    DmTask("FingerTurnEasy-v1", "finger", "turn_easy", log1p_keys=("touch",), exp_reward=False),
    DmTask("FingerTurnHard-v1", "finger", "turn_hard", log1p_keys=("touch",), exp_reward=False),
    DmTask("FishUpright-v1", "fish", "upright"),
    DmTask("FishSwim-v1", "fish", "swim"),
    DmTask("HopperStand-v1", "hopper", "stand", log1p_keys=("touch",), exp_reward=False),
    DmTask("HopperHop-v1", "hopper", "hop", log1p_keys=("touch",), exp_reward=False),
    DmTask("HumanoidStand-v1", "humanoid", "stand"),
    DmTask("HumanoidWalk-v1", "humanoid", "walk"),
    DmTask("HumanoidRun-v1", "humanoid", "run"),
    DmTask("HumanoidRunPureState-v1", "humanoid", "run_pure_state"),
    DmTask("HumanoidCMUStand-v1", "humanoid_CMU", "stand"),
    DmTask("HumanoidCMUWalk-v1", "humanoid_CMU", "walk"),
    DmTask("HumanoidCMURun-v1", "humanoid_CMU", "run"),
    DmTask("LqrLqr21-v1", "lqr", "lqr_2_1", exp_reward=False),
    DmTask("LqrLqr62-v1", "lqr", "lqr_6_2", exp_reward=False),
    DmTask("ManipulatorBringBall-v1", "manipulator", "bring_ball", log1p_keys=("touch",)),
    DmTask("ManipulatorBringPeg-v1", "manipulator", "bring_peg", log1p_keys=("touch",)),
    DmTask("ManipulatorInsertBall-v1", "manipulator", "insert_ball", log1p_keys=("touch",)),
    DmTask("ManipulatorInsertPeg-v1", "manipulator", "insert_peg", log1p_keys=("touch",)),
    DmTask("PendulumSwingup-v1", "pendulum", "swingup", exp_reward=False),
    DmTask("PointMassEasy-v1", "point_mass", "easy"),
    DmTask("PointMassHard-v1", "point_mass", "hard"),
    DmTask("QuadrupedWalk-v1", "quadruped", "walk", log1p_keys=("force_torque",), exp_reward=False),
    DmTask("QuadrupedRun-v1", "quadruped", "run", log1p_keys=("force_torque",), exp_reward=False),
    DmTask("QuadrupedFetch-v1", "quadruped", "fetch", log1p_keys=("force_torque",), exp_reward=False),
    DmTask("QuadrupedEscape-v1", "quadruped", "escape", log1p_keys=("force_torque", "rangefinder"),
           exp_reward=False),
    DmTask("ReacherEasy-v1", "reacher", "easy", exp_reward=False),
    DmTask("ReacherHard-v1", "reacher", "hard", exp_reward=False),
    DmTask("StackerStack2-v1", "stacker", "stack_2", log1p_keys=("touch",)),
    DmTask("StackerStack4-v1", "stacker", "stack_4", log1p_keys=("touch",)),
    DmTask("SwimmerSwimmer6-v1", "swimmer", "swimmer6", exp_reward=False),
    DmTask("SwimmerSwimmer15-v1", "swimmer", "swimmer15", exp_reward=False),
    DmTask("WalkerStand-v1", "walker", "stand"),
    DmTask("WalkerWalk-v1", "walker", "walk"),
    DmTask("WalkerRun-v1", "walker", "run"),
]


@pytest.fixture(autouse=True)
def egl(monkeypatch: pytest.MonkeyPatch) -> None:
    """dm_control's renderer on EGL (headless): quadruped escape's reset makes rendering contexts, and
    dm_control's default backend here (GLFW, picked at import without MUJOCO_GL) has no display.
    As tests/envs/dm_control/test_dm_control_render.py's fixture: ``_render.Renderer`` is looked up each time a
    Physics makes its contexts."""
    monkeypatch.setenv("MUJOCO_GL", "egl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import dm_control._render as dm_render
        from dm_control._render.pyopengl.egl_renderer import EGLContext
    monkeypatch.setattr(dm_render, "Renderer", EGLContext)


def load_oracle(task: DmTask, seed: int, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dm_control_suite.load(task.domain, task.task, task_kwargs={"random": seed, **kwargs})


def assert_timestep_equal(task: DmTask, ours: Any, theirs: Any, where: str) -> None:
    """Row 0 of our batched TimeStep against the oracle's TimeStep."""
    assert int(ours.step_type[0]) == int(theirs.step_type), where
    for key, value in theirs.observation.items():
        mine = getattr(ours.observation, key)[0]
        value = np.asarray(value, dtype=np.float64)
        assert mine.shape == value.shape, (where, key)
        if key in task.log1p_keys:
            np.testing.assert_allclose(mine, value, rtol=TOUCH_RTOL, atol=0, err_msg=f"{where}: {key}")
        else:
            np.testing.assert_array_equal(mine, value, err_msg=f"{where}: {key}")
    if theirs.first():
        return  # dm_control's FIRST has reward and discount None
    assert float(ours.discount[0]) == float(theirs.discount), where
    if task.exp_reward:
        np.testing.assert_allclose(ours.reward[0], theirs.reward, rtol=REWARD_RTOL, atol=0, err_msg=where)
    else:
        assert float(ours.reward[0]) == float(theirs.reward), where


def run_alignment(task: DmTask, seed: int, steps: int, **kwargs: Any) -> int:
    """Steps ours and the oracle side by side with the same uniform random actions for `steps`
    steps (episodes end and restart on both sides); returns how many episodes ended."""
    oracle = load_oracle(task, seed, **kwargs)
    env = parallel_pool.make_dm(task.task_id, num_envs=1, seed=seed, **kwargs)
    spec = oracle.action_spec()
    # Unlimited actuators (lqr's) are bounded by +-mjMAXVAL: draw those in [-1, 1].
    low, high = np.maximum(spec.minimum, -1.0), np.minimum(spec.maximum, 1.0)
    actions = np.random.default_rng(seed + 1)
    try:
        assert_timestep_equal(task, env.reset(), oracle.reset(), "reset")
        ends = 0
        for t in range(steps):
            action = actions.uniform(low, high)
            theirs = oracle.step(action)
            ours = env.step(action[None])
            assert_timestep_equal(task, ours, theirs, f"step {t}")
            ends += theirs.last()
        return ends
    finally:
        env.close()


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_alignment_short_episodes(task: DmTask) -> None:
    """Two episodes of half a second each (time_limit=0.5), the resets included; full episodes of
    every task are test_alignment_full_episode's (-m slow)."""
    steps_per_episode = parallel_pool.make_spec(task.task_id, time_limit=0.5).max_episode_steps
    assert run_alignment(task, 7, 2 * steps_per_episode + 2, time_limit=0.5) == 2


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=str)
def test_alignment_full_episode(task: DmTask) -> None:
    """One full episode at the task's own time limit, and the next reset."""
    kwargs = {"time_limit": 30} if task.domain == "lqr" else {}  # lqr's default time limit is infinite
    oracle = load_oracle(task, 0, **kwargs)
    steps = int(np.ceil(oracle._step_limit))
    assert run_alignment(task, 3, steps + 1, **kwargs) == 1


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=str)
def test_initial_states_of_many_seeds(task: DmTask) -> None:
    """The initial-state distribution, seed by seed: the first observation of env i of a pool with
    seed 1000 equals that of suite.load(random=1000 + i), for 40 envs (the same RandomState draws)."""
    num_envs = 40
    env = parallel_pool.make_dm(task.task_id, num_envs=num_envs, seed=1000)
    try:
        ours = env.reset()
        for i in range(num_envs):
            theirs = load_oracle(task, 1000 + i).reset()
            for key, value in theirs.observation.items():
                mine = getattr(ours.observation, key)[i]
                if key in task.log1p_keys:
                    np.testing.assert_allclose(mine, value, rtol=TOUCH_RTOL, atol=0, err_msg=f"env {i} {key}")
                else:
                    np.testing.assert_array_equal(mine, value, err_msg=f"env {i} {key}")
    finally:
        env.close()


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_spec_matches_suite(task: DmTask) -> None:
    """Observation keys, order, shapes and dtypes; action bounds; the step limit."""
    oracle = load_oracle(task, 0)
    spec = parallel_pool.make_spec(task.task_id)
    obs_spec = spec.observation_spec()
    theirs = oracle.observation_spec()
    assert list(obs_spec) == list(theirs)
    for key, value in theirs.items():
        assert obs_spec[key].shape == value.shape, key
        assert obs_spec[key].dtype == value.dtype, key
    action = spec.action_spec()
    np.testing.assert_array_equal(action.minimum, oracle.action_spec().minimum)
    np.testing.assert_array_equal(action.maximum, oracle.action_spec().maximum)
    assert action.dtype == oracle.action_spec().dtype
    step_limit = oracle._step_limit
    assert spec.max_episode_steps == (0 if np.isinf(step_limit) else int(np.ceil(step_limit)))


def by_id(task_id: str) -> DmTask:
    return next(t for t in TASKS if t.task_id == task_id)


@pytest.mark.parametrize(
    ("task_id", "ours", "theirs"),
    [
        # environment_kwargs: physics steps per env step, by count or by time, and the plain mj_step.
        ("CheetahRun-v1", dict(n_sub_steps=3), dict(environment_kwargs={"n_sub_steps": 3})),
        ("CheetahRun-v1", dict(control_timestep=0.02), dict(environment_kwargs={"control_timestep": 0.02})),
        ("CartpoleSwingup-v1", dict(legacy_step=False), dict(environment_kwargs={"legacy_step": False})),
        ("HopperHop-v1", dict(legacy_step=False), dict(environment_kwargs={"legacy_step": False})),
        ("PendulumSwingup-v1", dict(time_limit=0.35), dict(time_limit=0.35)),  # 35 steps: not a round count
    ],
    ids=["n_sub_steps", "control_timestep", "legacy_step_rk4", "legacy_step_euler", "time_limit"],
)
def test_kwargs_match_suite(task_id: str, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    task = by_id(task_id)
    oracle = load_oracle(task, 0, **theirs)
    env = parallel_pool.make_dm(task_id, num_envs=1, seed=11, **ours)
    assert env.spec.max_episode_steps == int(np.ceil(oracle._step_limit))
    env.close()
    steps = min(int(np.ceil(oracle._step_limit)), 60)
    oracle = load_oracle(task, 11, **theirs)
    env = parallel_pool.make_dm(task_id, num_envs=1, seed=11, **ours)
    actions = np.random.default_rng(0)
    spec = oracle.action_spec()
    try:
        assert_timestep_equal(task, env.reset(), oracle.reset(), "reset")
        for t in range(steps + 2):
            action = actions.uniform(spec.minimum, spec.maximum)
            assert_timestep_equal(task, env.step(action[None]), oracle.step(action), f"step {t}")
    finally:
        env.close()


def test_n_sub_steps_with_the_tasks_control_timestep_is_refused() -> None:
    """control.Environment raises when both are given; walker passes its own control_timestep."""
    with pytest.raises(ValueError, match="Both n_sub_steps and control_timestep"):
        parallel_pool.make_dm("WalkerWalk-v1", n_sub_steps=2)
    with pytest.raises(ValueError, match="integer multiple"):
        parallel_pool.make_dm("CheetahRun-v1", control_timestep=0.015)


def test_flat_observation() -> None:
    """flat_observation=True: one float64 vector, the suite's values in its order (a Box for
    Gymnasium, for MLPs); the same numbers as dm_control's environment_kwargs flat_observation."""
    task = by_id("WalkerWalk-v1")
    oracle = load_oracle(task, 4, environment_kwargs={"flat_observation": True})
    flat = parallel_pool.make_dm(task.task_id, num_envs=1, seed=4, flat_observation=True)
    space = parallel_pool.make_spec(task.task_id, flat_observation=True).observation_space
    assert space.shape == (24,) and space.dtype == np.float64
    try:
        np.testing.assert_array_equal(flat.reset().observation.obs[0], oracle.reset().observation["observations"])
        for t in range(20):
            action = np.full(6, 0.3 if t % 2 else -0.3)
            np.testing.assert_array_equal(flat.step(action[None]).observation.obs[0],
                                          oracle.step(action).observation["observations"])
    finally:
        flat.close()


def test_gymnasium_front_end() -> None:
    """A Dict observation space keyed by the suite's names (Gymnasium's Dict sorts its keys; the
    dm_env front-end keeps the suite's order), float64 actions, and the dm_env front-end's values."""
    import gymnasium

    env = parallel_pool.make_gymnasium("HumanoidRun-v1", num_envs=3, seed=2)
    dm = parallel_pool.make_dm("HumanoidRun-v1", num_envs=3, seed=2)
    try:
        assert isinstance(env.observation_space, gymnasium.spaces.Dict)
        suite_order = ["joint_angles", "head_height", "extremities", "torso_vertical", "com_velocity", "velocity"]
        assert sorted(env.observation_space.spaces) == sorted(suite_order)
        assert list(dm.spec.observation_spec()) == suite_order
        assert dm.observation_spec()._fields[:6] == tuple(suite_order)
        assert env.observation_space["head_height"].shape == ()
        assert env.action_space.dtype == np.float64 and env.action_space.shape == (21,)
        obs, info = env.reset()
        ts = dm.reset()
        for key in obs:
            np.testing.assert_array_equal(obs[key], getattr(ts.observation, key))
            assert all(env.observation_space[key].contains(np.asarray(row)) for row in obs[key])
        action = np.random.default_rng(0).uniform(-1, 1, (3, 21))
        obs, reward, terminated, truncated, info = env.step(action)
        ts = dm.step(action)
        np.testing.assert_array_equal(reward, ts.reward)
        np.testing.assert_array_equal(obs["velocity"], ts.observation.velocity)
        assert not terminated.any() and not truncated.any()
    finally:
        env.close()
        dm.close()


@pytest.mark.parametrize(
    ("task_id", "model_state"),
    [("ReacherHard-v1", "target_pos"), ("FishSwim-v1", "target_pos"), ("LqrLqr62-v1", "stiffness"),
     ("PointMassHard-v1", "wrap_prm"), ("QuadrupedEscape-v1", "hfield")],
)
def test_expose_physics_state(task_id: str, model_state: str) -> None:
    """info["qpos"], info["qvel"] and what the episode drew, against the oracle's physics, after
    reset and steps, over two episodes (the second drawn after the first)."""
    task = by_id(task_id)
    oracle = load_oracle(task, 9, time_limit=0.2)
    env = parallel_pool.make_gymnasium(task_id, num_envs=1, seed=9, expose_physics_state=True, time_limit=0.2)
    model = oracle.physics.named.model
    theirs_state = {
        "target_pos": lambda: model.geom_pos["target"],
        "stiffness": lambda: oracle.physics.model.jnt_stiffness,
        "wrap_prm": lambda: oracle.physics.model.wrap_prm[:4],
        "hfield": lambda: oracle.physics.model.hfield_data.reshape(201, 201),  # escape's terrain, bit for bit
    }[model_state]
    try:
        _, info = env.reset()
        oracle.reset()
        spec = oracle.action_spec()
        for t in range(30):
            np.testing.assert_array_equal(info["qpos"][0], oracle.physics.data.qpos, err_msg=f"step {t}")
            np.testing.assert_array_equal(info["qvel"][0], oracle.physics.data.qvel, err_msg=f"step {t}")
            np.testing.assert_array_equal(info[model_state][0], theirs_state(), err_msg=f"step {t}")
            action = np.full(spec.shape, 0.5)
            oracle.step(action)  # the step after LAST resets, as our next_step autoreset does
            _, _, _, _, info = env.step(action[None])
    finally:
        env.close()


@pytest.mark.parametrize("task_id", ["LqrLqr21-v1", "CartpoleSwingup-v1", "ManipulatorBringBall-v1"])
def test_reset_with_a_seed_starts_the_seeds_episodes(task_id: str) -> None:
    """reset(seed=s) restarts env i's RandomState from s + i: the episodes of suite.load(random=s + i)
    (lqr: its model's stiffnesses too, drawn when suite.load builds it)."""
    task = by_id(task_id)
    env = parallel_pool.make_dm(task_id, num_envs=2, seed=0, time_limit=0.5)
    try:
        env.reset()
        env.step(np.zeros((2, *env.action_spec().shape)))
        ours = env.reset(seed=21)
        for i in range(2):
            theirs = load_oracle(task, 21 + i, time_limit=0.5).reset()
            for key, value in theirs.observation.items():
                np.testing.assert_array_equal(getattr(ours.observation, key)[i], value, err_msg=key)
    finally:
        env.close()


@pytest.mark.parametrize("task_id", ["CheetahRun-v1", "BallInCupCatch-v1", "LqrLqr21-v1"])
def test_alignment_async(task_id: str, async_rows: Any) -> None:
    """Async mode (4 envs, batches of 2 in whatever order they finish): every env against its own
    suite env with random=seed + env_id, row by row by info["env_id"], each with its own actions
    (flat observations, as the suite's flat_observation, so that a row is one array)."""
    task = by_id(task_id)
    num_envs, seed = 4, 30
    pool = parallel_pool.make(task_id, num_envs=num_envs, batch_size=2, num_threads=2, seed=seed, time_limit=0.2,
                              flat_observation=True)
    flat = {"flat_observation": True}
    oracles = [load_oracle(task, seed + i, time_limit=0.2, environment_kwargs=flat) for i in range(num_envs)]
    spec = oracles[0].action_spec()
    rngs = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    ends = 0
    try:
        rows = async_rows(pool, lambda i, obs: rngs[i].uniform(spec.minimum, spec.maximum), 60, seed=seed)
        for batch, actions in rows:
            obs, reward, terminated, truncated, info = batch
            for k, i in enumerate(info["env_id"].tolist()):
                theirs = oracles[i].reset() if actions[k] is None else oracles[i].step(actions[k])
                np.testing.assert_array_equal(obs[k], theirs.observation["observations"], err_msg=f"env {i}")
                if theirs.first():
                    assert reward[k] == 0 and not terminated[k] and not truncated[k]
                    continue
                assert bool(truncated[k]) == (theirs.last() and theirs.discount == 1.0)
                assert bool(terminated[k]) == (theirs.last() and theirs.discount == 0.0)
                if task.exp_reward:
                    np.testing.assert_allclose(reward[k], theirs.reward, rtol=REWARD_RTOL, atol=0)
                else:
                    assert reward[k] == theirs.reward
                ends += theirs.last()
    finally:
        pool.close()
    assert ends >= num_envs


def test_alignment_async_with_paused_resets(async_rows: Any) -> None:
    """CheetahRun-v1's reset settles its physics for 200 steps; an async caller that runs one
    while the batch it waits for completes stops it halfway and a worker goes on with it (the pool's
    resets_paused counts them). Episodes of 5 steps, so that most of the work is resets, received
    without a timeout (a receiver with one only waits) and kept, the suite envs stepped only
    afterwards (stepped between the batches, they would leave the caller no time to help): every
    env matches its own suite env, row by row, and some resets did pause."""
    task = by_id("CheetahRun-v1")
    num_envs, seed = 8, 40
    pool = parallel_pool.make("CheetahRun-v1", num_envs=num_envs, batch_size=4, num_threads=2, seed=seed,
                              time_limit=0.05, flat_observation=True)
    flat = {"flat_observation": True}
    oracles = [load_oracle(task, seed + i, time_limit=0.05, environment_kwargs=flat) for i in range(num_envs)]
    spec = oracles[0].action_spec()
    rngs = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    kept = []
    try:
        rows = async_rows(pool, lambda i, obs: rngs[i].uniform(spec.minimum, spec.maximum), 400, seed=seed,
                          timeout=None)
        for (obs, reward, terminated, truncated, info), actions in rows:
            ids = info["env_id"].copy()
            kept.append((obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), ids, actions))
        paused = pool._native._resets_paused
    finally:
        pool.close()
    resets = 0
    for obs, reward, terminated, truncated, ids, actions in kept:
        for k, i in enumerate(ids.tolist()):
            theirs = oracles[i].reset() if actions[k] is None else oracles[i].step(actions[k])
            np.testing.assert_array_equal(obs[k], theirs.observation["observations"], err_msg=f"env {i}")
            if theirs.first():
                resets += 1
                assert reward[k] == 0 and not terminated[k] and not truncated[k]
                continue
            assert bool(truncated[k]) == theirs.last() and not terminated[k]  # cheetah never terminates
            np.testing.assert_allclose(reward[k], theirs.reward, rtol=REWARD_RTOL, atol=0)
    assert resets >= 200
    assert paused > 0, f"no reset paused in {resets}"


def test_physics_error_on_the_same_step() -> None:
    """An unstable simulation (lqr's unlimited motors driven by random forces up to mjMAXVAL) is
    dm_control's PhysicsError on the step its check_invalid_state sees MuJoCo's warning; ours raises
    on the same step, naming it."""
    task = by_id("LqrLqr62-v1")
    oracle = load_oracle(task, 3)
    env = parallel_pool.make_dm(task.task_id, num_envs=1, seed=3)
    spec = oracle.action_spec()
    actions = np.random.default_rng(4)
    try:
        oracle.reset()
        env.reset()
        steps = 0
        while True:
            assert steps < 2_000, "the oracle never diverged"
            action = actions.uniform(spec.minimum, spec.maximum)
            try:
                oracle.step(action)
            except Exception as e:  # dm_control.rl.control.PhysicsError
                assert type(e).__name__ == "PhysicsError"
                with pytest.raises(parallel_pool.EnvError, match="PhysicsError.*mjWARN_BADQACC"):
                    env.step(action[None])
                break
            env.step(action[None])
            steps += 1
        assert steps > 0
    finally:
        env.close()


# ---- core/numpy_random_state.h against np.random.RandomState, draw by draw ----------------------

RANDOM_STATE_SEEDS = [0, 1, 42, 12345, 2**31, 2**32 - 1]


def run_random_state(seed: int, program: list[tuple[str, tuple[Any, ...], int]]) -> list[np.ndarray]:
    rs = np.random.RandomState(seed) if seed < 2**32 else np.random.RandomState([seed & 0xFFFFFFFF, seed >> 32])
    out = []
    for method, args, n in program:
        if method == "next_u32":
            out.append(rs._bit_generator.random_raw(n).astype(np.uint32))
        elif method == "random_sample":
            out.append(np.array([rs.random_sample() for _ in range(n)]))
        elif method == "uniform":
            out.append(np.array([rs.uniform(*args) for _ in range(n)]))
        elif method == "standard_normal":
            out.append(np.array([rs.randn() for _ in range(n)]))
        elif method == "randint":
            out.append(np.array([rs.randint(*args) for _ in range(n)], dtype=np.int64))
        elif method == "choice":
            out.append(np.array([rs.choice(*args) for _ in range(n)], dtype=np.int64))
        elif method == "choice_p":
            out.append(np.array([rs.choice(len(args[0]), p=args[0]) for _ in range(n)], dtype=np.int64))
    return out


RANDOM_STATE_PROGRAM = [
    ("random_sample", (), 700),  # past one 624-word block
    ("uniform", (-np.pi, np.pi), 50),
    ("standard_normal", (), 7),  # odd: the kept value carries over
    ("uniform", (0.2, 0.5), 3),
    ("standard_normal", (), 10),
    ("randint", (0, 3), 40),
    ("randint", (-5, 1000), 40),
    ("randint", (0, 2**31 + 5), 40),
    ("randint", (0, 2**40), 40),
    ("choice", (7,), 20),
    ("choice_p", ([0.1, 0.1, 1 - 0.1 - 0.1],), 50),  # manipulator's initial-state kinds
    ("choice_p", ([0.25, 0.0, 0.5, 0.25],), 50),
    ("next_u32", (), 5),
]


@pytest.mark.parametrize("seed", RANDOM_STATE_SEEDS + [2**32, 2**40 + 17, 2**64 - 1])
def test_random_state_matches_numpy(seed: int) -> None:
    from parallel_pool import _testing

    ours = _testing.numpy_random_state(seed, RANDOM_STATE_PROGRAM)
    theirs = run_random_state(seed, RANDOM_STATE_PROGRAM)
    for (method, _, _), a, b in zip(RANDOM_STATE_PROGRAM, ours, theirs):
        np.testing.assert_array_equal(a, b, err_msg=method)


def escape_terrain(seed: int) -> np.ndarray:
    """Escape.initialize_episode's first terrain for suite.load's random=seed, as float32: the bowl
    times ndimage.zoom of the episode's first draws (the terrain is drawn before anything else)."""
    from scipy import ndimage

    res = 201
    row_grid, col_grid = np.ogrid[-1:1:res * 1j, -1:1:res * 1j]
    radius = np.clip(np.sqrt(col_grid**2 + row_grid**2), .04, 1)
    bowl_shape = .5 - np.cos(2 * np.pi * radius) / 2
    bumps = np.random.RandomState(seed).uniform(0.15, 1, (30, 30))
    return (bowl_shape * ndimage.zoom(bumps, res / 30.0)).astype(np.float32)


def test_escape_terrains_differ_and_match_scipy() -> None:
    """Each env's terrain (expose_physics_state's hfield) is the suite's formula with scipy's zoom,
    bit for bit, for 8 envs of one pool; the terrains differ between envs and are not the bowl alone
    (a zoom that returned its input's mean, or a terrain never written, would fail)."""
    env = parallel_pool.make_gymnasium("QuadrupedEscape-v1", num_envs=8, seed=50, expose_physics_state=True)
    try:
        _, info = env.reset()
        fields = info["hfield"]
        assert fields.shape == (8, 201, 201) and fields.dtype == np.float64
        for i in range(8):
            np.testing.assert_array_equal(fields[i], escape_terrain(50 + i).astype(np.float64), err_msg=f"env {i}")
        assert not np.array_equal(fields[0], fields[1])
        assert np.ptp(fields[0][100]) > 0.1
    finally:
        env.close()


@pytest.mark.slow
def test_escape_terrain_many_seeds() -> None:
    """The terrain of 200 seeds (5 pools of 40 envs), bit for bit against scipy's zoom."""
    for first in range(0, 200, 40):
        env = parallel_pool.make_gymnasium("QuadrupedEscape-v1", num_envs=40, seed=first, expose_physics_state=True)
        try:
            _, info = env.reset()
            for i in range(40):
                np.testing.assert_array_equal(info["hfield"][i], escape_terrain(first + i), err_msg=f"seed {first + i}")
        finally:
            env.close()


def test_every_suite_task_is_registered() -> None:
    """The 51 tasks of dm_control.suite.ALL_TASKS, each under its EnvPool id and in this sweep."""
    assert sorted((t.domain, t.task) for t in TASKS) == sorted(dm_control_suite.ALL_TASKS)
    assert len(TASKS) == 51
    registered = set(parallel_pool.list_all_envs())
    assert {t.task_id for t in TASKS} <= registered
