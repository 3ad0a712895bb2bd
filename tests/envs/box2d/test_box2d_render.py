"""``render()`` of the native Box2D tasks against Gymnasium's ``render_mode="rgb_array"`` frames.

The native envs draw with ``native/envs/common/pygame_raster.h`` (pygame's primitives in C++,
checked primitive by primitive in tests/envs/common/test_pygame_raster.py) the same calls, in the same order,
on the same float32 Box2D vertices as Gymnasium's ``render()``. Each env of a pool made with
``render_mode="rgb_array"`` and ``seed=s`` is mirrored by a Gymnasium env made with
``render_mode="rgb_array"`` and first reset with ``seed=s + i`` (next-step autoreset, as in
tests/envs/box2d/test_box2d.py); both are driven by the same actions and their frames must be **equal**, pixel
for pixel, over full episodes. Rendering changes state in both (LunarLander's flame particles age
when drawn), so some cases render every step and others only now and then.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from async_batches import run_async_batches

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
from gymnasium.envs.box2d.bipedal_walker import BipedalWalkerHeuristics  # noqa: E402
from gymnasium.envs.box2d.lunar_lander import heuristic as lander_heuristic  # noqa: E402

import parallel_pool  # noqa: E402

Policy = Callable[[np.ndarray, np.random.Generator], Any]


class Mirror:
    """Gymnasium's env ``i`` of a vector env, rendering: reset with ``seed + i``, next-step autoreset."""

    def __init__(self, task_id: str, seed: int, **kwargs: Any) -> None:
        self.env = gymnasium.make(task_id, render_mode="rgb_array", **kwargs)
        self.seed: int | None = seed
        self.done = True
        self.last_action: Any = None

    def step(self, action: Any) -> np.ndarray:
        if self.done:
            obs, _ = self.env.reset(seed=self.seed)
            self.seed = None
            self.done = False
            return obs
        obs, _, terminated, truncated, _ = self.env.step(action)
        self.done = bool(terminated or truncated)
        return obs


def lander_policy(continuous: bool, explore: float) -> Policy:
    """Gymnasium's heuristic (it lands, firing all the way: many particles), some random actions."""
    unwrapped = types.SimpleNamespace(unwrapped=types.SimpleNamespace(continuous=continuous))

    def policy(obs: np.ndarray, rng: np.random.Generator) -> Any:
        if rng.random() < explore:
            return rng.uniform(-1, 1, 2).astype(np.float32) if continuous else np.int64(rng.integers(4))
        act = lander_heuristic(unwrapped, obs)
        return np.asarray(act, np.float32) if continuous else np.int64(act)

    return policy


def as_gym_action(action: np.ndarray) -> Any:
    return int(action) if action.ndim == 0 else action


def assert_same_frame(ours: np.ndarray, theirs: np.ndarray, tag: Any) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint8, (tag, ours.shape, theirs.shape)
    if not np.array_equal(ours, theirs):
        where = np.argwhere((ours != theirs).any(axis=-1))
        pytest.fail(f"{tag}: {len(where)} pixels differ, first at (row, col) {where[0].tolist()}")


