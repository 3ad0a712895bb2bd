"""rl_games: a config names a parallel_pool task, and rl_games' Runner trains on it for a few epochs."""

from __future__ import annotations

import copy
import os
import warnings
from typing import Any

import numpy as np
import pytest
import yaml

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "`torch.jit.script_method` is deprecated", DeprecationWarning)
    import rl_games
    from rl_games.common import env_configurations, vecenv
    from rl_games.torch_runner import Runner

import parallel_pool
from parallel_pool.integrations.rl_games import RlGamesVecEnv, register


def shrunk_ppo_cartpole() -> dict[str, Any]:
    """rl_games' own ppo_cartpole.yaml (its wheel ships it), shrunk to 4 short epochs on
    parallel_pool/CartPole-v1; device cpu and no torch.compile (minutes of compiling)."""
    with open(os.path.join(os.path.dirname(rl_games.__file__), "configs", "ppo_cartpole.yaml")) as f:
        params = yaml.safe_load(f)["params"]
    # Torch's threads (auto: one per CPU, up to 4) and no checkpoint to load: rl_games' defaults.
    for key in ("torch_threads", "load_checkpoint", "load_path"):
        del params[key]
    params["seed"] = 0
    params["config"].update(
        name="pp_cartpole", env_name="parallel_pool/CartPole-v1", env_config={"seed": 0}, device="cpu",
        num_actors=8, horizon_length=16, mini_epochs=2, max_epochs=4, save_best_after=100, save_frequency=0,
        value_bootstrap=True, torch_compile=False,
        # PyYAML reads the file's 2e-4 and None as strings.
        learning_rate=2e-4, lr_schedule=None,
    )
    return {"params": params}


CARTPOLE_CONFIG = shrunk_ppo_cartpole()


def test_register_names_every_task() -> None:
    names = register()
    assert "parallel_pool" in names and "parallel_pool/CartPole-v1" in names
    assert set(names) <= set(env_configurations.configurations)
    assert env_configurations.configurations["parallel_pool/Pendulum-v1"]["vecenv_type"] == "PARALLEL_POOL"
    assert "PARALLEL_POOL" in vecenv.vecenv_config
    env = vecenv.create_vec_env("parallel_pool", 3, env_name="Pendulum-v1", seed=0)
    assert isinstance(env, RlGamesVecEnv) and env.get_env_info()["action_space"].shape == (1,)
    env.close()
    # The player's single env comes from env_creator.
    single = env_configurations.configurations["parallel_pool/CartPole-v1"]["env_creator"](seed=0)
    assert single.reset().shape == (1, 4)
    single.close()
    with pytest.raises(ValueError, match="name the task"):
        RlGamesVecEnv("parallel_pool", 2)


def test_vec_env_step_semantics() -> None:
    env = RlGamesVecEnv("parallel_pool/CartPole-v1", 4, seed=0, max_episode_steps=12)
    ref = parallel_pool.make("CartPole-v1", num_envs=4, seed=0, max_episode_steps=12, autoreset_mode="same_step")
    obs = env.reset()
    np.testing.assert_array_equal(obs, ref.reset()[0])
    rng = np.random.default_rng(0)
    returns = np.zeros(4)
    seen_truncation = seen_termination = False
    for _ in range(100):
        action = rng.integers(0, 2, 4)
        obs, rewards, dones, infos = env.step(action)
        ref_obs, ref_rew, terminated, truncated, _ = ref.step(action)
        np.testing.assert_array_equal(obs, ref_obs)
        returns += rewards
        np.testing.assert_array_equal(rewards, ref_rew)
        np.testing.assert_array_equal(dones, terminated | truncated)
        np.testing.assert_array_equal(infos["time_outs"], truncated & ~terminated)
        # Same-step autoreset: after a done, obs already starts the next episode.
        assert np.all(np.abs(obs[dones]) <= 0.05)
        np.testing.assert_array_equal(infos["scores"][dones], returns[dones])
        returns[dones] = 0
        seen_truncation |= bool(infos["time_outs"].any())
        seen_termination |= bool((dones & ~infos["time_outs"]).any())
    assert seen_truncation and seen_termination
    env.close()
    ref.close()


def test_runner_trains_on_python_envs(tmp_path, monkeypatch, capsys) -> None:
    """The generic ``parallel_pool`` config name with ``env_config["env_name"]`` a Gymnasium id: the
    runner trains on Gymnasium's own CartPole, run by the Python backend."""
    register()
    monkeypatch.chdir(tmp_path)
    config = copy.deepcopy(CARTPOLE_CONFIG)
    config["params"]["config"].update(
        env_name="parallel_pool", env_config={"env_name": "gymnasium:CartPole-v1", "seed": 0, "num_workers": 2}
    )
    env = vecenv.create_vec_env("parallel_pool", 2, **config["params"]["config"]["env_config"])
    try:
        assert env.env.workers is not None and env.env.workers.num_workers == 2  # worker processes
    finally:
        env.close()
    runner = Runner()
    runner.load(config)
    runner.run({"train": True, "play": False})
    out = capsys.readouterr().out
    assert "epoch: 4/4" in out and "MAX EPOCHS NUM!" in out


def test_runner_trains_a_few_epochs(tmp_path, monkeypatch, capsys) -> None:
    register()
    monkeypatch.chdir(tmp_path)  # rl_games writes runs/ (summaries, checkpoints) into the cwd
    runner = Runner()
    runner.load(copy.deepcopy(CARTPOLE_CONFIG))
    runner.run({"train": True, "play": False})
    out = capsys.readouterr().out
    assert "epoch: 4/4" in out and "MAX EPOCHS NUM!" in out
    checkpoints = [f for _, _, files in os.walk(tmp_path / "runs") for f in files if f.endswith(".pth")]
    assert checkpoints


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_runner_with_the_envpool_style_config(tmp_path, monkeypatch, capsys) -> None:
    """``env_name: parallel_pool`` with the task in ``env_config``, as rl_games' envpool configs do."""
    register()
    monkeypatch.chdir(tmp_path)
    config = copy.deepcopy(CARTPOLE_CONFIG)
    params = config["params"]["config"]
    params.update(env_name="parallel_pool", env_config={"env_name": "Pendulum-v1", "seed": 1}, max_epochs=2)
    config["params"]["algo"]["name"] = "a2c_continuous"
    config["params"]["model"]["name"] = "continuous_a2c_logstd"
    config["params"]["network"]["space"] = {"continuous": {
        "mu_activation": "None", "sigma_activation": "None", "mu_init": {"name": "default"},
        "sigma_init": {"name": "const_initializer", "val": 0}, "fixed_sigma": True}}
    params.update(clip_actions=True, normalize_input=True, normalize_value=True, bounds_loss_coef=0.0)
    runner = Runner()
    runner.load(config)
    runner.run({"train": True, "play": False})
    assert "epoch: 2/2" in capsys.readouterr().out
