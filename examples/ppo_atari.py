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
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    p.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout")
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--anneal-lr", type=int, default=1)
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

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(self.network(x * self.scale))

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        hidden = self.network(x * self.scale)
        probs = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)


def main() -> None:
    args = parse_args()
    batch_size = args.num_envs * args.num_steps
    minibatch_size = max(1, batch_size // args.num_minibatches)
    num_iterations = max(1, args.total_timesteps // batch_size)
    torch.manual_seed(args.seed)

    # The whole batch of envs is one native pool; Atari's options where the task has them.
    atari_options = {"episodic_life": True, "reward_clip": True}
    task_config = parallel_pool.make_spec(args.env_id).config
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, seed=args.seed, num_threads=args.num_threads,
        autoreset_mode="same_step", **{k: v for k, v in atari_options.items() if k in task_config},
    )
    obs_shape = envs.observation_space.shape
    agent = Agent(obs_shape, envs.action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, *obs_shape))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    global_step, start = 0, time.time()
    next_obs_np, _ = envs.reset()
    next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32)
    next_done = torch.zeros(args.num_envs)
    game_return = np.zeros(args.num_envs)
    game_returns: list[float] = []

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value.flatten()

            next_obs_np, reward, terminated, truncated, info = envs.step(action.numpy())
            done = terminated | truncated
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
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

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                nextnonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                nextvalues = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs, b_actions = obs.reshape(-1, *obs_shape), actions.reshape(-1)
        b_logprobs, b_advantages = logprobs.reshape(-1), advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_inds = np.arange(batch_size)
        for _ in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start_i in range(0, batch_size, minibatch_size):
                mb = b_inds[start_i:start_i + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8) if len(mb) > 1 else mb_adv
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * clipped).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if iteration % 10 == 0 or iteration == num_iterations:
            mean_return = np.mean(game_returns[-20:]) if game_returns else float("nan")
            sps = int(global_step / (time.time() - start))
            print(f"step {global_step}: mean game return {mean_return:.1f}, SPS {sps}")

    envs.close()


if __name__ == "__main__":
    main()
