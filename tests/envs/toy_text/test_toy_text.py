"""The toy-text family against Gymnasium 1.x's toy-text envs: transition tables, trajectories,
spaces and info, env by env.

The envs draw from NumPy's stream (core/numpy_random.h) in Gymnasium's order, so a pool seeded
with ``s`` replays, env by env, Gymnasium's env ``i`` reset with seed ``s + i``: every comparison
here is exact (no tolerance). Actions come from a fixed NumPy generator.

Each Gymnasium registers one taxi: Taxi-v3 up to 1.2, Taxi-v4 from 1.3 on (is_rainy and
fickle_passenger fixed, their probabilities as kwargs). We register both, so each is compared where
Gymnasium has it, and both are compared with the installed one where their rules agree.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import generate_random_map

import parallel_pool

SEEDS = [0, 1, 7, 2**32 + 5]
NUM_ENVS = 4

GYMNASIUM = tuple(int(part) for part in gymnasium.__version__.split(".")[:2])
TAXI = "Taxi-v4" if GYMNASIUM >= (1, 3) else "Taxi-v3"  # the taxi the installed Gymnasium registers
OTHER_TAXI = "Taxi-v3" if TAXI == "Taxi-v4" else "Taxi-v4"
NEEDS_TAXI_V3 = pytest.mark.skipif(
    TAXI != "Taxi-v3",
    reason=f"Gymnasium {gymnasium.__version__} has no Taxi-v3 (1.3 renamed it Taxi-v4 and changed is_rainy): "
    "Taxi-v3's own rules are compared under gymnasium<1.3; here test_taxi_ids_agree_where_their_rules_do "
    "compares it with Taxi-v4",
)
NEEDS_TAXI_V4 = pytest.mark.skipif(
    TAXI != "Taxi-v4",
    reason=f"Gymnasium {gymnasium.__version__} has no Taxi-v4 (added in 1.3): Taxi-v4's own rules are compared "
    "under gymnasium>=1.3; here test_taxi_ids_agree_where_their_rules_do compares it with Taxi-v3",
)

# (task id, kwargs): every kwarg and its combinations.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("FrozenLake-v1", {}),
    ("FrozenLake-v1", {"is_slippery": False}),
    ("FrozenLake-v1", {"map_name": "8x8", "success_rate": 0.75}),
    ("FrozenLake-v1", {"success_rate": 0.9, "reward_schedule": (10, -5, -1)}),
    ("FrozenLake-v1", {"is_slippery": False, "reward_schedule": (2.5, -1.0, -0.01)}),
    ("FrozenLake-v1", {"desc": ["SFFH", "FHFF", "FFFG"]}),
    ("FrozenLake-v1", {"desc": generate_random_map(size=6, p=0.7, seed=3), "success_rate": 0.5}),
    ("FrozenLake-v1", {"desc": ["SSF", "FHG"]}),  # two starts: the start is drawn
    ("FrozenLake8x8-v1", {}),
    ("FrozenLake8x8-v1", {"is_slippery": False}),
    ("Taxi-v3", {}),
    ("Taxi-v3", {"is_rainy": True}),
    ("Taxi-v3", {"fickle_passenger": True}),
    ("Taxi-v3", {"is_rainy": True, "fickle_passenger": True}),
    ("Taxi-v4", {}),
    ("Taxi-v4", {"is_rainy": True}),
    ("Taxi-v4", {"fickle_passenger": True}),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True}),
    ("Taxi-v4", {"is_rainy": True, "rainy_probability": 0.6}),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True, "rainy_probability": 0.95, "fickle_probability": 0.9}),
    ("Taxi-v4", {"is_rainy": True, "fickle_passenger": True, "rainy_probability": 1.0, "fickle_probability": 0.0}),
    ("CliffWalking-v1", {}),
    ("CliffWalking-v1", {"is_slippery": True}),
    ("CliffWalkingSlippery-v1", {}),
    ("Blackjack-v1", {}),
    ("Blackjack-v1", {"sab": False}),
    ("Blackjack-v1", {"sab": False, "natural": True}),
]
CASE_PARAMS = [
    pytest.param(t, kwargs, id=f"{t}-{i}", marks={"Taxi-v3": [NEEDS_TAXI_V3], "Taxi-v4": [NEEDS_TAXI_V4]}.get(t, []))
    for i, (t, kwargs) in enumerate(CASES)
]
TIME_LIMITS = {"FrozenLake-v1": 100, "FrozenLake8x8-v1": 200, "Taxi-v3": 200, "Taxi-v4": 200}


def gym_make(task_id: str, **kwargs: Any) -> gymnasium.Env:
    return gymnasium.make(task_id, **kwargs)


def as_row(obs: Any) -> Any:
    return tuple(int(x) for x in obs) if isinstance(obs, tuple) else int(obs)


def row_of(obs: Any, i: int) -> Any:
    return tuple(int(x[i]) for x in obs) if isinstance(obs, tuple) else int(obs[i])


def check_info(task_id: str, info: dict[str, Any], i: int, theirs: dict[str, Any]) -> None:
    keys = set(info) - {"env_id", "elapsed_step"}
    assert keys == set(theirs), (keys, set(theirs))
    if "prob" in theirs:
        assert info["prob"][i] == theirs["prob"]
    if "action_mask" in theirs:
        np.testing.assert_array_equal(info["action_mask"][i], theirs["action_mask"])
        assert info["action_mask"].dtype == theirs["action_mask"].dtype


class Reference:
    """Gymnasium's env ``i`` of a pool, with the pool's next-step autoreset: the step after an
    episode ends is a reset (reward 0, the action ignored), as Gymnasium's vector envs do it."""

    def __init__(self, task_id: str, kwargs: dict[str, Any], seed: int) -> None:
        self.env = gym_make(task_id, **kwargs)
        self.seed = seed
        self.done = False

    def reset(self) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, info = self.env.reset(seed=self.seed)
        self.done = False
        return as_row(obs), 0.0, False, False, info

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.done:
            obs, info = self.env.reset()
            self.done = False
            return as_row(obs), 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.done = terminated or truncated
        return as_row(obs), float(reward), terminated, truncated, info


