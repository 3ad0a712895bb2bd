"""PPO on Atari (Pong-v5) with an async parallel_pool batch, CleanRL style: one file, top to bottom.

    python examples/ppo_atari_async.py --env-id Pong-v5 --num-envs 16 --batch-size 8

``send(actions, env_id)`` returns at once and ``recv()`` returns whichever ``batch_size`` envs
finished first, with ``info["env_id"]`` saying which: the policy runs on one half of the envs while
the other half is being stepped. Rows arrive in no fixed order, so every transition is stored under
its env id, and advantages are computed per env id over that env's own trajectory. The reward and
done of a ``recv`` answer that env's previous action; the action just sent stays pending, and its
value bootstraps the env's trajectory at an update. Same-step autoreset: after a ``done`` the
observation already starts the next episode.

As with ppo_atari.py, any discrete-action task runs (``--env-id CartPole-v1``: an MLP instead of
the Nature CNN, episodes counted as games). The agent, GAE and the PPO update come from
ppo_core.py.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from ppo_args import add_ppo_args, add_task_args, ppo_sizes
from ppo_core import AtariAgent, gae, ppo_update, print_progress

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="Pong-v5", seed=1, total_timesteps=10_000_000, num_envs=16)
    p.add_argument("--batch-size", type=int, default=8, help="envs per recv (< num-envs: async)")
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    add_ppo_args(p, num_steps_help="transitions per env per rollout, on average", anneal_lr=False)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    rollout_size, minibatch_size, _ = ppo_sizes(args, args.num_envs)

    atari_options = {"episodic_life": True, "reward_clip": True}
    task_config = parallel_pool.make_spec(args.env_id).config
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, batch_size=args.batch_size, seed=args.seed,
        num_threads=args.num_threads, autoreset_mode="same_step",
        **{k: v for k, v in atari_options.items() if k in task_config},
    )
    obs_shape = envs.observation_space.shape
    torch.manual_seed(args.seed)  # the agent's initial weights, then its sampled actions
    np.random.seed(args.seed)  # the minibatch order (ppo_core.ppo_update shuffles with it)
    agent = AtariAgent(obs_shape, envs.action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # One trajectory per env id: obs/action/logprob/value per transition, and the reward and
    # "ended" flag once the env's next recv brings them (the last transition is still pending).
    keys = ("obs", "actions", "logprobs", "values", "rewards", "ended")
    traj = [{key: [] for key in keys} for _ in range(args.num_envs)]
    game_return = np.zeros(args.num_envs)
    game_returns: list[float] = []

    global_step, start, iteration = 0, time.time(), 0
    envs.async_reset()
    while global_step < args.total_timesteps:
        # --- collect: keep every env busy until the rollout holds rollout_size finished transitions ---
        finished = 0
        while finished < rollout_size:
            next_obs, reward, terminated, truncated, info = envs.recv()
            env_id = info["env_id"]
            done = terminated | truncated
            for k, i in enumerate(env_id):
                if len(traj[i]["actions"]) > len(traj[i]["rewards"]):  # answers this env's pending action
                    traj[i]["rewards"].append(float(reward[k]))
                    traj[i]["ended"].append(bool(done[k]))
                    finished += 1
            obs_t = torch.as_tensor(next_obs, dtype=torch.float32)
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(obs_t)
            envs.send(action.numpy(), env_id)
            global_step += len(env_id)
            for k, i in enumerate(env_id):
                traj[i]["obs"].append(obs_t[k])
                traj[i]["actions"].append(int(action[k]))
                traj[i]["logprobs"].append(float(logprob[k]))
                traj[i]["values"].append(float(value[k]))

            # Game scores, as in ppo_atari.py: raw rewards up to the real game over.
            raw_reward, game_over = info.get("reward", reward), info.get("terminated", terminated)
            if "final_info" in info and "reward" in info["final_info"]:
                ended = info["_final_info"]
                raw_reward = np.where(ended, info["final_info"]["reward"], raw_reward)
                game_over = np.where(ended, info["final_info"]["terminated"], game_over)
            game_return[env_id] += raw_reward
            for k in np.flatnonzero(game_over | truncated):
                game_returns.append(float(game_return[env_id[k]]))
                game_return[env_id[k]] = 0.0

        # --- advantages per env id, over that env's own finished transitions ---
        b_obs, b_actions, b_logprobs, b_advantages, b_returns = [], [], [], [], []
        for t_env in traj:
            n = len(t_env["rewards"])  # finished transitions; index n is pending
            if n == 0:
                continue
            # In float64, as the floats stored; values[n], the pending transition's, bootstraps.
            values = torch.tensor(t_env["values"][: n + 1], dtype=torch.float64)
            rewards = torch.tensor(t_env["rewards"], dtype=torch.float64)
            ended = torch.tensor(t_env["ended"], dtype=torch.float64)  # ended: obs t+1 starts a new episode
            advantages, returns = gae(rewards, values[:n], values[n], ended, args.gamma, args.gae_lambda)
            b_obs += t_env["obs"][:n]
            b_actions += t_env["actions"][:n]
            b_logprobs += t_env["logprobs"][:n]
            b_advantages.append(advantages)
            b_returns.append(returns)
            for key in keys:  # keep only the pending transition
                t_env[key] = t_env[key][n:]

        batch = (
            torch.stack(b_obs),
            torch.as_tensor(b_actions),
            torch.as_tensor(b_logprobs, dtype=torch.float32),
            torch.cat(b_advantages).float(),
            torch.cat(b_returns).float(),
        )

        # --- PPO update (the envs in flight keep stepping meanwhile) ---
        ppo_update(agent, optimizer, batch, minibatch_size, args)

        iteration += 1
        print_progress(iteration, global_step, start, game_returns, "game", last=global_step >= args.total_timesteps)

    envs.close()  # joins the worker threads, with steps still in flight


if __name__ == "__main__":
    main()
