"""PPO on Atari (Pong-v5) with a sync parallel_pool batch, CleanRL style: one file, top to bottom.

    python examples/ppo_atari.py --env-id Pong-v5 --total-timesteps 10000000

Follows CleanRL's ppo_atari_envpool.py. The pool does the DeepMind preprocessing in C++:
observations are ``(num_envs, 4, 84, 84)`` uint8 stacks, actions ``Discrete``; ``episodic_life``
ends an episode at each lost life (``info["terminated"]`` is the real game over) and
``reward_clip`` clips rewards to their sign (``info["reward"]`` is the raw one), so game scores are
summed from the raw rewards up to the real game over. Same-step autoreset: after a ``done`` the
observation already starts the next episode, and the last step's info is in ``info["final_info"]``.

Any discrete-action task runs (``--env-id CartPole-v1`` uses an MLP instead of the Nature CNN and
counts episodes as games), which is how the smoke test exercises it before Atari is built.

What touches no env (the agent, the rollout buffers, GAE, the PPO update, the flags) comes from
ppo_core.py and ppo_args.py beside this file.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from ppo_args import add_ppo_args, add_task_args, ppo_sizes
from ppo_core import AtariAgent, RolloutStorage, anneal_lr, ppo_update, print_progress

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="Pong-v5", seed=1, total_timesteps=10_000_000, num_envs=8)
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    add_ppo_args(p)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    _, minibatch_size, num_iterations = ppo_sizes(args, args.num_envs)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # the minibatch order (ppo_core.ppo_update shuffles with it)

    # The whole batch of envs is one native pool; Atari's options where the task has them.
    atari_options = {"episodic_life": True, "reward_clip": True}
    task_config = parallel_pool.make_spec(args.env_id).config
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, seed=args.seed, num_threads=args.num_threads,
        autoreset_mode="same_step", **{k: v for k, v in atari_options.items() if k in task_config},
    )
    obs_shape = envs.observation_space.shape
    agent = AtariAgent(obs_shape, envs.action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    storage = RolloutStorage(args.num_steps, args.num_envs, obs_shape, action_dtype=torch.long)
    game_return = np.zeros(args.num_envs)  # per env, the raw rewards of its running game
    game_returns: list[float] = []

    global_step, start = 0, time.time()
    next_obs_np, _ = envs.reset()
    next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32)
    next_done = torch.zeros(args.num_envs)

    for iteration in range(1, num_iterations + 1):
        anneal_lr(optimizer, iteration, num_iterations, args)

        for step in range(args.num_steps):
            global_step += args.num_envs
            action = storage.act(agent, step, next_obs, next_done)
            next_obs_np, reward, terminated, truncated, info = envs.step(action.numpy())
            done = terminated | truncated
            storage.rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32)
            next_done = torch.as_tensor(done, dtype=torch.float32)

            # Game scores: raw rewards up to the real game over. Rows that ended an episode hold
            # the next episode's info; their last step's info is in final_info.
            raw_reward, game_over = info.get("reward", reward), info.get("terminated", terminated)
            if "final_info" in info and "reward" in info["final_info"]:
                ended = info["_final_info"]
                raw_reward = np.where(ended, info["final_info"]["reward"], raw_reward)
                game_over = np.where(ended, info["final_info"]["terminated"], game_over)
            game_return += raw_reward
            for i in np.flatnonzero(game_over | truncated):
                game_returns.append(float(game_return[i]))
                game_return[i] = 0.0

        ppo_update(agent, optimizer, storage.batch(agent, next_obs, next_done, args), minibatch_size, args)

        print_progress(iteration, global_step, start, game_returns, "game", last=iteration == num_iterations)

    envs.close()


if __name__ == "__main__":
    main()
