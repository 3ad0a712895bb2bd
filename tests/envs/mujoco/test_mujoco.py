"""Alignment of the native MuJoCo tasks with Gymnasium's own implementations.

Gymnasium is the oracle. Our pool runs with ``expose_physics_state=True``, so each reset state
(``info["qpos"]``, ``info["qvel"]``) can be loaded into Gymnasium's env with ``set_state``; both
then take the same actions step by step, and obs, reward, terminated, truncated and every info
entry must agree. Spaces, reset-noise distributions, determinism and the constructor kwargs are
checked against Gymnasium as well.

To add a task: register it in native/envs/mujoco/register.cc and add a ``MujocoTask`` to
``TASKS`` below (its Gymnasium reset noise and a few non-default kwargs); every test here then
covers it. See native/envs/mujoco/README.md.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import gymnasium
import mujoco  # noqa: F401 - Gymnasium's MuJoCo envs (the oracle) need it; a runtime dependency, never skipped
import numpy as np
import pytest

import parallel_pool

# Max |ours - Gymnasium's| of obs, reward and every info entry. The default, and far
# above what we measure: the envs call the same libmujoco.so.4.0.1 from the same state with the
# same float32 actions and compute the reward terms in NumPy's order and precision, so every
# task below agreed to the bit (max error 0.0 over every alignment run here, including
# terminations, truncations and resyncs after them). A nonzero error would mean a real change.
ATOL = 1e-6


@dataclass(frozen=True)
class MujocoTask:
    """One task under test.

    ``qvel_noise``: how Gymnasium's ``reset_model`` perturbs qvel, ``"normal"``
    (``scale * standard_normal``) or ``"uniform"`` (``uniform(-scale, scale)``); qpos always gets
    ``uniform(-scale, scale)``. ``kwargs_cases``: non-default constructor kwargs, each compared
    with Gymnasium made with the same kwargs. ``has_xml_file``: whether Gymnasium's constructor
    takes ``xml_file`` for this version. ``reset_noise_scale``: the scale of the reset noise when
    Gymnasium's env keeps none in ``_reset_noise_scale`` (v4 tasks that hard-code it); the
    reset-noise test checks it against Gymnasium's own samples too. ``reset_check``: ``"noise"``,
    the reset state is init + the noise above; ``"gymnasium_samples"``, for resets that are not
    (Reacher and Pusher draw a goal or object position by rejection and pin some coordinates),
    ours is compared with Gymnasium's own reset samples (see ``reset_distribution_mismatches``).
    """

    task_id: str
    qvel_noise: str = "normal"
    kwargs_cases: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    has_xml_file: bool = True
    reset_noise_scale: float | None = None
    reset_check: str = "noise"

    def __str__(self) -> str:
        return self.task_id


def _v4_and_v5(
    name: str, *cases: dict[str, Any], qvel_noise: str = "normal", v5_cases: tuple[dict[str, Any], ...] = ()
) -> list[MujocoTask]:
    """A task's v4 and v5 where both take the same kwargs ``cases``: v5's first case also sets
    ``frame_skip=2`` (a v5 kwarg), ``v5_cases`` are v5's alone, and v4's Gymnasium constructor
    takes no ``xml_file``."""
    first, *rest = cases
    return [
        MujocoTask(f"{name}-v4", qvel_noise=qvel_noise, has_xml_file=False, kwargs_cases=cases),
        MujocoTask(f"{name}-v5", qvel_noise=qvel_noise, kwargs_cases=(dict(frame_skip=2, **first), *rest, *v5_cases)),
    ]


TASKS = [
    MujocoTask(
        "Ant-v4",
        kwargs_cases=(
            dict(ctrl_cost_weight=0.1, use_contact_forces=True, contact_cost_weight=1e-3,
                 contact_force_range=(-0.5, 0.5), healthy_reward=2.0, healthy_z_range=(0.3, 0.9),
                 reset_noise_scale=0.2, exclude_current_positions_from_observation=False),
            dict(terminate_when_unhealthy=False, healthy_z_range=(0.3, 0.9)),
        ),
    ),
    MujocoTask(
        "Ant-v5",
        kwargs_cases=(
            dict(frame_skip=3, forward_reward_weight=2.0, ctrl_cost_weight=0.1, contact_cost_weight=1e-3,
                 contact_force_range=(-0.5, 0.5), healthy_z_range=(0.3, 0.9), main_body=2,
                 include_cfrc_ext_in_observation=False, exclude_current_positions_from_observation=False,
                 reset_noise_scale=0.2),
            dict(terminate_when_unhealthy=False, healthy_z_range=(0.3, 0.9), healthy_reward=0.5),
        ),
    ),
    *_v4_and_v5(
        "HalfCheetah",
        dict(forward_reward_weight=0.5, ctrl_cost_weight=0.3, reset_noise_scale=0.05,
             exclude_current_positions_from_observation=False),
    ),
    *_v4_and_v5(
        "Hopper",
        dict(forward_reward_weight=2.0, ctrl_cost_weight=0.01, healthy_reward=0.5,
             healthy_state_range=(-50.0, 50.0), healthy_z_range=(0.75, 2.0), healthy_angle_range=(-0.3, 0.3),
             reset_noise_scale=0.01, exclude_current_positions_from_observation=False),
        dict(terminate_when_unhealthy=False, healthy_z_range=(0.9, float("inf")), healthy_reward=2.0),
        # A narrow state range: state_vector()[2:] leaves it before z or the angle do.
        dict(healthy_state_range=(-2.0, 2.0), healthy_angle_range=(-1.0, 1.0)),
        qvel_noise="uniform",
    ),
    *_v4_and_v5(
        "Walker2d",
        dict(forward_reward_weight=2.0, ctrl_cost_weight=0.01, healthy_reward=0.5, healthy_z_range=(0.9, 1.8),
             healthy_angle_range=(-0.5, 0.5), reset_noise_scale=0.01,
             exclude_current_positions_from_observation=False),
        dict(terminate_when_unhealthy=False, healthy_z_range=(1.1, 2.0), healthy_reward=2.0),
        qvel_noise="uniform",
        # Gymnasium's v4 model (left foot friction 0.9) under v5.
        v5_cases=(dict(xml_file="walker2d.xml"),),
    ),
    *_v4_and_v5(
        "Swimmer",
        dict(forward_reward_weight=2.0, ctrl_cost_weight=0.01, reset_noise_scale=0.2,
             exclude_current_positions_from_observation=False),
        qvel_noise="uniform",
    ),
    MujocoTask(
        "Humanoid-v4",
        qvel_noise="uniform",
        has_xml_file=False,
        kwargs_cases=(
            dict(forward_reward_weight=2.0, ctrl_cost_weight=0.3, healthy_reward=1.0, healthy_z_range=(1.1, 1.6),
                 reset_noise_scale=0.05, exclude_current_positions_from_observation=False),
            dict(terminate_when_unhealthy=False, healthy_z_range=(1.1, 1.6)),
        ),
    ),
    MujocoTask(
        "Humanoid-v5",
        qvel_noise="uniform",
        kwargs_cases=(
            dict(frame_skip=3, forward_reward_weight=2.0, ctrl_cost_weight=0.3, contact_cost_weight=1e-5,
                 contact_cost_range=(0.01, 0.5), healthy_reward=1.0, healthy_z_range=(1.1, 1.6),
                 reset_noise_scale=0.05, exclude_current_positions_from_observation=False,
                 include_cinert_in_observation=False, include_cvel_in_observation=False),
            dict(terminate_when_unhealthy=False, healthy_z_range=(1.1, 1.6),
                 include_qfrc_actuator_in_observation=False, include_cfrc_ext_in_observation=False),
        ),
    ),
    # Gymnasium's HumanoidStandup-v4 takes no kwargs but rendering's.
    MujocoTask("HumanoidStandup-v4", qvel_noise="uniform", has_xml_file=False, reset_noise_scale=0.01),
    MujocoTask(
        "HumanoidStandup-v5",
        qvel_noise="uniform",
        kwargs_cases=(
            dict(frame_skip=3, uph_cost_weight=2.0, ctrl_cost_weight=0.3, impact_cost_weight=1e-5,
                 impact_cost_range=(0.01, 0.5), reset_noise_scale=0.05,
                 exclude_current_positions_from_observation=False, include_cinert_in_observation=False,
                 include_cfrc_ext_in_observation=False),
            dict(include_cvel_in_observation=False, include_qfrc_actuator_in_observation=False),
        ),
    ),
    # InvertedPendulum-v4 and the v4s below take no kwargs (but rendering ones).
    MujocoTask("InvertedPendulum-v4", qvel_noise="uniform", has_xml_file=False, reset_noise_scale=0.01),
    MujocoTask(
        "InvertedPendulum-v5",
        qvel_noise="uniform",
        kwargs_cases=(dict(frame_skip=3, reset_noise_scale=0.05),),
    ),
    MujocoTask("InvertedDoublePendulum-v4", has_xml_file=False, reset_noise_scale=0.1),
    MujocoTask(
        "InvertedDoublePendulum-v5",
        kwargs_cases=(dict(frame_skip=3, healthy_reward=5.0, reset_noise_scale=0.2),),
    ),
    MujocoTask("Reacher-v4", has_xml_file=False, reset_check="gymnasium_samples"),
    MujocoTask(
        "Reacher-v5",
        reset_check="gymnasium_samples",
        kwargs_cases=(dict(frame_skip=3, reward_dist_weight=2.0, reward_control_weight=0.5),),
    ),
    MujocoTask("Pusher-v4", has_xml_file=False, reset_check="gymnasium_samples"),
    MujocoTask(
        "Pusher-v5",
        reset_check="gymnasium_samples",
        kwargs_cases=(
            dict(frame_skip=3, reward_near_weight=0.3, reward_dist_weight=2.0, reward_control_weight=0.2),
        ),
    ),
]

@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Gymnasium's half_cheetah.xml draws a model-compiler warning, which the mujoco Python package
    # appends to ./MUJOCO_LOG.TXT: keep it out of the source tree.
    monkeypatch.chdir(tmp_path)


# Info entries every pool adds (not Gymnasium's), and expose_physics_state's.
OUR_INFO = {"env_id", "elapsed_step", "qpos", "qvel"}
# Actions beyond the bounds: Gymnasium does not clip them (MuJoCo clamps ctrl, the control cost
# sees the raw action), so neither do we, and the test covers it.
ACTION_SCALE = 1.5


# Gymnasium's Pusher-v4 raises ImportError under mujoco >= 3 (pusher.xml behaves differently there
# than under the mujoco 2 it was tuned on, Gymnasium issue #950). Its code runs on mujoco 3 and 4
# all the same, and ours runs the same model on the same libmujoco, so the oracle is Gymnasium's
# pusher_v4.py made with that version check passed.
REFUSE_MUJOCO_3 = {"Pusher-v4"}


def gym_make(task_id: str, **kwargs: Any) -> Any:
    """Gymnasium's raw env (no TimeLimit: our pool's step count is compared with the limit)."""
    with warnings.catch_warnings(), contextlib.ExitStack() as stack:
        warnings.simplefilter("ignore", DeprecationWarning)  # "Ant-v4 is out of date"
        if task_id in REFUSE_MUJOCO_3:
            stack.enter_context(mock.patch.object(mujoco, "__version__", "2.3.7"))
        return gymnasium.make(task_id, **kwargs).unwrapped


def random_actions(space: gymnasium.spaces.Box, n: int, rng: np.random.Generator) -> np.ndarray:
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    return rng.uniform(ACTION_SCALE * low, ACTION_SCALE * high, size=(n, *space.shape)).astype(np.float32)


class Errors:
    """Max absolute error per compared quantity, over a run."""

    def __init__(self) -> None:
        self.max: dict[str, float] = {}

    def add(self, key: str, ours: Any, theirs: Any) -> None:
        err = float(np.max(np.abs(np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64))))
        if not err <= self.max.get(key, -1.0):  # also records NaN
            self.max[key] = err

    def worst(self) -> float:
        return max(self.max.values(), default=0.0)


def resync(gym: Any, obs: np.ndarray, info: dict[str, Any], row: int, seed: int, errors: Errors) -> None:
    """Puts Gymnasium's env in the reset state of row ``row`` of our batch and compares the reset's
    observation and info."""
    gym.reset(seed=seed)
    gym.set_state(info["qpos"][row], info["qvel"][row])
    errors.add("obs", obs[row], gym._get_obs())
    gym_reset_info = gym._get_reset_info()
    assert set(gym_reset_info) <= set(info), (set(gym_reset_info), set(info))
    for key, value in gym_reset_info.items():
        errors.add(f"info[{key}]", info[key][row], value)


def compare_step(gym: Any, action: np.ndarray, batch: tuple, row: int, episode_steps: int, max_steps: int,
                 errors: Errors, counts: dict[str, int]) -> None:
    """Steps Gymnasium's env with ``action`` and compares its result with row ``row`` of our step's
    batch; ``episode_steps`` is the episode's step count after the step."""
    obs, reward, terminated, truncated, info = batch
    counts["steps"] += 1
    gym_obs, gym_reward, gym_terminated, gym_truncated, gym_info = gym.step(action)
    errors.add("obs", obs[row], gym_obs)
    errors.add("reward", reward[row], gym_reward)
    assert bool(terminated[row]) == bool(gym_terminated), f"terminated differs at step {episode_steps}"
    # Gymnasium's TimeLimit truncates at max_episode_steps whether or not the step terminated.
    assert bool(truncated[row]) == (bool(gym_truncated) or episode_steps == max_steps)
    # Gymnasium's info keys, in its order.
    assert [k for k in info if k not in OUR_INFO] == list(gym_info), (list(info), list(gym_info))
    for key, value in gym_info.items():
        errors.add(f"info[{key}]", info[key][row], value)
    errors.add("qpos", info["qpos"][row], gym.data.qpos)
    errors.add("qvel", info["qvel"][row], gym.data.qvel)
    counts["terminated"] += int(terminated[row])
    counts["truncated"] += int(truncated[row])


