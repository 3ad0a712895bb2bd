"""MuJoCo frames: ``render()`` and ``from_pixels`` of the MuJoCo family against Gymnasium's.

Gymnasium renders with ``render_mode="rgb_array"`` through ``mujoco.egl`` (``MUJOCO_GL=egl``),
the same EGL device our renderer picks (``native/envs/common/mujoco_render.h``): on a machine
without a GPU, Mesa's llvmpipe. Both draw the same scene with the same GL calls (MuJoCo's
``mjr_render`` from the same ``libmujoco``), so the frames are compared for equality: tolerance 0.
llvmpipe rasterizes in tiles whose results do not depend on its thread count, and no test here
needed a tolerance.

The reference is put in our state (``expose_physics_state``: qpos and qvel, then Gymnasium's
``set_state``) at reset, and then stepped with the same actions; its qpos is checked against ours
after every step, so the frames compared show the same ``mjData``. Our renders and Gymnasium's
alternate on this thread: ours make our context current and restore Gymnasium's afterwards, which
Gymnasium (which makes its context current once) relies on; a broken restore fails every test.

Frames are small (32x32: the cost of a frame on llvmpipe is mostly MuJoCo's 4096^2 shadow map,
the same at any size) and episodes short here; ``-m slow`` runs every v4 and v5 task over longer
episodes at Gymnasium's default 480x480.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from typing import Any

import gymnasium
import mujoco  # noqa: F401 - Gymnasium's MuJoCo envs (the oracle) need it
import numpy as np
import pytest
from gymnasium.wrappers import AddRenderObservation, FrameStackObservation, GrayscaleObservation

import parallel_pool

V5_TASKS = ("Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Swimmer-v5", "Humanoid-v5",
            "HumanoidStandup-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5", "Pusher-v5")
# Pusher-v4 is absent: Gymnasium 1.2.2 refuses to make it with mujoco >= 3 (its oracle cannot run).
V4_TASKS = ("Ant-v4", "HalfCheetah-v4", "Hopper-v4", "Walker2d-v4", "Swimmer-v4", "Humanoid-v4",
            "HumanoidStandup-v4", "InvertedPendulum-v4", "InvertedDoublePendulum-v4", "Reacher-v4")
SIZE = 32


@pytest.fixture(autouse=True)
def egl(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gymnasium's renderer on EGL, the platform ours uses (read when its viewer is made); and the
    closed Gymnasium envs of earlier tests collected before this test makes its own: a collected
    MjrContext (mujoco's Python) frees its GL objects by name in the context then current, which
    would be this test's Gymnasium renderer's (its frames then come out black)."""
    monkeypatch.setenv("MUJOCO_GL", "egl")
    gc.collect()


def reference(task_id: str, info: dict[str, Any], wrap: Any = None, **kwargs: Any) -> gymnasium.Env:
    """Gymnasium's env for ``task_id``, its reset putting it in env 0's state of ``info`` (read at
    each reset: the caller updates ``info``), optionally wrapped by ``wrap`` before the reset."""
    env = gymnasium.make(task_id, render_mode="rgb_array", max_episode_steps=None, disable_env_checker=True, **kwargs)
    u = env.unwrapped

    def reset_model() -> Any:
        u.set_state(info["qpos"][0], info["qvel"][0])
        return u._get_obs()

    u.reset_model = reset_model
    return wrap(env) if wrap is not None else env


def actions(env: Any, step: int) -> np.ndarray:
    space = env.action_space
    rng = np.random.default_rng(step)
    return rng.uniform(space.low, space.high, (env.num_envs, *space.shape)).astype(np.float32)


def check_render(task_id: str, steps: int, size: int, **kwargs: Any) -> None:
    env = parallel_pool.make(task_id, num_envs=1, seed=3, width=size, height=size, expose_physics_state=True,
                             **kwargs)
    _, info = env.reset()
    ref = reference(task_id, info, width=size, height=size, **kwargs)
    ref.reset(seed=0)
    assert env.render_mode == "rgb_array" and env.spec.render_shape == (size, size, 3)
    np.testing.assert_array_equal(env.render()[0], ref.render(), err_msg=f"{task_id} at reset")
    for step in range(steps):
        a = actions(env, step)
        _, _, terminated, truncated, info = env.step(a)
        ref.step(a[0])
        np.testing.assert_array_equal(ref.unwrapped.data.qpos, info["qpos"][0])
        np.testing.assert_array_equal(env.render()[0], ref.render(), err_msg=f"{task_id} after step {step + 1}")
        if terminated[0] or truncated[0]:
            break
    env.close()
    ref.close()


