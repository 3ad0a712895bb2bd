"""EnvPool's old task ids (Box2D -v2, MuJoCo -v2/-v3, CliffWalking-v0) and its names of Gymnasium's
functional envs (phys2d/, tabular/) as aliases of our tasks (envpool_ids.py).

Each alias is its base task with the kwargs EnvPool's registration sets, so the check is that the
alias makes exactly that pool: the same spaces and config, and the same outputs step by step from
the same seed as the base task made with those kwargs (Ant-v3: Ant-v4 with use_contact_forces=True,
111 values observed and the contact cost charged, as gym's Ant-v3). The base tasks are compared with
their references (Gymnasium) in their family's tests. EnvPool 1.2.5's spaces for these ids, read by hand
from the installed package, are the table below; its thresholds are Gymnasium 0.29's registrations
(EnvPool gives Hopper-v3 6,000, its Hopper-v4's, where Gymnasium registered 3,800 for both).
"""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest

import parallel_pool
from parallel_pool import tasks
from parallel_pool.envpool_ids import ENVPOOL_ALIASES

# EnvPool 1.2.5's make_spec(id): observation shape and action shape (float64 obs for MuJoCo).
ENVPOOL_SHAPES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "Ant-v3": ((111,), (8,)),
    "HalfCheetah-v3": ((17,), (6,)),
    "Hopper-v3": ((11,), (3,)),
    "Humanoid-v3": ((376,), (17,)),
    "Swimmer-v3": ((8,), (2,)),
    "Walker2d-v3": ((17,), (6,)),
    "HumanoidStandup-v2": ((376,), (17,)),
    "InvertedDoublePendulum-v2": ((11,), (1,)),
    "InvertedPendulum-v2": ((4,), (1,)),
    "Pusher-v2": ((23,), (7,)),
    "Reacher-v2": ((11,), (2,)),
    "LunarLander-v2": ((8,), ()),
    "LunarLanderContinuous-v2": ((8,), (2,)),
    "CarRacing-v2": ((96, 96, 3), (3,)),
    "TicTacToe3d-v5": ((4, 84, 84), ()),
    "CliffWalking-v0": ((), ()),
    "tabular/CliffWalking-v0": ((), ()),
    # EnvPool's Box(3,): the package gives Gymnasium's Tuple (README, "Differences"); as_envpool()'s
    # pools give EnvPool's (tests/frontends/test_envpool_layout.py).
    "tabular/Blackjack-v0": (None, ()),  # type: ignore[dict-item]
    "phys2d/CartPole-v0": ((4,), ()),
    "phys2d/CartPole-v1": ((4,), ()),
    "phys2d/Pendulum-v0": ((3,), (1,)),
}
# Gymnasium 0.29's reward thresholds and time limits for the old ids (None: registered without).
GYMNASIUM_0_29 = {
    "Ant-v3": (6000.0, 1000), "HalfCheetah-v3": (4800.0, 1000), "Hopper-v3": (3800.0, 1000),
    "Humanoid-v3": (None, 1000), "Swimmer-v3": (360.0, 1000), "Walker2d-v3": (None, 1000),
    "HumanoidStandup-v2": (None, 1000), "InvertedDoublePendulum-v2": (9100.0, 1000),
    "InvertedPendulum-v2": (950.0, 1000), "Pusher-v2": (0.0, 100), "Reacher-v2": (-3.75, 50),
    "LunarLander-v2": (200.0, 1000), "LunarLanderContinuous-v2": (200.0, 1000), "CarRacing-v2": (900.0, 1000),
    # Not an old Gymnasium id but EnvPool's spelling of TicTacToe3D-v5: its base task's values.
    "TicTacToe3d-v5": (None, 27000),
    "CliffWalking-v0": (None, 0),
    # EnvPool's names of Gymnasium 1.x's functional envs: their base tasks' values.
    "tabular/CliffWalking-v0": (None, 0), "tabular/Blackjack-v0": (None, 0),
    "phys2d/CartPole-v0": (195.0, 200), "phys2d/CartPole-v1": (475.0, 500), "phys2d/Pendulum-v0": (None, 200),
}
AVAILABLE = [alias for alias in ENVPOOL_ALIASES if alias in parallel_pool.list_all_envs()]