def run_alignment(task_id: str, steps: int, seed: int, **kwargs: Any) -> dict[str, Any]:
    """Steps one env of our pool and Gymnasium's side by side with the same random actions.

    Gymnasium's env starts from our reset state and is put back in sync from our reset state
    whenever an episode ends (our pool resets it on the next step call). Returns the max errors
    and counts of episode endings.
    """
    max_steps = kwargs.pop("max_episode_steps", gymnasium.spec(task_id).max_episode_steps)
    pool = parallel_pool.make(task_id, num_envs=1, seed=seed, expose_physics_state=True,
                              max_episode_steps=max_steps, **kwargs)
    gym = gym_make(task_id, **kwargs)
    errors = Errors()
    counts = {"terminated": 0, "truncated": 0, "steps": 0}
    try:
        obs, info = pool.reset()
        resync(gym, obs, info, 0, seed, errors)
        actions = random_actions(gym.action_space, steps, np.random.default_rng(seed))
        episode_steps = 0
        ended = False
        for action in actions:
            batch = pool.step(action[None])
            _, reward, terminated, truncated, info = batch
            if ended:  # next-step autoreset: this call reset our env; Gymnasium follows our state
                assert reward[0] == 0 and not terminated[0] and not truncated[0]
                resync(gym, batch[0], info, 0, seed, errors)
                episode_steps, ended = 0, False
                continue
            episode_steps += 1
            compare_step(gym, action, batch, 0, episode_steps, max_steps, errors, counts)
            ended = bool(terminated[0] or truncated[0])
    finally:
        pool.close()
        gym.close()
    return {"errors": errors.max, "worst": errors.worst(), **counts}