def references(task_id: str, kwargs: dict[str, Any], seed: int, n: int) -> list[Reference]:
    if task_id.startswith("FrozenLake") and kwargs.get("map_name", "") is None and kwargs.get("desc") is None:
        # A random map: env i's is generate_random_map(seed=s + i), s its seed at its first reset.
        return [Reference(task_id, {**kwargs, "desc": generate_random_map(seed=seed + i)}, seed + i) for i in range(n)]
    return [Reference(task_id, kwargs, seed + i) for i in range(n)]


def compare_sync(
    task_id: str, kwargs: dict[str, Any], seed: int, steps: int, stay: bool = False, reference_id: str | None = None
) -> dict[str, int]:
    """Steps a pool and Gymnasium's envs (``reference_id``, by default the same id) side by side:
    random actions, or with ``stay`` always action 0 (FrozenLake: left, so the walk stays near the
    start until the time limit)."""
    pool = parallel_pool.make(task_id, num_envs=NUM_ENVS, seed=seed, **kwargs)
    refs = references(reference_id or task_id, kwargs, seed, NUM_ENVS)
    num_actions = int(pool.action_space.n)
    rng = np.random.default_rng(seed)
    counts = {"terminated": 0, "truncated": 0}
    try:
        obs, info = pool.reset()
        for i, ref in enumerate(refs):
            their_obs, _, _, _, their_info = ref.reset()
            assert row_of(obs, i) == their_obs
            check_info(task_id, info, i, their_info)
        for t in range(steps):
            actions = np.zeros(NUM_ENVS, np.int64) if stay else rng.integers(0, num_actions, NUM_ENVS)
            obs, reward, terminated, truncated, info = pool.step(actions)
            for i, ref in enumerate(refs):
                theirs = ref.step(int(actions[i]))
                where = f"{task_id} {kwargs} seed {seed} env {i} step {t}"
                assert row_of(obs, i) == theirs[0], where
                assert reward[i] == theirs[1], where
                assert bool(terminated[i]) == theirs[2], where
                assert bool(truncated[i]) == theirs[3], where
                check_info(task_id, info, i, theirs[4])
                counts["terminated"] += int(theirs[2])
                counts["truncated"] += int(theirs[3])
    finally:
        pool.close()
    return counts