def test_every_alias_is_listed_or_unavailable() -> None:
    assert set(ENVPOOL_ALIASES) == set(ENVPOOL_SHAPES) == set(GYMNASIUM_0_29)
    unavailable = parallel_pool.unavailable_envs()
    for alias, (base, kwargs) in ENVPOOL_ALIASES.items():
        if base in parallel_pool.list_all_envs():
            assert alias in parallel_pool.list_all_envs()
            assert tasks.lookup(alias) == (base, kwargs)
        else:
            assert unavailable[alias] == unavailable[base]


@pytest.mark.parametrize("alias", AVAILABLE)
def test_alias_has_envpools_spaces_and_gymnasiums_threshold(alias: str) -> None:
    base, kwargs = ENVPOOL_ALIASES[alias]
    spec = parallel_pool.make_spec(alias)
    assert (spec.observation_space.shape, spec.action_space.shape) == ENVPOOL_SHAPES[alias]
    theirs = parallel_pool.make_spec(base, **kwargs)
    assert spec.observation_space == theirs.observation_space
    assert spec.action_space == theirs.action_space
    assert dict(spec.env_config) == dict(theirs.env_config)
    assert (spec.reward_threshold, spec.max_episode_steps) == GYMNASIUM_0_29[alias]
    if "/" in alias:  # Gymnasium's ids take one namespace: no parallel_pool/ name
        assert not any(env_id.endswith(alias) for env_id in gymnasium.registry if env_id.startswith("parallel_pool/"))
        return
    registered = gymnasium.spec(f"parallel_pool/{alias}")
    assert registered.reward_threshold == GYMNASIUM_0_29[alias][0]


@pytest.mark.parametrize("alias", AVAILABLE)
def test_alias_steps_as_its_base_task(alias: str) -> None:
    base, kwargs = ENVPOOL_ALIASES[alias]
    steps = 5 if alias.startswith("CarRacing") else 30
    ours = parallel_pool.make(alias, num_envs=2, seed=3)
    theirs = parallel_pool.make(base, num_envs=2, seed=3, **kwargs)
    try:
        np.testing.assert_array_equal(ours.reset()[0], theirs.reset()[0])
        ours.action_space.seed(0)
        for _ in range(steps):
            action = np.stack([ours.action_space.sample() for _ in range(2)])
            a, b = ours.step(action), theirs.step(action)
            for x, y in zip(a[:4], b[:4]):
                np.testing.assert_array_equal(x, y)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("alias", ["Hopper-v3", "LunarLander-v2"])
def test_alias_works_with_make_vec(alias: str) -> None:
    if alias not in AVAILABLE:
        pytest.skip(f"{alias}'s family is not available here")
    vec = gymnasium.make_vec(f"parallel_pool/{alias}", num_envs=2)
    try:
        obs, _ = vec.reset(seed=0)
        assert obs.shape == (2, *ENVPOOL_SHAPES[alias][0])
        vec.step(vec.action_space.sample())
    finally:
        vec.close()


def test_cli_lists_the_aliases() -> None:
    out = subprocess.run([sys.executable, "-m", "parallel_pool.cli", "list"], capture_output=True, text=True,
                         check=True).stdout
    for alias in AVAILABLE:
        base = ENVPOOL_ALIASES[alias][0]
        assert any(line.split()[:1] == [alias] and f"alias of {base}" in line for line in out.splitlines()), alias


def test_register_cannot_take_an_envpool_id() -> None:
    if not AVAILABLE:
        pytest.skip("no alias available here")
    with pytest.raises(ValueError, match="already registered"):
        parallel_pool.register(AVAILABLE[0], "CartPole-v1")