# --- spaces and registration ---------------------------------------------------------------------


def assert_same_space(ours: gymnasium.spaces.Box, theirs: gymnasium.spaces.Box) -> None:
    assert isinstance(ours, gymnasium.spaces.Box), ours
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype), (ours, theirs)
    np.testing.assert_array_equal(ours.low, theirs.low)
    np.testing.assert_array_equal(ours.high, theirs.high)


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_spaces_and_registration_match_gymnasium(task: MujocoTask) -> None:
    env = parallel_pool.make(task.task_id, num_envs=1)
    gym = gym_make(task.task_id)
    try:
        assert_same_space(env.observation_space, gym.observation_space)
        assert_same_space(env.action_space, gym.action_space)
        assert env.spec.max_episode_steps == gymnasium.spec(task.task_id).max_episode_steps
        assert env.spec.reward_threshold == gymnasium.spec(task.task_id).reward_threshold
        obs, _ = env.reset()
        assert obs.dtype == np.float64 and obs.shape == (1, *gym.observation_space.shape)
    finally:
        env.close()
        gym.close()


# --- step-by-step alignment ----------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_alignment_with_gymnasium(task: MujocoTask) -> None:
    result = run_alignment(task.task_id, steps=1000, seed=1)
    print(task.task_id, result)
    assert result["worst"] <= ATOL, result
    # One call per action: a step, or the reset after an episode ended.
    assert result["steps"] + result["terminated"] + result["truncated"] >= 999, result