@pytest.mark.parametrize(("task_id", "kwargs"), CASE_PARAMS)
def test_transition_table_is_gymnasiums(task_id: str, kwargs: dict[str, Any]) -> None:
    ours = parallel_pool.make_spec(task_id, **kwargs)
    theirs = gym_make(task_id, **kwargs).unwrapped
    if task_id.startswith("Blackjack"):
        with pytest.raises(AttributeError):
            ours.transition_table()
        return
    table = ours.transition_table()
    assert table == theirs.P  # type: ignore[attr-defined]
    pool = parallel_pool.make(task_id, num_envs=1, **kwargs)
    try:
        assert pool.P == theirs.P  # type: ignore[attr-defined]
    finally:
        pool.close()


@pytest.mark.parametrize("seed", range(12))
def test_random_maps_are_gymnasiums(seed: int) -> None:
    """generate_random_map's draws (choice with p over a board, retried until valid) and the
    tables of the maps it makes, for several sizes and frozen probabilities."""
    size, p = [(4, 0.8), (8, 0.8), (5, 0.5), (11, 0.9)][seed % 4]
    desc = generate_random_map(size=size, p=p, seed=seed)
    for slippery in (True, False):
        ours = parallel_pool.make_spec("FrozenLake-v1", desc=desc, is_slippery=slippery).transition_table()
        assert ours == gym_make("FrozenLake-v1", desc=desc, is_slippery=slippery).unwrapped.P  # type: ignore[attr-defined]


@pytest.mark.parametrize(("task_id", "kwargs"), CASE_PARAMS)
def test_trajectories_are_gymnasiums(task_id: str, kwargs: dict[str, Any]) -> None:
    steps = 2 * TIME_LIMITS.get(task_id, 150) + 17  # past the time limit, episodes restart
    counts = {"terminated": 0, "truncated": 0}
    for seed in SEEDS:
        for key, value in compare_sync(task_id, kwargs, seed, steps).items():
            counts[key] += value
    # The comparison covered episode ends (random actions rarely finish a taxi ride or a cliff
    # walk, but meet the taxi's time limit; the cliff walks fall off the cliff, -100, many times).
    assert counts["terminated"] > 0 or task_id.startswith(("Taxi", "CliffWalking"))
    if task_id.startswith("Taxi"):
        assert counts["truncated"] > 0


# Without rain the two taxis have the same table, draws and info (the fickle passenger too: one draw
# at reset, 0.3 by default, and one at the first move with the passenger aboard).
@pytest.mark.parametrize("kwargs", [{}, {"fickle_passenger": True}], ids=["dry", "fickle"])
@pytest.mark.parametrize("task_id", ["Taxi-v3", "Taxi-v4"])
def test_taxi_ids_agree_where_their_rules_do(task_id: str, kwargs: dict[str, Any]) -> None:
    """Both taxi ids against the one taxi the installed Gymnasium has (Taxi-v3 or Taxi-v4)."""
    ours = parallel_pool.make_spec(task_id, **kwargs).transition_table()
    assert ours == gym_make(TAXI, **kwargs).unwrapped.P  # type: ignore[attr-defined]
    counts = {"truncated": 0}
    for seed in SEEDS[:2]:
        counts["truncated"] += compare_sync(task_id, kwargs, seed, 417, reference_id=TAXI)["truncated"]
    assert counts["truncated"] > 0


