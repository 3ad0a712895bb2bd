"""CarRacing-v3's world (track, car, rewards, termination) against Gymnasium's own (box2d-py 2.3.8).

The native env is registered as ``_CarRacingNoFrame-v3`` until its 96x96 frame is drawn: its
observation is all zeros, so these tests compare the world, not the frame. The pool runs with
``expose_physics_state=True``, which puts the hull, the wheels, the track, the tiles (visited,
colour), the colours, the skid marks and Gymnasium's running reward in ``info``; each env of a pool made with
``seed=s`` is mirrored by a Gymnasium ``CarRacing-v3`` first reset with ``seed=s + i``, both get the
same actions, and everything is compared **exactly** after every transition (no tolerance: Box2D is
deterministic, we build the same bodies in the same order, and our float64 arithmetic on Box2D's
float32 values follows Gymnasium's evaluation order).

Gymnasium's ``step`` draws its 96x96 frame (``self._render("state_pixels")``) even without a
render mode, which costs ~50 ms here; drawing only reads the world, so the mirrors skip it, and
``test_drawing_does_not_change_gymnasium_world`` checks on a short run that this changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import parallel_pool

TASK = "_CarRacingNoFrame-v3"
Policy = Callable[[dict[str, np.ndarray], np.random.Generator], np.ndarray]
WHEEL_COLUMNS = 13


class Mirror:
    """Gymnasium's env ``i`` of a vector env: reset with ``seed + i`` once, then next-step autoreset."""

    def __init__(self, seed: int, draw: bool = False, **kwargs: Any) -> None:
        self.env = gymnasium.make("CarRacing-v3", **kwargs)
        self.u: Any = self.env.unwrapped
        if not draw:
            self.u._render = lambda mode: None
        self.seed = seed
        self.first = True
        self.done = True

    def reset(self) -> None:
        self.env.reset(seed=self.seed if self.first else None)
        self.first = False
        self.done = False

    def step(self, action: Any) -> tuple[float, bool, bool, bool]:
        if self.done:
            self.reset()
            return 0.0, False, False, False
        _, reward, terminated, truncated, info = self.env.step(action)
        self.done = bool(terminated or truncated)
        return float(reward), bool(terminated), bool(truncated), bool(info.get("lap_finished", False))


# --- the world, as Gymnasium holds it and as info exposes it --------------------------------------


def gym_car(u: Any) -> dict[str, Any]:
    h = u.car.hull
    wheels = [[w.position[0], w.position[1], w.angle, w.linearVelocity[0], w.linearVelocity[1], w.angularVelocity,
               w.joint.angle, w.omega, w.phase, w.gas, w.brake, w.steer, 1.0 if w.tiles else 0.0]
              for w in u.car.wheels]
    return {"hull": np.array([h.position[0], h.position[1], h.angle, h.linearVelocity[0], h.linearVelocity[1],
                              h.angularVelocity]),
            "wheels": np.array(wheels, np.float64),
            "tile_visited_count": u.tile_visited_count,
            "env_reward": u.reward,
            "fuel_spent": u.car.fuel_spent}


def our_car(info: dict[str, Any], i: int) -> dict[str, Any]:
    return {"hull": info["hull"][i], "wheels": info["wheels"][i],
            "tile_visited_count": int(info["tile_visited_count"][i]),
            "env_reward": float(info["env_reward"][i]), "fuel_spent": float(info["fuel_spent"][i])}


def compare_car(tag: Any, info: dict[str, Any], i: int, u: Any) -> None:
    ours, theirs = our_car(info, i), gym_car(u)
    for key, value in theirs.items():
        assert np.array_equal(ours[key], value), (tag, key, ours[key], value)


def compare_track(tag: Any, info: dict[str, Any], i: int, u: Any) -> None:
    """The track, the tiles' visited flags and colours, and the colour scheme."""
    n = int(info["track_length"][i])
    assert n == len(u.track) == len(u.road), (tag, n, len(u.track))
    assert np.array_equal(info["track"][i][:n], np.array(u.track)), tag
    assert np.isnan(info["track"][i][n:]).all(), tag
    assert info["tile_visited"][i][:n].tolist() == [t.road_visited for t in u.road], tag
    assert not info["tile_visited"][i][n:].any(), tag
    assert np.array_equal(info["tile_color"][i][:n], np.array([t.color for t in u.road], np.float64)), tag
    assert np.array_equal(info["colors"][i], np.array([u.road_color, u.bg_color, u.grass_color], np.float64)), tag
    # The skid marks (drawn in rgb_array frames, not in the observation).
    particles = u.car.particles
    skid = info["skid_points"][i]
    assert info["skid_grass"][i].tolist() == [p.grass for p in particles] + [False] * (30 - len(particles)), tag
    for k, p in enumerate(particles):
        assert np.array_equal(skid[k][:len(p.poly)], np.array(p.poly, np.float64)), (tag, k)
        assert np.isnan(skid[k][len(p.poly):]).all(), (tag, k)
    assert np.isnan(skid[len(particles):]).all(), tag