# Async: a short time limit, so that every env's episodes end (by termination where the task
# terminates early under random actions, else truncation) and autoreset within the run.
ASYNC_MAX_STEPS = 25
ASYNC_BATCHES = 100


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_alignment_async(task: MujocoTask, async_rows: Any) -> None:
    """Async mode (4 envs, batches of 2 in whatever order they finish): every env against its own
    Gymnasium env, row by row by info["env_id"], each with its own stream of random actions;
    resynced from our reset state at each reset row, as in sync mode, with the same tolerance."""
    num_envs, seed = 4, 2
    pool = parallel_pool.make(task.task_id, num_envs=num_envs, batch_size=2, num_threads=2, seed=seed,
                              expose_physics_state=True, max_episode_steps=ASYNC_MAX_STEPS)
    gyms = [gym_make(task.task_id) for _ in range(num_envs)]
    rngs = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    errors = Errors()
    counts = {"terminated": 0, "truncated": 0, "steps": 0}
    episode_steps = np.zeros(num_envs, dtype=np.int64)
    ended = np.ones(num_envs, dtype=bool)  # the first row of each env is its reset
    try:
        rows = async_rows(pool, lambda i, obs: random_actions(gyms[i].action_space, 1, rngs[i])[0], ASYNC_BATCHES,
                          seed=seed)
        for batch, actions in rows:
            _, reward, terminated, truncated, info = batch
            for k, i in enumerate(info["env_id"].tolist()):
                if ended[i]:  # a reset row: the first, or next_step's autoreset
                    assert reward[k] == 0 and not terminated[k] and not truncated[k]
                    resync(gyms[i], batch[0], info, k, seed, errors)
                    episode_steps[i] = 0
                else:
                    episode_steps[i] += 1
                    compare_step(gyms[i], actions[k], batch, k, int(episode_steps[i]), ASYNC_MAX_STEPS, errors,
                                 counts)
                ended[i] = terminated[k] or truncated[k]
    finally:
        pool.close()
        for gym in gyms:
            gym.close()
    print(task.task_id, "async", errors.max, counts)
    assert errors.worst() <= ATOL, errors.max
    assert counts["steps"] >= ASYNC_BATCHES * 2 * 0.8, counts
    assert counts["terminated"] + counts["truncated"] >= num_envs, counts  # every env's episode ended