@pytest.mark.parametrize("task_id", V5_TASKS)
def test_render_is_gymnasiums(task_id: str) -> None:
    """Every v5 task's frame at reset and after 2 steps, from its default camera ("track", or the
    free camera placed by the task's DEFAULT_CAMERA_CONFIG: Reacher, Pusher, the pendulums)."""
    check_render(task_id, steps=2, size=SIZE)


@pytest.mark.parametrize("kwargs", [{"camera_id": -1}, {"camera_name": "track"}, {"camera_id": 0},
                                    {"camera_name": "no_such_camera"}], ids=str)
def test_render_cameras_are_gymnasiums(kwargs: dict[str, Any]) -> None:
    """camera_id / camera_name as Gymnasium resolves them (-1 and an unknown name: the free camera)."""
    check_render("HalfCheetah-v5", steps=1, size=SIZE, **kwargs)


def test_render_width_height_and_humanoid_camera() -> None:
    """A non-square frame, and Humanoid's second (unnamed) camera."""
    env = parallel_pool.make("Humanoid-v5", num_envs=1, seed=1, width=40, height=24, camera_id=1,
                             expose_physics_state=True)
    _, info = env.reset()
    ref = reference("Humanoid-v5", info, width=40, height=24, camera_id=1)
    ref.reset(seed=0)
    frame = env.render()
    assert frame.shape == (1, 24, 40, 3)
    np.testing.assert_array_equal(frame[0], ref.render())


@pytest.mark.slow
@pytest.mark.parametrize("task_id", V5_TASKS + V4_TASKS)
def test_render_is_gymnasiums_long(task_id: str) -> None:
    """Gymnasium's default 480x480 frame over 30 steps (or to the episode's end)."""
    check_render(task_id, steps=30, size=480)


def pixel_wrappers(gray_scale: bool, frame_stack: int) -> Any:
    def wrap(env: gymnasium.Env) -> gymnasium.Env:
        env = AddRenderObservation(env, render_only=True)
        if gray_scale:
            env = GrayscaleObservation(env)
        if frame_stack > 1:
            env = FrameStackObservation(env, frame_stack)
        return env
    return wrap


@pytest.mark.parametrize(("task_id", "gray_scale", "frame_stack"), [
    ("HalfCheetah-v5", False, 3), ("HalfCheetah-v5", True, 1),  # the "track" camera
    ("Reacher-v5", True, 3), ("Reacher-v5", False, 1),  # the free camera
])
def test_from_pixels_is_gymnasiums_wrappers(task_id: str, gray_scale: bool, frame_stack: int) -> None:
    """from_pixels=True with gray_scale and frame_stack against AddRenderObservation(render_only=True),
    GrayscaleObservation and FrameStackObservation(padding_type="reset") on Gymnasium's env, across
    an episode boundary (max_episode_steps=3: the 4th step is the autoreset, which restarts the
    stack). Two envs on two threads; env 0 is compared."""
    width, height = 24, 20
    env = parallel_pool.make(task_id, num_envs=2, num_threads=2, seed=5, width=width, height=height,
                             expose_physics_state=True, from_pixels=True, gray_scale=gray_scale,
                             frame_stack=frame_stack, max_episode_steps=3)
    shape = ((frame_stack,) if frame_stack > 1 else ()) + (height, width) + (() if gray_scale else (3,))
    assert env.observation_space == gymnasium.spaces.Box(0, 255, shape, np.uint8)
    assert env.spec.tables["state_obs_size"] == [gymnasium.make(task_id).observation_space.shape[0]]
    obs, info = env.reset()
    state = dict(info)
    ref = reference(task_id, state, wrap=pixel_wrappers(gray_scale, frame_stack), width=width, height=height)
    ref_obs, _ = ref.reset(seed=0)
    assert obs.shape == (2, *shape) and ref_obs.shape == shape
    np.testing.assert_array_equal(obs[0], ref_obs)
    for step in range(7):
        obs, _, terminated, truncated, info = env.step(actions(env, step))
        if step % 4 == 3:  # the autoreset step: a new episode's first observation
            state.update(info)
            ref_obs, _ = ref.reset()
        else:
            ref_obs, *_ = ref.step(actions(env, step)[0])
            np.testing.assert_array_equal(ref.unwrapped.data.qpos, info["qpos"][0])
            assert truncated[0] == (step % 4 == 2)
        np.testing.assert_array_equal(obs[0], ref_obs, err_msg=f"step {step + 1}")
    env.close()


