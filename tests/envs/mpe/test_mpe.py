"""The MPE family against mpe2 1.1.1, transition by transition.

Every task draws its reset from NumPy's stream (core/numpy_random.h) in mpe2's order and steps its
world in NumPy's float64 order of operations, so a pool seeded with ``s`` replays, env by env,
mpe2's ``parallel_env(**kwargs)`` reset with seed ``s + i`` (and reset without a seed after each
episode, continuing the stream, as the pool's autoreset does). Compared at every step, per agent:
the observation (float32, exactly), the reward (float64, exactly), terminated and truncated.

One tolerance: simple_tag's and simple_world_comm's good agents pay ``min(np.exp(2x - 2), 10)`` per
coordinate beyond |x| >= 1, and NumPy computes ``np.exp`` of float64 with its own SIMD kernel
(Intel SVML's on AVX-512 CPUs), which may differ from libm's ``exp`` (which the C++ envs call) by
an ulp. Rewards of steps where some good agent is beyond the edge are therefore compared to within
2e-14 (four ulps of the penalty's size, < 10, plus the sum's rounding); every other reward, and
every observation, exactly. The positions never depend on a reward, so trajectories stay exact.

``render()`` (tasks whose agents are all silent) is mpe2's ``rgb_array`` frame, pixel for pixel.

Actions: random (integers, or float32 rows that stray outside [0, 1] so mpe2's clipping is
exercised), mixed with a greedy policy that sends agents to landmarks and adversaries at good agents,
so collisions, captures and terminate_on_success's terminations happen.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import mpe2  # noqa: F401  (the oracle: the README's test command installs it)
import numpy as np
import pytest

import parallel_pool
from parallel_pool.pettingzoo_api import agent_layout
from parallel_pool.tasks import task_info

TASKS = [
    "simple_v3",
    "simple_spread_v3",
    "simple_tag_v3",
    "simple_adversary_v3",
    "simple_reference_v3",
    "simple_speaker_listener_v4",
    "simple_push_v3",
    "simple_crypto_v3",
    "simple_world_comm_v3",
]
# Tasks whose good agents' rewards go through np.exp (see the module docstring).
EXP_REWARD_TASKS = {"simple_tag_v3", "simple_world_comm_v3"}
EXP_REWARD_ATOL = 2e-14

# Each task's kwarg cases beyond the defaults (each run discrete and continuous).
KWARG_CASES: list[tuple[str, dict[str, Any]]] = [
    ("simple_v3", {"max_cycles": 7}),
    ("simple_spread_v3", {"N": 1}),
    ("simple_spread_v3", {"N": 5, "local_ratio": 0.2}),
    ("simple_spread_v3", {"local_ratio": 1.0, "curriculum": True}),
    ("simple_spread_v3", {"N": 2, "terminate_on_success": True, "max_cycles": 60}),
    ("simple_spread_v3", {"N": 4, "num_agent_neighbors": 2, "num_landmark_neighbors": 1}),
    ("simple_spread_v3", {"N": 2, "num_agent_neighbors": 3, "num_landmark_neighbors": 4}),
    ("simple_tag_v3", {"num_good": 2, "num_adversaries": 2, "num_obstacles": 0}),
    ("simple_tag_v3", {"num_good": 1, "num_adversaries": 4, "terminate_on_success": True, "max_cycles": 80}),
    ("simple_tag_v3", {"curriculum": True}),
    ("simple_tag_v3", {"num_agent_neighbors": 2, "num_landmark_neighbors": 1}),
    ("simple_tag_v3", {"num_good": 2, "num_agent_neighbors": 6, "num_landmark_neighbors": 3}),
    ("simple_adversary_v3", {"N": 4}),
    ("simple_adversary_v3", {"N": 3, "num_agent_neighbors": 1, "num_landmark_neighbors": 2}),
    ("simple_reference_v3", {"local_ratio": 0.1, "max_cycles": 40}),
    ("simple_speaker_listener_v4", {"max_cycles": 30}),
    ("simple_push_v3", {"max_cycles": 15}),
    ("simple_crypto_v3", {"max_cycles": 12}),
    ("simple_world_comm_v3", dict(num_good=3, num_adversaries=2, num_obstacles=2, num_food=3, num_forests=1)),
    ("simple_world_comm_v3", dict(num_good=1, num_adversaries=3, num_obstacles=0, num_food=1, num_forests=3)),
]
NUM_ENVS = 2
STEPS = 70


def reference(task: str, kwargs: dict[str, Any]) -> Any:
    """mpe2's parallel_env for our kwargs (0 neighbours is None)."""
    module = importlib.import_module(f"mpe2.{task}")
    return module.parallel_env(**{k: (None if k.endswith("_neighbors") and v == 0 else v) for k, v in kwargs.items()})