def test_taxi_v4_rain_differs_from_v3() -> None:
    """Gymnasium 1.3 fixed the rain (slips to the navigational left and right, blocked moves never
    slip): only the rainy tables differ between the ids, and only v4 takes the probabilities."""
    v3 = parallel_pool.make_spec("Taxi-v3", is_rainy=True).transition_table()
    v4 = parallel_pool.make_spec("Taxi-v4", is_rainy=True).transition_table()
    assert v3 != v4
    # (1 - 0.8) / 2 in doubles: 0.09999999999999998, as Gymnasium computes it.
    assert [p for p, *_ in v4[0][0]] == [0.8, (1.0 - 0.8) / 2.0, (1.0 - 0.8) / 2.0]
    assert [p for p, *_ in v3[0][0]] == [0.8, 0.1, 0.1]
    for key in ("rainy_probability", "fickle_probability"):
        with pytest.raises(ValueError, match=key):
            parallel_pool.make_spec("Taxi-v3", **{key: 0.5})
        with pytest.raises(ValueError, match=key):
            parallel_pool.make_spec("Taxi-v4", **{key: 1.5})


@pytest.mark.parametrize("task_id", ["FrozenLake-v1", "FrozenLake8x8-v1"])
def test_time_limit_is_gymnasiums(task_id: str) -> None:
    """Walking left: not slippery the walk never leaves the start; slippery it drifts and ends
    some episodes. Both past the time limit, truncation and autoreset as Gymnasium's."""
    for slippery in (False, True):
        counts = compare_sync(task_id, {"is_slippery": slippery}, 5, 2 * TIME_LIMITS[task_id] + 3, stay=True)
        assert counts["truncated"] > 0 or slippery


def test_random_map_is_drawn_from_the_envs_seed() -> None:
    """desc=None, map_name=None: env i's map is generate_random_map(seed=s + i)."""
    counts = compare_sync("FrozenLake-v1", {"desc": None, "map_name": None}, 11, 250)
    assert counts["terminated"] > 0
    with pytest.raises(AttributeError, match="random map"):
        parallel_pool.make_spec("FrozenLake-v1", map_name=None).transition_table()


@pytest.mark.parametrize("task_id", ["FrozenLake-v1", TAXI, "Blackjack-v1"])
def test_async_pool_matches_env_by_env(task_id: str) -> None:
    n, batch = 6, 2
    kwargs: dict[str, Any] = {"is_rainy": True, "fickle_passenger": True} if task_id.startswith("Taxi") else {}
    pool = parallel_pool.make(task_id, num_envs=n, batch_size=batch, num_threads=2, seed=3, **kwargs)
    refs = references(task_id, kwargs, 3, n)
    rng = np.random.default_rng(0)
    num_actions = int(pool.action_space.n)
    try:
        pool.async_reset()
        seen_reset = set()
        for _ in range(400):
            obs, reward, terminated, truncated, info = pool.recv()
            actions = rng.integers(0, num_actions, batch)
            for k, env_id in enumerate(info["env_id"]):
                ref = refs[int(env_id)]
                if int(env_id) not in seen_reset:
                    theirs = ref.reset()
                    seen_reset.add(int(env_id))
                else:
                    theirs = ref.step(int(ref.last_action))  # type: ignore[attr-defined]
                assert row_of(obs, k) == theirs[0]
                assert reward[k] == theirs[1]
                assert (bool(terminated[k]), bool(truncated[k])) == theirs[2:4]
                check_info(task_id, info, k, theirs[4])
                ref.last_action = int(actions[k])  # type: ignore[attr-defined]
            pool.send(actions, info["env_id"])
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("task_id", "kwargs"),
    [("FrozenLake-v1", {}), (TAXI, {}), ("CliffWalking-v1", {}), ("Blackjack-v1", {})],
    ids=str,
)
def test_make_vec_agrees_with_gymnasiums_vector_env(task_id: str, kwargs: dict[str, Any], step_alike: Any) -> None:
    """gymnasium.make_vec of ours and of Gymnasium's, reset with the same seed: the same batches
    (observations, rewards, ends), next-step autoreset included."""
    ours = gymnasium.make_vec(f"parallel_pool/{task_id}", num_envs=NUM_ENVS, **kwargs)
    theirs = gymnasium.make_vec(task_id, num_envs=NUM_ENVS, vectorization_mode="sync", vector_kwargs={}, **kwargs)
    assert ours.observation_space == theirs.observation_space
    assert ours.single_observation_space == theirs.single_observation_space
    assert ours.action_space == theirs.action_space
    rng = np.random.default_rng(1)
    try:
        a, _ = ours.reset(seed=9)
        b, _ = theirs.reset(seed=9)
        for _ in range(300):
            for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                np.testing.assert_array_equal(x, y)
            (a, *_), (b, *_) = step_alike(ours, theirs, rng.integers(0, 2, NUM_ENVS), obs=False)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("task_id", ["FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v3", "Taxi-v4", "CliffWalking-v1",
                                     "CliffWalkingSlippery-v1", "Blackjack-v1"])
