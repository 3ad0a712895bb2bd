"""The MiniGrid family against minigrid 3.2.0, transition by transition.

The envs draw from NumPy's stream (core/numpy_random.h) in minigrid's order, so a pool seeded
with ``s`` replays, env by env, minigrid's env ``i`` reset with seed ``s + i``: image, direction,
mission, reward, terminated and truncated are compared exactly at every step (no tolerance: all
integers, and the reward is the same float expression). Actions come from a fixed NumPy generator,
mixed with a policy that walks to the goal (or to objects and doors) by breadth-first search on
minigrid's own grid, so successes and their rewards are exercised, not only random walks.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium
import minigrid  # noqa: F401  (registers the MiniGrid-* and BabyAI-* ids with Gymnasium)
import numpy as np
import pytest

import parallel_pool

# minigrid's MiniGrid-* ids but the WFC ones (see test_wfc_ids_are_refused_with_the_reason), and its
# BabyAI-* levels.
MINIGRID_IDS = sorted(
    t for t in gymnasium.registry if t.startswith("MiniGrid-") and not t.startswith("MiniGrid-WFC")
)
BABYAI_IDS = sorted(t for t in gymnasium.registry if t.startswith("BabyAI-"))
OURS = set(parallel_pool.list_all_envs())
NUM_ENVS = 3


def to_minigrid_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Our kwargs as minigrid's: max_episode_steps is its max_steps, () is None; obs_mode and
    obs_tile_size are its wrappers (``make_reference``)."""
    out = {("max_steps" if k == "max_episode_steps" else k): v for k, v in kwargs.items()
           if k not in ("obs_mode", "obs_tile_size")}
    return {k: (None if isinstance(v, tuple) and not v else v) for k, v in out.items()}


def make_reference(task_id: str, kwargs: dict[str, Any], **make_kwargs: Any) -> gymnasium.Env:
    """gymnasium.make(task_id) of minigrid with our kwargs, wrapped as obs_mode says."""
    from minigrid import wrappers

    env = gymnasium.make(task_id, **to_minigrid_kwargs(kwargs), **make_kwargs)
    mode, tile = kwargs.get("obs_mode", "partial"), kwargs.get("obs_tile_size", 8)
    if mode == "full":
        return wrappers.FullyObsWrapper(env)
    if mode == "one_hot":
        return wrappers.OneHotPartialObsWrapper(env)
    if mode == "rgb":
        return wrappers.RGBImgObsWrapper(env, tile_size=tile)
    if mode == "rgb_partial":
        return wrappers.RGBImgPartialObsWrapper(env, tile_size=tile)
    return env


def guided_action(env: Any, rng: np.random.Generator, num_actions: int) -> int:
    """A random action a quarter of the time; else pick up or open what is in front, or take the
    first step of a shortest path (BFS on the full grid) to the goal, else to the object to pick
    up (``env.obj``, dropping what the agent carries first), else to the nearest object or closed
    door."""
    u = env.unwrapped
    if rng.random() < 0.25:
        return int(rng.integers(num_actions))
    fx, fy = (int(c) for c in u.front_pos)
    front = u.grid.get(fx, fy)
    target = getattr(u, "obj", None)
    instructed = instructed_objects(getattr(u, "instrs", None))
    ax, ay = (int(c) for c in u.agent_pos)
    goals, wanted, objects = set(), set(), set()
    for j in range(u.grid.height):
        for i in range(u.grid.width):
            cell = u.grid.get(i, j)
            if cell is None:
                continue
            if cell.type == "goal":
                goals.add((i, j))
            elif cell is target or any(cell is o for o in instructed):
                wanted.add((i, j))
            elif cell.type in ("key", "ball", "box") or (cell.type == "door" and not cell.is_open):
                objects.add((i, j))
    reach_wanted = first_step(u, (ax, ay), wanted)
    if num_actions > 3:
        if u.carrying is not None and front is None:
            if (reach_wanted is not None and u.carrying is not target) or rng.random() < 0.15:
                return 4
        if front is not None and front.type in ("key", "ball", "box") and u.carrying is None and rng.random() < 0.7:
            return 3
        if front is not None and front.type == "door" and not front.is_open:
            return 5
        if front is not None and front.type == "box" and rng.random() < 0.3:
            return 5
    for targets in (goals, wanted, objects):
        step = reach_wanted if targets is wanted else first_step(u, (ax, ay), targets)
        if step is not None:
            direction = [(1, 0), (0, 1), (-1, 0), (0, -1)].index((step[0] - ax, step[1] - ay))
            if direction == u.agent_dir:
                return 2
            return 1 if (u.agent_dir + 1) % 4 == direction else 0
    return int(rng.integers(num_actions))