def agent_names(spec: parallel_pool.EnvSpec) -> list[str]:
    # The front-end's decoding of the spec's tables: the tests compare its names with mpe2's.
    return agent_layout(spec)[0]


def test_the_registry_holds_every_mpe2_task() -> None:
    registered = {t for t in parallel_pool.list_all_envs() if task_info(t).get("family") == "mpe"}
    assert registered == set(TASKS)


def by_agent(rows: np.ndarray, info: dict[str, Any], num_envs: int, num_agents: int) -> np.ndarray:
    """Per-player rows as (env, agent, ...), from info["players"]."""
    if num_agents == 1:
        return rows.reshape(num_envs, 1, *rows.shape[1:])
    out = np.zeros((num_envs, num_agents, *rows.shape[1:]), rows.dtype)
    out[info["players"]["env_id"], info["players"]["agent_index"]] = rows
    return out


def target_delta(world: Any, p: int) -> np.ndarray:
    """Where agent p's target is, relative to it: an adversary's nearest good agent, a good agent's
    own landmark (landmark p, so that agents spread); zeros when it has none."""
    agent = world.agents[p]
    if getattr(agent, "adversary", False):
        targets = [a for a in world.agents if not getattr(a, "adversary", False)]
        if not targets:
            return np.zeros(2)
        target = min(targets, key=lambda t: float(np.sum(np.square(t.state.p_pos - agent.state.p_pos))))
    else:
        if not world.landmarks:
            return np.zeros(2)
        target = world.landmarks[p % len(world.landmarks)]
    return target.state.p_pos - agent.state.p_pos


def greedy_move(world: Any, p: int) -> int:
    """mpe2's discrete move (0 none, 1 left, 2 right, 3 down, 4 up) toward agent p's target; none
    when it is nearly there (damping then slows it down)."""
    delta = target_delta(world, p)
    if max(abs(delta[0]), abs(delta[1])) < 0.03:
        return 0
    if abs(delta[0]) > abs(delta[1]):
        return 2 if delta[0] > 0 else 1
    return 4 if delta[1] > 0 else 3


def choose_actions(
    refs: list[Any], names: list[str], sizes: list[int], width: int, continuous: bool, rng: np.random.Generator,
    greedy: float,
) -> np.ndarray:
    """One action per env and agent: the greedy move for movable agents with probability ``greedy``,
    else random."""
    if continuous:
        out = rng.uniform(-0.15, 1.15, (len(refs), len(names), width)).astype(np.float32)
    else:
        out = np.stack([rng.integers(0, sizes) for _ in refs]).astype(np.int64)
    for i, ref in enumerate(refs):
        world = ref.unwrapped.world
        for p, agent in enumerate(world.agents):
            if not agent.movable or rng.random() >= greedy:
                continue
            if continuous:
                # Proportional control toward the target, damped by the velocity.
                out[i, p, :5] = 0.0
                push = np.clip(2.0 * target_delta(world, p) - 0.5 * agent.state.p_vel, -1.0, 1.0)
                out[i, p, 1:5] = [max(-push[0], 0), max(push[0], 0), max(-push[1], 0), max(push[1], 0)]
            else:
                move = greedy_move(world, p)
                out[i, p] = out[i, p] // 5 * 5 + move  # keep the agent's word, if it speaks
    return out


