"""CarRacing-v3 against Gymnasium's own (box2d-py 2.3.8, pygame 2.6.1): the world and the frames.

The world: the pool runs with ``expose_physics_state=True``, which puts the hull, the wheels, the
track, the tiles (visited, colour), the colours, the skid marks and Gymnasium's running reward in
``info``; each env of a pool made with ``seed=s`` is mirrored by a Gymnasium ``CarRacing-v3`` first
reset with ``seed=s + i``, both get the same actions, and everything is compared **exactly** after
every transition (no tolerance: Box2D is deterministic, we build the same bodies in the same order,
and our float64 arithmetic on Box2D's float32 values follows Gymnasium's evaluation order).

The frames: the observation (Gymnasium's ``step()`` return, drawn by ``self._render("state_pixels")``
after the physics, score included) and ``render()`` (``render_mode="rgb_array"``, 400x600, with the
skid marks) are compared **pixel for pixel, no tolerance**. Gymnasium draws the 96x96 frame in every
``step()`` even without a render mode, which costs ~15-40 ms here (a 1000x800 pygame surface and a
smoothscale), so a mirror draws it only on the transitions whose frames are compared: every reset's,
the first steps of every episode (the zoom-in of its first second), every ``obs_every``-th
transition and every episode's last (a lap completed, the car off the playfield, the time limit);
``render()`` frames every ``render_every``-th transition and at every episode's end. Drawing only
reads the world: ``test_every_frame_of_an_episode_matches_gymnasium`` compares every observation of
whole episodes with a mirror that draws every step, and the world stays equal there too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from async_batches import run_async_batches

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import parallel_pool  # noqa: E402

TASK = "CarRacing-v3"
Policy = Callable[[dict[str, np.ndarray], np.random.Generator], np.ndarray]
WHEEL_COLUMNS = 13
ZOOM_IN_STEPS = 5  # the first frames of each episode compared (the zoom animates over 50 steps)


class Mirror:
    """Gymnasium's env ``i`` of a vector env: reset with ``seed + i`` once, then next-step autoreset.

    It draws its observation only when ``draw`` is set for the coming transition (see above), and
    always when ``render()`` asks."""

    def __init__(self, seed: int, **kwargs: Any) -> None:
        self.env = gymnasium.make("CarRacing-v3", render_mode="rgb_array", **kwargs)
        self.u: Any = self.env.unwrapped
        real_render = self.u._render
        self.draw = False
        self.u._render = lambda mode: real_render(mode) if self.draw or mode == "rgb_array" else None
        self.seed = seed
        self.first = True
        self.done = True
        self.episode_steps = 0
        self.last_action: Any = None

    def reset(self, draw: bool = False) -> np.ndarray | None:
        self.draw = draw
        obs, _ = self.env.reset(seed=self.seed if self.first else None)
        self.first = False
        self.done = False
        self.episode_steps = 0
        return obs

    def step(self, action: Any, draw: bool = False) -> tuple[np.ndarray | None, float, bool, bool, bool]:
        if self.done:
            return self.reset(draw), 0.0, False, False, False
        self.draw = draw
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.done = bool(terminated or truncated)
        self.episode_steps += 1
        return obs, float(reward), bool(terminated), bool(truncated), bool(info.get("lap_finished", False))


def assert_same_frame(ours: np.ndarray, theirs: np.ndarray | None, tag: Any) -> None:
    assert theirs is not None, tag
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint8, (tag, ours.shape, theirs.shape)
    if not np.array_equal(ours, theirs):
        where = np.argwhere((ours != theirs).any(axis=-1))
        pytest.fail(f"{tag}: {len(where)} pixels differ, first at (row, col) {where[0].tolist()}")


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


def run(policies: list[Policy], steps: int, seed: int, track_every: int = 50, obs_every: int = 100,
        render_every: int = 200, **kwargs: Any) -> dict[str, int]:
    """A sync pool of len(policies) envs against Gymnasium mirrors, transition by transition: the
    world every transition, the frames as the module's docstring says."""
    n = len(policies)
    pool = parallel_pool.make(TASK, num_envs=n, seed=seed, expose_physics_state=True, render_mode="rgb_array",
                              **kwargs)
    mirrors = [Mirror(seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    stats = {"transitions": 0, "laps": 0, "off_field": 0, "truncated": 0, "tiles": 0, "obs": 0, "render": 0}
    try:
        obs, info = pool.reset()
        for i, m in enumerate(mirrors):
            assert_same_frame(obs[i], m.reset(draw=True), ("reset", i))
            compare_car(("reset", i), info, i, m.u)
            compare_track(("reset", i), info, i, m.u)
            stats["obs"] += 1
        for t in range(steps):
            rows = [{key: info[key][i] for key in ("hull", "track", "track_length")} for i in range(n)]
            actions = np.stack([policies[i](rows[i], rng) for i in range(n)])
            obs, reward, terminated, truncated, info = pool.step(actions)
            for i, m in enumerate(mirrors):
                action = int(actions[i]) if actions[i].ndim == 0 else actions[i]
                draw = (m.done or m.episode_steps < ZOOM_IN_STEPS or t % obs_every == 0 or bool(terminated[i])
                        or bool(truncated[i]))
                g_obs, g_reward, g_terminated, g_truncated, g_lap = m.step(action, draw)
                tag = (kwargs, seed, t, i)
                assert float(reward[i]) == g_reward, (tag, float(reward[i]), g_reward)
                assert (bool(terminated[i]), bool(truncated[i])) == (g_terminated, g_truncated), tag
                assert bool(info["lap_finished"][i]) == g_lap, tag
                compare_car(tag, info, i, m.u)
                if terminated[i] or truncated[i] or t % track_every == 0:
                    compare_track(tag, info, i, m.u)
                if draw:
                    assert_same_frame(obs[i], g_obs, ("obs", *tag))
                    stats["obs"] += 1
                stats["transitions"] += 1
                stats["laps"] += int(g_lap)
                stats["off_field"] += int(g_terminated and g_reward == -100)
                stats["truncated"] += int(g_truncated)
                stats["tiles"] += int(g_reward > 0)
            ends = [i for i in range(n) if terminated[i] or truncated[i]]
            shown = list(range(n)) if t % render_every == 0 else ends
            if shown:
                frames = pool.render(np.array(shown))
                for k, i in enumerate(shown):
                    assert_same_frame(frames[k], mirrors[i].env.render(), ("render", kwargs, seed, t, i))
                    stats["render"] += 1
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
    # Seed 36's first track does not close: Gymnasium draws a second one, and so do we. The reset's
    # frame is zoomed out (the zoom-in starts): most of each track is in view.
    pool = parallel_pool.make(TASK, num_envs=1, seed=0, expose_physics_state=True)
    mirror = Mirror(0)
    try:
        for seed in seeds:
            obs, info = pool.reset(seed=seed)
            mirror.draw = True
            g_obs, _ = mirror.env.reset(seed=seed)
            compare_car(seed, info, 0, mirror.u)
            compare_track(seed, info, 0, mirror.u)
            assert_same_frame(obs[0], g_obs, seed)
    finally:
        pool.close()


@pytest.mark.parametrize(("policy", "kwargs", "end"), [
    (leave, {}, "off_field"),
    (discrete(random_continuous), {"continuous": False, "domain_randomize": True, "max_episode_steps": 120},
     "truncated"),
])
def test_every_frame_of_an_episode_matches_gymnasium(policy: Policy, kwargs: dict[str, Any], end: str) -> None:
    # Every observation of a whole episode (the mirror draws every step: the world stays the same
    # as the other tests' mirrors, which draw only now and then) and every 4th render() frame.
    stats = run([policy], steps=205, seed=5, obs_every=1, render_every=4, **kwargs)
    assert stats[end] >= 1 and stats["obs"] == stats["transitions"] + 1, stats


def run_async(policies: list[Policy], batches: int, seed: int, obs_every: int, **kwargs: Any) -> dict[str, int]:
    """An async pool (batch_size = num_envs / 2) against Gymnasium mirrors: the world of every
    env received, its observation as in run() and its render() frame every `obs_every` steps."""
    n = len(policies)
    pool = parallel_pool.make(TASK, num_envs=n, batch_size=n // 2, seed=seed, expose_physics_state=True,
                              render_mode="rgb_array", **kwargs)
    mirrors = [Mirror(seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(seed)
    stats = {"transitions": 0, "ends": 0, "obs": 0, "render": 0}

    def next_actions(b: int, batch: tuple) -> np.ndarray:
        obs, reward, terminated, truncated, info = batch
        actions = []
        for k, i in enumerate(info["env_id"]):
            m = mirrors[i]
            done = bool(terminated[k] or truncated[k])
            draw = m.done or m.episode_steps < ZOOM_IN_STEPS or m.episode_steps % obs_every == 0 or done
            g_obs, g_reward, g_terminated, g_truncated, _ = m.step(m.last_action, draw)
            tag = ("async", kwargs, b, int(i))
            assert (float(reward[k]), bool(terminated[k]), bool(truncated[k])) == (g_reward, g_terminated,
                                                                                    g_truncated), tag
            compare_car(tag, info, k, m.u)
            if draw:
                assert_same_frame(obs[k], g_obs, ("obs", *tag))
                frame = pool.render(np.array([i]))[0]
                assert_same_frame(frame, m.env.render(), ("render", *tag))
                stats["obs"] += 1
                stats["render"] += 1
            stats["transitions"] += 1
            stats["ends"] += int(done)
            row = {key: info[key][k] for key in ("hull", "track", "track_length")}
            m.last_action = policies[i](row, rng)
            if m.last_action.ndim == 0:
                m.last_action = int(m.last_action)
            actions.append(m.last_action)
        return np.stack(actions)

    run_async_batches(pool, batches, next_actions)
    print(f"async {kwargs}: {stats}")
    return stats


def test_async_frames_match_gymnasium() -> None:
    # Four envs, two per batch: one leaves the playfield, one drives on, two drive at random with
    # short episodes; every env goes through resets.
    stats = run_async([leave, follow(60), random_continuous, random_continuous], batches=500, seed=21,
                      obs_every=60, max_episode_steps=160)
    assert stats["ends"] >= 4 and stats["transitions"] == 1000, stats  # resets in async mode


def test_spaces_and_registration() -> None:
    gym = gymnasium.make("CarRacing-v3")
    for kwargs in ({}, {"continuous": False}):
        pool = parallel_pool.make(TASK, num_envs=1, **kwargs)
        assert pool.observation_space == gym.observation_space
        assert pool.action_space == gymnasium.make("CarRacing-v3", **kwargs).action_space
        assert pool.spec.max_episode_steps == gym.spec.max_episode_steps == 1000
        assert pool.spec.reward_threshold == gym.spec.reward_threshold == 900
        assert pool.spec.render_shape == (400, 600, 3)
        pool.close()
    # Every constructor kwarg of Gymnasium's is a make() kwarg (render_mode: "rgb_array" or None).
    pool = parallel_pool.make(TASK, num_envs=1, verbose=False, lap_complete_percent=0.9, domain_randomize=True,
                              continuous=True, render_mode="rgb_array")
    assert pool.render_mode == "rgb_array"
    pool.close()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_pool.make(TASK, num_envs=1, render_mode="human")
    # The world-only placeholder id is gone.
    assert "_CarRacingNoFrame-v3" not in parallel_pool.list_all_envs()
    assert TASK in parallel_pool.list_all_envs()


def test_score_is_drawn() -> None:
    # The score, "%04i" % Gymnasium's running reward in white in the black band, bottom left: the
    # observation shows it before the step's -0.1 (step() draws first), render() after; tiles
    # visited change it every few steps.
    pool = parallel_pool.make(TASK, num_envs=1, seed=2, expose_physics_state=True)
    mirror = Mirror(2)
    try:
        obs, info = pool.reset()
        assert_same_frame(obs[0], mirror.reset(draw=True), "reset")
        scores = set()
        policy, rng = follow(60), np.random.default_rng(0)
        for t in range(120):
            action = policy({k: info[k][0] for k in ("hull", "track", "track_length")}, rng)
            obs, _, _, _, info = pool.step(action[None])
            assert_same_frame(obs[0], mirror.step(action, draw=True)[0], ("obs", t))
            if t % 10 == 0:
                assert_same_frame(pool.render()[0], mirror.env.render(), ("render", t))
            scores.add(f"{int(mirror.u.reward):04d}")
            assert obs[0][80:, :11].min(axis=-1).max() > 150, t  # white digits left of the indicators
        assert len(scores) > 20, scores
    finally:
        pool.close()
