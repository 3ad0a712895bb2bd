"""The Atari family against ale_py + Gymnasium's AtariPreprocessing, and its kwargs' semantics.

Alignment method: ALE's emulator has no randomness of its own besides sticky actions (ALE's
``StellaEnvironment::reset`` runs a fixed 60 no-op frames after a console reset, and ale_py's
``random_seed`` only feeds its sticky-action RNG). So with ``repeat_action_probability=0`` and
``noop_max=0`` on both sides, a fresh game is the same state whatever the seeds, and both sides
then take the same random actions. The oracle is ``gymnasium.make("ALE/<Game>-v5", frameskip=1,
repeat_action_probability=0)`` in ``AtariPreprocessing(frame_skip=4, noop_max=0, screen_size=84)``
and ``FrameStackObservation(4)``; ours is ``parallel_pool.make("<Game>-v5", noop_max=0,
repeat_action_probability=0, use_fire_reset=False, episodic_life=False, reward_clip=False)``.
When a game ends, the oracle is reset by hand and ours auto-resets on its next step (that step's
action is ignored), and the two continue in step.
"""

from __future__ import annotations

import os
from typing import Any

import ale_py  # a runtime dependency: the ROMs
import cv2  # noqa: F401  (the test extra: Gymnasium's AtariPreprocessing resizes with it; fail, never skip)
import gymnasium
import numpy as np
import pytest

import parallel_pool

gymnasium.register_envs(ale_py)

ALIGN_STEPS = 2000
# Observations must be identical: our resize reproduces OpenCV's INTER_AREA tables and float
# accumulation order, and the grey levels come from ALE's own palette. Measured: 0 differing
# pixels over 2,000 steps of each game below. A nonzero count would be a real change.
MAX_DIFFERING_PIXEL_FRACTION = 0.0
ALIGN_KWARGS = dict(noop_max=0, repeat_action_probability=0.0, use_fire_reset=False, episodic_life=False,
                    reward_clip=False)


def make_oracle(game: str) -> gymnasium.Env:
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    env = gymnasium.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0)
    env = AtariPreprocessing(env, noop_max=0, frame_skip=4, screen_size=84)
    return FrameStackObservation(env, 4)


def check_step(oracle: gymnasium.Env, action: int, batch: tuple, row: int, where: str,
               time_limit_reached: bool = False) -> tuple[np.ndarray, bool]:
    """Steps the oracle with ``action`` and checks row ``row`` of our step's batch against it, all but
    the observation (returned, with whether the episode ended). ``time_limit_reached``: our
    ``max_episode_steps``, shorter than the oracle's, truncates this step."""
    _, reward, terminated, truncated, info = batch
    want_obs, want_reward, want_term, want_trunc, want_info = oracle.step(action)
    want_trunc = want_trunc or time_limit_reached
    assert reward[row] == want_reward, where
    assert terminated[row] == want_term and truncated[row] == want_trunc, where
    assert info["terminated"][row] == want_term, where
    assert info["reward"][row] == want_reward, where
    assert info["lives"][row] == want_info["lives"], where
    # EnvPool's info["ram"]: the console's RAM after the step, as ale_py's getRAM() reads it.
    np.testing.assert_array_equal(info["ram"][row], oracle.unwrapped.ale.getRAM(), err_msg=where)
    return want_obs, want_term or want_trunc