def good_agent_beyond_edge(ref: Any) -> bool:
    world = ref.unwrapped.world
    return any(not getattr(a, "adversary", False) and np.max(np.abs(a.state.p_pos)) >= 1.0 for a in world.agents)


def run_alignment(
    task: str, kwargs: dict[str, Any], seed: int = 11, steps: int = STEPS, greedy: float = 0.6
) -> dict[str, int]:
    """Steps our pool and mpe2's envs side by side; returns counts of what happened (for the caller
    to check the run exercised what it should)."""
    env = parallel_pool.make(task, num_envs=NUM_ENVS, seed=seed, num_threads=2, **kwargs)
    spec = env.spec
    names = agent_names(spec)
    dims = spec.tables["obs_dims"].astype(int)
    sizes = spec.tables["action_sizes"].astype(int)
    refs = [reference(task, kwargs) for _ in range(NUM_ENVS)]
    # The spaces: mpe2's agents, observation sizes and action spaces.
    assert names == refs[0].possible_agents
    assert spec.max_num_players == len(names)
    continuous = kwargs.get("continuous_actions", False)
    for p, name in enumerate(names):
        assert refs[0].observation_space(name).shape == (dims[p],)
        space = refs[0].action_space(name)
        assert (space.shape == (sizes[p],)) if continuous else (space.n == sizes[p])
    width = spec.action_fields[0].shape[0] if continuous else 1
    counts = {"terminated": 0, "truncated": 0, "nonzero_reward": 0, "inexact_rewards": 0}

    def compare_obs(obs: np.ndarray, info: dict[str, Any], ref_obs: list[dict[str, np.ndarray]], when: str) -> None:
        ours = by_agent(obs, info, NUM_ENVS, len(names))
        for i in range(NUM_ENVS):
            for p, name in enumerate(names):
                theirs = ref_obs[i][name]
                assert theirs.dtype == np.float32
                np.testing.assert_array_equal(ours[i, p, : dims[p]], theirs, err_msg=f"{task} {when} env {i} {name}")
                assert not ours[i, p, dims[p] :].any(), "padding must be zeros"

    obs, info = env.reset()
    ref_obs = [ref.reset(seed=seed + i)[0] for i, ref in enumerate(refs)]
    compare_obs(obs, info, ref_obs, "reset")
    rng = np.random.default_rng(seed)
    for t in range(steps):
        action = choose_actions(refs, names, list(sizes), width, continuous, rng, greedy)
        obs, reward, terminated, truncated, info = env.step(action)
        rewards = by_agent(info["players"]["reward"], info, NUM_ENVS, len(names))
        ref_obs = []
        for i, ref in enumerate(refs):
            if not ref.agents:  # the episode ended: the pool's next step reset this env
                ref_obs.append(ref.reset()[0])
                assert not terminated[i] and not truncated[i] and reward[i] == 0
                continue
            acts = {n: (action[i, p, : sizes[p]] if continuous else int(action[i, p])) for p, n in enumerate(names)}
            o, r, te, tr, _ = ref.step(acts)
            ref_obs.append(o)
            for p, name in enumerate(names):
                assert te[name] == terminated[i] and tr[name] == truncated[i], f"{task} step {t} env {i} {name}"
                if task in EXP_REWARD_TASKS and good_agent_beyond_edge(ref) and r[name] != rewards[i, p]:
                    assert abs(r[name] - rewards[i, p]) <= EXP_REWARD_ATOL, f"{task} step {t} env {i} {name}"
                    counts["inexact_rewards"] += 1
                else:
                    assert r[name] == rewards[i, p], f"{task} step {t} env {i} {name}: {r[name]} != {rewards[i, p]}"
            np.testing.assert_array_equal(reward[i], np.sum(rewards[i]))
            counts["terminated"] += bool(terminated[i])
            counts["truncated"] += bool(truncated[i])
            counts["nonzero_reward"] += bool(np.any(rewards[i] != 0))
        compare_obs(obs, info, ref_obs, f"step {t}")
    env.close()
    return counts


