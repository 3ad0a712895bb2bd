"""``render()`` of the native classic-control tasks against Gymnasium's ``render_mode="rgb_array"`` frames.

The native envs draw Gymnasium's ``render()`` with ``native/envs/common/pygame_raster.h`` (pygame's
gfxdraw and draw primitives in C++, checked one by one in tests/envs/common/test_pygame_raster.py): the same
calls, in the same order, on the same values -- float64, or float32 where Gymnasium's state is a
float32 array (Acrobot after a reset, MountainCarContinuous after a step: NumPy's own float32 sin
and cos), and Pendulum's arrow smoothscaled from the installed gymnasium's ``assets/clockwise.png``.
Env ``i`` of a pool made with ``seed=s`` is mirrored by ``gymnasium.make(id, render_mode="rgb_array")``
reset with ``seed=s + i`` (the same episodes: tests/envs/classic_control/test_classic_control.py); both take the same
actions, and every frame of every step must be **equal**, pixel for pixel, with the observations.
The policies drive the states to the edges of the picture: the cart out at either side, the
pendulum through every angle with arrows of every size, the mountain car against the left wall and
onto the flag.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import parallel_pool  # noqa: E402

Policy = Callable[[np.ndarray, np.random.Generator], Any]

SHAPES = {
    "CartPole-v0": (400, 600, 3),
    "CartPole-v1": (400, 600, 3),
    "MountainCar-v0": (400, 600, 3),
    "MountainCarContinuous-v0": (400, 600, 3),
    "Pendulum-v1": (500, 500, 3),
    "Acrobot-v1": (500, 500, 3),
}


class Mirror:
    """Gymnasium's env ``i`` of a vector env, rendering: reset with ``seed + i``, next-step autoreset."""

    def __init__(self, task_id: str, seed: int, **kwargs: Any) -> None:
        self.env = gymnasium.make(task_id, render_mode="rgb_array", **kwargs)
        self.obs, _ = self.env.reset(seed=seed)
        self.done = False

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool]:
        if self.done:
            self.obs, _ = self.env.reset()
            self.done = False
            return self.obs, 0.0, False, False
        self.obs, reward, terminated, truncated, _ = self.env.step(action)
        self.done = bool(terminated or truncated)
        return self.obs, float(reward), bool(terminated), bool(truncated)


def assert_same_frame(ours: np.ndarray, theirs: np.ndarray, tag: Any) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint8, (tag, ours.shape, theirs.shape)
    if not np.array_equal(ours, theirs):
        where = np.argwhere((ours != theirs).any(axis=-1))
        pytest.fail(f"{tag}: {len(where)} pixels differ, first at (row, col) {where[0].tolist()}")