def test_spaces_time_limits_and_thresholds(task_id: str) -> None:
    # The taxi Gymnasium lacks has the other's spaces, limit and threshold (200 steps, 8).
    theirs = gym_make(TAXI if task_id.startswith("Taxi") else task_id)
    spec = parallel_pool.make_spec(task_id)
    assert spec.observation_space == theirs.observation_space
    assert spec.action_space == theirs.action_space
    assert spec.max_episode_steps == (theirs.spec.max_episode_steps or 0)  # type: ignore[union-attr]
    assert spec.reward_threshold == theirs.spec.reward_threshold  # type: ignore[union-attr]


def test_tuple_observation_in_every_front_end() -> None:
    """Blackjack's Tuple observation: a tuple of batched arrays (Gymnasium, gym), a tuple of specs
    under TimeStep.observation.obs (dm_env), the same in same-step autoreset's final_obs."""
    space = gymnasium.spaces.Tuple((gymnasium.spaces.Discrete(32), gymnasium.spaces.Discrete(11),
                                    gymnasium.spaces.Discrete(2)))
    for env_type in ("gymnasium", "gym"):
        pool = parallel_pool.make("Blackjack-v1", env_type=env_type, num_envs=3, seed=0)
        try:
            assert pool.observation_space == space
            obs, _ = pool.reset()
            assert isinstance(obs, tuple) and len(obs) == 3
            assert all(x.shape == (3,) and x.dtype == np.int64 for x in obs)
            assert all(space.contains(row) for row in zip(*(x.tolist() for x in obs)))
        finally:
            pool.close()
    dm = parallel_pool.make("Blackjack-v1", env_type="dm", num_envs=2, seed=0)
    try:
        specs = dm.observation_spec().obs
        assert isinstance(specs, tuple) and [s.num_values for s in specs] == [32, 11, 2]
        ts = dm.reset()
        assert isinstance(ts.observation.obs, tuple) and ts.observation.obs[0].shape == (2,)
    finally:
        dm.close()
    same = parallel_pool.make("Blackjack-v1", num_envs=4, seed=0, autoreset_mode="same_step")
    try:
        same.reset()
        ended = False
        for _ in range(20):
            _, _, terminated, truncated, info = same.step(np.zeros(4, dtype=np.int64))  # stick: ends
            for row in np.flatnonzero(terminated | truncated):
                final = info["final_obs"][row]
                assert isinstance(final, tuple) and len(final) == 3
                ended = True
        assert ended
    finally:
        same.close()
    vec = gymnasium.make_vec("parallel_pool/Blackjack-v1", num_envs=3)
    try:
        obs, _ = vec.reset(seed=0)
        obs, _ = vec.reset(options={"reset_mask": np.array([True, False, True])})
        assert isinstance(obs, tuple) and all(x.shape == (3,) for x in obs)
        assert vec.observation_space == gymnasium.vector.utils.batch_space(space, 3)
    finally:
        vec.close()


def test_frozen_lake_config_errors() -> None:
    with pytest.raises(ValueError, match="map_name"):
        parallel_pool.make_spec("FrozenLake-v1", map_name="5x5")
    with pytest.raises(ValueError, match="equal length"):
        parallel_pool.make_spec("FrozenLake-v1", desc=["SFF", "FG"])
    with pytest.raises(ValueError, match="reward_schedule"):
        parallel_pool.make_spec("FrozenLake-v1", reward_schedule=(1, 0))


