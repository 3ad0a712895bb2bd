"""RLlib PPO with one env runner on every node of a Ray cluster, each stepping one native pool.

    ray start --head --num-cpus 8                              # on the head machine
    ray start --address HEAD_IP:6379 --num-cpus 8              # on every other machine
    python examples/rllib_ppo_cluster.py --address auto --num-envs 64

    python examples/rllib_ppo_cluster.py                       # a local 2-node Cluster, to try it

``env_runners_on_every_node`` sets ``num_env_runners`` to the number of alive nodes and has each
runner ask for a whole node's CPUs, so Ray places exactly one runner per node (on nodes of one
size); each runner's env is a ``ParallelPoolVectorEnv`` over one native pool, its threads the
node's CPUs. The learner runs in this driver process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from rllib_ppo import train

from parallel_pool.integrations.rllib import env_runners_on_every_node, register


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="Ray cluster to join; default: a local 2-node Cluster")
    parser.add_argument("--task", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=8, help="envs per env runner (one native pool per node)")
    parser.add_argument("--target", type=float, default=150.0, help="stop at this mean episode return")
    parser.add_argument("--max-iterations", type=int, default=50)
    args = parser.parse_args()

    cluster, temp_root = None, None
    if args.address:
        ray.init(address=args.address)
    else:
        from ray.cluster_utils import Cluster

        temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # short: Unix socket paths are limited
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        os.environ["RAY_TMPDIR"] = temp_root
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "temp_dir": os.path.join(temp_root, "ray"), "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)

    config = env_runners_on_every_node(
        PPOConfig().environment(register(args.task)), num_envs_per_env_runner=args.num_envs
    ).training(train_batch_size_per_learner=2000, minibatch_size=250, num_epochs=6, lr=3e-4)
    algo = config.build_algo()
    nodes = algo.env_runner_group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)
    print(f"{len(nodes)} env runners on {len(set(nodes))} of {len(ray.nodes())} nodes")
    try:
        train(algo, args.max_iterations, args.target)
    finally:
        algo.stop()
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
            shutil.rmtree(temp_root, ignore_errors=True)


if __name__ == "__main__":
    main()