@pytest.mark.parametrize("game", ["Pong", "Breakout", "SpaceInvaders"])
def test_alignment_with_ale_py(game: str) -> None:
    oracle = make_oracle(game)
    env = parallel_pool.make(f"{game}-v5", num_envs=1, seed=0, **ALIGN_KWARGS)
    try:
        assert env.action_space.n == oracle.action_space.n
        want_obs, want_info = oracle.reset(seed=0)
        obs, info = env.reset()
        assert obs.shape == (1, 4, 84, 84) and obs.dtype == np.uint8
        differing = int(np.count_nonzero(obs[0] != want_obs))
        assert info["lives"][0] == want_info["lives"]
        assert info["ram"].shape == (1, 128) and info["ram"].dtype == np.uint8
        np.testing.assert_array_equal(info["ram"][0], oracle.unwrapped.ale.getRAM())
        actions = np.random.default_rng(0).integers(oracle.action_space.n, size=ALIGN_STEPS)
        episodes, pending_reset = 0, False
        for t in range(ALIGN_STEPS):
            action = np.array([actions[t]])
            batch = env.step(action)
            obs, reward, terminated, truncated, info = batch
            if pending_reset:  # our next-step auto-reset; the oracle resets by hand
                want_obs, want_info = oracle.reset()
                assert reward[0] == 0 and not terminated[0] and not truncated[0]
                assert info["lives"][0] == want_info["lives"], f"step {t}"
                pending_reset = False
            else:
                want_obs, pending_reset = check_step(oracle, int(actions[t]), batch, 0, f"step {t}")
                episodes += pending_reset
            differing += int(np.count_nonzero(obs[0] != want_obs))
        total = (ALIGN_STEPS + 1) * 4 * 84 * 84
        assert differing <= MAX_DIFFERING_PIXEL_FRACTION * total, f"{differing} of {total} pixels differ"
    finally:
        env.close()
        oracle.close()


# Async: a time limit short enough that every env's episode ends (and its env auto-resets) within
# the run; the oracle's own limit is far longer, so the check adds ours.
ASYNC_MAX_STEPS = 40
ASYNC_BATCHES = 120


@pytest.mark.parametrize("game", ["Pong", "Breakout"])
def test_alignment_async(game: str, async_rows: Any) -> None:
    """Async mode (4 envs, batches of 2 in whatever order they finish): every env against its own
    oracle, row by row by info["env_id"], each with its own stream of random actions; identical
    observations, as in sync mode (a fresh game is one state whatever the seed: see above)."""
    num_envs = 4
    oracles = [make_oracle(game) for _ in range(num_envs)]
    rngs = [np.random.default_rng([7, i]) for i in range(num_envs)]
    env = parallel_pool.make(f"{game}-v5", num_envs=num_envs, batch_size=2, num_threads=2, seed=0,
                             max_episode_steps=ASYNC_MAX_STEPS, **ALIGN_KWARGS)
    want_obs: dict[int, np.ndarray] = {}
    episode_steps = np.zeros(num_envs, dtype=np.int64)
    ended = np.ones(num_envs, dtype=bool)  # the first row of each env is its reset
    steps = episodes = differing = rows_seen = 0
    try:
        rows = async_rows(env, lambda i, obs: rngs[i].integers(env.action_space.n), ASYNC_BATCHES, seed=7)
        for batch, actions in rows:
            obs, reward, terminated, truncated, info = batch
            for k, i in enumerate(info["env_id"].tolist()):
                where = f"env {i}, episode step {episode_steps[i]}"
                if ended[i]:  # our reset (first, or next-step auto-reset); the oracle resets by hand
                    # (Seeding ale_py reloads the ROM, slow: only the first reset is seeded, as above.)
                    want_obs[i], want_info = oracles[i].reset(seed=0 if i not in want_obs else None)
                    assert reward[k] == 0 and not terminated[k] and not truncated[k], where
                    assert info["lives"][k] == want_info["lives"], where
                    episode_steps[i], ended[i] = 0, False
                else:
                    episode_steps[i] += 1
                    steps += 1
                    want_obs[i], ended[i] = check_step(oracles[i], int(actions[k]), batch, k, where,
                                                       episode_steps[i] == ASYNC_MAX_STEPS)
                    episodes += bool(ended[i])
                differing += int(np.count_nonzero(obs[k] != want_obs[i]))
                rows_seen += 1
    finally:
        env.close()
        for oracle in oracles:
            oracle.close()
    assert differing <= MAX_DIFFERING_PIXEL_FRACTION * rows_seen * 4 * 84 * 84, f"{differing} pixels differ"
    assert steps >= ASYNC_BATCHES * 2 * 0.9 and episodes >= num_envs, (steps, episodes)