@pytest.mark.parametrize(
    ("task", "kwargs"),
    [(t, k) for t in TASKS for k in t.kwargs_cases],
    ids=[f"{t}-{i}" for t in TASKS for i in range(len(t.kwargs_cases))],
)
def test_kwargs_match_gymnasium(task: MujocoTask, kwargs: dict[str, Any]) -> None:
    env = parallel_pool.make(task.task_id, **kwargs)
    gym = gym_make(task.task_id, **kwargs)
    assert_same_space(env.observation_space, gym.observation_space)
    assert_same_space(env.action_space, gym.action_space)
    env.close()
    gym.close()
    # A short time limit, so truncations and resyncs happen too.
    result = run_alignment(task.task_id, steps=400, seed=2, max_episode_steps=150, **kwargs)
    assert result["worst"] <= ATOL, result
    assert result["truncated"] + result["terminated"] >= 2, result
    if "healthy_z_range" in kwargs:  # a narrow range: the run should see unhealthy states
        terminates = kwargs.get("terminate_when_unhealthy", True)
        assert (result["terminated"] > 0) == terminates, result


# Config keys that are not Gymnasium constructor kwargs: the pool's own and the MuJoCo family's
# (mujoco_env.h CommonDefaults). Gymnasium's default_camera_config is not taken (README, Known limits).
POOL_CONFIG = {"autoreset_mode", "batch_size", "episode_stats", "num_envs", "num_threads", "seed",
               "thread_affinity_offset", "env_kwargs", "max_episode_steps", "expose_physics_state", "assets_dir",
               "render_width", "render_height", "render_env_id"}
RENDER_KWARGS = {"default_camera_config"}
# Gymnasium's MujocoEnv kwargs (which the tasks pass on through **kwargs) that we take, and their
# defaults as our config holds None (camera_id -2, camera_name ""); and our pixel-observation keys,
# which Gymnasium has as wrappers (tests/envs/mujoco/test_mujoco_render.py).
FRAME_KWARGS = {"width": 480, "height": 480, "camera_id": -2, "camera_name": ""}
PIXEL_KWARGS = {"from_pixels": False, "gray_scale": False, "frame_stack": 1}


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_kwargs_and_defaults_are_gymnasiums(task: MujocoTask) -> None:
    module, name = gymnasium.spec(task.task_id).entry_point.split(":")
    signature = inspect.signature(getattr(importlib.import_module(module), name).__init__)
    theirs = {p.name: p.default for p in signature.parameters.values()
              if p.name != "self" and p.kind is not p.VAR_KEYWORD and p.name not in RENDER_KWARGS}
    config = parallel_pool.make_spec(task.task_id).config
    ours = {k: v for k, v in config.items() if k not in POOL_CONFIG | set(FRAME_KWARGS) | set(PIXEL_KWARGS)}
    assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    assert {k: config[k] for k in (*FRAME_KWARGS, *PIXEL_KWARGS)} == {**FRAME_KWARGS, **PIXEL_KWARGS}
    base = inspect.signature(importlib.import_module("gymnasium.envs.mujoco.mujoco_env").MujocoEnv.__init__).parameters
    assert {k: base[k].default for k in FRAME_KWARGS} == {"width": 480, "height": 480, "camera_id": None,
                                                          "camera_name": None}
    for key, default in theirs.items():
        value = ours[key]
        assert (list(value) if isinstance(default, tuple) else value) == (
            list(default) if isinstance(default, tuple) else default), (key, value, default)
    assert ("xml_file" in theirs) == task.has_xml_file


