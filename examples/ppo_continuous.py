"""PPO for continuous actions (MuJoCo) on a parallel_pool batch, CleanRL style: one file, top to bottom.

    python examples/ppo_continuous.py --env-id HalfCheetah-v5 --total-timesteps 1000000
    python examples/ppo_continuous.py --env-id Pendulum-v1 --total-timesteps 200000

Follows CleanRL's ppo_continuous_action.py (observation and reward normalisation, clipped actions,
GAE, clipped surrogate), with the Gymnasium wrappers written out inline, because one native pool
steps the whole batch. Same-step autoreset: the step that ends an episode returns the next
episode's first observation, and the last one is in ``info["final_obs"]``, which is used to
bootstrap episodes cut by the time limit. The agent, the rollout buffers, GAE and the PPO update
come from ppo_core.py beside this file.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from ppo_args import add_ppo_args, add_task_args, ppo_sizes
from ppo_core import ContinuousAgent, RolloutStorage, anneal_lr, ppo_update, print_progress

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="HalfCheetah-v5", seed=1, total_timesteps=1_000_000, num_envs=8)
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    add_ppo_args(p, num_steps=256, learning_rate=3e-4, num_minibatches=32, update_epochs=10, clip_coef=0.2,
                 ent_coef=0.0)
    p.add_argument("--torch-threads", type=int, default=1)
    return p.parse_args()


class RunningMeanStd:
    """Running mean and variance (parallel algorithm), as Gymnasium's normalisation wrappers keep."""

    def __init__(self, shape: tuple[int, ...] = ()) -> None:
        self.mean, self.var, self.count = np.zeros(shape), np.ones(shape), 1e-4

    def update(self, x: np.ndarray) -> None:
        mean, var, n = x.mean(0), x.var(0), x.shape[0]
        delta, total = mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.count = total


def main() -> None:
    args = parse_args()
    _, minibatch_size, num_iterations = ppo_sizes(args, args.num_envs)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # the minibatch order (ppo_core.ppo_update shuffles with it)
    torch.set_num_threads(args.torch_threads)

    # The whole batch of envs is one native pool.
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, seed=args.seed, num_threads=args.num_threads,
        autoreset_mode="same_step", episode_stats=True,
    )
    obs_dim = int(np.prod(envs.observation_space.shape))
    act_dim = int(np.prod(envs.action_space.shape))
    low, high = envs.action_space.low, envs.action_space.high
    agent = ContinuousAgent(obs_dim, act_dim)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # Inline NormalizeObservation / NormalizeReward (with a discounted-return scale) and clipping.
    obs_rms, ret_rms = RunningMeanStd((obs_dim,)), RunningMeanStd()
    discounted_return = np.zeros(args.num_envs)

    def normalize_obs(o: np.ndarray, update: bool = True) -> np.ndarray:
        if update:
            obs_rms.update(o)
        return np.clip((o - obs_rms.mean) / np.sqrt(obs_rms.var + 1e-8), -10, 10).astype(np.float32)

    storage = RolloutStorage(args.num_steps, args.num_envs, (obs_dim,), action_shape=(act_dim,))

    global_step, start = 0, time.time()
    raw_obs, _ = envs.reset()
    next_obs = torch.from_numpy(normalize_obs(raw_obs.reshape(args.num_envs, -1)))
    next_done = torch.zeros(args.num_envs)
    recent_returns: list[float] = []

    for iteration in range(1, num_iterations + 1):
        anneal_lr(optimizer, iteration, num_iterations, args)

        for step in range(args.num_steps):
            global_step += args.num_envs
            action = storage.act(agent, step, next_obs, next_done)
            raw_obs, reward, terminated, truncated, info = envs.step(np.clip(action.numpy(), low, high))
            done = terminated | truncated
            # Time-limit truncation is not a terminal state: bootstrap from the real last observation.
            if truncated.any():
                cut = np.flatnonzero(truncated & ~terminated)
                if len(cut):
                    final = np.stack([info["final_obs"][i] for i in cut]).reshape(len(cut), -1)
                    with torch.no_grad():
                        v_final = agent.get_value(torch.from_numpy(normalize_obs(final, update=False)))
                    # Scaled back to raw reward units, since rewards are scaled below.
                    reward = reward.copy()
                    reward[cut] += args.gamma * v_final.flatten().numpy() * np.sqrt(ret_rms.var + 1e-8)
            discounted_return = discounted_return * args.gamma * (1 - done) + reward
            ret_rms.update(discounted_return)
            scaled = np.clip(reward / np.sqrt(ret_rms.var + 1e-8), -10, 10)
            storage.rewards[step] = torch.as_tensor(scaled, dtype=torch.float32)
            next_obs = torch.from_numpy(normalize_obs(raw_obs.reshape(args.num_envs, -1)))
            next_done = torch.as_tensor(done, dtype=torch.float32)
            if "episode" in info:  # the pool's episode statistics (raw returns)
                recent_returns += info["episode"]["r"][info["_episode"]].tolist()

        # GAE over the rollout, then the update.
        ppo_update(agent, optimizer, storage.batch(agent, next_obs, next_done, args), minibatch_size, args)

        print_progress(iteration, global_step, start, recent_returns, "episodic", last=iteration == num_iterations)

    envs.close()


if __name__ == "__main__":
    main()
