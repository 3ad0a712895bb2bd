"""RLlib PPO on a parallel_pool task: each env runner steps one native pool as its VectorEnv.

    pip install "ray[rllib]==2.60.0"   # after torch (CPU) is installed
    python examples/rllib_ppo.py --task CartPole-v1 --num-envs 8 --target 150

The plug-in is two lines: ``register(task)`` gives RLlib an env name whose creator returns a
``ParallelPoolVectorEnv``, and ``gym_env_vectorize_mode="vector_entry_point"`` makes RLlib call it
with ``num_envs`` instead of wrapping ``num_envs`` single envs in Gymnasium's SyncVectorEnv.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import ray
from ray.rllib.algorithms import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig

from parallel_pool.integrations.rllib import VECTORIZE_MODE, register


def train(algo: Algorithm, max_iterations: int, target: float) -> None:
    """Calls ``algo.train()`` until the mean episode return reaches ``target``, at most
    ``max_iterations`` times, printing a line per iteration."""
    start = time.time()
    for iteration in range(1, max_iterations + 1):
        stats = algo.train()["env_runners"]
        mean_return = stats.get("episode_return_mean", float("nan"))
        print(
            f"iter {iteration:3d}  return {mean_return:7.1f}  "
            f"env steps {int(stats['num_env_steps_sampled_lifetime']):7d}  {time.time() - start:6.1f} s"
        )
        if mean_return >= target:
            print(f"reached a mean return of {mean_return:.1f} >= {target}")
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=8, help="envs per env runner (one native pool)")
    parser.add_argument("--num-env-runners", type=int, default=0, help="0: sample in the driver's runner")
    parser.add_argument("--target", type=float, default=150.0, help="stop at this mean episode return")
    parser.add_argument("--max-iterations", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-cpus", type=int, default=2)
    args = parser.parse_args()

    # Ray's socket paths must stay short; keep its session files out of the shared /tmp/ray.
    os.environ.setdefault("RAY_TMPDIR", tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    ray.init(num_cpus=args.num_cpus, include_dashboard=False)

    config = (
        PPOConfig()
        .environment(register(args.task))
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs,
            gym_env_vectorize_mode=VECTORIZE_MODE,
        )
        .training(train_batch_size_per_learner=2000, minibatch_size=250, num_epochs=6, lr=3e-4)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    try:
        train(algo, args.max_iterations, args.target)
    finally:
        algo.stop()
        ray.shutdown()


if __name__ == "__main__":
    main()
