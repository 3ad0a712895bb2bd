"""dm_control frames: ``render()`` and ``from_pixels`` of the dm_control family against the suite's.

The oracle is ``physics.render(height, width, camera_id)`` of ``dm_control.suite.load(domain, task)``
on dm_control's EGL backend (``MUJOCO_GL=egl``), the same EGL device our renderer picks
(``native/envs/common/mujoco_render.h``): on a machine without a GPU, Mesa's llvmpipe. Both draw the
same scene with the same GL calls (MuJoCo's ``mjr_render`` from the same ``libmujoco``, the model's
own offscreen buffer, the frame in its lower-left corner), so frames are compared for equality:
tolerance 0. No test here needed one.

Ours and the oracle start from the same seed (the suite's ``random``: the same RandomState draws,
``tests/envs/dm_control/test_dm_control.py``) and take the same actions, so the frames compared show the same
``mjData``; the state is checked too (``expose_physics_state``'s qpos). Frames are small in the
default suite (64x48; the cost of a frame on llvmpipe is mostly the 4096^2 shadow map, the same at
any size); ``-m slow`` renders every camera of every task at dm_control's default 320x240 over
longer stretches.

Pixel observations follow ``dm_control.suite.wrappers.pixels.Wrapper(env, pixels_only,
render_kwargs)``: the key ``pixels``, after the state's keys with ``pixels_only=False``. Gray and
stacked frames are Gymnasium's ``GrayscaleObservation`` formula and ``FrameStackObservation(k,
padding_type="reset")`` applied to the wrapper's frames, as the MuJoCo family's pixel observations.
"""

from __future__ import annotations

import collections
import gc
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from test_dm_control import TASKS, DmTask, load_oracle

import parallel_pool

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import dm_control._render as dm_render
    from dm_control.suite.wrappers import pixels as dm_pixels

TASKS_BY_ID = {t.task_id: t for t in TASKS}
WIDTH, HEIGHT = 64, 48


@pytest.fixture(autouse=True)
def egl(monkeypatch: pytest.MonkeyPatch) -> None:
    """dm_control's renderer on EGL, the platform ours uses. dm_control picks its backend when it is
    first imported (MUJOCO_GL then; unset, it tries GLFW first), and looks ``_render.Renderer`` up each
    time a Physics makes its contexts, so the EGL one is put there for these tests. Earlier tests'
    MuJoCo renderers are collected first (see tests/envs/mujoco/test_mujoco_render.py)."""
    monkeypatch.setenv("MUJOCO_GL", "egl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from dm_control._render.pyopengl.egl_renderer import EGLContext
    monkeypatch.setattr(dm_render, "Renderer", EGLContext)
    gc.collect()


def actions_for(oracle: Any, seed: int) -> Any:
    spec = oracle.action_spec()
    # Unlimited actuators (lqr's) are bounded by +-mjMAXVAL: draw those in [-1, 1].
    low, high = np.maximum(spec.minimum, -1.0), np.minimum(spec.maximum, 1.0)
    rng = np.random.default_rng(seed)
    while True:
        yield rng.uniform(low, high)


def assert_frames_equal(ours: np.ndarray, theirs: np.ndarray, where: str) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint8, where
    diff = ours != theirs
    assert not diff.any(), f"{where}: {int(diff.any(axis=-1).sum())} pixels differ"


def check_render(task: DmTask, seed: int, steps: int, width: int, height: int, all_cameras: bool) -> None:
    """The free camera (-1), or every camera of the model, at reset and after each of `steps` steps
    (fewer than any task's episode): ours (one env per camera, all with the oracle's seed) against
    the oracle's physics.render of the same state."""
    oracle = load_oracle(task, seed)
    cameras = list(range(-1, oracle.physics.model.ncam if all_cameras else 0))
    envs = [
        parallel_pool.make_gymnasium(task.task_id, num_envs=1, seed=seed, width=width, height=height, camera_id=c,
                                     expose_physics_state=True)
        for c in cameras
    ]
    actions = actions_for(oracle, seed + 1)
    try:
        oracle.reset()
        infos = [env.reset()[1] for env in envs]
        for t in range(steps + 1):
            for camera, env, info in zip(cameras, envs, infos, strict=True):
                np.testing.assert_array_equal(info["qpos"][0], oracle.physics.data.qpos, err_msg=f"step {t}")
                theirs = oracle.physics.render(height, width, camera_id=camera)
                assert_frames_equal(env.render()[0], theirs, f"{task.task_id} step {t} camera {camera}")
            if t < steps:
                action = next(actions)
                assert not oracle.step(action).last()
                infos = [env.step(action[None])[4] for env in envs]
    finally:
        for env in envs:
            env.close()


# QuadrupedEscape-v1's frames cost ~0.2 s each here (its 201 x 201 height field on llvmpipe): the
# default suite has them in test_escape_frames_show_each_episodes_terrain (the same reset and step
# frames, two envs, two episodes), this sweep under -m slow.
DEFAULT_RENDER_TASKS = [pytest.param(t, marks=pytest.mark.slow) if t.task_id == "QuadrupedEscape-v1" else t
                        for t in TASKS]


@pytest.mark.parametrize("task", DEFAULT_RENDER_TASKS, ids=str)
def test_render_is_physics_render(task: DmTask) -> None:
    """Every task, the free camera, 64x48: the reset frame and a step's. The models' own cameras are
    in the default suite through test_camera_by_name_is_by_id and the pixel tests (cameras 0 and 1),
    and every camera of every task under -m slow."""
    check_render(task, 4, 1, WIDTH, HEIGHT, all_cameras=False)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=str)
