"""Pixel observations: frames/s of ``from_pixels=True`` against Gymnasium's rgb_array loop.

Both sides draw the same frames (tests/envs/mujoco/test_mujoco_render.py checks them equal) with Mesa's
software renderer through EGL on this machine's CPUs; a frame is an env step plus its render.

- ``pp-sync N`` / ``pp-async N``: ``parallel_pool.make(task, from_pixels=True, width=84, height=84,
  num_envs=N)`` stepped with random actions (async: ``batch_size = N // 2``, send/recv), on
  ``num_threads`` worker threads (default: one per CPU), each with its own GL context;
- ``gym-loop``: one Gymnasium env wrapped in ``AddRenderObservation(render_only=True)``, stepped
  and rendered in this process (what a from-pixels training script does without a pool);
- ``gym-async N``: Gymnasium's ``AsyncVectorEnv`` of N such envs in worker processes (one GL
  context per process).

Methods are interleaved round by round (this shared machine's speed drifts), each segment runs
``--seconds``, and the table gives the median over ``--rounds``. Contexts are made and shaders
compiled before timing (one warm-up segment per method).

Usage:
    MUJOCO_GL=egl python benchmarks/bench_mujoco_pixels.py                  # ~4 minutes
    MUJOCO_GL=egl python benchmarks/bench_mujoco_pixels.py --num-envs 2 8 --rounds 5 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from functools import partial
from typing import Any, Callable

os.environ.setdefault("MUJOCO_GL", "egl")  # Gymnasium's renderer on the EGL device ours uses

import gymnasium
from gymnasium.wrappers import AddRenderObservation
from pixel_bench import SIZE, append_json, measure, pp_runner, print_table  # benchmarks/pixel_bench.py

import parallel_pool
import parallel_pool_bench as bench


def gym_env(task: str) -> gymnasium.Env:
    env = gymnasium.make(task, render_mode="rgb_array", width=SIZE, height=SIZE)
    return AddRenderObservation(env, render_only=True)


def gym_loop_runner(task: str) -> tuple[Callable[[float], int], Any]:
    env = gym_env(task)
    env.reset(seed=0)

    def run(seconds: float) -> int:
        frames, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if not obs.any():
                raise RuntimeError("Gymnasium's frame is all zeros: its GL context was lost")
            frames += 1
            if terminated or truncated:
                env.reset()
        return frames
    return run, env


def gym_async_runner(task: str, num_envs: int) -> tuple[Callable[[float], int], Any]:
    # Spawned, not forked: a fork of this process, whose threads hold GL contexts (llvmpipe's
    # rasterizer threads among them), inherits GL state without the threads and hangs in it.
    env = gymnasium.vector.AsyncVectorEnv([partial(gym_env, task) for _ in range(num_envs)], context="spawn")
    env.reset(seed=0)

    def run(seconds: float) -> int:
        frames, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            env.step(env.action_space.sample())
            frames += num_envs
        return frames
    return run, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="HalfCheetah-v5")
    bench.add_pixel_args(parser)
    args = parser.parse_args()

    # Gymnasium's AsyncVectorEnv first, then a collection: it makes and closes a rendering env in
    # this process to read the spaces, and when the garbage collector frees that env's MjrContext
    # it deletes GL objects by name in the context then current: the gym-loop env's, which would
    # then render zeros (mujoco's Python renderers share this thread).
    runners: dict[str, tuple[Callable[[float], int], Any]] = {
        f"gym-async {n}": gym_async_runner(args.task, n) for n in args.num_envs}
    gc.collect()
    runners["gym-loop"] = gym_loop_runner(args.task)
    for n in args.num_envs:
        runners[f"pp-sync {n}"] = pp_runner(parallel_pool.make, args.task, n, False, args.num_threads)
        if n >= 2:
            runners[f"pp-async {n}"] = pp_runner(parallel_pool.make, args.task, n, True, args.num_threads)
    rates = measure(runners, args.rounds, args.seconds)
    print_table(f"{args.task}, {SIZE}x{SIZE} RGB pixel observations, {os.cpu_count()} CPUs, "
                f"median of {args.rounds} rounds of {args.seconds:g} s", rates, ["gym-loop"])
    append_json(args.json, {"task": args.task, "size": SIZE, "cpus": os.cpu_count(), "rounds": args.rounds,
                            "seconds": args.seconds, "rates": rates})

if __name__ == "__main__":
    main()
