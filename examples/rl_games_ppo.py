"""rl_games PPO on a parallel_pool task: the config names the task, rl_games' Runner trains.

    python examples/rl_games_ppo.py --env-id CartPole-v1 --total-timesteps 200000

``register()`` adds the vecenv type ``PARALLEL_POOL`` and the env configurations
``parallel_pool/<task>`` to rl_games; a YAML config does the same with ``env_name:
parallel_pool/CartPole-v1`` (or ``env_name: parallel_pool`` and ``env_config: {env_name: ...}``, as
rl_games' envpool configs). rl_games writes its summaries and checkpoints under ``runs/``.
"""

from __future__ import annotations

import argparse
import time

from ppo_args import add_task_args
from rl_games.torch_runner import Runner

from parallel_pool.integrations.rl_games import register


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="CartPole-v1", seed=0, total_timesteps=200_000, num_envs=16)
    p.add_argument("--horizon", type=int, default=32, help="steps per env per epoch")
    p.add_argument("--minibatch-size", type=int, default=64)
    p.add_argument("--mini-epochs", type=int, default=4)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    register()
    # rl_games' ppo_cartpole.yaml as a dict; only env_name, env_config and the sizes differ.
    config = {"params": {
        "seed": args.seed,
        "algo": {"name": "a2c_discrete"},
        "model": {"name": "discrete_a2c"},
        "network": {
            "name": "actor_critic", "separate": True, "space": {"discrete": None},
            "mlp": {"units": [32, 32], "activation": "relu", "initializer": {"name": "default"},
                    "regularizer": {"name": "None"}},
        },
        "config": {
            "name": f"parallel_pool_{args.env_id}",
            "env_name": f"parallel_pool/{args.env_id}",
            "env_config": {"seed": args.seed},
            "num_actors": args.num_envs,
            "horizon_length": args.horizon,
            "minibatch_size": min(args.minibatch_size, args.num_envs * args.horizon),
            "mini_epochs": args.mini_epochs,
            "max_epochs": max(1, args.total_timesteps // (args.num_envs * args.horizon)),
            "reward_shaper": {"scale_value": 0.1}, "normalize_advantage": True, "gamma": 0.99, "tau": 0.9,
            "learning_rate": 2e-4, "score_to_win": 400, "grad_norm": 1.0, "entropy_coef": 0.01,
            "truncate_grads": True, "e_clip": 0.2, "clip_value": True, "critic_coef": 1, "lr_schedule": None,
            "kl_threshold": 0.008, "normalize_input": False, "value_bootstrap": True, "save_best_after": 50,
            "save_frequency": 0, "device": "cpu", "multi_gpu": False,
            "torch_compile": False,  # compiling a 32-unit MLP takes minutes on a CPU and gains nothing
        },
    }}
    runner = Runner()
    runner.load(config)
    start = time.time()
    runner.run({"train": True, "play": False})
    print(f"trained in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
