"""Tianshou 2.x PPO on a parallel_pool batch: TianshouVectorEnv in place of DummyVectorEnv/SubprocVectorEnv.

    python examples/tianshou_ppo.py --env-id CartPole-v1 --total-timesteps 100000
    python examples/tianshou_ppo.py --high-level      # the same through Tianshou's high-level API

Low level (default): the training and test collectors step native pools directly. High level:
``ParallelPoolEnvFactory`` gives ``PPOExperimentBuilder`` its environments.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from ppo_args import add_task_args

from parallel_pool.integrations.tianshou import ParallelPoolEnvFactory, TianshouVectorEnv


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="CartPole-v1", seed=0, total_timesteps=100_000, num_envs=8)
    p.add_argument("--num-test-envs", type=int, default=10)
    p.add_argument("--epoch-steps", type=int, default=10_000, help="env steps per epoch (one test per epoch)")
    p.add_argument("--collect-steps", type=int, default=2_000, help="env steps per collect/update")
    p.add_argument("--repeat", type=int, default=10, help="passes over each collected batch")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--stop-return", type=float, default=None, help="stop once the test return reaches this")
    p.add_argument("--high-level", action="store_true")
    return p.parse_args()


def low_level(args: argparse.Namespace) -> float:
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.trainer import OnPolicyTrainerParams
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic

    train_envs = TianshouVectorEnv(args.env_id, num_envs=args.num_envs, seed=args.seed)
    test_envs = TianshouVectorEnv(args.env_id, num_envs=args.num_test_envs, seed=args.seed + 1000)
    observation_space, action_space = train_envs.observation_space[0], train_envs.action_space[0]

    actor = DiscreteActor(preprocess_net=Net(state_shape=observation_space.shape, hidden_sizes=[64, 64]),
                          action_shape=action_space.n)
    critic = DiscreteCritic(preprocess_net=Net(state_shape=observation_space.shape, hidden_sizes=[64, 64]))
    policy = DiscreteActorPolicy(actor=actor, dist_fn=torch.distributions.Categorical, action_space=action_space,
                                 deterministic_eval=True)
    algorithm = PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=args.learning_rate),
                    gamma=0.99, gae_lambda=0.95, max_grad_norm=0.5, ent_coef=0.0, advantage_normalization=True)
    train_collector = Collector(algorithm, train_envs, VectorReplayBuffer(args.collect_steps, args.num_envs))
    test_collector = Collector(algorithm, test_envs)
    result = algorithm.run_training(OnPolicyTrainerParams(
        training_collector=train_collector, test_collector=test_collector,
        max_epochs=max(1, args.total_timesteps // args.epoch_steps),
        epoch_num_steps=min(args.epoch_steps, args.total_timesteps),
        collection_step_num_env_steps=args.collect_steps, update_step_num_repetitions=args.repeat,
        batch_size=args.batch_size, test_step_num_episodes=args.num_test_envs,
        stop_fn=None if args.stop_return is None else (lambda mean_return: mean_return >= args.stop_return),
        verbose=False, show_progress=False,
    ))
    train_envs.close()
    test_envs.close()
    return float(result.best_reward)


def high_level(args: argparse.Namespace) -> float:
    from tianshou.highlevel.config import OnPolicyTrainingConfig
    from tianshou.highlevel.experiment import ExperimentConfig, PPOExperimentBuilder
    from tianshou.highlevel.params.algorithm_params import PPOParams

    experiment = (
        PPOExperimentBuilder(
            ParallelPoolEnvFactory(args.env_id),
            ExperimentConfig(seed=args.seed, device="cpu", persistence_enabled=False, watch=False),
            OnPolicyTrainingConfig(
                max_epochs=max(1, args.total_timesteps // args.epoch_steps),
                epoch_num_steps=min(args.epoch_steps, args.total_timesteps),
                num_training_envs=args.num_envs, num_test_envs=args.num_test_envs,
                test_step_num_episodes=args.num_test_envs, buffer_size=args.collect_steps,
                collection_step_num_env_steps=args.collect_steps, update_step_num_repetitions=args.repeat,
                batch_size=args.batch_size,
            ),
        )
        .with_ppo_params(PPOParams(lr=args.learning_rate, advantage_normalization=True))
        .build()
    )
    result = experiment.run()
    return float(result.trainer_result.best_reward)


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    start = time.time()
    best = high_level(args) if args.high_level else low_level(args)
    print(f"best test return {best:.1f} in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