def run_sync(
    task_id: str, policies: list[Policy], steps: int, seed: int, render_every: int, **kwargs: Any
) -> tuple[int, float]:
    """A sync pool against rendering Gymnasium mirrors; returns the number of frames compared and
    the furthest BipedalWalker scroll (how wide its surface got) among them."""
    n = len(policies)
    pool = parallel_pool.make(task_id, num_envs=n, seed=seed, render_mode="rgb_array", **kwargs)
    mirrors = [Mirror(task_id, seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    frames = 0
    max_scroll = 0.0
    try:
        obs, _ = pool.reset()
        actions: list[Any] = [None] * n
        for t in range(steps + 1):
            if t:
                batch = np.stack(actions)
                obs, *_ = pool.step(batch)
            for i in range(n):
                theirs = mirrors[i].step(None if actions[i] is None else as_gym_action(np.asarray(actions[i])))
                assert np.array_equal(obs[i], theirs), (task_id, kwargs, t, i)
            if t % render_every == 0:
                ours = pool.render(np.arange(pool.num_envs))
                for i in range(n):
                    assert_same_frame(ours[i], mirrors[i].env.render(), (task_id, kwargs, seed, t, i))
                    frames += 1
                    max_scroll = max(max_scroll, float(getattr(mirrors[i].env.unwrapped, "scroll", 0.0)))
            actions = [policies[i](obs[i], rng) for i in range(n)]
    finally:
        pool.close()
    return frames, max_scroll


def run_async(task_id: str, policies: list[Policy], batches: int, seed: int, **kwargs: Any) -> int:
    """An async pool (batch_size = num_envs / 2), rendering the envs of each batch it receives."""
    n = len(policies)
    pool = parallel_pool.make(task_id, num_envs=n, batch_size=n // 2, seed=seed, render_mode="rgb_array", **kwargs)
    mirrors = [Mirror(task_id, seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    frames = 0

    def next_actions(_: int, batch: tuple) -> np.ndarray:
        nonlocal frames
        obs, env_ids = batch[0], batch[4]["env_id"]
        ours = pool.render(env_ids)
        actions = []
        for k, i in enumerate(env_ids):
            m = mirrors[i]
            last = None if m.last_action is None else as_gym_action(np.asarray(m.last_action))
            assert np.array_equal(obs[k], m.step(last)), (task_id, i)
            assert_same_frame(ours[k], m.env.render(), (task_id, kwargs, "async", i))
            frames += 1
            m.last_action = policies[i](obs[k], rng)
            actions.append(m.last_action)
        return np.stack(actions)

    run_async_batches(pool, batches, next_actions)
    return frames


# --- LunarLander ---------------------------------------------------------------------------------

LANDER_CASES = [
    ("LunarLander-v3", {}, 1),
    ("LunarLanderContinuous-v3", {}, 1),
    ("LunarLander-v3", {"enable_wind": True, "wind_power": 20.0}, 3),  # particles pile up between frames
    ("LunarLanderContinuous-v3", {"enable_wind": True, "turbulence_power": 2.0, "gravity": -6.0}, 1),
]


@pytest.mark.parametrize(("task_id", "kwargs", "render_every"), LANDER_CASES)
def test_lunar_lander_frames_match_gymnasium(task_id: str, kwargs: dict[str, Any], render_every: int) -> None:
    continuous = task_id == "LunarLanderContinuous-v3"
    policies = [lander_policy(continuous, 0.05), lander_policy(continuous, 0.3)]
    frames, _ = run_sync(task_id, policies, 260, len(kwargs) * 10 + render_every, render_every, **kwargs)
    assert frames >= 2 * 260 // render_every


def test_lunar_lander_frames_match_gymnasium_async() -> None:
    policies = [lander_policy(False, 0.1)] * 4
    assert run_async("LunarLander-v3", policies, 120, seed=5) == 120 * 2


def test_lunar_lander_render_shape_and_mode() -> None:
    env = parallel_pool.make("LunarLander-v3", num_envs=2, seed=0)
    try:
        assert env.render_mode == "rgb_array"
        env.reset()
        assert env.render(np.arange(env.num_envs)).shape == (2, 400, 600, 3)
    finally:
        env.close()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_pool.make("LunarLander-v3", num_envs=1, render_mode="human")


# --- BipedalWalker -------------------------------------------------------------------------------


def walker_policy(explore: float) -> Policy:
    """Gymnasium's walking heuristic (one per env: it keeps a gait state), some random actions."""
    heuristic = BipedalWalkerHeuristics()

    def policy(obs: np.ndarray, rng: np.random.Generator) -> Any:
        act = heuristic.step_heuristic(obs).astype(np.float32)
        return rng.uniform(-1, 1, 4).astype(np.float32) if rng.random() < explore else act

    return policy


WALKER_CASES = [
    # (task id, steps, render every, explore): the last walks far, so the surface is wide (scroll).
    ("BipedalWalker-v3", 200, 1, 0.1),
    ("BipedalWalkerHardcore-v3", 300, 2, 0.05),
    ("BipedalWalker-v3", 1200, 40, 0.0),
]


@pytest.mark.parametrize(("task_id", "steps", "render_every", "explore"), WALKER_CASES)
def test_bipedal_walker_frames_match_gymnasium(task_id: str, steps: int, render_every: int, explore: float) -> None:
    policies = [walker_policy(explore), walker_policy(explore)]
    frames, max_scroll = run_sync(task_id, policies, steps, steps, render_every)
    assert frames >= 2 * steps // render_every
    if steps >= 1000:
        assert max_scroll > 20, max_scroll  # a surface of 1200+ columns, terrain and clouds culled


def test_bipedal_walker_frames_match_gymnasium_async() -> None:
    policies = [walker_policy(0.1) for _ in range(4)]
    assert run_async("BipedalWalkerHardcore-v3", policies, 80, seed=3) == 80 * 2


def test_bipedal_walker_without_the_lidar_ray_renders_one_frame() -> None:
    """render_lidar=False: Gymnasium's frame with no lidar ray (its counter past the rays), the same
    frame at each call, and a batch's frames those of each env alone."""
    pool = parallel_pool.make("BipedalWalker-v3", num_envs=2, seed=5, render_mode="rgb_array", render_lidar=False)
    mirror = Mirror("BipedalWalker-v3", 5)
    policy = walker_policy(0.1)
    rng = np.random.default_rng(0)
    try:
        obs, _ = pool.reset()
        mirror.step(None)
        for t in range(40):
            frames = pool.render([0, 1])
            np.testing.assert_array_equal(pool.render(0)[0], frames[0])
            np.testing.assert_array_equal(pool.render(1)[0], frames[1])
            unwrapped: Any = mirror.env.unwrapped
            unwrapped.lidar_render = 50  # render() counts it on to 51: no ray is drawn
            assert_same_frame(frames[0], mirror.env.render(), t)
            action = policy(obs[0], rng)
            obs, *_ = pool.step(np.stack([action, action]))
            mirror.step(action)
    finally:
        pool.close()