def test_every_rom_is_a_task() -> None:
    """One <Game>-v5 per ROM of the wheel that ALE can play: exactly ale_py's own ALE/<Game>-v5 ids.
    (The wheel also ships combat, joust, maze_craze and warlords, which only ALE's multi-agent
    builds play; ale_py registers no single-agent env for them either.)"""
    from ale_py.registration import rom_id_to_name

    rom_dir = os.path.dirname(ale_py.roms.__file__)
    roms = sorted(f[:-4] for f in os.listdir(rom_dir) if f.endswith(".bin"))
    assert len(roms) > 100
    expected = {k[len("ALE/"):] for k in gymnasium.registry if k.startswith("ALE/") and k.endswith("-v5")}
    assert expected <= {f"{rom_id_to_name(r)}-v5" for r in roms}
    atari = {t for t in parallel_pool.list_all_envs() if parallel_pool.make_spec(t).config.get("rom_path")}
    ours = {t for t in atari if parallel_pool.tasks.lookup(t)[0] == t}
    assert ours == expected
    # The one alias: EnvPool's spelling of an id (envpool_aliases.json).
    assert atari - ours == {"TicTacToe3d-v5"}
    assert {"Pong-v5", "Breakout-v5", "SpaceInvaders-v5", "TicTacToe3D-v5"} <= ours


def test_readme_seed_example() -> None:
    env = parallel_pool.make("Pong-v5", num_envs=100)
    try:
        obs, info = env.reset()
        assert obs.shape == (100, 4, 84, 84) and obs.dtype == np.uint8
        result = env.step(np.zeros(100, dtype=np.int64))
        assert len(result) == 5
        obs, reward, terminated, truncated, info = result
        assert obs.shape == (100, 4, 84, 84) and reward.shape == terminated.shape == truncated.shape == (100,)
        assert {"lives", "reward", "terminated", "elapsed_step", "env_id"} <= set(info)
    finally:
        env.close()


def run_stream(num_threads: int, seed: int, steps: int = 150) -> list[np.ndarray]:
    env = parallel_pool.make("Breakout-v5", num_envs=4, num_threads=num_threads, seed=seed,
                             repeat_action_probability=0.25, noop_max=30)
    try:
        out = list(env.reset()[:1])
        actions = np.random.default_rng(1).integers(env.action_space.n, size=(steps, 4))
        for a in actions:
            obs, reward, terminated, truncated, info = env.step(a)
            out += [obs.copy(), reward.copy(), terminated.copy(), info["lives"].copy()]
        return out
    finally:
        env.close()


