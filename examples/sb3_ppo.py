"""Stable-Baselines3 PPO on a parallel_pool batch: ParallelPoolVecEnv in place of SubprocVecEnv.

    python examples/sb3_ppo.py --env-id CartPole-v1 --total-timesteps 100000
    python examples/sb3_ppo.py --env-id Pendulum-v1 --vec-normalize --total-timesteps 200000

The only change from an SB3 script over subprocesses is the line that makes the envs:

    # envs = SubprocVecEnv([lambda: Monitor(gym.make(args.env_id)) for _ in range(args.num_envs)])
    envs = ParallelPoolVecEnv(args.env_id, num_envs=args.num_envs, seed=args.seed)

Episode statistics come from the pool (as Monitor's), so SB3 logs rollout/ep_rew_mean as usual.
"""

from __future__ import annotations

import argparse
import time

from ppo_args import add_task_args
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecNormalize

from parallel_pool.integrations.sb3 import ParallelPoolVecEnv


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="CartPole-v1", seed=0, total_timesteps=100_000, num_envs=8)
    p.add_argument("--n-steps", type=int, default=32, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=20)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--vec-normalize", action="store_true", help="wrap in VecNormalize (continuous control)")
    p.add_argument("--eval-episodes", type=int, default=10)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    envs = ParallelPoolVecEnv(args.env_id, num_envs=args.num_envs, seed=args.seed)
    if args.vec_normalize:
        envs = VecNormalize(envs)

    # RL Zoo's CartPole-v1 PPO settings (linear schedules), scaled by the arguments.
    model = PPO(
        "MlpPolicy", envs, n_steps=args.n_steps, batch_size=min(args.batch_size, args.n_steps * args.num_envs),
        gae_lambda=0.8, gamma=0.98, n_epochs=args.n_epochs, ent_coef=0.0,
        learning_rate=lambda remaining: remaining * args.learning_rate,
        clip_range=lambda remaining: remaining * 0.2, seed=args.seed, device="cpu",
    )
    start = time.time()
    model.learn(total_timesteps=args.total_timesteps)
    print(f"trained {model.num_timesteps} steps in {time.time() - start:.1f} s")

    eval_envs = ParallelPoolVecEnv(args.env_id, num_envs=min(args.num_envs, args.eval_episodes), seed=args.seed + 1000)
    if args.vec_normalize:  # the training statistics, frozen
        eval_envs = VecNormalize(eval_envs, training=False, norm_reward=False)
        eval_envs.obs_rms = envs.obs_rms
    mean_return, std_return = evaluate_policy(model, eval_envs, n_eval_episodes=args.eval_episodes)
    print(f"evaluation over {args.eval_episodes} episodes: {mean_return:.1f} +/- {std_return:.1f}")
    envs.close()
    eval_envs.close()


if __name__ == "__main__":
    main()