# --- EnvPool's own toy-text tasks: Catch-v0 and NChain-v0 ------------------------------------------
# Gymnasium has neither, so the reference is EnvPool 1.2.5's rules (envpool/toy_text/catch.h and
# nchain.h), written here in Python from what those files do. Their one random draw (Catch: the
# ball's column at a reset; NChain: the slip at each step) is, in our envs, the env's NumPy stream
# (np.random.default_rng(seed + i)), so each reference takes the same draws from its own generator
# and the comparison is exact, step by step, autoresets included. EnvPool draws from its own RNG:
# what must match it is the draws' distribution, checked below with binomial bounds.


class CatchReference:
    """Catch: the ball starts in row 0 at a uniform column, falls a row per step; the paddle starts
    mid-row at the bottom and moves by action - 1, clipped; at the bottom row the episode ends with
    +1 if the paddle is under the ball, else -1."""

    def __init__(self, seed: int, height: int = 10, width: int = 5) -> None:
        self.rng = np.random.default_rng(seed)
        self.height, self.width = height, width
        self.done = True

    def obs(self) -> np.ndarray:
        board = np.zeros((self.height, self.width), np.float32)
        board[self.ball_row, self.ball_col] = 1.0
        board[self.height - 1, self.paddle] = 1.0
        return board

    def reset(self) -> np.ndarray:
        self.ball_row, self.ball_col, self.paddle = 0, int(self.rng.integers(0, self.width)), self.width // 2
        self.done = False
        return self.obs()

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        if self.done:  # the pool's next-step autoreset
            return self.reset(), 0.0, False
        self.paddle = min(max(self.paddle + action - 1, 0), self.width - 1)
        self.ball_row += 1
        self.done = self.ball_row == self.height - 1
        reward = (1.0 if self.paddle == self.ball_col else -1.0) if self.done else 0.0
        return self.obs(), reward, self.done