def halved_ctrlrange_copy(task_id: str, directory: str) -> str:
    """A user's own model: Gymnasium's file for ``task_id`` with every ctrlrange halved."""
    xml_file = gym_make(task_id).fullpath
    with open(xml_file) as f:
        text = f.read()

    def halve(m: re.Match) -> str:
        low, high = (float(v) / 2 for v in m.group(1).split())
        return f'ctrlrange="{low} {high}"'

    text, n = re.subn(r'ctrlrange="([^"]*)"', halve, text)
    assert n > 0, f"{xml_file} has no ctrlrange to change"
    path = os.path.join(directory, "my_" + os.path.basename(xml_file))
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.mark.parametrize("task", [t for t in TASKS if t.has_xml_file], ids=str)
def test_user_xml_file(task: MujocoTask, tmp_path: Any) -> None:
    path = halved_ctrlrange_copy(task.task_id, str(tmp_path))
    env = parallel_pool.make(task.task_id, xml_file=path)
    gym = gym_make(task.task_id, xml_file=path)
    default = gym_make(task.task_id)
    assert_same_space(env.action_space, gym.action_space)
    assert not np.array_equal(env.action_space.high, default.action_space.high)
    env.close()
    gym.close()
    default.close()
    result = run_alignment(task.task_id, steps=200, seed=4, xml_file=path)
    assert result["worst"] <= ATOL, result


def test_xml_file_errors(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        parallel_pool.make("Ant-v5", xml_file=str(tmp_path / "missing.xml"))
    with pytest.raises(ValueError, match="does not exist"):
        parallel_pool.make("Ant-v5", xml_file="no_such_model.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body></worldbody></mujoco>")
    with pytest.raises(ValueError, match="cannot load MuJoCo model"):
        parallel_pool.make("Ant-v5", xml_file=str(bad))


def test_unknown_kwargs_list_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="ctrl_cost_weight") as e:
        parallel_pool.make("Ant-v5", ctrl_cost_wieght=0.1)
    assert "ctrl_cost_wieght" in str(e.value) and "include_cfrc_ext_in_observation" in str(e.value)
    # Gymnasium's HalfCheetah-v4 takes no xml_file and Ant-v4 no frame_skip; neither do ours.
    with pytest.raises(ValueError, match="xml_file"):
        parallel_pool.make("HalfCheetah-v4", xml_file="half_cheetah.xml")
    with pytest.raises(ValueError, match="frame_skip"):
        parallel_pool.make("Ant-v4", frame_skip=2)
    # HumanoidStandup-v4 takes none of v5's reward kwargs.
    with pytest.raises(ValueError, match="ctrl_cost_weight"):
        parallel_pool.make("HumanoidStandup-v4", ctrl_cost_weight=0.1)
    with pytest.raises(ValueError, match="healthy_z_range"):
        parallel_pool.make("Ant-v5", healthy_z_range=(0.2, 0.5, 1.0))
    with pytest.raises(ValueError, match="body id"):
        parallel_pool.make("Ant-v5", main_body=99)
    # The v4 pendulums, Reacher and Pusher take no kwargs at all; Pusher-v5's default model is its own file.
    with pytest.raises(ValueError, match="reset_noise_scale"):
        parallel_pool.make("InvertedPendulum-v4", reset_noise_scale=0.1)
    with pytest.raises(ValueError, match="xml_file"):
        parallel_pool.make("Pusher-v4", xml_file="pusher.xml")
    env = parallel_pool.make("Pusher-v5")
    assert env.spec.config["xml_file"] == "pusher_v5.xml"
    env.close()


# --- reset noise ---------------------------------------------------------------------------------

RESET_SAMPLES = 2000
# Bounds in standard errors: over every task's qpos/qvel coordinates x 2 moments x 2 samplers, a
# true distribution exceeds 5 standard errors with probability ~1e-3 in all; a wrong scale or kind
# of noise (e.g. uniform instead of normal for qvel: std s/sqrt(3) instead of s) misses by far more.
Z_BOUND = 5.0