def run(task_id: str, policies: list[Policy], steps: int, seed: int, **kwargs: Any) -> list[np.ndarray]:
    """A sync pool against rendering Gymnasium mirrors, every frame compared; returns the
    observations whose frames were compared (for the coverage checks)."""
    n = len(policies)
    pool = parallel_pool.make(task_id, num_envs=n, seed=seed, **kwargs)
    mirrors = [Mirror(task_id, seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    seen = []
    try:
        obs, _ = pool.reset()
        for t in range(steps + 1):
            if t:
                actions = [policies[i](obs[i], rng) for i in range(n)]
                obs, reward, terminated, truncated, _ = pool.step(np.stack(actions))
                for i, m in enumerate(mirrors):
                    a = np.asarray(actions[i])
                    theirs = m.step(int(a) if a.ndim == 0 else a)
                    assert (float(reward[i]), bool(terminated[i]), bool(truncated[i])) == theirs[1:], (task_id, t, i)
            frames = pool.render(np.arange(pool.num_envs))
            assert frames.shape == (n, *SHAPES[task_id])
            for i, m in enumerate(mirrors):
                assert np.array_equal(obs[i], m.obs), (task_id, t, i, obs[i], m.obs)
                assert_same_frame(frames[i], m.env.render(), (task_id, kwargs, seed, t, i))
            seen.append(obs.copy())
    finally:
        pool.close()
        for m in mirrors:
            m.env.close()
    return seen


def random_action(task_id: str, scale: float = 1.0) -> Policy:
    space = gymnasium.make(task_id).action_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return lambda obs, rng: np.int64(rng.integers(space.n))
    high = float(space.high[0]) * scale
    return lambda obs, rng: rng.uniform(-high, high, 1).astype(np.float32)


# --- CartPole ------------------------------------------------------------------------------------


def cart_to(target: float) -> Policy:
    """Balances the pole while leaning it towards ``target``: the cart leaves the track there (x past
    +-2.4, half the cart off the picture) with the pole upright."""

    def policy(obs: np.ndarray, rng: np.random.Generator) -> Any:
        x, x_dot, theta, theta_dot = (float(v) for v in obs)
        lean = float(np.clip(0.04 * (target - x) - 0.05 * x_dot, -0.12, 0.12))
        return np.int64(theta - lean + 0.5 * theta_dot > 0)

    return policy


@pytest.mark.parametrize("task_id", ["CartPole-v0", "CartPole-v1"])
def test_cartpole_frames_match_gymnasium(task_id: str) -> None:
    policies = [cart_to(3.5), cart_to(-3.5), random_action(task_id), random_action(task_id)]
    seen = np.concatenate(run(task_id, policies, 300, seed=3))
    assert seen[:, 0].max() > 2.4 and seen[:, 0].min() < -2.4  # out at both sides
    assert np.abs(seen[:, 2]).max() > 0.2  # fallen poles (past 12 degrees)


# --- MountainCar ---------------------------------------------------------------------------------


def car_pump(task_id: str) -> Policy:
    """Pushes along the velocity: the swings grow until the car reaches the flag."""
    if task_id == "MountainCar-v0":
        return lambda obs, rng: np.int64(2 if obs[1] >= 0 else 0)
    return lambda obs, rng: np.array([1.0 if obs[1] >= 0 else -1.0], np.float32) * np.float32(rng.uniform(0.6, 1.4))


def car_to_wall(task_id: str) -> Policy:
    """Pushes along the velocity, but not up the right slope (past position 0.1): the swings grow
    until the car hits the left wall (position -1.2, the picture's left edge)."""

    def policy(obs: np.ndarray, rng: np.random.Generator) -> Any:
        push = -1 if obs[1] < 0 else (1 if obs[0] < 0.1 else 0)
        if task_id == "MountainCar-v0":
            return np.int64(push + 1)
        return np.array([push], np.float32)

    return policy


@pytest.mark.parametrize("task_id", ["MountainCar-v0", "MountainCarContinuous-v0"])
def test_mountain_car_frames_match_gymnasium(task_id: str) -> None:
    policies = [car_pump(task_id), car_to_wall(task_id), car_to_wall(task_id), random_action(task_id, 1.5)]
    seen = np.concatenate(run(task_id, policies, 400, seed=4))
    goal = 0.5 if task_id == "MountainCar-v0" else 0.45
    assert seen[:, 0].min() == np.float32(-1.2), seen[:, 0].min()  # against the wall
    assert seen[:, 0].max() >= goal  # at the flag


# --- Pendulum ------------------------------------------------------------------------------------


def pendulum_torque(obs: np.ndarray, rng: np.random.Generator) -> Any:
    """Torques past both bounds (clipped to +-2: the largest arrows), small ones (arrows of a few
    pixels, and none: a side below one pixel) and zero."""
    kind = rng.integers(4)
    if kind == 0:
        return np.zeros(1, np.float32)
    if kind == 1:
        return rng.uniform(-0.05, 0.05, 1).astype(np.float32)
    return rng.uniform(-3.0, 3.0, 1).astype(np.float32)


def test_pendulum_frames_match_gymnasium() -> None:
    # Episodes of 25 steps: many reset states, uniform over every angle.
    seen = np.concatenate(run("Pendulum-v1", [pendulum_torque] * 4, 300, seed=5, max_episode_steps=25))
    angles = np.arctan2(seen[:, 1], seen[:, 0])
    octants = np.floor((angles + math.pi) / (math.pi / 4)).astype(int) % 8
    assert set(octants.tolist()) == set(range(8))


# --- Acrobot -------------------------------------------------------------------------------------


def acrobot_pump(obs: np.ndarray, rng: np.random.Generator) -> Any:
    """Pumps energy into the second joint (its episodes end by reaching the line), 10% random."""
    return np.int64(rng.integers(3)) if rng.random() < 0.1 else np.int64(2 if obs[5] > 0 else 0)


def test_acrobot_frames_match_gymnasium() -> None:
    # Reset frames are drawn from Gymnasium's float32 state, the others from its float64 one.
    policies = [acrobot_pump, acrobot_pump, random_action("Acrobot-v1"), random_action("Acrobot-v1")]
    seen = np.concatenate(run("Acrobot-v1", policies, 400, seed=6))
    heights = -seen[:, 0] - (seen[:, 0] * seen[:, 2] - seen[:, 1] * seen[:, 3])  # -cos(t1) - cos(t1 + t2)
    assert heights.max() > 1.0  # the free end above the line


# --- async, and the render mode ------------------------------------------------------------------


@pytest.mark.parametrize("task_id", ["CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCarContinuous-v0"])
def test_frames_match_gymnasium_async(task_id: str) -> None:
    """An async pool (batches of half the envs in whatever order they finish), rendering the envs of
    each batch it receives with ``render(env_ids)``."""
    n, seed = 4, 7
    policy = random_action(task_id, 1.5)
    pool = parallel_pool.make(task_id, num_envs=n, batch_size=n // 2, seed=seed)
    mirrors = [Mirror(task_id, seed + i) for i in range(n)]
    rng = np.random.default_rng(seed)
    last: dict[int, Any] = {}
    frames = 0
    try:
        pool.async_reset()
        for _ in range(150):
            obs, _, _, _, info = pool.recv()
            env_ids = info["env_id"]
            ours = pool.render(env_ids)
            actions = []
            for k, i in enumerate(env_ids.tolist()):
                m = mirrors[i]
                if i in last:
                    a = np.asarray(last[i])
                    m.step(int(a) if a.ndim == 0 else a)
                assert np.array_equal(obs[k], m.obs), (task_id, i)
                assert_same_frame(ours[k], m.env.render(), (task_id, "async", i))
                frames += 1
                last[i] = policy(obs[k], rng)
                actions.append(last[i])
            pool.send(np.stack(actions), env_ids)
        pool.recv()
    finally:
        pool.close()
        for m in mirrors:
            m.env.close()
    assert frames == 150 * n // 2


@pytest.mark.parametrize("task_id", list(SHAPES))
def test_render_shape_and_mode(task_id: str) -> None:
    env = parallel_pool.make(task_id, num_envs=2, seed=0, render_mode="rgb_array")
    try:
        assert env.render_mode == "rgb_array"
        env.reset()
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (2, *SHAPES[task_id]) and frames.dtype == np.uint8
        assert gymnasium.make(task_id, render_mode="rgb_array").metadata["render_modes"][-1] == "rgb_array"
    finally:
        env.close()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_pool.make(task_id, num_envs=1, render_mode="human")


def test_the_arrow_is_read_from_the_installed_gymnasium() -> None:
    """Pendulum's arrow is Gymnasium's own assets/clockwise.png, found through the family's resource
    (gymnasium's envs/classic_control), never a copy in this repository."""
    from parallel_pool import _native, families

    (library,) = [path for path in families.installed_families() if os.path.basename(path) == "classic_control.so"]
    resources = [tuple(r) for r in _native.library_resources(library)]
    assert resources == [("classic_control_dir", "gymnasium", "envs/classic_control")]
    gymnasium_dir = os.path.dirname(gymnasium.__file__)
    assert os.path.isfile(os.path.join(gymnasium_dir, "envs", "classic_control", "assets", "clockwise.png"))
