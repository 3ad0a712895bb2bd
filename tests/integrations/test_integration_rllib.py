"""RLlib: PPO on CartPole-v1 through the plug-in; the env runners' env is our VectorEnv over one
native pool. A short run in the default suite, the full run to a mean return of 150 marked slow."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
import ray.tune.trainable.trainable as trainable_module
from ray.rllib.algorithms.ppo import PPOConfig

from parallel_pool.integrations.rllib import VECTORIZE_MODE, register
from parallel_pool.vector import ParallelPoolVectorEnv

NUM_ENVS = 8


@pytest.fixture
def local_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A one-CPU local Ray; its temp dir short (Unix socket paths are limited), RLlib's results
    under the test's tmp dir; both removed afterwards."""
    temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")
    monkeypatch.setenv("RAY_TMPDIR", temp_root)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    # Ray's workers start in the driver's working directory and put it first on sys.path: from the
    # repository root they would import the source tree's parallel_pool (no compiled module).
    monkeypatch.chdir(temp_root)
    results = tmp_path / "ray_results"
    monkeypatch.setattr(trainable_module, "DEFAULT_STORAGE_PATH", str(results))
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield results
    finally:
        ray.shutdown()
        shutil.rmtree(temp_root, ignore_errors=True)


def _config(num_env_runners: int, batch: int, task: str = "CartPole-v1") -> PPOConfig:
    return (
        PPOConfig()
        .environment(register(task))
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=NUM_ENVS,
            gym_env_vectorize_mode=VECTORIZE_MODE,
        )
        .training(train_batch_size_per_learner=batch, minibatch_size=250, num_epochs=6, lr=3e-4)
        .debugging(seed=0)
    )


# The Python backend's run takes ~50 s on 2 loaded cores: under -m slow; the default suite samples
# it with a local env runner (test_a_local_env_runner_samples_python_envs).
@pytest.mark.parametrize("task", ["CartPole-v1", pytest.param("gymnasium:CartPole-v1", marks=pytest.mark.slow)])
def test_ppo_runs_on_the_native_pool(local_ray: Path, task: str) -> None:
    """Two iterations with a remote env runner: its env is our VectorEnv, episodes are recorded,
    and CartPole's episodes are well formed (lengths in 8..500, return = length). The pool holds
    the native task, or Gymnasium's own env in worker processes (``gymnasium:<id>``)."""
    algo = _config(num_env_runners=1, batch=1000, task=task).build_algo()
    try:
        kinds = algo.env_runner_group.foreach_env_runner(
            lambda runner: (type(runner.env.unwrapped).__name__, runner.env.unwrapped.num_envs,
                            runner.env.unwrapped._env.workers is not None),
            local_env_runner=False,
        )
        assert kinds == [("ParallelPoolVectorEnv", NUM_ENVS, task.startswith("gymnasium:"))]
        for _ in range(2):
            result = algo.train()
        stats = result["env_runners"]
        assert stats["num_episodes"] > 0
        assert 8 <= stats["episode_len_mean"] <= 500
        assert stats["episode_return_mean"] == pytest.approx(stats["episode_len_mean"])
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 2000
    finally:
        algo.stop()
    assert local_ray.exists() and os.listdir(local_ray)  # results went to the test's tmp dir
    local = _config(num_env_runners=0, batch=500, task=task).build_algo()
    try:
        assert isinstance(local.env_runner.env.unwrapped, ParallelPoolVectorEnv)
    finally:
        local.stop()


def test_a_local_env_runner_samples_python_envs() -> None:
    """``register("gymnasium:CartPole-v1")``: an env runner's VectorEnv is one pool of Gymnasium's own
    CartPole in worker processes; its episodes are CartPole's (return = length, ends as flagged)."""
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    config = (
        PPOConfig()
        .environment(register("gymnasium:CartPole-v1"), env_config={"num_workers": 2})
        .env_runners(num_envs_per_env_runner=4, gym_env_vectorize_mode=VECTORIZE_MODE)
    )
    runner = SingleAgentEnvRunner(config=config)
    try:
        pool = runner.env.unwrapped._env
        assert pool.workers is not None and pool.workers.num_workers == 2 and pool.num_envs == 4
        episodes = runner.sample(num_timesteps=400, random_actions=True)
        assert sum(len(e) for e in episodes) >= 400
        done = [e for e in episodes if e.is_done]
        assert done and all(e.is_terminated and e.get_return() == len(e) for e in done)
    finally:
        runner.stop()


@pytest.mark.slow
@pytest.mark.timeout(1800)  # up to 40 PPO iterations of 2,000 steps; 7 took 71 s under load
def test_ppo_reaches_150_on_cartpole(local_ray: Path) -> None:
    algo = _config(num_env_runners=0, batch=2000).build_algo()
    try:
        best = 0.0
        iterations = 0
        while iterations < 40:
            result = algo.train()
            iterations += 1
            best = max(best, result["env_runners"].get("episode_return_mean", 0.0))
            if best >= 150:
                break
        print(f"PPO on CartPole-v1: mean return {best:.1f} after {iterations} iterations "
              f"({result['env_runners']['num_env_steps_sampled_lifetime']} env steps)")
        assert best >= 150, f"PPO reached a mean return of only {best}"
    finally:
        algo.stop()