def instructed_objects(instr: Any) -> list[Any]:
    """The objects a BabyAI instruction names (its descriptions' matches), or none."""
    if instr is None:
        return []
    if hasattr(instr, "instr_a"):
        return instructed_objects(instr.instr_a) + instructed_objects(instr.instr_b)
    descs = [getattr(instr, attr) for attr in ("desc", "desc_move", "desc_fixed") if hasattr(instr, attr)]
    return [o for desc in descs for o in desc.obj_set]


def first_step(u: Any, start: tuple[int, int], targets: set[tuple[int, int]]) -> tuple[int, int] | None:
    """The first cell of a shortest path from start to a target, through cells the agent can enter."""
    if not targets:
        return None
    parent: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell in targets and cell != start:
            while parent[cell] != start:
                cell = parent[cell]  # type: ignore[assignment]
            return cell
        x, y = cell
        for nx, ny in ((x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1)):
            if (nx, ny) in parent or not (0 <= nx < u.grid.width and 0 <= ny < u.grid.height):
                continue
            obj = u.grid.get(nx, ny)
            if (nx, ny) in targets or obj is None or (obj.can_overlap() and obj.type != "lava"):
                parent[(nx, ny)] = cell
                queue.append((nx, ny))
    return None


class Reference:
    """minigrid's env ``i`` of a pool, with the pool's next-step autoreset: the step after an
    episode ends is a reset (reward 0, the action ignored)."""

    def __init__(self, task_id: str, kwargs: dict[str, Any], seed: int) -> None:
        self.env = make_reference(task_id, kwargs, render_mode="rgb_array")
        self.seed = seed
        self.done = False

    def reset(self) -> tuple[Any, float, bool, bool]:
        obs, _ = self.env.reset(seed=self.seed)
        self.done = False
        return obs, 0.0, False, False

    def step(self, action: int) -> tuple[Any, float, bool, bool]:
        if self.done:
            obs, _ = self.env.reset()
            self.done = False
            return obs, 0.0, False, False
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self.done = terminated or truncated
        return obs, float(reward), bool(terminated), bool(truncated)


def check_row(obs: dict[str, Any], reward: Any, terminated: Any, truncated: Any, k: int,
              theirs: tuple[Any, float, bool, bool], where: str) -> None:
    their_obs, their_reward, their_terminated, their_truncated = theirs
    np.testing.assert_array_equal(obs["image"][k], their_obs["image"], err_msg=where)
    assert int(obs["direction"][k]) == int(their_obs["direction"]), where
    assert obs["mission"][k] == their_obs["mission"], where
    assert float(reward[k]) == their_reward, where
    assert (bool(terminated[k]), bool(truncated[k])) == (their_terminated, their_truncated), where


def check_state(pool: Any, info: dict[str, Any], refs: list[Reference], where: str) -> None:
    """info["agent_pos"] and debug_states() (EnvPool's keys) against each reference env's own."""
    for i, (state, ref) in enumerate(zip(pool.debug_states(), refs, strict=True)):
        u = ref.env.unwrapped
        at = f"{where} env {i}"
        assert tuple(info["agent_pos"][i]) == tuple(u.agent_pos), at
        grid = np.asarray(state["grid"], dtype=np.uint8).reshape(state["width"], state["height"], 3)
        np.testing.assert_array_equal(grid, u.grid.encode(), err_msg=at)
        contains = np.asarray(state["grid_contains"], dtype=np.uint8).reshape(grid.shape)
        for x, y in zip(*np.nonzero(contains[:, :, 0] != 1)):
            np.testing.assert_array_equal(contains[x, y], u.grid.get(x, y).contains.encode(), err_msg=at)
        assert (state["agent_pos"], state["agent_dir"]) == (list(u.agent_pos), u.agent_dir), at
        assert (state["mission"], state["max_steps"]) == (u.mission, u.max_steps), at
        assert state["has_carrying"] == (u.carrying is not None), at
        if u.carrying is not None:
            code = (state["carrying_type"], state["carrying_color"], state["carrying_state"])
            assert code == u.carrying.encode(), at
        check_extras(state, u, at)