def test_determinism_with_sticky_actions_and_noop_starts() -> None:
    one = run_stream(num_threads=1, seed=3)
    two = run_stream(num_threads=2, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    other = run_stream(num_threads=2, seed=4)
    assert not all(np.array_equal(a, b) for a, b in zip(one, other)), "the seed changes nothing"


def test_episodic_life_ends_the_agent_episode_not_the_game() -> None:
    env = parallel_pool.make("Breakout-v5", num_envs=1, seed=0, episodic_life=True)
    try:
        _, info = env.reset()
        lives = int(info["lives"][0])
        rng = np.random.default_rng(0)
        for _ in range(3000):
            _, _, terminated, _, info = env.step(rng.integers(env.action_space.n, size=1))
            if terminated[0]:
                break
        assert terminated[0], "no life lost in 3,000 steps"
        assert not info["terminated"][0] and info["lives"][0] == lives - 1
        _, reward, terminated, _, info = env.step(np.zeros(1, dtype=np.int64))  # the auto-reset
        assert info["elapsed_step"][0] == 0 and info["lives"][0] == lives - 1, "the game restarted"
    finally:
        env.close()


def test_last_life_ends_episode_false_plays_on_to_the_game_over() -> None:
    """EnvPool's episodic_life rule: in Atlantis, ALE shows 0 lives for a while before the game is
    over; with last_life_ends_episode=False that stretch stays in the last episode, which ends at
    the game over; with the default, the step that loses the last life ends it."""
    runs = {}
    for last_ends in (True, False):
        env = parallel_pool.make("Atlantis-v5", num_envs=1, seed=0, episodic_life=True,
                                 last_life_ends_episode=last_ends)
        try:
            env.reset()
            rng = np.random.default_rng(0)
            trace = []
            for _ in range(20000):
                _, _, terminated, truncated, info = env.step(rng.integers(env.action_space.n, size=1))
                trace.append((int(info["lives"][0]), bool(terminated[0]), bool(info["terminated"][0])))
                if info["terminated"][0]:
                    break
            runs[last_ends] = trace
        finally:
            env.close()
    # The same game either way up to the last life lost (after it, the default's next step is the
    # auto-reset, which takes no action, so the two games part).
    lives = [t[0] for t in runs[False]]
    last_loss = lives.index(0)
    assert [t[0] for t in runs[True][: last_loss + 1]] == lives[: last_loss + 1]
    assert runs[False][-1][2], "no game over in 20,000 steps"
    assert last_loss < len(lives) - 1, "the game ended on the step that lost the last life"
    assert runs[True][last_loss][1]  # the default: the last life lost ends the episode
    # EnvPool's: not there, nor anywhere before the game over but where a life (not the last) was lost.
    ends = [i for i, t in enumerate(runs[False]) if t[1]]
    losses = [i for i in range(1, len(lives)) if 0 < lives[i] < lives[i - 1]]
    assert ends == [*losses, len(lives) - 1]


def test_life_loss_without_episodic_life_and_zero_discount() -> None:
    env = parallel_pool.make("Breakout-v5", env_type="dm", num_envs=1, seed=0, zero_discount_on_life_loss=True)
    try:
        ts = env.reset()
        rng = np.random.default_rng(0)
        for _ in range(3000):
            ts = env.step(rng.integers(env.action_spec().num_values, size=1))
            if ts.observation.life_loss[0]:
                break
        assert ts.observation.life_loss[0], "no life lost in 3,000 steps"
        assert ts.step_type[0] == 1 and ts.discount[0] == 0.0  # MID: the episode goes on
    finally:
        env.close()


def test_reward_clip_keeps_the_raw_reward_in_info() -> None:
    env = parallel_pool.make("SpaceInvaders-v5", num_envs=2, seed=0, reward_clip=True)
    try:
        env.reset()
        rng = np.random.default_rng(0)
        raw = []
        for _ in range(300):
            _, reward, _, _, info = env.step(rng.integers(env.action_space.n, size=2))
            np.testing.assert_array_equal(reward, np.sign(info["reward"]))
            raw.extend(info["reward"])
        assert max(raw) > 1, "no reward above 1 to clip"
    finally:
        env.close()


@pytest.mark.parametrize(("kwargs", "shape"), [
    ({}, (4, 84, 84)),
    ({"gray_scale": False}, (12, 84, 84)),
    ({"img_height": 64, "img_width": 48, "stack_num": 2}, (2, 64, 48)),
    ({"img_height": 210, "img_width": 160, "stack_num": 1}, (1, 210, 160)),
])
def test_observation_shapes(kwargs: dict, shape: tuple) -> None:
    env = parallel_pool.make("Pong-v5", num_envs=2, **kwargs)
    try:
        assert env.observation_space.shape == shape
        obs, _ = env.reset()
        assert obs.shape == (2, *shape)
        obs, *_ = env.step(np.zeros(2, dtype=np.int64))
        assert obs.shape == (2, *shape) and obs.any()
    finally:
        env.close()


def test_rgb_frames_match_gray_frames() -> None:
    """gray_scale=False is (stack * 3, H, W) with each frame as R, G, B planes (EnvPool's layout)."""
    kwargs = dict(num_envs=1, seed=0, noop_max=0, img_height=210, img_width=160, stack_num=1, frame_skip=1)
    gray_env = parallel_pool.make("Pong-v5", **kwargs)
    rgb_env = parallel_pool.make("Pong-v5", gray_scale=False, **kwargs)
    try:
        gray, _ = gray_env.reset()
        rgb, _ = rgb_env.reset()
        oracle = gymnasium.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0, obs_type="rgb")
        screen, _ = oracle.reset(seed=0)
        oracle.unwrapped.ale.act(1)  # use_fire_reset's FIRE frame
        screen = oracle.unwrapped.ale.getScreenRGB()
        np.testing.assert_array_equal(rgb[0].transpose(1, 2, 0), screen)
        np.testing.assert_array_equal(gray[0, 0], oracle.unwrapped.ale.getScreenGrayscale())
        oracle.close()
    finally:
        gray_env.close()
        rgb_env.close()