@pytest.fixture(autouse=True)
def _quiet_clipping() -> Any:
    # pettingzoo's ClipOutOfBoundsWrapper warns on every out-of-bounds action (on purpose here).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("task", TASKS)
def test_default_kwargs_align_with_mpe2(task: str, continuous: bool) -> None:
    counts = run_alignment(task, {"continuous_actions": continuous})
    assert counts["truncated"] >= NUM_ENVS  # max_cycles 25 over 70 steps: episodes end and restart
    assert counts["nonzero_reward"] > 0


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize(("task", "kwargs"), KWARG_CASES, ids=[f"{t}-{sorted(k.items())}" for t, k in KWARG_CASES])
def test_kwargs_align_with_mpe2(task: str, kwargs: dict[str, Any], continuous: bool) -> None:
    greedy = 0.95 if kwargs.get("terminate_on_success") else 0.6
    counts = run_alignment(task, {**kwargs, "continuous_actions": continuous}, greedy=greedy)
    if kwargs.get("terminate_on_success"):
        assert counts["terminated"] > 0, "the greedy policy should succeed at least once"


def test_terminate_on_success_takes_second_place_to_the_time_limit() -> None:
    # mpe2: truncated at max_cycles, else terminated on success (never both).
    kwargs = {"num_good": 1, "num_adversaries": 4, "terminate_on_success": True, "max_cycles": 3}
    counts = run_alignment("simple_tag_v3", kwargs, steps=40, greedy=0.95)
    assert counts["truncated"] > 0


def test_spaces_and_layout() -> None:
    spec = parallel_pool.make_spec("simple_adversary_v3", N=3)
    assert agent_names(spec) == ["adversary_0", "agent_0", "agent_1", "agent_2"]
    assert list(spec.tables["obs_dims"]) == [12, 14, 14, 14]
    assert spec.observation_space.shape == (14,) and spec.observation_space.dtype == np.float32
    assert spec.action_space.n == 5
    assert spec.max_episode_steps == 25
    spec = parallel_pool.make_spec("simple_world_comm_v3", continuous_actions=True)
    assert agent_names(spec) == ["leadadversary_0", "adversary_0", "adversary_1", "adversary_2", "agent_0", "agent_1"]
    assert list(spec.tables["action_sizes"]) == [9, 5, 5, 5, 5, 5]
    assert spec.action_space.shape == (9,)
    spec = parallel_pool.make_spec("simple_reference_v3")
    assert list(spec.tables["action_sizes"]) == [50, 50]  # 5 moves x 10 words
    assert parallel_pool.make_spec("simple_v3").max_num_players == 1
    # max_episode_steps, when given, is the limit; max_cycles otherwise.
    assert parallel_pool.make_spec("simple_spread_v3", max_cycles=40).max_episode_steps == 40
    assert parallel_pool.make_spec("simple_spread_v3", max_cycles=40, max_episode_steps=9).max_episode_steps == 9


def test_env_reward_is_the_sum_of_its_agents_rewards_in_any_row_order() -> None:
    env = parallel_pool.make("simple_tag_v3", num_envs=6, batch_size=3, seed=0, num_threads=3)
    env.async_reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, reward, _, _, info = env.recv()
        players = info["players"]
        assert obs.shape == (3 * 4, 16)
        np.testing.assert_array_equal(np.sort(players["env_id"]), np.repeat(np.sort(info["env_id"]), 4))
        for k, e in enumerate(info["env_id"]):
            rows = players["env_id"] == e
            assert sorted(players["agent_index"][rows]) == [0, 1, 2, 3]
            assert reward[k] == np.sum(players["reward"][rows][np.argsort(players["agent_index"][rows])])
        env.send(rng.integers(0, 5, (3, 4)), info["env_id"])
    env.close()