# minigrid's attribute names of each task's targets (EnvPool's env_name -> ours -> theirs).
TARGET_ATTRS = {
    "fetch": {"target_type": "targetType", "target_color": "targetColor"},
    "goto_door": {"target_pos": "target_pos", "target_color": "target_color"},
    "goto_object": {"target_pos": "target_pos", "target_type": "targetType", "target_color": "target_color"},
    "put_near": {"move_pos": "move_pos", "move_type": "move_type", "move_color": "moveColor",
                 "target_pos": "target_pos", "target_type": "target_type", "target_color": "target_color"},
    "memory": {"success_pos": "success_pos", "failure_pos": "failure_pos"},
}
PICKUP_TASKS = {"key_corridor", "unlock_pickup", "blocked_unlock_pickup", "obstructed_maze_1dlhb",
                "obstructed_maze_full", "obstructed_maze_full_v1"}


def check_extras(state: dict[str, Any], u: Any, at: str) -> None:
    """The task's own entries (EnvPool's debug state) against minigrid's env: its targets."""
    from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX

    name = state.get("env_name")
    if name is None:
        assert type(u).__module__.startswith("minigrid.envs.babyai"), at  # only BabyAI levels have none
        return

    def theirs(attr: str, key: str) -> Any:
        value = getattr(u, attr)
        if key.endswith("_type"):
            return OBJECT_TO_IDX[value]
        if key.endswith("_color"):
            return COLOR_TO_IDX[value]
        return [float(v) for v in value]

    for key, attr in TARGET_ATTRS.get(name, {}).items():
        assert state[key] == theirs(attr, key), (at, key)
    if name == "dynamic_obstacles":
        assert state["obstacle_positions"] == [float(v) for o in u.obstacles for v in o.cur_pos], at
    if name in PICKUP_TASKS:
        kind = (OBJECT_TO_IDX[u.obj.type], COLOR_TO_IDX[u.obj.color])
        assert (state["target_type"], state["target_color"]) == kind, at
        # Its cell, if it is in one (minigrid keeps a stale cur_pos for a box toggled away).
        x, y = (int(v) for v in u.obj.cur_pos)
        in_grid = 0 <= x < u.grid.width and 0 <= y < u.grid.height and u.grid.get(x, y) is u.obj
        assert state["target_pos"] == ([float(x), float(y)] if in_grid else [-1.0, -1.0]), at


def test_debug_states_are_checked() -> None:
    pool = parallel_pool.make("MiniGrid-Empty-5x5-v0", num_envs=2)
    try:
        with pytest.raises(ValueError, match="before reset"):
            pool.debug_states()
        pool.reset()
        with pytest.raises(ValueError, match="out of range"):
            pool.debug_states([2])
        assert [s["agent_pos"] for s in pool.debug_states(1)] == [[1.0, 1.0]]
    finally:
        pool.close()
    cartpole = parallel_pool.make("CartPole-v1")
    try:
        cartpole.reset()
        with pytest.raises(RuntimeError, match="has no debug state"):
            cartpole.debug_states()
    finally:
        cartpole.close()


def compare_sync(task_id: str, kwargs: dict[str, Any], seed: int, steps: int,
                 num_envs: int = NUM_ENVS) -> dict[str, int]:
    pool = parallel_pool.make(task_id, num_envs=num_envs, seed=seed, **kwargs)
    refs = [Reference(task_id, kwargs, seed + i) for i in range(num_envs)]
    num_actions = int(pool.action_space.n)
    rng = np.random.default_rng(seed)
    counts = {"terminated": 0, "truncated": 0, "rewarded": 0}
    try:
        obs, info = pool.reset()
        zeros = np.zeros(num_envs)
        for i, ref in enumerate(refs):
            check_row(obs, zeros, zeros, zeros, i, ref.reset(), f"{task_id} {kwargs} seed {seed} env {i} reset")
        check_state(pool, info, refs, f"{task_id} {kwargs} seed {seed} reset")
        for t in range(steps):
            actions = np.array([guided_action(ref.env, rng, num_actions) for ref in refs], dtype=np.int64)
            obs, reward, terminated, truncated, info = pool.step(actions)
            for i, ref in enumerate(refs):
                theirs = ref.step(int(actions[i]))
                where = f"{task_id} {kwargs} seed {seed} env {i} step {t}"
                check_row(obs, reward, terminated, truncated, i, theirs, where)
                counts["terminated"] += int(theirs[2])
                counts["truncated"] += int(theirs[3])
                counts["rewarded"] += int(theirs[1] > 0)
            check_state(pool, info, refs, f"{task_id} {kwargs} seed {seed} step {t}")
    finally:
        pool.close()
    return counts


