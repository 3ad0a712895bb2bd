"""``render()`` of the native toy-text tasks against Gymnasium's ``render_mode="rgb_array"`` frames.

The native envs draw Gymnasium's own sprites (read from the installed gymnasium, decoded by
``native/envs/common/png.h``) with ``pygame_raster.h``'s scale, blit and rect (each checked against
pygame in tests/envs/common/test_pygame_sprites.py) and, in Gymnasium 1.1 to 1.3's art, Blackjack's text with
``pygame_text.h``, in the order and layout the installed Gymnasium's ``render`` has: 1.4 redrew the
art (its files tell the family which layout to draw), so these tests compare with whichever Gymnasium
is installed, and the window shapes are chosen by its version. Env ``i`` of
a pool made with ``seed=s`` is mirrored by a Gymnasium env made with ``render_mode="rgb_array"`` and
first reset with ``seed=s + i`` (next-step autoreset, as in tests/envs/toy_text/test_toy_text.py); both take the
same random actions and their frames must be **equal**, pixel for pixel, over full episodes. Some
cases render only every few steps: Taxi's cab faces the last move a render saw, in both.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np
import pytest
from async_batches import run_async_batches
from gymnasium.envs.toy_text.frozen_lake import generate_random_map

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")  # Gymnasium's render() calls pygame.init()

import parallel_pool  # noqa: E402

GYMNASIUM = tuple(int(part) for part in gymnasium.__version__.split(".")[:2])
ART_14 = GYMNASIUM >= (1, 4)  # Gymnasium 1.4's redrawn toy-text art and layouts
TAXI = "Taxi-v4" if GYMNASIUM >= (1, 3) else "Taxi-v3"  # the taxi the installed Gymnasium registers
OTHER_TAXI = "Taxi-v3" if TAXI == "Taxi-v4" else "Taxi-v4"
NEEDS_TAXI_V3 = pytest.mark.skipif(
    TAXI != "Taxi-v3",
    reason=f"Gymnasium {gymnasium.__version__} has no Taxi-v3 to draw a rainy Taxi-v3 (1.3 renamed it Taxi-v4): "
    "compared under gymnasium<1.3; here the Taxi-v4 cases and test_other_taxi_id_frames_match draw the taxi",
)
NEEDS_TAXI_V4 = pytest.mark.skipif(
    TAXI != "Taxi-v4",
    reason=f"Gymnasium {gymnasium.__version__} has no Taxi-v4 (added in 1.3): compared under gymnasium>=1.3; "
    "here the Taxi-v3 cases and test_other_taxi_id_frames_match draw the taxi",
)


class Mirror:
    """Gymnasium's env ``i`` of a pool, rendering: reset with ``seed + i``, next-step autoreset."""

    def __init__(self, task_id: str, kwargs: dict[str, Any], seed: int) -> None:
        if task_id.startswith("FrozenLake") and kwargs.get("map_name", "") is None and kwargs.get("desc") is None:
            # A random map: env i's is generate_random_map(seed=s + i), s its seed at its first reset.
            kwargs = {**kwargs, "desc": generate_random_map(seed=seed)}
        if task_id.startswith("Taxi"):
            # Only one taxi id is in each Gymnasium: the other is compared with it where their rules
            # agree (no rain), see test_other_taxi_id_frames_match.
            assert task_id == TAXI or not kwargs.get("is_rainy"), (task_id, kwargs)
            task_id = TAXI
        self.env = gymnasium.make(task_id, render_mode="rgb_array", **kwargs)
        self.seed: int | None = seed
        self.done = True
        self.last_action: int | None = None

    def step(self, action: int | None) -> Any:
        if self.done:
            obs, _ = self.env.reset(seed=self.seed)
            self.seed = None
            self.done = False
            return obs
        assert action is not None
        obs, _, terminated, truncated, _ = self.env.step(action)
        self.done = bool(terminated or truncated)
        return obs


def row(obs: Any, i: int) -> Any:
    """Env i's observation: an int, or Blackjack's tuple of ints."""
    return tuple(int(o[i]) for o in obs) if isinstance(obs, tuple) else int(obs[i])


def as_row(obs: Any) -> Any:
    return tuple(int(o) for o in obs) if isinstance(obs, tuple) else int(obs)


def assert_same_frame(ours: np.ndarray, theirs: np.ndarray, tag: Any) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.uint8, (tag, ours.shape, theirs.shape)
    if not np.array_equal(ours, theirs):
        where = np.argwhere((ours != theirs).any(axis=-1))
        pytest.fail(f"{tag}: {len(where)} pixels differ, first at (row, col) {where[0].tolist()}")


