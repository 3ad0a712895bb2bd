"""The pool options render_width/render_height: EnvPool's render size, for every task that renders.

render() returns each env's frame shrunk to (render_height, render_width) with OpenCV's INTER_AREA
(0: the frame's own size on that axis). The oracle is ``cv2.resize(frame, (w, h),
interpolation=cv2.INTER_AREA)`` of the full-size frame of a pool in the same state (same seed and
actions). Tolerance: none. ``_native.resize_frames`` is OpenCV's general INTER_AREA path
(atari::AreaResizer, bit for bit) where a scale is not an integer, and its integer-factor shortcut
(whose rounding differs, halves up for 2 x 2 blocks) where both are, so every pixel must be equal.
Enlarging is refused: OpenCV's INTER_AREA enlarges by a bilinear method that is not reproduced.
"""

from __future__ import annotations

from typing import Any

import cv2  # opencv-python-headless, in the test extra
import gymnasium
import numpy as np
import pytest

import parallel_pool
from parallel_pool import _native

TASKS = ["CartPole-v1", "LunarLander-v3", "Pong-v5", "MiniGrid-Empty-5x5-v0", "FrozenLake-v1"]


def _built(task: str) -> str:
    if task not in parallel_pool.list_all_envs():
        pytest.skip(f"{task}'s family is not built")
    return task