def check_reset_distribution(dqpos: np.ndarray, qvel: np.ndarray, scale: float, qvel_noise: str) -> None:
    """Per-coordinate sample mean and variance within Z_BOUND standard errors of Gymnasium's
    noise: qpos - init_qpos ~ U(-scale, scale); qvel ~ scale * N(0, 1) or U(-scale, scale)."""
    n = len(dqpos)
    uniform_var, uniform_kurtosis = scale**2 / 3, 1.8
    for name, x, var, kurtosis in (
        ("qpos", dqpos, uniform_var, uniform_kurtosis),
        ("qvel", qvel, scale**2 if qvel_noise == "normal" else uniform_var,
         3.0 if qvel_noise == "normal" else uniform_kurtosis),
    ):
        mean_se = np.sqrt(var / n)
        var_se = var * np.sqrt((kurtosis - 1) / n)
        assert np.all(np.abs(x.mean(axis=0)) <= Z_BOUND * mean_se), (name, x.mean(axis=0), mean_se)
        assert np.all(np.abs(x.var(axis=0) - var) <= Z_BOUND * var_se), (name, x.var(axis=0), var, var_se)
        if name == "qpos" or qvel_noise == "uniform":
            assert np.all(np.abs(x) <= scale + 1e-12), name


def reset_distribution_mismatches(ours: np.ndarray, theirs: np.ndarray) -> list[str]:
    """Two-sample check of reset states (rows: samples, columns: qpos then qvel coordinates).

    Coordinates constant in Gymnasium's samples (pinned by its reset_model) must be the same
    constants in ours; the others' means and variances must agree within Z_BOUND standard errors
    of the difference. Returns what differs (empty if nothing).
    """
    mismatches = []
    fixed = np.ptp(theirs, axis=0) == 0
    if not np.array_equal(ours[:, fixed], np.broadcast_to(theirs[0, fixed], ours[:, fixed].shape)):
        mismatches.append(f"pinned coordinates {np.flatnonzero(fixed)} differ")
    a, b = ours[:, ~fixed], theirs[:, ~fixed]
    (n, m), (var_a, var_b) = (len(a), len(b)), (a.var(axis=0), b.var(axis=0))
    mean_se = np.sqrt(var_a / n + var_b / m)
    m4_a, m4_b = ((a - a.mean(axis=0)) ** 4).mean(axis=0), ((b - b.mean(axis=0)) ** 4).mean(axis=0)
    var_se = np.sqrt((m4_a - var_a**2) / n + (m4_b - var_b**2) / m)
    for name, diff, se in (("mean", a.mean(axis=0) - b.mean(axis=0), mean_se), ("variance", var_a - var_b, var_se)):
        if not np.all(np.abs(diff) <= Z_BOUND * se):
            mismatches.append(f"{name}s differ: {diff} (standard errors {se})")
    return mismatches


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_reset_noise_matches_gymnasium(task: MujocoTask) -> None:
    gym = gym_make(task.task_id)
    scale = task.reset_noise_scale if task.reset_noise_scale is not None else getattr(gym, "_reset_noise_scale", None)
    init_qpos, init_qvel = gym.init_qpos.copy(), gym.init_qvel.copy()
    gym.reset(seed=0)
    qpos, qvel = [], []
    for _ in range(RESET_SAMPLES):
        gym.reset()
        qpos.append(gym.data.qpos.copy())
        qvel.append(gym.data.qvel.copy())
    gym.close()
    gym_qpos, gym_qvel = np.array(qpos), np.array(qvel)
    # Ours: 100 envs reset 20 times with fresh seeds.
    env = parallel_pool.make(task.task_id, num_envs=100, expose_physics_state=True)
    qpos, qvel = [], []
    for i in range(RESET_SAMPLES // 100):
        _, info = env.reset(seed=1000 * i)
        qpos.append(info["qpos"].copy())
        qvel.append(info["qvel"].copy())
    env.close()
    our_qpos, our_qvel = np.concatenate(qpos), np.concatenate(qvel)
    if task.reset_check == "noise":
        assert scale is not None, "give the MujocoTask the reset_noise_scale its Gymnasium env hard-codes"
        # Gymnasium's own samples pass the check: it describes Gymnasium's distribution.
        check_reset_distribution(gym_qpos - init_qpos, gym_qvel - init_qvel, scale, task.qvel_noise)
        check_reset_distribution(our_qpos - init_qpos, our_qvel - init_qvel, scale, task.qvel_noise)
        return
    assert task.reset_check == "gymnasium_samples", task.reset_check
    ours, theirs = np.hstack([our_qpos, our_qvel]), np.hstack([gym_qpos, gym_qvel])
    # The check passes Gymnasium against itself, and fails a 20% wider version of ours.
    half = RESET_SAMPLES // 2
    assert reset_distribution_mismatches(theirs[:half], theirs[half:]) == []
    assert reset_distribution_mismatches(ours * 1.2, theirs) != []
    assert reset_distribution_mismatches(ours, theirs) == []


# --- determinism ---------------------------------------------------------------------------------


def rollout(task_id: str, seed: int, num_threads: int, steps: int = 150) -> list[np.ndarray]:
    env = parallel_pool.make(task_id, num_envs=4, seed=seed, num_threads=num_threads, max_episode_steps=60)
    actions = random_actions(env.action_space, steps * 4, np.random.default_rng(0)).reshape(steps, 4, -1)
    out = [env.reset()[0].copy()]
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        out += [obs.copy(), reward.copy(), terminated.copy(), truncated.copy()]
    env.close()
    return out


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_same_seed_same_stream_whatever_num_threads(task: MujocoTask) -> None:
    one = rollout(task.task_id, seed=5, num_threads=1)
    two = rollout(task.task_id, seed=5, num_threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    other = rollout(task.task_id, seed=6, num_threads=2)
    assert not np.array_equal(one[0], other[0])


# --- packaging -----------------------------------------------------------------------------------


def test_import_neither_imports_mujoco_nor_writes_a_log(tmp_path: Any) -> None:
    # The library finds libmujoco through its rpath; MuJoCo's model-compiler warnings (Gymnasium's
    # half_cheetah.xml has one) would otherwise print and append to ./MUJOCO_LOG.TXT at import.
    code = (
        "import sys, numpy as np, parallel_pool\n"
        "assert 'mujoco' not in sys.modules\n"
        "env = parallel_pool.make('HalfCheetah-v5', num_envs=2, seed=0)\n"
        "env.reset(); env.step(np.zeros((2, 6), np.float32)); env.close()\n"
        "assert 'mujoco' not in sys.modules\n"
        "print('ok')\n"
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n", out.stdout
    assert not (cwd / "MUJOCO_LOG.TXT").exists()


def test_mujoco_tasks_are_listed_under_their_family() -> None:
    ids = parallel_pool.list_all_envs()
    for task in TASKS:
        assert task.task_id in ids
        assert f"parallel_pool/{task.task_id}" in gymnasium.registry


@pytest.mark.parametrize(("task_id", "frame_stack"), [("Hopper-v4", 3), ("HalfCheetah-v5", 2), ("Ant-v4", 4)])
def test_frame_stack_stacks_state_vectors(task_id: str, frame_stack: int) -> None:
    """frame_stack without from_pixels (EnvPool's StackSpec on the state vector): obs (k, n), the
    last k observations of the same pool unstacked, oldest first, the reset's repeated at an
    episode's start (the autoreset's too). Short time limits and random actions give both episode
    ends; every other output is the unstacked pool's."""
    n, steps = 3, 60
    kwargs: dict[str, Any] = {"num_envs": n, "seed": 4, "max_episode_steps": 17}
    stacked = parallel_pool.make(task_id, frame_stack=frame_stack, **kwargs)
    plain = parallel_pool.make(task_id, **kwargs)
    size = plain.observation_space.shape[0]
    assert stacked.observation_space.shape == (frame_stack, size)
    assert stacked.spec.config["frame_stack"] == frame_stack
    try:
        obs, _ = stacked.reset()
        first, _ = plain.reset()
        history = [[row] * frame_stack for row in first]
        np.testing.assert_array_equal(obs, np.stack([np.stack(h) for h in history]))
        rng = np.random.default_rng(0)
        space = plain.action_space
        ended = np.zeros(n, bool)
        for _ in range(steps):
            action = rng.uniform(space.low, space.high, (n, *space.shape)).astype(np.float32)
            out = stacked.step(action)
            ref = plain.step(action)
            for i in range(n):
                # The step after an episode's end is the autoreset: a new stack of the reset obs.
                history[i] = [ref[0][i]] * frame_stack if ended[i] else history[i][1:] + [ref[0][i]]
            np.testing.assert_array_equal(out[0], np.stack([np.stack(h) for h in history]))
            for x, y in zip(out[1:4], ref[1:4]):
                np.testing.assert_array_equal(x, y)
            ended = ref[2] | ref[3]
    finally:
        stacked.close()
        plain.close()
