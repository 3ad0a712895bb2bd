"""PPO that collects on every node of a Ray cluster, CleanRL style: one file, top to bottom.

    python examples/ppo_ray.py                              # a local 2-node Cluster on this machine
    python examples/ppo_ray.py --address auto               # the cluster `ray start` made (docs/ray.md)

Follows CleanRL's ppo.py (CartPole-v1 hyperparameters), with the collection moved to the nodes:
``make_distributed`` puts one native pool on each node, ``set_policy(agent)`` ships the torch agent
to every node once, and ``rollout(num_steps)`` has each node step its envs ``num_steps`` times with
its own copy of the agent (sampling actions, recording log-probabilities and values) and send back
the whole segment: one round trip per ``num_steps`` steps. After each update the new weights go to
every node with ``set_weights`` (one ``ray.put``). Same-step autoreset: after a done the
observation already starts the next episode, as CleanRL's envs give it. The agent's networks, GAE
and the PPO update come from ppo_core.py beside this file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

import numpy as np
import ray
import torch
from ray import cloudpickle

from parallel_pool.integrations.ray import make_distributed

# The shared modules beside this file, importable also when the file is loaded by its path (as
# tests/integrations/test_integration_ray.py loads it). ppo_core is pickled by value, as this
# file is: a node unpickles the agent without having this folder.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ppo_core  # noqa: E402
from ppo_args import add_ppo_args, add_task_args, ppo_sizes  # noqa: E402
from ppo_core import MLPAgent, anneal_lr, flatten_steps, gae, ppo_update, print_progress  # noqa: E402

cloudpickle.register_pickle_by_value(ppo_core)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=None, help="Ray cluster to join; default: start a local Cluster")
    p.add_argument("--local-nodes", type=int, default=2, help="nodes of the local Cluster (without --address)")
    add_task_args(p, env_id="CartPole-v1", seed=1, total_timesteps=500_000)
    p.add_argument("--num-envs-per-node", type=int, default=4)
    add_ppo_args(p, num_steps_help="steps per env per rollout (one round trip)", clip_coef=0.2)
    p.add_argument("--target", type=float, default=None, help="stop once the mean return of the last 20 "
                   "episodes reaches this")
    return p.parse_args(argv)


class Agent(MLPAgent):
    """CleanRL's CartPole agent, called on a node (``forward``: a batch of observations in, sampled
    actions out, with their log-probabilities and values as extras the segment records)."""

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
    batch_size, minibatch_size, num_iterations = ppo_sizes(args, num_envs)
    print(f"{len(envs.nodes)} nodes x {args.num_envs_per_node} envs; {batch_size} steps per iteration")

    envs.reset()
    envs.set_policy(agent)
    episode_returns: list[float] = []
    best, global_step, start = float("-inf"), 0, time.time()
    try:
        for iteration in range(1, num_iterations + 1):
            anneal_lr(optimizer, iteration, num_iterations, args)

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
            advantages, returns = gae(rewards, values, next_value, dones, args.gamma, args.gae_lambda)
            batch = flatten_steps(obs, actions, logprobs, advantages, returns)
            ppo_update(agent, optimizer, batch, minibatch_size, args)

            # The new weights to every node: one ray.put, applied before their next rollout.
            envs.set_weights(agent.state_dict())

            if len(episode_returns) >= 20:
                best = max(best, float(np.mean(episode_returns[-20:])))
            reached = args.target is not None and best >= args.target
            print_progress(iteration, global_step, start, episode_returns, "episode",
                           last=iteration == num_iterations or reached)
            if reached:
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