def test_every_minigrid_id_is_registered() -> None:
    assert len(MINIGRID_IDS) == 76 and len(BABYAI_IDS) == 96
    assert set(MINIGRID_IDS) | set(BABYAI_IDS) <= OURS
    assert not {t for t in OURS if t.startswith(("MiniGrid-", "BabyAI-"))} - set(MINIGRID_IDS) - set(BABYAI_IDS)


@pytest.mark.parametrize("task_id", MINIGRID_IDS + BABYAI_IDS)
def test_spaces_and_step_limits_are_minigrids(task_id: str) -> None:
    theirs = gymnasium.make(task_id)
    spec = parallel_pool.make_spec(task_id)
    space = spec.observation_space
    assert isinstance(space, gymnasium.spaces.Dict)
    assert space["image"] == theirs.observation_space["image"]  # type: ignore[index]
    assert space["direction"] == theirs.observation_space["direction"]  # type: ignore[index]
    assert isinstance(space["mission"], gymnasium.spaces.Text)
    assert spec.action_space == theirs.action_space
    assert spec.max_episode_steps == theirs.unwrapped.max_steps  # type: ignore[attr-defined]
    assert spec.reward_threshold is None


@pytest.mark.parametrize("task_id", MINIGRID_IDS)
def test_episodes_are_minigrids(task_id: str) -> None:
    """Two seeds, three envs each, long enough for several episodes on the small grids."""
    for seed in (0, 2**32 + 7):
        compare_sync(task_id, {}, seed, 120)


@pytest.mark.parametrize("task_id", BABYAI_IDS)
def test_babyai_episodes_are_minigrids(task_id: str) -> None:
    """One seed, three envs, the instruction's objects sought: missions (the instruction's surface),
    per-episode max_steps, the verifier's successes and failures."""
    compare_sync(task_id, {}, 3, 80)


# Ids whose guided episodes must include successes (reward > 0) in the comparison above.
SUCCESS_IDS = ["MiniGrid-Empty-5x5-v0", "MiniGrid-DoorKey-5x5-v0", "MiniGrid-Unlock-v0", "MiniGrid-LavaGapS5-v0",
               "MiniGrid-Fetch-5x5-N2-v0", "MiniGrid-RedBlueDoors-6x6-v0", "MiniGrid-GoToObject-6x6-N2-v0",
               "MiniGrid-ObstructedMaze-1Dl-v0", "MiniGrid-KeyCorridorS4R3-v0"]


@pytest.mark.parametrize("task_id", SUCCESS_IDS)
def test_successes_are_compared(task_id: str) -> None:
    counts = compare_sync(task_id, {}, 0, 300)
    assert counts["rewarded"] > 0 and counts["terminated"] > 0, counts


@pytest.mark.parametrize(("task_id", "kwargs"), [
    ("MiniGrid-DoorKey-6x6-v0", {"agent_view_size": 5}),
    ("MiniGrid-DoorKey-6x6-v0", {"see_through_walls": True, "agent_view_size": 9}),
    ("MiniGrid-MultiRoom-N2-S4-v0", {"max_episode_steps": 15}),
    # max_episode_steps is minigrid's max_steps: by default derived from size as minigrid does.
    ("MiniGrid-Empty-8x8-v0", {"size": 7, "agent_start_pos": (2, 3), "agent_start_dir": 2}),
    ("MiniGrid-DoorKey-8x8-v0", {"size": 5}),
    ("BabyAI-PutNextS5N2-v0", {"room_size": 4, "objs_per_room": 1}),
    ("BabyAI-GoToLocal-v0", {"max_episode_steps": 40, "num_dists": 3}),
    ("MiniGrid-Empty-8x8-v0", {"agent_start_pos": ()}),
    ("MiniGrid-KeyCorridorS3R2-v0", {"obj_type": "key", "agent_view_size": 3}),
    ("MiniGrid-LavaCrossingS9N1-v0", {"num_crossings": 4, "obstacle_type": "wall"}),
    ("MiniGrid-Dynamic-Obstacles-8x8-v0", {"n_obstacles": 7}),
    ("MiniGrid-FourRooms-v0", {"agent_pos": (3, 3), "goal_pos": (15, 15)}),
], ids=str)
def test_kwargs_are_minigrids(task_id: str, kwargs: dict[str, Any]) -> None:
    spec = parallel_pool.make_spec(task_id, **kwargs)
    assert spec.max_episode_steps == make_reference(task_id, kwargs).unwrapped.max_steps  # type: ignore[attr-defined]
    compare_sync(task_id, kwargs, 11, 100)