def test_render_is_physics_render_long(task: DmTask) -> None:
    """Every task, every camera, at Physics.render's default 320x240 over 40 steps."""
    check_render(task, 11, 40, 320, 240, all_cameras=True)


def test_escape_frames_show_each_episodes_terrain() -> None:
    """QuadrupedEscape-v1 draws a new height field each episode, which the GL context must get
    (mjr_uploadHField, as the suite's Escape.initialize_episode does): two envs on one thread share
    that thread's upload of the model, so each frame must show its own env's terrain, across
    episodes (time_limit=0.06: 3 steps each). Against each env's oracle, whose contexts exist after
    its first reset, so its later resets re-upload."""
    task = TASKS_BY_ID["QuadrupedEscape-v1"]
    oracles = [load_oracle(task, 5 + i, time_limit=0.06) for i in range(2)]
    env = parallel_pool.make_gymnasium(task.task_id, num_envs=2, num_threads=1, seed=5, width=WIDTH, height=HEIGHT,
                                       camera_id=-1, time_limit=0.06, expose_physics_state=True)
    actions = actions_for(oracles[0], 9)
    try:
        _, info = env.reset()
        for oracle in oracles:
            oracle.reset()
        frames = []
        for t in range(5):
            for i, oracle in enumerate(oracles):
                np.testing.assert_array_equal(info["qpos"][i], oracle.physics.data.qpos, err_msg=f"step {t}")
            if t in (0, 1, 4):  # the reset frame, a step's, the second episode's reset (~0.2 s a frame)
                assert (oracles[0].physics.data.time == 0) == (t != 1), t  # t 0 and 4: a reset
                ours = env.render(np.arange(env.num_envs))
                for i, oracle in enumerate(oracles):
                    theirs = oracle.physics.render(HEIGHT, WIDTH, camera_id=-1)
                    assert_frames_equal(ours[i], theirs, f"env {i} step {t}")
                frames.append(ours.copy())
            action = next(actions)
            for oracle in oracles:
                oracle.step(action)  # after LAST: the next episode, as our autoreset
            info = env.step(np.stack([action, action]))[4]
        assert not np.array_equal(frames[0][0], frames[0][1])  # two terrains
        assert not np.array_equal(frames[0][0], frames[2][0])  # the second episode's
    finally:
        env.close()


@pytest.mark.slow
def test_escape_from_pixels_is_the_pixels_wrapper() -> None:
    """QuadrupedEscape-v1's pixel observations (rendered inside the step on the worker threads, each
    env's own terrain uploaded there) against pixels.Wrapper, 2 envs on 2 threads, the egocentric
    camera 1 and the free camera, across an episode's end."""
    task = TASKS_BY_ID["QuadrupedEscape-v1"]
    for camera in (-1, 1):
        render_kwargs = {"height": HEIGHT, "width": WIDTH, "camera_id": camera}
        theirs = [wrapper_frames(task, 21 + i, 6, render_kwargs, True, time_limit=0.06) for i in range(2)]
        env = parallel_pool.make_dm(task.task_id, num_envs=2, num_threads=2, seed=21, from_pixels=True, width=WIDTH,
                                    height=HEIGHT, camera_id=camera, time_limit=0.06)
        try:
            for t, ours in replay(env, theirs, 7):
                for i in range(2):
                    ts = theirs[i][0][t]
                    assert int(ours.step_type[i]) == int(ts.step_type), (camera, t)
                    where = f"camera {camera} env {i} step {t}"
                    assert_frames_equal(ours.observation.pixels[i], ts.observation["pixels"], where)
            assert any(ts.last() for ts in theirs[0][0])
        finally:
            env.close()


