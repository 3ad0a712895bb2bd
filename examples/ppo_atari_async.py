"""PPO on Atari (Pong-v5) with an async parallel_pool batch, CleanRL style: one file, top to bottom.

    python examples/ppo_atari_async.py --env-id Pong-v5 --num-envs 16 --batch-size 8

``send(actions, env_id)`` returns at once and ``recv()`` returns whichever ``batch_size`` envs
finished first, with ``info["env_id"]`` saying which: the policy runs on one half of the envs while
the other half is being stepped. Rows arrive in no fixed order, so every transition is stored under
its env id, and advantages are computed per env id over that env's own trajectory. The reward and
done of a ``recv`` answer that env's previous action; the action just sent stays pending, and its
value bootstraps the env's trajectory at an update. Same-step autoreset: after a ``done`` the
observation already starts the next episode.

Any discrete-action task runs (``--env-id CartPole-v1`` uses an MLP instead of the Nature CNN and
counts episodes as games), which is how the smoke test exercises it before Atari is built.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="Pong-v5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=10_000_000)
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=8, help="envs per recv (< num-envs: async)")
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    p.add_argument("--num-steps", type=int, default=128, help="transitions per env per rollout, on average")
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.1)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    return p.parse_args()


def layer_init(layer: nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Module:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_shape: tuple[int, ...], num_actions: int) -> None:
        super().__init__()
        if len(obs_shape) == 3:  # (stack, height, width) frames: the Nature CNN, as CleanRL
            self.scale = 1.0 / 255.0
            self.network = nn.Sequential(
                layer_init(nn.Conv2d(obs_shape[0], 32, 8, stride=4)), nn.ReLU(),
                layer_init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
                layer_init(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten(),
                layer_init(nn.Linear(64 * 7 * 7, 512)), nn.ReLU(),
            )
            hidden = 512
        else:  # vector observations (e.g. CartPole-v1): an MLP
            self.scale = 1.0
            self.network = nn.Sequential(
                nn.Flatten(), layer_init(nn.Linear(int(np.prod(obs_shape)), 64)), nn.Tanh(),
                layer_init(nn.Linear(64, 64)), nn.Tanh(),
            )
            hidden = 64
        self.actor = layer_init(nn.Linear(hidden, num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        hidden = self.network(x * self.scale)
        probs = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)


def main() -> None:
    args = parse_args()
    rollout_size = args.num_envs * args.num_steps
    minibatch_size = max(1, rollout_size // args.num_minibatches)
    torch.manual_seed(args.seed)

    atari_options = {"episodic_life": True, "reward_clip": True}
    task_config = parallel_pool.make_spec(args.env_id).config
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, batch_size=args.batch_size, seed=args.seed,
        num_threads=args.num_threads, autoreset_mode="same_step",
        **{k: v for k, v in atari_options.items() if k in task_config},
    )
    obs_shape = envs.observation_space.shape
    agent = Agent(obs_shape, envs.action_space.n)
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
            values = np.asarray(t_env["values"][: n + 1])  # the pending one's value bootstraps
            rewards, ended = np.asarray(t_env["rewards"]), np.asarray(t_env["ended"], dtype=np.float64)
            advantages = np.zeros(n)
            lastgaelam = 0.0
            for t in reversed(range(n)):
                nonterminal = 1.0 - ended[t]  # ended: obs t+1 starts a new episode
                delta = rewards[t] + args.gamma * values[t + 1] * nonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nonterminal * lastgaelam
            b_obs += t_env["obs"][:n]
            b_actions += t_env["actions"][:n]
            b_logprobs += t_env["logprobs"][:n]
            b_advantages.append(advantages)
            b_returns.append(advantages + values[:n])
            for key in keys:  # keep only the pending transition
                t_env[key] = t_env[key][n:]

        b_obs_t = torch.stack(b_obs)
        b_actions_t = torch.as_tensor(b_actions)
        b_logprobs_t = torch.as_tensor(b_logprobs, dtype=torch.float32)
        b_adv_t = torch.as_tensor(np.concatenate(b_advantages), dtype=torch.float32)
        b_ret_t = torch.as_tensor(np.concatenate(b_returns), dtype=torch.float32)

        # --- PPO update (the envs in flight keep stepping meanwhile) ---
        batch = len(b_obs_t)
        b_inds = np.arange(batch)
        for _ in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start_i in range(0, batch, minibatch_size):
                mb = b_inds[start_i:start_i + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs_t[mb], b_actions_t[mb])
                ratio = (newlogprob - b_logprobs_t[mb]).exp()
                mb_adv = b_adv_t[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8) if len(mb) > 1 else mb_adv
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * clipped).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_ret_t[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        iteration += 1
        if iteration % 10 == 0 or global_step >= args.total_timesteps:
            mean_return = np.mean(game_returns[-20:]) if game_returns else float("nan")
            sps = int(global_step / (time.time() - start))
            print(f"step {global_step}: mean game return {mean_return:.1f}, SPS {sps}")

    envs.close()  # joins the worker threads, with steps still in flight


if __name__ == "__main__":
    main()