def test_from_pixels_does_not_depend_on_threads_or_mode() -> None:
    """The same seeds give the same pixels on 1 thread and on 2 threads in async mode: every
    thread has its own GL context and its own upload of the model, and draws the same frame."""
    kwargs: dict[str, Any] = dict(num_envs=4, seed=7, width=16, height=16, from_pixels=True, frame_stack=2)
    one = parallel_pool.make("Hopper-v5", num_threads=1, **kwargs)
    two = parallel_pool.make("Hopper-v5", num_threads=2, batch_size=2, **kwargs)
    expected = [one.reset()[0]]
    for step in range(3):
        expected.append(one.step(actions(one, step))[0])
    got: dict[int, list[np.ndarray]] = {i: [] for i in range(4)}
    sent = {i: 0 for i in range(4)}
    two.async_reset()
    # Every env stays in flight (recv needs batch_size of them); only the first 4 rows are kept.
    while min(len(v) for v in got.values()) < 4:
        obs, *_, info = two.recv()
        ids = [int(i) for i in info["env_id"]]
        for row, env_id in enumerate(ids):
            got[env_id].append(obs[row])
        two.send(np.stack([actions(one, sent[i])[i] for i in ids]), np.array(ids, dtype=np.int32))
        for i in ids:
            sent[i] += 1
    for i in range(4):
        for step in range(4):
            np.testing.assert_array_equal(got[i][step], expected[step][i], err_msg=f"env {i} step {step}")
    one.close()
    two.close()


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"camera_id": 0, "camera_name": "track"}, "Both `camera_id` and `camera_name`"),
    ({"camera_id": 5}, "camera_id 5 is out of range"),
    ({"camera_id": -3}, "camera_id -3 is out of range"),
    ({"width": 0}, "width and height must be in"),
    ({"frame_stack": 0, "from_pixels": True}, "frame_stack must be in"),
    ({"gray_scale": True}, "needs from_pixels=True"),
    ({"frame_stack": 65}, "frame_stack must be in"),
], ids=str)
def test_bad_render_kwargs_raise(kwargs: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parallel_pool.make("HalfCheetah-v5", num_envs=1, **kwargs)


def test_closed_pools_give_their_gl_contexts_back() -> None:
    """A worker thread's GL context (~80 MB on llvmpipe: its framebuffers and the model's shadow
    map) is freed when the thread ends. It was once only marked for deletion, still current on the
    exiting thread, and each closed 2-thread pool left ~160 MB behind. Measured in a fresh process:
    after the first pool, three more opened and closed may not grow RSS by one context's worth."""
    script = textwrap.dedent("""
        import gc, numpy as np, parallel_pool
        def rss_mb():
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
        sizes = []
        for _ in range(4):
            env = parallel_pool.make("Hopper-v5", num_envs=2, num_threads=2, width=16, height=16, from_pixels=True)
            env.reset()
            env.step(np.zeros((2, 3), np.float32))
            env.close()
            del env
            gc.collect()
            sizes.append(rss_mb())
        print(sizes[-1] - sizes[0])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    growth_mb = float(out.stdout.split()[-1])
    assert growth_mb < 60, f"RSS grew by {growth_mb:.0f} MB over three closed pools"


def test_frames_survive_foreign_gl_cleanup() -> None:
    """mujoco's Python MjrContext, when garbage-collected, frees its GL objects by name in whatever
    context is current on that thread: a closed Gymnasium MuJoCo env collected while another one's
    context is current leaves that one rendering zeros (Gymnasium's own problem; seen in
    benchmarks/bench_mujoco_pixels.py). Our context is current only while we draw, so a closed
    Gymnasium env collected after our render() acts on no context of ours: our frames stay the same."""
    env = parallel_pool.make("HalfCheetah-v5", num_envs=1, seed=2, width=SIZE, height=SIZE)
    env.reset()
    first = env.render()[0].copy()
    assert first.any()
    gc.disable()  # the collection happens where this test says, not earlier
    try:
        ref = gymnasium.make("HalfCheetah-v5", render_mode="rgb_array", width=SIZE, height=SIZE)
        ref.reset(seed=0)
        ref.render()
        ref.close()  # releases Gymnasium's context: none is current on this thread now
        del ref  # its MjrContext lives on in a reference cycle until the collection below
        np.testing.assert_array_equal(env.render()[0], first)
        gc.collect()
    finally:
        gc.enable()
    np.testing.assert_array_equal(env.render()[0], first)
    env.close()
