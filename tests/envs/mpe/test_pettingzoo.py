"""The PettingZoo front-end: the batched PettingZooPool (sync, async, autoreset modes) against mpe2's
own parallel envs, and the one-env ParallelEnv view under pettingzoo's parallel_api_test.

Values are compared exactly (observations, rewards, flags); the tasks' numerics are test_mpe.py's.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import mpe2  # noqa: F401  (the oracle: the README's test command installs it)
import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import parallel_pool
from parallel_pool.tasks import task_info

# Every MPE task (tests/envs/mpe/test_mpe.py checks the registry holds exactly mpe2's nine).
TASKS = [t for t in parallel_pool.list_all_envs() if task_info(t).get("family") == "mpe"]


def reference(task: str, **kwargs: Any) -> Any:
    return importlib.import_module(f"mpe2.{task}").parallel_env(**kwargs)


def random_actions(env: Any, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One action per env for every agent, in each agent's own space."""
    out = {}
    for agent in env.possible_agents:
        space = env.action_space(agent)
        if hasattr(space, "n"):
            out[agent] = rng.integers(0, space.n, n)
        else:
            out[agent] = rng.uniform(0, 1, (n, *space.shape)).astype(np.float32)
    return out


def one_env(actions: dict[str, np.ndarray], row: int) -> dict[str, Any]:
    return {agent: (int(a[row]) if a.ndim == 1 else a[row]) for agent, a in actions.items()}


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("task", TASKS)
def test_one_env_view_passes_parallel_api_test(task: str, continuous: bool) -> None:
    env = parallel_pool.make_pettingzoo_env(task, continuous_actions=continuous, max_cycles=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the API test warns where it finds a fault
        parallel_api_test(env, num_cycles=100)
    env.close()


@pytest.mark.parametrize("task", ["simple_speaker_listener_v4", "simple_world_comm_v3", "simple_v3"])
def test_one_env_view_is_mpe2s_parallel_env(task: str) -> None:
    ours = parallel_pool.make_pettingzoo_env(task, max_cycles=20)
    theirs = reference(task, max_cycles=20)
    rng = np.random.default_rng(0)
    for episode in range(2):
        seed = 5 if episode == 0 else None
        obs, infos = ours.reset(seed=seed)
        ref_obs, ref_infos = theirs.reset(seed=seed)
        assert ours.agents == theirs.agents and infos == ref_infos
        for agent in ours.agents:
            np.testing.assert_array_equal(obs[agent], ref_obs[agent])
            assert obs[agent].dtype == np.float32
            assert ours.observation_space(agent) == theirs.observation_space(agent)
            assert ours.action_space(agent) == theirs.action_space(agent)
        np.testing.assert_array_equal(ours.state(), theirs.state())
        while ours.agents:
            actions = one_env(random_actions(ours, 1, rng), 0)
            obs, rew, term, trunc, infos = ours.step(actions)
            ref_obs, ref_rew, ref_term, ref_trunc, ref_infos = theirs.step(actions)
            assert ours.agents == theirs.agents
            assert rew == dict(ref_rew) and term == ref_term and trunc == ref_trunc and infos == ref_infos
            assert all(type(r) is float for r in rew.values())
            for agent in obs:
                np.testing.assert_array_equal(obs[agent], ref_obs[agent])
            np.testing.assert_array_equal(ours.state(), theirs.state())
        assert not theirs.agents and all(trunc.values())
    with pytest.raises(RuntimeError, match="call reset"):
        ours.step({})
    if ours.render_mode is None:  # agents that speak: their words are pygame.freetype text
        with pytest.raises(NotImplementedError, match="does not render"):
            ours.render()
    else:
        theirs.unwrapped.render_mode = "rgb_array"
        np.testing.assert_array_equal(ours.render(), theirs.render())
    ours.close()


# (simple_tag's and simple_world_comm's rewards are exact only to test_mpe.py's stated tolerance.)
@pytest.mark.parametrize(("task", "continuous"), [("simple_adversary_v3", False), ("simple_reference_v3", True)])
def test_sync_batches_are_keyed_by_agent_in_env_order(task: str, continuous: bool) -> None:
    n = 5
    env = parallel_pool.make_pettingzoo(task, num_envs=n, seed=3, num_threads=3, continuous_actions=continuous)
    refs = [reference(task, continuous_actions=continuous) for _ in range(n)]
    obs, infos = env.reset()
    ref_obs = [ref.reset(seed=3 + i)[0] for i, ref in enumerate(refs)]
    assert env.agents == env.possible_agents == refs[0].possible_agents
    rng = np.random.default_rng(1)
    for t in range(60):  # 25-step episodes: next_step autoreset twice
        for agent in env.agents:
            assert obs[agent].shape == (n, *env.observation_space(agent).shape)
            np.testing.assert_array_equal(obs[agent], np.stack([o[agent] for o in ref_obs]), err_msg=f"{t} {agent}")
            np.testing.assert_array_equal(infos[agent]["env_id"], np.arange(n))
        actions = random_actions(env, n, rng)
        obs, rew, term, trunc, infos = env.step(actions)
        ref_obs = []
        for i, ref in enumerate(refs):
            if not ref.agents:  # ended last step: this step reset it, with zero rewards
                ref_obs.append(ref.reset()[0])
                assert all(rew[agent][i] == 0 for agent in env.agents) and not term[env.agents[0]][i]
                continue
            o, r, te, tr, _ = ref.step(one_env(actions, i))
            ref_obs.append(o)
            for agent in env.agents:
                assert rew[agent][i] == r[agent] and term[agent][i] == te[agent] and trunc[agent][i] == tr[agent]
    env.close()


def test_async_batches_follow_each_env() -> None:
    """batch_size < num_envs: each received env's rows, per agent, are its own mpe2 env's."""
    task, n, batch = "simple_spread_v3", 6, 2
    env = parallel_pool.make_pettingzoo(task, num_envs=n, batch_size=batch, seed=7, num_threads=3, max_cycles=9, N=4)
    assert env.is_async
    refs = [reference(task, max_cycles=9, N=4) for _ in range(n)]
    expected = {i: ref.reset(seed=7 + i)[0] for i, ref in enumerate(refs)}
    expected_rew: dict[int, dict[str, float] | None] = {i: None for i in range(n)}
    rng = np.random.default_rng(2)
    env.async_reset()
    seen = np.zeros(n, int)
    for _ in range(60):
        obs, rew, term, trunc, infos = env.recv(timeout=60)
        ids = infos["agent_0"]["env_id"]
        assert len(ids) == batch and all(infos[a]["env_id"] is ids for a in env.agents)
        for k, e in enumerate(ids):
            seen[e] += 1
            for agent in env.agents:
                np.testing.assert_array_equal(obs[agent][k], expected[e][agent])
                want = expected_rew[e]
                assert rew[agent][k] == (0.0 if want is None else want[agent])
        actions = random_actions(env, batch, rng)
        for k, e in enumerate(ids):
            ref = refs[e]
            if not ref.agents:
                expected[e], expected_rew[e] = ref.reset()[0], None
            else:
                o, r, _, _, _ = ref.step(one_env(actions, k))
                expected[e], expected_rew[e] = o, dict(r)
        env.send(actions, ids)
    assert (seen > 5).all()  # every env came through, in mixed batches
    env.close()


def test_disabled_autoreset_resets_chosen_envs() -> None:
    env = parallel_pool.make_pettingzoo("simple_push_v3", num_envs=3, seed=0, autoreset_mode="disabled", max_cycles=2)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(2):
        _, _, _, trunc, _ = env.step(random_actions(env, 3, rng))
    assert trunc["agent_0"].all()
    obs, infos = env.reset(env_id=np.array([2, 0]), seed=[10, 11, 12])
    np.testing.assert_array_equal(infos["agent_0"]["env_id"], [2, 0])
    ref = reference("simple_push_v3")
    for k, e in enumerate([2, 0]):
        ref_obs, _ = ref.reset(seed=10 + e)
        for agent in env.agents:
            np.testing.assert_array_equal(obs[agent][k], ref_obs[agent])
    env.close()


def test_bad_actions_name_the_agent() -> None:
    env = parallel_pool.make_pettingzoo("simple_speaker_listener_v4", num_envs=2, seed=0)
    env.reset()
    good = {"speaker_0": np.zeros(2, np.int64), "listener_0": np.zeros(2, np.int64)}
    with pytest.raises(ValueError, match="no action for agent 'listener_0'"):
        env.step({"speaker_0": good["speaker_0"]})
    with pytest.raises(ValueError, match="speaker_0.*must be in \\[0, 3\\)"):
        env.step({**good, "speaker_0": np.array([0, 3])})
    with pytest.raises(ValueError, match="unknown agent"):
        env.step({**good, "eve_0": np.zeros(2, np.int64)})
    with pytest.raises(ValueError, match="shape \\(2,\\)"):
        env.step({**good, "listener_0": np.zeros(3, np.int64)})
    env.step(good)  # nothing was sent by the refused calls
    env.close()
    cont = parallel_pool.make_pettingzoo("simple_crypto_v3", num_envs=2, continuous_actions=True)
    cont.reset()
    with pytest.raises(ValueError, match="shape \\(2, 4\\)"):
        cont.step({agent: np.zeros((2, 5), np.float32) for agent in cont.agents})
    cont.close()


def test_refusals() -> None:
    with pytest.raises(ValueError, match="no named agents"):
        parallel_pool.make_pettingzoo("CartPole-v1")
    with pytest.raises(ValueError, match="same_step"):
        parallel_pool.make_pettingzoo("simple_spread_v3", autoreset_mode="same_step")
    with pytest.raises(ValueError, match="fixes num_envs"):
        parallel_pool.make_pettingzoo_env("simple_spread_v3", num_envs=2)