@pytest.mark.parametrize(("task_id", "kwargs"), [
    ("MiniGrid-DoorKey-8x8-v0", {"obs_mode": "full"}),
    ("MiniGrid-RedBlueDoors-6x6-v0", {"obs_mode": "full"}),  # a 12x6 grid: image is (width, height, 3)
    ("MiniGrid-KeyCorridorS3R2-v0", {"obs_mode": "one_hot"}),
    ("MiniGrid-DoorKey-6x6-v0", {"obs_mode": "rgb"}),
    ("MiniGrid-LavaGapS6-v0", {"obs_mode": "rgb", "obs_tile_size": 5, "highlight": False}),
    ("MiniGrid-ObstructedMaze-1Dlhb-v0", {"obs_mode": "rgb_partial"}),
    ("MiniGrid-Fetch-6x6-N2-v0", {"obs_mode": "rgb_partial", "obs_tile_size": 4, "agent_view_size": 5}),
], ids=str)
def test_observation_wrappers_are_minigrids(task_id: str, kwargs: dict[str, Any]) -> None:
    """obs_mode stands for minigrid's FullyObsWrapper, OneHotPartialObsWrapper, RGBImgObsWrapper
    and RGBImgPartialObsWrapper (tile_size=obs_tile_size): the same images, and the same space."""
    spec = parallel_pool.make_spec(task_id, **kwargs)
    assert spec.observation_space["image"] == make_reference(task_id, kwargs).observation_space["image"]  # type: ignore[index]
    compare_sync(task_id, kwargs, 21, 40, num_envs=2)


@pytest.mark.parametrize("task_id", MINIGRID_IDS + BABYAI_IDS)
def test_every_ids_frames_are_minigrids(task_id: str) -> None:
    """render() of every id against minigrid's rgb_array frame, at reset and along three guided
    steps (every object kind, color and grid size drawn; the longer episodes are below)."""
    pool = parallel_pool.make(task_id, num_envs=1, seed=5)
    ref = Reference(task_id, {}, 5)
    rng = np.random.default_rng(5)
    try:
        pool.reset()
        ref.reset()
        for t in range(4):
            np.testing.assert_array_equal(pool.render()[0], ref.env.render(), err_msg=f"{task_id} step {t}")
            action = guided_action(ref.env, rng, int(pool.action_space.n))
            pool.step(np.array([action], dtype=np.int64))
            ref.step(action)
    finally:
        pool.close()
        ref.env.close()


@pytest.mark.parametrize(("task_id", "kwargs"), [
    ("MiniGrid-DoorKey-8x8-v0", {}),
    ("MiniGrid-LavaCrossingS9N2-v0", {"tile_size": 11}),
    ("MiniGrid-ObstructedMaze-1Dlhb-v0", {"tile_size": 16, "highlight": False}),
    ("MiniGrid-KeyCorridorS3R2-v0", {"agent_pov": True, "tile_size": 8}),
    ("MiniGrid-Playground-v0", {"tile_size": 9}),
    ("MiniGrid-Dynamic-Obstacles-6x6-v0", {"tile_size": 7}),
], ids=str)
def test_render_is_minigrids(task_id: str, kwargs: dict[str, Any]) -> None:
    """render() against minigrid's rgb_array frames, pixel for pixel, along guided episodes."""
    pool = parallel_pool.make(task_id, num_envs=2, seed=8, **kwargs)
    refs = [Reference(task_id, kwargs, 8 + i) for i in range(2)]
    rng = np.random.default_rng(8)
    num_actions = int(pool.action_space.n)
    try:
        pool.reset()
        for ref in refs:
            ref.reset()
        for t in range(40):
            frames = pool.render(np.arange(pool.num_envs))
            assert frames.shape[1:] == pool.spec.render_shape
            for i, ref in enumerate(refs):
                np.testing.assert_array_equal(frames[i], ref.env.render(), err_msg=f"{task_id} env {i} step {t}")
            actions = np.array([guided_action(ref.env, rng, num_actions) for ref in refs], dtype=np.int64)
            pool.step(actions)
            for i, ref in enumerate(refs):
                ref.step(int(actions[i]))
    finally:
        pool.close()