def test_camera_by_name_is_by_id() -> None:
    """camera_name as dm_control's string camera_id: the id the model gives that name."""
    oracle = load_oracle(TASKS_BY_ID["WalkerWalk-v1"], 2)
    name = oracle.physics.model.id2name(1, "camera")
    by_name = parallel_pool.make_dm("WalkerWalk-v1", num_envs=1, seed=2, width=WIDTH, height=HEIGHT, camera_name=name)
    try:
        by_name.reset()
        oracle.reset()
        assert_frames_equal(by_name.render()[0], oracle.physics.render(HEIGHT, WIDTH, camera_id=name), name)
    finally:
        by_name.close()


def test_render_defaults_and_spec() -> None:
    """Physics.render's defaults: 320x240 from the free camera; the spec's render_shape says so."""
    spec = parallel_pool.make_spec("CheetahRun-v1")
    assert tuple(spec.render_shape) == (240, 320, 3)
    env = parallel_pool.make_gymnasium("CheetahRun-v1", num_envs=2, seed=6)
    oracles = [load_oracle(TASKS_BY_ID["CheetahRun-v1"], 6 + i) for i in range(2)]
    try:
        assert env.render_mode == "rgb_array"
        env.reset()
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (2, 240, 320, 3)
        for i, oracle in enumerate(oracles):
            oracle.reset()
            assert_frames_equal(frames[i], oracle.physics.render(), f"env {i}")
    finally:
        env.close()


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"width": 2000}, "Image width 2000 > framebuffer width"),
    ({"height": 2000}, "Image height 2000 > framebuffer height"),
    ({"width": 0}, "width and height must be >= 1"),
    ({"camera_id": -2}, "camera_id cannot be smaller than -1"),
    ({"camera_id": 2}, "model has 2 fixed cameras. camera_id=2 is invalid"),
    ({"camera_name": "nope"}, "no camera named 'nope'"),
    ({"camera_name": "side", "camera_id": 0}, "not both"),
    ({"gray_scale": True}, "it needs from_pixels=True"),
    ({"frame_stack": 0}, "frame_stack must be in"),  # without from_pixels it stacks the state (EnvPool's)
    ({"from_pixels": True, "frame_stack": 0}, "frame_stack must be in"),
    ({"from_pixels": True, "pixels_only": False, "flat_observation": True}, "needs flat_observation=False"),
], ids=str)
def test_bad_render_kwargs_raise(kwargs: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parallel_pool.make_dm("CheetahRun-v1", num_envs=1, **kwargs)


def wrapper_frames(task: DmTask, seed: int, steps: int, render_kwargs: dict[str, Any], pixels_only: bool,
                   **task_kwargs: Any) -> tuple[list[Any], list[np.ndarray]]:
    """The pixels wrapper's TimeSteps over `steps` steps with actions_for(seed + 1), resetting after
    LAST as our autoreset does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = dm_pixels.Wrapper(load_oracle(task, seed, **task_kwargs), pixels_only=pixels_only,
                                   render_kwargs=render_kwargs)
    actions = actions_for(oracle, seed + 1)
    steps_taken, sent = [oracle.reset()], []
    for _ in range(steps):
        if steps_taken[-1].last():
            steps_taken.append(oracle.reset())
            sent.append(None)
        else:
            action = next(actions)
            steps_taken.append(oracle.step(action))
            sent.append(action)
    return steps_taken, sent


def replay(env: Any, oracles: list[tuple[list[Any], list[Any]]], steps: int) -> Iterator[tuple[int, Any]]:
    """Our pool stepped with the actions of its envs' oracles (``wrapper_frames``' TimeSteps and
    actions; zeros where an oracle reset): ``(t, our TimeStep)`` for each t < ``steps``, t = 0 the
    reset's."""
    ours = env.reset()
    zero = np.zeros(env.action_spec().shape)
    for t in range(steps):
        if t > 0:
            actions = [sent[t - 1] for _, sent in oracles]
            ours = env.step(np.stack([zero if a is None else a for a in actions]))
        yield t, ours


@pytest.mark.parametrize(("task_id", "camera"), [("CheetahRun-v1", 0), ("CartpoleSwingup-v1", -1),
                                                 ("ReacherEasy-v1", 1)])