def _sizes(height: int, width: int) -> list[tuple[int, int]]:
    """(render_height, render_width) pairs for a (height, width) frame: non-integer scales, integer
    ones (2 x 2 and others), one axis kept (0), and the frame's own size."""
    sizes = [(height * 2 // 3 + 1, width * 3 // 5 + 1), (37, 0), (0, width - 1), (height, width)]
    for fy, fx in ((2, 2), (3, 2), (1, 4)):
        if height % fy == 0 and width % fx == 0:
            sizes.append((height // fy, width // fx))
    return sizes


def _oracle(frames: np.ndarray, h: int, w: int) -> np.ndarray:
    return np.stack([cv2.resize(f, (w, h), interpolation=cv2.INTER_AREA) for f in frames])


@pytest.mark.parametrize("task", TASKS)
def test_render_size_is_inter_area_of_the_full_frame(task: str) -> None:
    _built(task)
    full = parallel_pool.make(task, num_envs=2, seed=5, render_mode="rgb_array")
    height, width, _ = full.spec.render_shape
    smalls = {}
    for h, w in _sizes(height, width):
        smalls[(h, w)] = parallel_pool.make(task, num_envs=2, seed=5, render_mode="rgb_array",
                                            render_height=h, render_width=w)
    try:
        full.action_space.seed(0)
        for pool in [full, *smalls.values()]:
            pool.reset()
        for t in range(4):
            frames = full.render(np.arange(full.num_envs))
            assert frames.shape == (2, height, width, 3)
            for (h, w), small in smalls.items():
                rh, rw = h or height, w or width
                assert small.spec.render_shape == (rh, rw, 3)
                ours = small.render(np.arange(small.num_envs))
                assert ours.shape == (2, rh, rw, 3) and ours.dtype == np.uint8
                np.testing.assert_array_equal(ours, _oracle(frames, rh, rw), err_msg=f"{task} {(h, w)} step {t}")
            actions = np.stack([full.action_space.sample() for _ in range(2)])
            for pool in [full, *smalls.values()]:
                pool.step(actions)
    finally:
        for pool in [full, *smalls.values()]:
            pool.close()


@pytest.mark.parametrize(("src", "dst"), [
    ((400, 600), (100, 150)), ((400, 600), (200, 300)), ((400, 600), (133, 201)), ((210, 160), (84, 84)),
    ((7, 9), (1, 1)), ((7, 9), (7, 3)), ((7, 9), (2, 9)), ((64, 64), (63, 17)), ((5, 5), (5, 5)),
], ids=str)
def test_resize_frames_is_opencv_inter_area(src: tuple[int, int], dst: tuple[int, int]) -> None:
    """The binding on random frames (every value, not only a renderer's flat colours)."""
    frames = np.random.default_rng(0).integers(0, 256, (3, *src, 3), dtype=np.uint8)
    ours = _native.resize_frames(frames, *dst)
    np.testing.assert_array_equal(ours, _oracle(frames, *dst))


def test_async_pool_renders_the_requested_size() -> None:
    kwargs: dict[str, Any] = {"num_envs": 4, "batch_size": 2, "seed": 1}
    full = parallel_pool.make("CartPole-v1", **kwargs)
    small = parallel_pool.make("CartPole-v1", render_width=100, render_height=50, **kwargs)
    try:
        for pool in (full, small):
            pool.async_reset()
            ids = np.concatenate([pool.recv()[-1]["env_id"] for _ in range(2)])
            assert sorted(ids) == [0, 1, 2, 3]
        np.testing.assert_array_equal(small.render([3, 1]), _oracle(full.render([3, 1]), 50, 100))
        assert small.spec.render_shape == (50, 100, 3)
    finally:
        full.close()
        small.close()


def test_gymnasium_make_vec_and_frontends() -> None:
    envs = gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=2, render_mode="rgb_array",
                              render_width=100, render_height=50)
    try:
        envs.reset(seed=0)
        frames = envs.render()
        assert len(frames) == 2 and all(f.shape == (50, 100, 3) for f in frames)
    finally:
        envs.close()
    for env_type in ("gymnasium", "gym"):
        with parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=2, render_width=100) as env:
            env.reset()
            assert env.render(np.arange(env.num_envs)).shape == (2, 400, 100, 3)
            assert env.call("render")[0].shape == (400, 100, 3)
    spec = parallel_pool.make_spec("CartPole-v1", render_height=50)
    assert spec.render_shape == (50, 600, 3) and spec.config["render_height"] == 50


@pytest.mark.parametrize("value", [-1, 1.5, "50", True, None])
def test_bad_values_raise_value_error(value: Any) -> None:
    for key in ("render_width", "render_height"):
        with pytest.raises(ValueError, match=f"{key} must be an int >= 0"):
            parallel_pool.make("CartPole-v1", **{key: value})


def test_larger_than_the_frame_is_refused() -> None:
    with pytest.raises(ValueError, match=r"must be at most CartPole-v1's frame, 400 x 600: render\(\) shrinks"):
        parallel_pool.make("CartPole-v1", render_width=601)
    with pytest.raises(ValueError, match="must be at most"):
        parallel_pool.make_spec("CartPole-v1", render_height=401)


def test_a_task_that_does_not_render_refuses_them() -> None:
    silent = [t for t in ("Catch-v0", "NChain-v0") if t in parallel_pool.list_all_envs()]
    if not silent or parallel_pool.make_spec(silent[0]).render_shape is not None:
        pytest.skip("no task without frames is built")
    with pytest.raises(ValueError, match="does not render"):
        parallel_pool.make(silent[0], render_width=10)


def test_a_python_env_frames_are_resized_too() -> None:
    kwargs: dict[str, Any] = {"num_envs": 2, "seed": 0, "render_mode": "rgb_array"}
    with parallel_pool.make("gymnasium:CartPole-v1", **kwargs) as full, \
            parallel_pool.make("gymnasium:CartPole-v1", render_width=100, render_height=50, **kwargs) as small:
        full.reset()
        small.reset()
        assert small.spec.render_shape == (50, 100, 3)
        both = np.arange(2)
        np.testing.assert_array_equal(small.render(both), _oracle(full.render(both), 50, 100))
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        parallel_pool.make("gymnasium:CartPole-v1", render_width=100)


def test_a_family_that_sizes_its_own_frames_keeps_its_keys() -> None:
    """ViZDoom declares render_width/render_height itself (its own INTER_AREA); MuJoCo's renderer
    draws at width x height, of which they are synonyms."""
    if "Basic-v1" in parallel_pool.list_all_envs():
        spec = parallel_pool.make_spec("Basic-v1", render_width=160, render_height=120)
        assert spec.render_shape == (120, 160, 3) and spec.env_config["render_width"] == 160
    if "Hopper-v5" in parallel_pool.list_all_envs():
        spec = parallel_pool.make_spec("Hopper-v5", render_width=100, render_height=50)
        assert (spec.config["width"], spec.config["height"]) == (100, 50)
        assert parallel_pool.make_spec("Hopper-v5", render_width=0).config["width"] == 480
        with pytest.raises(ValueError, match="synonym of width"):
            parallel_pool.make_spec("Hopper-v5", render_width=100, width=200)