class NChainReference:
    """NChain: 5 states from 0; action 0 moves up the chain (10 at its end, staying there), action
    1 pays 2 and returns to 0; a uniform draw below 0.2 swaps the action. 1,000 steps, truncated."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.state = 0
        self.done = True

    def reset(self) -> int:
        self.state, self.t, self.done = 0, 0, False
        return self.state

    def step(self, action: int) -> tuple[int, float, bool]:
        if self.done:
            return self.reset(), 0.0, False
        self.t += 1
        if self.rng.random() < 0.2:
            action = 1 - action
        reward = 0.0
        if action == 1:
            reward, self.state = 2.0, 0
        elif self.state < 4:
            self.state += 1
        else:
            reward = 10.0
        self.done = self.t >= 1000
        return self.state, reward, self.done


@pytest.mark.parametrize("kwargs", [{}, {"height": 4, "width": 7}, {"height": 2, "width": 1}], ids=str)
def test_catch_is_envpools_step_by_step(kwargs: dict[str, Any]) -> None:
    seed, n, steps = 5, 6, 400
    pool = parallel_pool.make("Catch-v0", num_envs=n, seed=seed, **kwargs)
    refs = [CatchReference(seed + i, **kwargs) for i in range(n)]
    rng = np.random.default_rng(0)
    try:
        obs, _ = pool.reset()
        for i, ref in enumerate(refs):
            np.testing.assert_array_equal(obs[i], ref.reset())
        ends = 0
        for t in range(steps):
            actions = rng.integers(0, 3, n)
            obs, reward, terminated, truncated, _ = pool.step(actions)
            for i, ref in enumerate(refs):
                their_obs, their_reward, their_end = ref.step(int(actions[i]))
                np.testing.assert_array_equal(obs[i], their_obs, err_msg=f"env {i} step {t}")
                assert (reward[i], bool(terminated[i]), bool(truncated[i])) == (their_reward, their_end, False)
                ends += their_end
        assert ends > n  # several episodes each, and their autoresets
    finally:
        pool.close()


def test_nchain_is_envpools_step_by_step() -> None:
    seed, n, steps = 3, 4, 2100  # past two time limits
    pool = parallel_pool.make("NChain-v0", num_envs=n, seed=seed)
    refs = [NChainReference(seed + i) for i in range(n)]
    rng = np.random.default_rng(1)
    try:
        obs, _ = pool.reset()
        assert [ref.reset() for ref in refs] == obs.tolist()
        for t in range(steps):
            # Mostly forward, so the chain's end (reward 10) is reached too.
            actions = (rng.random(n) < 0.1).astype(np.int64)
            obs, reward, terminated, truncated, info = pool.step(actions)
            for i, ref in enumerate(refs):
                theirs = ref.step(int(actions[i]))
                assert (int(obs[i]), float(reward[i]), bool(terminated[i]), bool(truncated[i])) == (
                    theirs[0], theirs[1], False, theirs[2]), f"env {i} step {t}"
    finally:
        pool.close()


def test_catch_and_nchain_spaces_and_limits_are_envpools() -> None:
    """EnvPool 1.2.5's (checked by hand): Catch obs Box(0, 1, (10, 5), float32), Discrete(3), no time
    limit, no threshold; NChain Discrete(5), Discrete(2), 1,000 steps, no threshold. Our Discrete obs
    are int64, as the family's other tasks (EnvPool's arrays are int32)."""
    catch = parallel_pool.make_spec("Catch-v0")
    assert catch.observation_space == gymnasium.spaces.Box(0.0, 1.0, (10, 5), np.float32)
    assert catch.action_space == gymnasium.spaces.Discrete(3)
    assert (catch.max_episode_steps, catch.reward_threshold) == (0, None)
    assert parallel_pool.make_spec("Catch-v0", height=6, width=3).observation_space.shape == (6, 3)
    nchain = parallel_pool.make_spec("NChain-v0")
    assert nchain.observation_space == gymnasium.spaces.Discrete(5)
    assert nchain.action_space == gymnasium.spaces.Discrete(2)
    assert (nchain.max_episode_steps, nchain.reward_threshold) == (1000, None)
    with pytest.raises(ValueError, match="height must be in"):
        parallel_pool.make_spec("Catch-v0", height=1)
    for task_id in ("Catch-v0", "NChain-v0"):
        env = parallel_pool.make(task_id)
        assert env.render_mode is None  # EnvPool renders neither
        env.close()


def binomial_bound(p: float, n: int) -> float:
    """Five standard deviations of a frequency of n draws with probability p: the draws are seeded
    (the test is deterministic), and a distribution off by more than that is a different one."""
    return 5.0 * float(np.sqrt(p * (1.0 - p) / n))


def test_catch_ball_column_is_uniform() -> None:
    """EnvPool draws the column with uniform_int_distribution(0, width - 1): each of the 5 columns
    with probability 1/5. 64 envs x 300 episodes of 9 steps."""
    n = 64
    pool = parallel_pool.make("Catch-v0", num_envs=n, seed=11)
    try:
        columns = []
        obs, _ = pool.reset()
        columns += list(obs[:, 0, :].argmax(axis=1))
        for _ in range(300):
            for _ in range(9):
                obs, _, terminated, _, _ = pool.step(np.ones(n, np.int64))
            assert terminated.all()
            obs, _, _, _, _ = pool.step(np.ones(n, np.int64))  # the autoreset
            columns += list(obs[:, 0, :].argmax(axis=1))
    finally:
        pool.close()
    freq = np.bincount(columns, minlength=5) / len(columns)
    assert np.all(np.abs(freq - 0.2) < binomial_bound(0.2, len(columns))), freq


def test_nchain_slips_one_step_in_five() -> None:
    """EnvPool swaps the action when uniform_real_distribution(0, 1) < 0.2. Always forward: a slip is
    a step paying 2 (the only way forward pays it). 64 envs x 1,000 steps."""
    n, steps = 64, 1000
    pool = parallel_pool.make("NChain-v0", num_envs=n, seed=2)
    try:
        pool.reset()
        slips = 0
        for _ in range(steps):
            _, reward, _, _, _ = pool.step(np.zeros(n, np.int64))
            slips += int((reward == 2.0).sum())
    finally:
        pool.close()
    assert abs(slips / (n * steps) - 0.2) < binomial_bound(0.2, n * steps)