@pytest.mark.parametrize("pixels_only", [True, False])
def test_from_pixels_is_the_pixels_wrapper(task_id: str, camera: int, pixels_only: bool) -> None:
    """from_pixels against pixels.Wrapper(pixels_only, render_kwargs={height, width, camera_id}):
    the same keys in the same order, the same frames (rendered inside our step, on the worker
    threads), the state observations too with pixels_only=False; across an episode's end."""
    task = TASKS_BY_ID[task_id]
    render_kwargs = {"height": HEIGHT, "width": WIDTH, "camera_id": camera}
    theirs, sent = wrapper_frames(task, 3, 8, render_kwargs, pixels_only, time_limit=0.05)
    env = parallel_pool.make_dm(task_id, num_envs=1, seed=3, from_pixels=True, pixels_only=pixels_only,
                                width=WIDTH, height=HEIGHT, camera_id=camera, time_limit=0.05)
    try:
        assert list(env.spec.observation_spec()) == list(theirs[0].observation)
        assert env.observation_spec().pixels.shape == (HEIGHT, WIDTH, 3)
        ours = env.reset()
        zero = np.zeros(env.action_spec().shape)
        for t, theirs_ts in enumerate(theirs):
            if t > 0:
                action = sent[t - 1]
                ours = env.step((zero if action is None else action)[None])
            assert int(ours.step_type[0]) == int(theirs_ts.step_type), t
            for key, value in theirs_ts.observation.items():
                mine = getattr(ours.observation, key)[0]
                if key == "pixels":
                    assert_frames_equal(mine, value, f"step {t}")
                else:
                    np.testing.assert_array_equal(mine, np.asarray(value, np.float64), err_msg=f"step {t} {key}")
        assert any(ts.last() for ts in theirs)  # an episode's end was crossed
    finally:
        env.close()


def gray(rgb: np.ndarray) -> np.ndarray:
    """Gymnasium's GrayscaleObservation (keep_dim=False)."""
    return np.sum(np.multiply(rgb, np.array([0.2125, 0.7154, 0.0721])), axis=-1).astype(np.uint8)


@pytest.mark.parametrize(("gray_scale", "frame_stack"), [(True, 1), (False, 3), (True, 4)])
def test_from_pixels_gray_and_stacked(gray_scale: bool, frame_stack: int) -> None:
    """gray_scale and frame_stack over the wrapper's frames, as FrameStackObservation(k,
    padding_type="reset") stacks them: the reset frame repeated at each episode's start, oldest first;
    pools of 2 envs on 2 threads (each env against its own oracle)."""
    task = TASKS_BY_ID["WalkerWalk-v1"]
    render_kwargs = {"height": HEIGHT, "width": WIDTH, "camera_id": 0}
    env = parallel_pool.make_dm("WalkerWalk-v1", num_envs=2, num_threads=2, seed=8, from_pixels=True,
                                gray_scale=gray_scale, frame_stack=frame_stack, width=WIDTH, height=HEIGHT,
                                camera_id=0, time_limit=0.1)
    shape = ((frame_stack,) if frame_stack > 1 else ()) + (HEIGHT, WIDTH) + (() if gray_scale else (3,))
    try:
        assert env.observation_spec().pixels.shape == shape
        oracles = [wrapper_frames(task, 8 + i, 12, render_kwargs, True, time_limit=0.1) for i in range(2)]
        convert = gray if gray_scale else (lambda f: f)
        stacks = [collections.deque(maxlen=frame_stack) for _ in range(2)]
        for t, ours in replay(env, oracles, 13):
            for i in range(2):
                ts = oracles[i][0][t]
                frame = convert(ts.observation["pixels"])
                if ts.first():
                    stacks[i].extend([frame] * frame_stack)
                else:
                    stacks[i].append(frame)
                expected = np.stack(stacks[i]) if frame_stack > 1 else frame
                assert_frames_equal(ours.observation.pixels[i], expected, f"env {i} step {t}")
    finally:
        env.close()


def test_gymnasium_front_end_pixels() -> None:
    """The Gymnasium front-end: a Dict observation space with the uint8 "pixels" entry beside the
    state's (pixels_only=False), and its values those of the dm_env front-end."""
    import gymnasium

    kwargs = {"seed": 1, "from_pixels": True, "pixels_only": False, "width": WIDTH, "height": HEIGHT}
    env = parallel_pool.make_gymnasium("CheetahRun-v1", num_envs=2, **kwargs)
    dm = parallel_pool.make_dm("CheetahRun-v1", num_envs=2, **kwargs)
    try:
        space = env.observation_space["pixels"]
        assert isinstance(space, gymnasium.spaces.Box)
        assert space.dtype == np.uint8 and space.shape == (HEIGHT, WIDTH, 3)
        assert sorted(env.observation_space.spaces) == ["pixels", "position", "velocity"]
        obs, _ = env.reset()
        ts = dm.reset()
        for key in ("pixels", "position", "velocity"):
            np.testing.assert_array_equal(obs[key], getattr(ts.observation, key))
        assert all(space.contains(row) for row in obs["pixels"])
    finally:
        env.close()
        dm.close()


def test_flat_observation_with_pixels_only() -> None:
    """flat_observation with pixels_only: the wrapper keeps only "pixels" (the flat state is dropped)."""
    env = parallel_pool.make_dm("PendulumSwingup-v1", num_envs=1, seed=0, from_pixels=True, flat_observation=True,
                                width=WIDTH, height=HEIGHT)
    try:
        assert list(env.spec.observation_spec()) == ["pixels"]
        assert env.reset().observation.pixels.shape == (1, HEIGHT, WIDTH, 3)
    finally:
        env.close()
