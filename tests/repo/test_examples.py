"""Every script in examples/ runs to the end in smoke mode (tiny budgets), as a user would run it.

Each runs in a subprocess whose working directory is a temporary one, so that the installed
package is imported (not the source tree) and the files a script writes (rl_games' runs/) land
there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Nothing is skipped: the test extra installs every library the examples use, and the Atari and
# MuJoCo families are part of the build, so a missing one is a failure here.


PPO_SMOKE = [
    "--total-timesteps",
    "256",
    "--num-envs",
    "2",
    "--num-steps",
    "32",
    "--num-minibatches",
    "2",
    "--update-epochs",
    "1",
]

# A Tianshou run of a few hundred steps, for both of its trainer modes.
TIANSHOU_SMALL = ["--total-timesteps", "200", "--epoch-steps", "200", "--collect-steps", "100", "--num-envs", "2",
                  "--num-test-envs", "2", "--repeat", "1"]

CASES = [
    pytest.param("ppo_atari.py", ["--env-id", "Pong-v5", *PPO_SMOKE], "mean game return", id="ppo_atari-Pong"),
    pytest.param("ppo_atari.py", ["--env-id", "CartPole-v1", *PPO_SMOKE], "mean game return", id="ppo_atari-CartPole"),
    pytest.param(
        "ppo_atari_async.py",
        ["--env-id", "Pong-v5", *PPO_SMOKE, "--num-envs", "4", "--batch-size", "2"],
        "mean game return",
        id="ppo_atari_async-Pong",
    ),
    pytest.param(
        "ppo_atari_async.py",
        ["--env-id", "CartPole-v1", *PPO_SMOKE, "--num-envs", "4", "--batch-size", "2"],
        "mean game return",
        id="ppo_atari_async-CartPole",
    ),
    pytest.param(
        "ppo_continuous.py",
        ["--env-id", "HalfCheetah-v5", *PPO_SMOKE],
        "mean episodic return",
        id="ppo_continuous-HalfCheetah",
    ),
    pytest.param(
        "ppo_continuous.py",
        ["--env-id", "Pendulum-v1", *PPO_SMOKE],
        "mean episodic return",
        id="ppo_continuous-Pendulum",
    ),
    pytest.param(
        "sb3_ppo.py",
        ["--total-timesteps", "128", "--num-envs", "2", "--n-steps", "64", "--n-epochs", "1", "--eval-episodes", "2"],
        "evaluation over 2 episodes",
        id="sb3_ppo",
    ),
    pytest.param(
        "sb3_ppo.py",
        [
            "--env-id",
            "Pendulum-v1",
            "--vec-normalize",
            "--total-timesteps",
            "128",
            "--num-envs",
            "2",
            "--n-steps",
            "64",
            "--n-epochs",
            "1",
            "--eval-episodes",
            "2",
        ],
        "evaluation over 2 episodes",
        id="sb3_ppo-VecNormalize",
    ),
    pytest.param("tianshou_ppo.py", TIANSHOU_SMALL, "best test return", id="tianshou_ppo"),
    pytest.param(
        "tianshou_ppo.py", ["--high-level", *TIANSHOU_SMALL], "best test return", id="tianshou_ppo-high-level"
    ),
    pytest.param(
        "rl_games_ppo.py",
        ["--total-timesteps", "128", "--num-envs", "4", "--horizon", "16", "--mini-epochs", "1"],
        "trained in",
        id="rl_games_ppo",
    ),
    # One training iteration each: RLlib on one machine, and on a local two-node Ray cluster.
    pytest.param("rllib_ppo.py", ["--max-iterations", "1", "--num-envs", "2"], "iter   1", id="rllib_ppo"),
    pytest.param(
        "rllib_ppo_cluster.py", ["--max-iterations", "1", "--num-envs", "2"], "iter   1", id="rllib_ppo_cluster"
    ),
]


@pytest.mark.parametrize(("script", "args", "last_line"), CASES)
def test_example_runs_in_smoke_mode(script: str, args: list[str], last_line: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert last_line in proc.stdout, proc.stdout[-2000:]


def test_every_example_script_is_run() -> None:
    # A case above for every script but the two that other tests run (tests/core/test_xla.py the
    # JAX one, tests/integrations/test_integration_ray.py ppo_ray.py); the shared modules are no scripts.
    shared = {"ppo_core.py", "ppo_args.py"}
    run_elsewhere = {"ppo_atari_xla_jax.py", "ppo_ray.py"}
    scripts = {p.name for p in EXAMPLES.glob("*.py")} - shared - run_elsewhere
    assert scripts == {case.values[0] for case in CASES}


def test_a_seeded_sync_run_repeats(tmp_path: Path) -> None:
    # Same seed, same numbers: the envs, the agent's weights and actions, and the minibatch order
    # are all seeded (SPS aside). ppo_atari_async.py's order of arrival is the machine's, not the seed's.
    # Eight iterations of four updates: long enough for the minibatch order to show in the returns.
    args = ["--env-id", "CartPole-v1", "--total-timesteps", "2048", "--num-envs", "4", "--num-steps", "64"]
    args += ["--seed", "3"]
    runs = [
        subprocess.run([sys.executable, str(EXAMPLES / "ppo_atari.py"), *args], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, check=True).stdout
        for _ in range(2)
    ]
    returns = [[line.split(", SPS")[0] for line in run.splitlines() if line.startswith("step ")] for run in runs]
    assert returns[0], runs[0]
    assert returns[0] == returns[1]
