"""dm_control frames: ``render()`` and ``from_pixels`` of the dm_control family against the suite's.

The oracle is ``physics.render(height, width, camera_id)`` of ``dm_control.suite.load(domain, task)``
on dm_control's EGL backend (``MUJOCO_GL=egl``), the same EGL device our renderer picks
(``native/envs/common/mujoco_render.h``): on a machine without a GPU, Mesa's llvmpipe. Both draw the
same scene with the same GL calls (MuJoCo's ``mjr_render`` from the same ``libmujoco``, the model's
own offscreen buffer, the frame in its lower-left corner), so frames are compared for equality:
tolerance 0. No test here needed one.

Ours and the oracle start from the same seed (the suite's ``random``: the same RandomState draws,
``tests/test_dm_control.py``) and take the same actions, so the frames compared show the same
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
    MuJoCo renderers are collected first (see tests/test_mujoco_render.py)."""
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


def check_render(task: DmTask, seed: int, steps: int, width: int, height: int) -> None:
    """Every camera of the task (-1, the free camera, and each of the model's), at reset and after
    each of `steps` steps (fewer than any task's episode): ours (one env per camera, all with the
    oracle's seed) against the oracle's physics.render of the same state."""
    oracle = load_oracle(task, seed)
    cameras = list(range(-1, oracle.physics.model.ncam))
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


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_render_is_physics_render(task: DmTask) -> None:
    """Every task, every camera, 64x48: the reset frame and two steps'."""
    check_render(task, 4, 2, WIDTH, HEIGHT)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=str)
def test_render_is_physics_render_long(task: DmTask) -> None:
    """Every task, every camera, at Physics.render's default 320x240 over 40 steps."""
    check_render(task, 11, 40, 320, 240)