def test_an_agent_with_fewer_actions_refuses_the_others() -> None:
    # speaker_0 says one of 3 words; listener_0 has 5 moves: the field is Discrete(5).
    env = parallel_pool.make("simple_speaker_listener_v4", num_envs=2, seed=0)
    env.reset()
    with pytest.raises(parallel_pool.EnvError, match="speaker_0.*must be in \\[0, 3\\), got 4"):
        env.step(np.array([[4, 0], [0, 0]]))
    env.close()


@pytest.mark.parametrize(
    ("task", "kwargs", "message"),
    [
        ("simple_spread_v3", {"local_ratio": 1.5}, "local_ratio"),
        ("simple_spread_v3", {"num_agent_neighbors": -1}, "num_agent_neighbors"),
        ("simple_spread_v3", {"N": 0}, "N must be"),
        ("simple_world_comm_v3", {"num_food": 0}, "num_food"),
        ("simple_v3", {"max_cycles": 0}, "max_cycles"),
        ("simple_v3", {"N": 3}, "unknown keyword"),
    ],
)
def test_bad_kwargs_are_refused(task: str, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parallel_pool.make(task, **kwargs)


# The tasks whose agents are all silent: mpe2's frame is circles only (drawn with pygame_raster.h).
RENDERED = ["simple_v3", "simple_spread_v3", "simple_tag_v3", "simple_adversary_v3", "simple_push_v3"]


@pytest.mark.parametrize("dynamic_rescaling", [True, False])
@pytest.mark.parametrize("task", RENDERED)
def test_render_is_mpe2s_frame(task: str, dynamic_rescaling: bool) -> None:
    """Pixel for pixel, at reset and along an episode (the view zooms as entities spread)."""
    n, seed = 2, 4
    env = parallel_pool.make(task, num_envs=n, seed=seed, dynamic_rescaling=dynamic_rescaling)
    assert env.render_mode == "rgb_array" and env.spec.render_shape == (700, 700, 3)
    refs = [reference(task, {"dynamic_rescaling": dynamic_rescaling}) for _ in range(n)]
    for i, ref in enumerate(refs):
        ref.unwrapped.render_mode = "rgb_array"
        ref.reset(seed=seed + i)
    env.reset()
    names = refs[0].possible_agents
    sizes = env.spec.tables["action_sizes"].astype(int)
    rng = np.random.default_rng(0)
    for t in range(12):
        frames = env.render(np.arange(env.num_envs))
        assert frames.shape == (n, 700, 700, 3) and frames.dtype == np.uint8
        for i, ref in enumerate(refs):
            expected = ref.render()
            if not np.array_equal(frames[i], expected):
                where = np.argwhere((frames[i] != expected).any(axis=-1))
                pytest.fail(f"{task} step {t} env {i}: {len(where)} pixels differ, first at {where[0].tolist()}")
        action = np.stack([rng.integers(0, sizes) for _ in range(n)])
        env.step(action)
        for i, ref in enumerate(refs):
            ref.step({name: int(action[i, p]) for p, name in enumerate(names)})
    env.close()


@pytest.mark.parametrize(
    "task", ["simple_reference_v3", "simple_speaker_listener_v4", "simple_crypto_v3", "simple_world_comm_v3"]
)
def test_tasks_with_speaking_agents_do_not_render(task: str) -> None:
    # mpe2 writes what they say with pygame.freetype, which is not reproduced: refused, not approximated.
    env = parallel_pool.make(task)
    assert env.render_mode is None and env.spec.render_shape is None
    env.reset()
    with pytest.raises(ValueError):
        env.render()
    env.close()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_pool.make(task, render_mode="rgb_array")
