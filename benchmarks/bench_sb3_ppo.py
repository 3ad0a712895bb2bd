"""Wall-clock time of one SB3 PPO run over SubprocVecEnv against the same run over ParallelPoolVecEnv.

Same task, hyperparameters, seed and number of env steps; only the line that makes the envs
differs (Gymnasium envs in ``SubprocVecEnv`` subprocesses, each under SB3's ``Monitor``, or one
native pool). The runs alternate (subproc, pool, subproc, pool, ...) so that a change of machine
load hits both; the table gives every run, the median per vec env and the ratio.

    python benchmarks/bench_sb3_ppo.py                         # HalfCheetah-v5, 65,536 steps, 2 repeats
    python benchmarks/bench_sb3_ppo.py --env-id Ant-v5 --repeats 3

Torch runs with one thread (``torch.set_num_threads(1)``), as the envs need the other core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any


def make_envs(kind: str, env_id: str, num_envs: int, seed: int) -> Any:
    if kind == "subproc":
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import SubprocVecEnv

        envs = SubprocVecEnv([lambda: Monitor(gym.make(env_id)) for _ in range(num_envs)])
        envs.seed(seed)
        return envs
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    return ParallelPoolVecEnv(env_id, num_envs=num_envs, seed=seed)


def run(kind: str, args: argparse.Namespace) -> float:
    """One training run; returns its wall-clock seconds, env creation and teardown included."""
    from stable_baselines3 import PPO

    start = time.perf_counter()
    envs = make_envs(kind, args.env_id, args.num_envs, args.seed)
    model = PPO("MlpPolicy", envs, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
                seed=args.seed, device="cpu", verbose=0)
    model.learn(total_timesteps=args.total_timesteps)
    envs.close()
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="HalfCheetah-v5")
    p.add_argument("--total-timesteps", type=int, default=65_536)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--n-steps", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()

    import stable_baselines3
    import torch

    torch.set_num_threads(1)
    times: dict[str, list[float]] = {"subproc": [], "pool": []}
    for r in range(args.repeats):
        for kind in times:
            seconds = run(kind, args)
            times[kind].append(seconds)
            print(f"run {r + 1}: {kind:8s} {seconds:7.1f} s", flush=True)

    load = os.getloadavg()[0]
    print(f"\n{args.env_id}, {args.total_timesteps:,} env steps, {args.num_envs} envs, n_steps={args.n_steps}, "
          f"batch_size={args.batch_size}, n_epochs={args.n_epochs}; stable-baselines3 {stable_baselines3.__version__}, "
          f"torch {torch.__version__} (1 thread); load average at the end {load:.2f}\n")
    print("| vec env | runs (s) | median (s) |")
    print("|---|---|---:|")
    names = {"subproc": f"`SubprocVecEnv` ({args.num_envs} subprocesses)",
             "pool": "`ParallelPoolVecEnv` (one native pool)"}
    for kind, runs in times.items():
        print(f"| {names[kind]} | {', '.join(f'{t:.1f}' for t in runs)} | {statistics.median(runs):.1f} |")
    ratio = statistics.median(times["subproc"]) / statistics.median(times["pool"])
    print(f"\nParallelPoolVecEnv trains {ratio:.2f}x faster (median wall clock).")


if __name__ == "__main__":
    main()
