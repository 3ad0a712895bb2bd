"""The PyTorch parts of the PPO examples that touch no env, CleanRL's: layer initialisation, the
agents, the rollout buffers, GAE, learning-rate annealing, the clipped PPO update and the progress
line. Each script keeps every line that touches its envs (creation, rollout, game statistics).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal


def layer_init(layer: nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Module:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def mlp(in_size: int, out_size: int, out_std: float) -> nn.Sequential:
    """CleanRL's 64-64 tanh MLP, its output layer initialised with gain ``out_std``."""
    return nn.Sequential(
        layer_init(nn.Linear(in_size, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
        layer_init(nn.Linear(64, out_size), std=out_std),
    )


class AtariAgent(nn.Module):
    """CleanRL's Atari agent: the Nature CNN over ``(stack, height, width)`` uint8 frames (an MLP over
    vector observations), shared by a categorical policy head and a value head."""

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


class MLPAgent(nn.Module):
    """CleanRL's CartPole agent (ppo.py): separate actor and critic MLPs, a categorical policy."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = mlp(obs_size, 1, out_std=1.0)
        self.actor = mlp(obs_size, num_actions, out_std=0.01)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class ContinuousAgent(nn.Module):
    """CleanRL's continuous-action agent (ppo_continuous_action.py): actor and critic MLPs, a diagonal
    Gaussian policy whose log standard deviations are parameters of their own."""

    def __init__(self, obs_dim: int, act_dim: int) -> None:
        super().__init__()
        self.critic = mlp(obs_dim, 1, out_std=1.0)
        self.actor_mean = mlp(obs_dim, act_dim, out_std=0.01)
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        mean = self.actor_mean(x)
        dist = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(1), dist.entropy().sum(1), self.critic(x)


@torch.no_grad()
def gae(
    rewards: torch.Tensor, values: torch.Tensor, next_value: torch.Tensor, ended: torch.Tensor, gamma: float,
    gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and returns of a rollout, time on the first axis: ``ended[t]`` says whether
    transition ``t`` ended an episode (then ``t + 1`` does not bootstrap it), ``next_value`` is the
    value of the observation after the last transition."""
    num_steps = len(rewards)
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(num_steps)):
        nextnonterminal = 1.0 - ended[t]
        nextvalues = next_value if t == num_steps - 1 else values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    return advantages, advantages + values


def flatten_steps(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``(num_steps, num_envs, ...)`` tensors as ``(num_steps * num_envs, ...)`` batches."""
    return tuple(x.reshape(-1, *x.shape[2:]) for x in tensors)


class RolloutStorage:
    """CleanRL's rollout buffers, ``(num_steps, num_envs, ...)`` tensors: what the agent saw
    (``obs``; ``dones``, whether that observation starts a new episode) and did (``actions``,
    ``logprobs``, ``values``), and the ``rewards`` the script stores after each env step."""

    def __init__(self, num_steps: int, num_envs: int, obs_shape: tuple[int, ...], action_shape: tuple[int, ...] = (),
                 action_dtype: torch.dtype = torch.float32) -> None:
        self.obs = torch.zeros((num_steps, num_envs, *obs_shape))
        self.actions = torch.zeros((num_steps, num_envs, *action_shape), dtype=action_dtype)
        self.logprobs = torch.zeros((num_steps, num_envs))
        self.rewards = torch.zeros((num_steps, num_envs))
        self.dones = torch.zeros((num_steps, num_envs))
        self.values = torch.zeros((num_steps, num_envs))

    @torch.no_grad()
    def act(self, agent: nn.Module, step: int, obs: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
        """The agent's action for ``obs`` (sampled), stored at ``step`` with ``obs``, ``done``, its
        log-probability and the value of ``obs``."""
        self.obs[step], self.dones[step] = obs, done
        action, logprob, _, value = agent.get_action_and_value(obs)
        self.actions[step], self.logprobs[step], self.values[step] = action, logprob, value.flatten()
        return action

    @torch.no_grad()
    def batch(self, agent: nn.Module, next_obs: torch.Tensor, next_done: torch.Tensor,
              args: argparse.Namespace) -> tuple[torch.Tensor, ...]:
        """The rollout as one batch for ``ppo_update``, ``(obs, actions, logprobs, advantages,
        returns)``: GAE (``args.gamma``, ``args.gae_lambda``) bootstrapped from the value of
        ``next_obs``, the observation after the last step (``next_done``: it starts a new episode)."""
        next_value = agent.get_value(next_obs).reshape(1, -1)
        # Transition t ended an episode when observation t + 1 starts one.
        ended = torch.cat((self.dones[1:], next_done[None]))
        advantages, returns = gae(self.rewards, self.values, next_value, ended, args.gamma, args.gae_lambda)
        return flatten_steps(self.obs, self.actions, self.logprobs, advantages, returns)


def anneal_lr(optimizer: torch.optim.Optimizer, iteration: int, num_iterations: int,
              args: argparse.Namespace) -> None:
    """With ``args.anneal_lr``, CleanRL's linear annealing: the learning rate of ``iteration``
    (counted from 1) is ``args.learning_rate`` at the first, falling toward 0 at the last."""
    if args.anneal_lr:
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate


def ppo_update(
    agent: nn.Module, optimizer: torch.optim.Optimizer, batch: tuple[torch.Tensor, ...], minibatch_size: int,
    args: argparse.Namespace,
) -> None:
    """CleanRL's PPO update over ``batch = (obs, actions, logprobs, advantages, returns)``, one
    transition a row: ``args.update_epochs`` passes, each over the rows in a new order
    (``np.random.shuffle``) in minibatches of ``minibatch_size``, each minibatch one optimizer step
    on the clipped surrogate plus ``args.vf_coef`` times the value loss minus ``args.ent_coef`` times
    the entropy, the gradient's norm clipped to ``args.max_grad_norm``."""
    b_obs, b_actions, b_logprobs, b_advantages, b_returns = batch
    batch_size = len(b_obs)
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


def print_progress(iteration: int, global_step: int, start: float, returns: list[float], kind: str,
                   last: bool) -> None:
    """Every 10th iteration and at the ``last``, prints ``step N: mean <kind> return R, SPS S``: R the
    mean of the last 20 returns, S the env steps per second since ``start``."""
    if iteration % 10 == 0 or last:
        mean_return = np.mean(returns[-20:]) if returns else float("nan")
        sps = int(global_step / (time.time() - start))
        print(f"step {global_step}: mean {kind} return {mean_return:.1f}, SPS {sps}", flush=True)