def run_sync(task_id: str, kwargs: dict[str, Any], n: int, steps: int, seed: int, render_every: int) -> dict[str, int]:
    pool = parallel_pool.make(task_id, num_envs=n, seed=seed, render_mode="rgb_array", **kwargs)
    mirrors = [Mirror(task_id, kwargs, seed + i) for i in range(n)]
    rng = np.random.default_rng(seed)
    num_actions = int(pool.action_space.n)
    counts = {"frames": 0, "episodes": 0, "usable_aces": 0}
    try:
        obs, _ = pool.reset()
        actions: np.ndarray | None = None
        for t in range(steps + 1):
            if actions is not None:
                obs, _, terminated, truncated, _ = pool.step(actions)
                counts["episodes"] += int(np.sum(terminated | truncated))
            for i, m in enumerate(mirrors):
                their_obs = m.step(None if actions is None else int(actions[i]))
                assert row(obs, i) == as_row(their_obs), (task_id, kwargs, t, i)
            if t % render_every == 0:
                ours = pool.render(np.arange(pool.num_envs))
                for i, m in enumerate(mirrors):
                    assert_same_frame(ours[i], m.env.render(), (task_id, kwargs, seed, t, i))
                    counts["frames"] += 1
                    counts["usable_aces"] += int(isinstance(obs, tuple) and obs[2][i])
            actions = rng.integers(0, num_actions, n)
            if task_id.startswith("CliffWalking") and t % 2 == 0:
                # Random walks rarely reach the goal: every other step goes up, right or down along
                # the cliff's edge, as the shortest path does (episodes end; slips still fall).
                actions = np.array([CLIFF_PATH[(t // 2) % len(CLIFF_PATH)]] * n)
    finally:
        pool.close()
    return counts


CLIFF_PATH = [0] + [1] * 11 + [2]  # UP, RIGHT x 11, DOWN


# (task id, kwargs, steps, render every)
CASES: list[tuple[str, dict[str, Any], int, int]] = [
    ("FrozenLake-v1", {}, 200, 1),
    ("FrozenLake-v1", {"is_slippery": False}, 200, 2),
    ("FrozenLake8x8-v1", {}, 300, 1),
    ("FrozenLake-v1", {"desc": ["SFFHF", "FHFFG", "FFFFH"], "success_rate": 0.8}, 200, 1),
    # 512 // 10 = 51-pixel cells: the window's last 2 columns are never drawn (black), as Gymnasium's.
    ("FrozenLake-v1", {"desc": ["SFFFFFFFFH", "FFFHFFFFFG"], "is_slippery": False}, 200, 1),
    ("FrozenLake-v1", {"desc": generate_random_map(size=9, p=0.85, seed=4)}, 200, 1),  # 56-pixel cells
    ("FrozenLake-v1", {"map_name": None}, 200, 1),  # random maps, one per env
    # Gymnasium 1.2's Taxi frame takes ~14 ms to draw: fewer frames, each past the 200-step time limit.
    (TAXI, {}, 230, 1),
    (TAXI, {}, 400, 3),  # the cab faces the last move a render saw
    ("Taxi-v3", {"is_rainy": True, "fickle_passenger": True}, 230, 2),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True}, 230, 2),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True, "rainy_probability": 0.5, "fickle_probability": 1.0},
     230, 2),
    ("CliffWalking-v1", {}, 300, 1),
    ("CliffWalkingSlippery-v1", {}, 300, 1),
    ("CliffWalking-v1", {"is_slippery": True}, 200, 4),
    # The dealer's card (suit, and J/Q/K for a 10) and, up to Gymnasium 1.3, text in Minecraft.ttf
    # (common/pygame_text.h); in 1.4, digit and label sprites.
    ("Blackjack-v1", {}, 60, 1),
    ("Blackjack-v1", {"natural": True, "sab": False}, 40, 1),
]
CASE_PARAMS = [
    pytest.param(*c, id=f"{c[0]}-{i}", marks={"Taxi-v3": [NEEDS_TAXI_V3], "Taxi-v4": [NEEDS_TAXI_V4]}.get(c[0], []))
    for i, c in enumerate(CASES)
]