@pytest.mark.parametrize("task_id", ["MiniGrid-DoorKey-8x8-v0", "MiniGrid-MultiRoom-N4-S5-v0",
                                     "MiniGrid-Dynamic-Obstacles-6x6-v0", "MiniGrid-ObstructedMaze-2Dlhb-v1"])
def test_async_pool_matches_env_by_env(task_id: str) -> None:
    n, batch = 6, 2
    pool = parallel_pool.make(task_id, num_envs=n, batch_size=batch, num_threads=2, seed=3)
    refs = [Reference(task_id, {}, 3 + i) for i in range(n)]
    rng = np.random.default_rng(0)
    num_actions = int(pool.action_space.n)
    last_action: dict[int, int] = {}
    try:
        pool.async_reset()
        for t in range(150):
            obs, reward, terminated, truncated, info = pool.recv(timeout=60)
            ids = [int(i) for i in info["env_id"]]
            for k, env_id in enumerate(ids):
                ref = refs[env_id]
                theirs = ref.reset() if env_id not in last_action else ref.step(last_action[env_id])
                check_row(obs, reward, terminated, truncated, k, theirs, f"{task_id} env {env_id} batch {t}")
                last_action[env_id] = guided_action(ref.env, rng, num_actions)
            pool.send(np.array([last_action[i] for i in ids], dtype=np.int64), np.array(ids, dtype=np.int32))
    finally:
        pool.close()


def test_make_vec_and_dm_env_carry_the_mission_as_text() -> None:
    task_id = "MiniGrid-Fetch-5x5-N2-v0"
    envs = gymnasium.make_vec(f"parallel_pool/{task_id}", num_envs=2)
    try:
        obs, _ = envs.reset(seed=4)
        assert obs["mission"].shape == (2,) and all(isinstance(m, str) for m in obs["mission"])
        assert obs in envs.observation_space
        ref = gymnasium.make(task_id)
        assert obs["mission"][1] == ref.reset(seed=5)[0]["mission"]
    finally:
        envs.close()
    dm = parallel_pool.make_dm(task_id, num_envs=2, seed=4)
    try:
        ts = dm.reset()
        assert list(ts.observation.mission) == list(obs["mission"])
        assert dm.observation_spec().mission.dtype == np.dtype(object) or dm.observation_spec().mission
    finally:
        dm.close()


def test_same_step_autoreset_final_obs_has_the_mission() -> None:
    pool = parallel_pool.make("MiniGrid-Empty-5x5-v0", num_envs=1, seed=0, autoreset_mode="same_step",
                              max_episode_steps=2)
    try:
        pool.reset()
        pool.step(np.zeros(1, np.int64))
        _, _, _, truncated, info = pool.step(np.zeros(1, np.int64))
        assert truncated[0]
        assert info["final_obs"][0]["mission"] == "get to the green goal square"
    finally:
        pool.close()


@pytest.mark.slow
@pytest.mark.parametrize("task_id", MINIGRID_IDS + BABYAI_IDS)
def test_long_episodes_are_minigrids(task_id: str) -> None:
    """The sweep: eight seeds, 4 envs each, 600 steps (past several time limits)."""
    for seed in range(8):
        compare_sync(task_id, {}, 1000 + seed, 600, num_envs=4)


WFC_IDS = sorted(t for t in gymnasium.registry if t.startswith("MiniGrid-WFC"))


def test_wfc_ids_are_refused_with_the_reason() -> None:
    """minigrid 3.2.0 registers six WFC ids, but its PyPI distributions lack their pattern images.

    The first half pins the premise: if a minigrid release ships the images, minigrid's reset()
    works and this fails, the cue to port the WFC generator. The second: ours says why it refuses.
    """
    assert len(WFC_IDS) == 6
    for task_id in WFC_IDS:
        env = gymnasium.make(task_id)
        with pytest.raises(FileNotFoundError, match="patterns"):
            env.reset(seed=0)
        env.close()
        assert task_id not in OURS
        with pytest.raises(ValueError, match="pattern images"):
            parallel_pool.make(task_id, num_envs=1)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"obs_mode": "pixels"}, "obs_mode"),
    ({"agent_view_size": 4}, "agent_view_size"),
    ({"max_episode_steps": -1}, "max_episode_steps"),
    ({"tile_size": 0}, "tile"),
])
def test_bad_kwargs_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parallel_pool.make("MiniGrid-Empty-5x5-v0", num_envs=1, **kwargs)