def test_full_action_space() -> None:
    assert parallel_pool.make_spec("Pong-v5").action_space.n == 6
    env = parallel_pool.make("Pong-v5", num_envs=1, full_action_space=True)
    try:
        assert env.action_space.n == 18
        env.reset()
        env.step(np.array([17]))
    finally:
        env.close()


def test_max_episode_steps_truncates() -> None:
    env = parallel_pool.make("Pong-v5", num_envs=1, max_episode_steps=50)
    try:
        env.reset()
        for t in range(1, 51):
            _, _, terminated, truncated, info = env.step(np.zeros(1, dtype=np.int64))
            assert info["elapsed_step"][0] == t
            assert truncated[0] == (t == 50) and not terminated[0]
        assert parallel_pool.make_spec("Pong-v5").config["max_episode_steps"] == 27000
    finally:
        env.close()


def test_fire_reset_launches_the_ball() -> None:
    """Breakout waits for FIRE: without use_fire_reset a no-op agent sees a still screen."""
    frames = {}
    for fire in (False, True):
        env = parallel_pool.make("Breakout-v5", num_envs=1, noop_max=0, use_fire_reset=fire)
        env.reset()
        for _ in range(20):
            obs, *_ = env.step(np.zeros(1, dtype=np.int64))
        frames[fire] = obs[0].copy()
        env.close()
    assert np.array_equal(frames[False][0], frames[False][-1]), "the ball moved without FIRE"
    assert not np.array_equal(frames[True][0], frames[True][-1]), "FIRE at reset did not launch the ball"


@pytest.mark.parametrize("kwargs", [
    {"img_height": 0}, {"img_width": 161}, {"stack_num": 0}, {"frame_skip": 0}, {"noop_max": -1},
    {"repeat_action_probability": 1.5}, {"repeat_action_probability": -0.1}, {"mode": 1000},
])
def test_bad_kwargs_raise_value_error(kwargs: dict) -> None:
    key = next(iter(kwargs))
    with pytest.raises(ValueError, match=key):
        parallel_pool.make("Pong-v5", num_envs=1, **kwargs)


def test_unknown_kwarg_lists_valid_ones() -> None:
    with pytest.raises((ValueError, TypeError), match="stack_num"):
        parallel_pool.make("Pong-v5", num_envs=1, stack_size=4)


@pytest.mark.parametrize("game", ["Breakout", "SpaceInvaders"])
def test_render_matches_ale_py_screen(game: str) -> None:
    """env.render() is the current RGB screen: ale_py's getScreenRGB after the same frames."""
    env = parallel_pool.make(f"{game}-v5", num_envs=2, seed=0, noop_max=0, repeat_action_probability=0.0,
                             use_fire_reset=False)
    oracle = gymnasium.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0)
    try:
        env.reset()
        oracle.reset(seed=0)
        ale = oracle.unwrapped.ale
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8
        np.testing.assert_array_equal(frames[0], ale.getScreenRGB())
        actions = np.random.default_rng(0).integers(env.action_space.n, size=100)
        action_set = oracle.unwrapped._action_set
        for a in actions:
            _, _, terminated, _, _ = env.step(np.array([a, a]))
            for _ in range(4):
                ale.act(action_set[a])
                if ale.game_over():
                    break
            if terminated[0]:
                break
            np.testing.assert_array_equal(env.render(env_id=[1])[0], ale.getScreenRGB())
    finally:
        env.close()
        oracle.close()