# --- policies: (one env's info row, rng) -> action --------------------------------------------------


def pursue(row: dict[str, np.ndarray], target: tuple[float, float], speed: float) -> np.ndarray:
    """Steer towards `target` (world coordinates) at `speed`."""
    x, y, angle, vx, vy, _ = row["hull"]
    tx, ty = target
    ahead = -(tx - x) * math.sin(angle) + (ty - y) * math.cos(angle)  # the car's forward is its local +y
    right = (tx - x) * math.cos(angle) + (ty - y) * math.sin(angle)
    v = math.hypot(vx, vy)
    steer = float(np.clip(2.0 * math.atan2(right, ahead), -1, 1))
    return np.array([steer, np.clip(0.1 * (speed - v), 0, 1), 0.3 if v > speed + 5 else 0.0], np.float32)


def follow(speed: float, explore: float = 0.0) -> Policy:
    """Pure pursuit of the track point six tiles ahead: it drives laps (about 900 steps at speed
    60), so tiles are visited, rewarded and laps complete."""

    def policy(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
        if rng.random() < explore:
            return rng.uniform(-1.5, 1.5, 3).astype(np.float32)
        x, y = row["hull"][:2]
        n = int(row["track_length"])
        points = row["track"][:n, 2:4]
        nearest = int(np.argmin((points[:, 0] - x) ** 2 + (points[:, 1] - y) ** 2))
        return pursue(row, tuple(points[(nearest + 6) % n]), speed)

    return policy


def leave(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    # Every track starts near (225, 0) heading north; eastwards, the playfield ends at x = 333:
    # terminated with -100 after about 200 steps. (Full throttle straight on spins the car out on
    # the grass instead.)
    return pursue(row, (1000.0, 0.0), 30.0)


def random_continuous(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    # 1.5x the bounds: Gymnasium clips gas but not steering or brake, and neither must we.
    return rng.uniform(-1.5, 1.5, 3).astype(np.float32)


def discrete(policy: Policy) -> Policy:
    """A continuous policy mapped on the 5 actions: steer right (1) or left (2), gas (3), brake (4)."""

    def act(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
        steer, gas, brake = policy(row, rng)
        if brake > 0.5:
            return np.int64(4)
        if abs(steer) > 0.3:
            return np.int64(1 if steer > 0 else 2)
        return np.int64(3 if gas > 0 else 0)

    return act


def gas_only(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    # The discrete throttle (0.2) does not spin the car out: it drives off the playfield (-100).
    return np.int64(3)


def random_discrete(row: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    return np.int64(rng.integers(0, 5))


# --- the comparison ---------------------------------------------------------------------------------


def run(policies: list[Policy], steps: int, seed: int, track_every: int = 50, **kwargs: Any) -> dict[str, int]:
    """A sync pool of len(policies) envs against Gymnasium mirrors, transition by transition."""
    n = len(policies)
    pool = parallel_pool.make(TASK, num_envs=n, seed=seed, expose_physics_state=True, **kwargs)
    mirrors = [Mirror(seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    stats = {"transitions": 0, "laps": 0, "off_field": 0, "truncated": 0, "tiles": 0}
    try:
        _, info = pool.reset()
        for i, m in enumerate(mirrors):
            m.reset()
            compare_car(("reset", i), info, i, m.u)
            compare_track(("reset", i), info, i, m.u)
        for t in range(steps):
            rows = [{key: info[key][i] for key in ("hull", "track", "track_length")} for i in range(n)]
            actions = np.stack([policies[i](rows[i], rng) for i in range(n)])
            _, reward, terminated, truncated, info = pool.step(actions)
            for i, m in enumerate(mirrors):
                action = int(actions[i]) if actions[i].ndim == 0 else actions[i]
                g_reward, g_terminated, g_truncated, g_lap = m.step(action)
                tag = (kwargs, seed, t, i)
                assert float(reward[i]) == g_reward, (tag, float(reward[i]), g_reward)
                assert (bool(terminated[i]), bool(truncated[i])) == (g_terminated, g_truncated), tag
                assert bool(info["lap_finished"][i]) == g_lap, tag
                compare_car(tag, info, i, m.u)
                if terminated[i] or truncated[i] or t % track_every == 0:
                    compare_track(tag, info, i, m.u)
                stats["transitions"] += 1
                stats["laps"] += int(g_lap)
                stats["off_field"] += int(g_terminated and g_reward == -100)
                stats["truncated"] += int(g_truncated)
                stats["tiles"] += int(g_reward > 0)
    finally:
        pool.close()
    print(f"{kwargs}: {stats}")
    return stats


def test_continuous_episodes_match_gymnasium() -> None:
    # Laps at two speeds (one with 5% random actions), random driving to the time limit, and a car
    # that leaves the playfield; 1,100 steps take every env through a reset.
    stats = run([follow(60), follow(45, explore=0.05), random_continuous, leave], steps=1100, seed=0)
    assert stats["laps"] >= 1 and stats["off_field"] >= 1 and stats["truncated"] >= 1, stats
    assert stats["tiles"] >= 500, stats


def test_discrete_episodes_match_gymnasium() -> None:
    stats = run([discrete(follow(60)), random_discrete, gas_only], steps=1050, seed=8, continuous=False)
    assert stats["laps"] >= 1 and stats["off_field"] >= 1 and stats["truncated"] >= 1, stats


def test_domain_randomize_and_lap_complete_percent_match_gymnasium() -> None:
    # Short episodes, so that each env draws several colour schemes (every reset draws one).
    stats = run([follow(60), random_continuous], steps=700, seed=3, track_every=10, domain_randomize=True,
                lap_complete_percent=0.5, max_episode_steps=200)
    assert stats["truncated"] >= 5 and stats["tiles"] >= 100, stats


@pytest.mark.parametrize("seeds", [list(range(0, 60)), [2**32 + 5, 12345678901]])
def test_tracks_match_gymnasium_over_many_seeds(seeds: list[int]) -> None:
    # Seed 36's first track does not close: Gymnasium draws a second one, and so do we.
    pool = parallel_pool.make(TASK, num_envs=1, seed=0, expose_physics_state=True)
    mirror = Mirror(0)
    try:
        for seed in seeds:
            _, info = pool.reset(seed=seed)
            mirror.env.reset(seed=seed)
            compare_car(seed, info, 0, mirror.u)
            compare_track(seed, info, 0, mirror.u)
    finally:
        pool.close()


def test_drawing_does_not_change_gymnasium_world() -> None:
    # The mirrors skip Gymnasium's frame; here one draws it, and the world is the same.
    pool = parallel_pool.make(TASK, num_envs=1, seed=4, expose_physics_state=True)
    mirror = Mirror(4, draw=True)
    try:
        _, info = pool.reset()
        mirror.reset()
        policy, rng = follow(60), np.random.default_rng(0)
        for t in range(25):
            action = policy({k: info[k][0] for k in ("hull", "track", "track_length")}, rng)
            _, reward, _, _, info = pool.step(action[None])
            assert float(reward[0]) == mirror.step(action)[0], t
            compare_car(t, info, 0, mirror.u)
        compare_track("end", info, 0, mirror.u)
    finally:
        pool.close()


def test_spaces_and_registration() -> None:
    gym = gymnasium.make("CarRacing-v3")
    for kwargs in ({}, {"continuous": False}):
        pool = parallel_pool.make(TASK, num_envs=1, **kwargs)
        assert pool.observation_space == gym.observation_space
        assert pool.action_space == gymnasium.make("CarRacing-v3", **kwargs).action_space
        assert pool.spec.max_episode_steps == gym.spec.max_episode_steps == 1000
        assert pool.spec.reward_threshold == gym.spec.reward_threshold == 900
        pool.close()
    # Every constructor kwarg of Gymnasium's (render_mode aside) is a make() kwarg.
    pool = parallel_pool.make(TASK, num_envs=1, verbose=False, lap_complete_percent=0.9, domain_randomize=True,
                              continuous=True)
    pool.close()
    # Not under Gymnasium's id until the observation (the frame) is drawn.
    assert "CarRacing-v3" not in parallel_pool.list_all_envs()
