"""PPO that collects on every node of a Ray cluster, CleanRL style: one file, top to bottom.

    python examples/ppo_ray.py                              # a local 2-node Cluster on this machine
    python examples/ppo_ray.py --address auto               # the cluster `ray start` made (docs/ray.md)

Follows CleanRL's ppo.py (CartPole-v1 hyperparameters), with the collection moved to the nodes:
``make_distributed`` puts one native pool on each node, ``set_policy(agent)`` ships the torch agent
to every node once, and ``rollout(num_steps)`` has each node step its envs ``num_steps`` times with
its own copy of the agent (sampling actions, recording log-probabilities and values) and send back
the whole segment: one round trip per ``num_steps`` steps. After each update the new weights go to
every node with ``set_weights`` (one ``ray.put``). Same-step autoreset: after a done the
observation already starts the next episode, as CleanRL's envs give it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Any

import numpy as np
import ray
import torch
from torch import nn
from torch.distributions.categorical import Categorical

from parallel_pool.integrations.ray import make_distributed


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=None, help="Ray cluster to join; default: start a local Cluster")
    p.add_argument("--local-nodes", type=int, default=2, help="nodes of the local Cluster (without --address)")
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--num-envs-per-node", type=int, default=4)
    p.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout (one round trip)")
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--anneal-lr", type=int, default=1)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--target", type=float, default=None, help="stop once the mean return of the last 20 "
                   "episodes reaches this")
    return p.parse_args(argv)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """CleanRL's CartPole agent. Called on a node (``forward``: a batch of observations in, sampled
    actions out, with their log-probabilities and values as extras the segment records)."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_size, 64)), nn.Tanh(), layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, num_actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        action, logprob, _, value = self.get_action_and_value(obs.float())
        return action, {"logprob": logprob, "value": value.flatten()}


def time_major(array: np.ndarray, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A segment's env-major ``(num_envs, num_steps, ...)`` array as CleanRL's ``(num_steps, num_envs, ...)``."""
    return torch.as_tensor(np.swapaxes(array, 0, 1), dtype=dtype)


def start_local_cluster(num_nodes: int) -> Any:
    """A Cluster of ``num_nodes`` raylets on this machine (one CPU each), its files in a temp dir."""
    from ray.cluster_utils import Cluster

    temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # short: Unix socket paths are limited
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ["RAY_TMPDIR"] = temp_root
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "temp_dir": os.path.join(temp_root, "ray"), "include_dashboard": False})
    for _ in range(num_nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes(timeout=120)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.temp_root = temp_root
    return cluster


def main(argv: list[str] | None = None) -> float:
    """Trains; returns the best mean return of 20 consecutive episodes. Joins the Ray cluster
    already initialized in this process, if any."""
    args = parse_args(argv)
    cluster = None
    if not ray.is_initialized():
        if args.address:
            ray.init(address=args.address, log_to_driver=False)
        else:
            cluster = start_local_cluster(args.local_nodes)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    # One native pool per node; each node steps its envs with its own copy of the agent.
    envs = make_distributed(args.env_id, num_envs_per_node=args.num_envs_per_node, seed=args.seed,
                            autoreset_mode="same_step")
    num_envs = envs.num_envs
    obs_size = int(np.prod(envs.observation_space.shape))
    agent = Agent(obs_size, int(envs.action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch_size = num_envs * args.num_steps
    minibatch_size = max(1, batch_size // args.num_minibatches)
    num_iterations = max(1, args.total_timesteps // batch_size)
    print(f"{len(envs.nodes)} nodes x {args.num_envs_per_node} envs; {batch_size} steps per iteration")

    envs.reset()
    envs.set_policy(agent)
    episode_returns: list[float] = []
    best, global_step, start = float("-inf"), 0, time.time()
    try:
        for iteration in range(1, num_iterations + 1):
            if args.anneal_lr:
                optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate

            # Every node steps num_steps times with the agent it holds; the segment is env-major.
            segment, episodes = envs.rollout(args.num_steps)
            global_step += batch_size
            episode_returns.extend(episodes["return"].tolist())

            obs, actions = time_major(segment["obs"]), time_major(segment["actions"], torch.long)
            logprobs, values = time_major(segment["logprob"]), time_major(segment["value"])
            rewards = time_major(segment["rewards"])
            dones = time_major(segment["terminated"] | segment["truncated"])  # done after step t
            next_obs = torch.as_tensor(segment["next_obs"], dtype=torch.float32)

            with torch.no_grad():
                next_value = agent.get_value(next_obs).reshape(-1)
                advantages = torch.zeros_like(rewards)
                lastgaelam = torch.zeros(num_envs)
                for t in reversed(range(args.num_steps)):
                    nextnonterminal = 1.0 - dones[t]
                    nextvalues = next_value if t == args.num_steps - 1 else values[t + 1]
                    delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                    advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                returns = advantages + values

            b_obs, b_actions = obs.reshape(-1, obs_size), actions.reshape(-1)
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

            # The new weights to every node: one ray.put, applied before their next rollout.
            envs.set_weights(agent.state_dict())

            if len(episode_returns) >= 20:
                best = max(best, float(np.mean(episode_returns[-20:])))
            if iteration % 10 == 0 or iteration == num_iterations or (args.target and best >= args.target):
                mean_return = np.mean(episode_returns[-20:]) if episode_returns else float("nan")
                sps = int(global_step / (time.time() - start))
                print(f"step {global_step}: mean episode return {mean_return:.1f}, SPS {sps}", flush=True)
            if args.target is not None and best >= args.target:
                print(f"reached a mean return of {best:.1f} >= {args.target} after {global_step} steps")
                break
    finally:
        envs.close()
        if cluster is not None:
            ray.shutdown()
            cluster.shutdown()
            shutil.rmtree(cluster.temp_root, ignore_errors=True)
    return best


if __name__ == "__main__":
    main()
