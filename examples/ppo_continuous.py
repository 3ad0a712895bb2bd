"""PPO for continuous actions (MuJoCo) on a parallel_pool batch, CleanRL style: one file, top to bottom.

    python examples/ppo_continuous.py --env-id HalfCheetah-v5 --total-timesteps 1000000
    python examples/ppo_continuous.py --env-id Pendulum-v1 --total-timesteps 200000

Follows CleanRL's ppo_continuous_action.py (observation and reward normalisation, clipped actions,
GAE, clipped surrogate), with the Gymnasium wrappers written out inline, because one native pool
steps the whole batch. Same-step autoreset: the step that ends an episode returns the next
episode's first observation, and the last one is in ``info["final_obs"]``, which is used to
bootstrap episodes cut by the time limit.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.distributions.normal import Normal

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="HalfCheetah-v5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=1_000_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    p.add_argument("--num-steps", type=int, default=256, help="steps per env per rollout")
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--anneal-lr", type=int, default=1)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=32)
    p.add_argument("--update-epochs", type=int, default=10)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
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


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        mean = self.actor_mean(x)
        dist = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(1), dist.entropy().sum(1), self.critic(x)


def main() -> None:
    args = parse_args()
    batch_size = args.num_envs * args.num_steps
    minibatch_size = max(1, batch_size // args.num_minibatches)
    num_iterations = max(1, args.total_timesteps // batch_size)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)

    # The whole batch of envs is one native pool.
    envs = parallel_pool.make(
        args.env_id, num_envs=args.num_envs, seed=args.seed, num_threads=args.num_threads,
        autoreset_mode="same_step", episode_stats=True,
    )
    obs_dim = int(np.prod(envs.observation_space.shape))
    act_dim = int(np.prod(envs.action_space.shape))
    low, high = envs.action_space.low, envs.action_space.high
    agent = Agent(obs_dim, act_dim)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # Inline NormalizeObservation / NormalizeReward (with a discounted-return scale) and clipping.
    obs_rms, ret_rms = RunningMeanStd((obs_dim,)), RunningMeanStd()
    discounted_return = np.zeros(args.num_envs)

    def normalize_obs(o: np.ndarray, update: bool = True) -> np.ndarray:
        if update:
            obs_rms.update(o)
        return np.clip((o - obs_rms.mean) / np.sqrt(obs_rms.var + 1e-8), -10, 10).astype(np.float32)

    obs_buf = torch.zeros((args.num_steps, args.num_envs, obs_dim))
    actions = torch.zeros((args.num_steps, args.num_envs, act_dim))
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    global_step, start = 0, time.time()
    raw_obs, _ = envs.reset()
    next_obs = torch.from_numpy(normalize_obs(raw_obs.reshape(args.num_envs, -1)))
    next_done = torch.zeros(args.num_envs)
    recent_returns: list[float] = []

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs_buf[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value.flatten()

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
            rewards[step] = torch.as_tensor(scaled, dtype=torch.float32)
            next_obs = torch.from_numpy(normalize_obs(raw_obs.reshape(args.num_envs, -1)))
            next_done = torch.as_tensor(done, dtype=torch.float32)
            if "episode" in info:  # the pool's episode statistics (raw returns)
                recent_returns += info["episode"]["r"][info["_episode"]].tolist()

        # GAE over the rollout.
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

        b_obs, b_actions = obs_buf.reshape(-1, obs_dim), actions.reshape(-1, act_dim)
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
            mean_return = np.mean(recent_returns[-20:]) if recent_returns else float("nan")
            sps = int(global_step / (time.time() - start))
            print(f"step {global_step}: mean episodic return {mean_return:.1f}, SPS {sps}")

    envs.close()


if __name__ == "__main__":
    main()