@pytest.mark.parametrize(("task_id", "kwargs", "steps", "render_every"), CASE_PARAMS)
def test_frames_match_gymnasium(task_id: str, kwargs: dict[str, Any], steps: int, render_every: int) -> None:
    counts = run_sync(task_id, kwargs, 3, steps, seed=10 + steps + render_every, render_every=render_every)
    assert counts["frames"] == 3 * (steps // render_every + 1)
    assert counts["episodes"] >= 1  # frames after an autoreset were compared too
    if task_id == "Blackjack-v1":
        assert counts["usable_aces"] >= 1  # frames with the "usable ace" line too


@pytest.mark.parametrize("kwargs", [{}, {"fickle_passenger": True}], ids=["dry", "fickle"])
def test_other_taxi_id_frames_match(kwargs: dict[str, Any]) -> None:
    """The taxi id the installed Gymnasium lacks (Taxi-v4 before 1.3, Taxi-v3 from 1.3 on), without
    rain (where both ids have the same rules), against the taxi it has: the same frames."""
    counts = run_sync(OTHER_TAXI, kwargs, 2, 230, seed=5, render_every=2)
    assert counts["frames"] == 2 * (230 // 2 + 1) and counts["episodes"] >= 1


@pytest.mark.parametrize(
    ("task_id", "kwargs", "batches"),
    [
        ("FrozenLake8x8-v1", {}, 300),
        (TAXI, {"is_rainy": True, "fickle_passenger": True}, 100),
        ("CliffWalkingSlippery-v1", {}, 300),
        ("Blackjack-v1", {}, 60),
    ],
)
def test_frames_match_gymnasium_async(task_id: str, kwargs: dict[str, Any], batches: int) -> None:
    """An async pool (batch_size = num_envs / 2, two threads), rendering the envs of each batch it
    receives while the others step."""
    n = 6
    pool = parallel_pool.make(
        task_id, num_envs=n, batch_size=n // 2, num_threads=2, seed=21, render_mode="rgb_array", **kwargs
    )
    mirrors = [Mirror(task_id, kwargs, 21 + i) for i in range(n)]
    rng = np.random.default_rng(1)
    frames = 0

    def next_actions(_: int, batch: tuple) -> np.ndarray:
        nonlocal frames
        obs, env_ids = batch[0], batch[4]["env_id"]
        ours = pool.render(env_ids)
        actions = rng.integers(0, int(pool.action_space.n), len(env_ids))
        for k, i in enumerate(env_ids):
            m = mirrors[int(i)]
            assert row(obs, k) == as_row(m.step(m.last_action)), (task_id, int(i))
            assert_same_frame(ours[k], m.env.render(), (task_id, "async", int(i)))
            frames += 1
            m.last_action = int(actions[k])
        return actions

    run_async_batches(pool, batches, next_actions)
    assert frames == batches * n // 2


# The windows of Gymnasium 1.1-1.3 and of 1.4 (FrozenLake's are the same in both).
TAXI_SHAPE = (456, 536, 3) if ART_14 else (350, 550, 3)
CLIFF_SHAPE = (256, 768, 3) if ART_14 else (240, 720, 3)
BLACKJACK_SHAPE = (376, 384, 3) if ART_14 else (500, 600, 3)


@pytest.mark.parametrize(
    ("task_id", "kwargs", "shape"),
    [
        ("FrozenLake-v1", {}, (256, 256, 3)),
        ("FrozenLake8x8-v1", {}, (512, 512, 3)),
        ("FrozenLake-v1", {"map_name": None}, (512, 512, 3)),
        ("FrozenLake-v1", {"desc": ["SFFHF", "FHFFG", "FFFFH"]}, (192, 320, 3)),
        ("FrozenLake-v1", {"desc": ["SF"] * 3 + ["FG"] * 7}, (512, 128, 3)),
        ("Taxi-v3", {}, TAXI_SHAPE),
        ("Taxi-v4", {}, TAXI_SHAPE),
        ("CliffWalking-v1", {}, CLIFF_SHAPE),
        ("CliffWalkingSlippery-v1", {}, CLIFF_SHAPE),
        ("Blackjack-v1", {}, BLACKJACK_SHAPE),
    ],
)
def test_render_shape_and_mode(task_id: str, kwargs: dict[str, Any], shape: tuple[int, int, int]) -> None:
    env = parallel_pool.make(task_id, num_envs=2, seed=0, **kwargs)
    try:
        assert env.render_mode == "rgb_array"
        assert env.spec.render_shape == shape
        env.reset()
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (2, *shape) and frames.dtype == np.uint8
        theirs = Mirror(task_id, kwargs, 0)
        theirs.step(None)
        np.testing.assert_array_equal(frames[0], theirs.env.render())
    finally:
        env.close()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_pool.make(task_id, num_envs=1, render_mode="human", **kwargs)


def test_the_family_needs_only_the_folder_every_gymnasium_has() -> None:
    # Gymnasium 1.4 redrew the toy-text art (other file names under img/, no font/). The family
    # declares only gymnasium's envs/toy_text, so its tasks load and step with any Gymnasium from 1.1
    # on; render() draws the art that folder holds, and a missing file fails only render(), saying
    # so (native/envs/toy_text/toy_text_test.cc renders without them).
    from parallel_pool import _native, families

    (library,) = [path for path in families.installed_families() if os.path.basename(path) == "toy_text.so"]
    assert [tuple(r) for r in _native.library_resources(library)] == [("toy_text_dir", "gymnasium", "envs/toy_text")]
    with parallel_pool.make_gymnasium("FrozenLake-v1", num_envs=2) as env:
        env.reset(seed=0)
        assert env.render(np.arange(env.num_envs)).shape == (2, 256, 256, 3)
