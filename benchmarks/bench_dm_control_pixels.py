"""dm_control pixel observations: frames/s of ``from_pixels=True`` against dm_control's own render loop.

Both sides draw the same frames (tests/envs/dm_control/test_dm_control_render.py checks them equal) with Mesa's
software renderer through EGL on this machine's CPUs; a frame is an env step plus its render.

- ``pp-sync N`` / ``pp-async N``: ``parallel_pool.make_gymnasium(task, from_pixels=True, width=84,
  height=84, camera_id=C, num_envs=N)`` stepped with random actions (async: ``batch_size = N // 2``,
  send/recv), on ``num_threads`` worker threads (default: one per CPU), each with its own GL context;
- ``dm-loop``: one ``suite.load`` env wrapped in ``pixels.Wrapper(pixels_only=True,
  render_kwargs={height, width, camera_id})`` (its ``physics.render`` per step), stepped in this
  process: what a from-pixels dm_control training script does without a pool;
- ``dm-procs N``: N such loops in worker processes (spawned, each with its own GL context), the
  way to use more cores without a pool; their frames are summed over the same wall-clock segment.

Methods are interleaved round by round (this shared machine's speed drifts), each segment runs
``--seconds``, and the table gives the median over ``--rounds`` and each method's ratio to
``dm-loop`` and to ``dm-procs`` with as many processes as CPUs. Contexts are made and shaders
compiled before timing (one warm-up segment per method).

Usage:
    MUJOCO_GL=egl python benchmarks/bench_dm_control_pixels.py                  # ~3 minutes
    MUJOCO_GL=egl python benchmarks/bench_dm_control_pixels.py --num-envs 2 8 32 --rounds 5 --json out.json
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
import warnings
from typing import Any, Callable

os.environ.setdefault("MUJOCO_GL", "egl")  # dm_control's renderer on the EGL device ours uses

import numpy as np
from pixel_bench import SIZE, append_json, measure, pp_runner, print_table  # benchmarks/pixel_bench.py

import parallel_pool
import parallel_pool_bench as bench

DOMAINS = {"CheetahRun-v1": ("cheetah", "run"), "WalkerWalk-v1": ("walker", "walk"),
           "HumanoidRun-v1": ("humanoid", "run")}


def dm_env(task: str, camera: int, seed: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from dm_control import suite
        from dm_control.suite.wrappers import pixels
    domain, name = DOMAINS[task]
    return pixels.Wrapper(suite.load(domain, name, task_kwargs={"random": seed}), pixels_only=True,
                          render_kwargs={"height": SIZE, "width": SIZE, "camera_id": camera})


def dm_loop(env: Any, rng: np.random.Generator, seconds: float) -> int:
    spec = env.action_spec()
    frames, end = 0, time.perf_counter() + seconds
    ts = None
    while time.perf_counter() < end:
        if ts is not None and ts.last():
            ts = env.reset()
        else:
            ts = env.step(rng.uniform(spec.minimum, spec.maximum))
        if not ts.observation["pixels"].any():
            raise RuntimeError("dm_control's frame is all zeros: its GL context was lost")
        frames += 1
    return frames


def dm_loop_runner(task: str, camera: int) -> tuple[Callable[[float], int], Any]:
    env = dm_env(task, camera, 0)
    env.reset()
    rng = np.random.default_rng(0)
    return (lambda seconds: dm_loop(env, rng, seconds)), env


def _dm_worker(conn: Any, task: str, camera: int, seed: int) -> None:
    env = dm_env(task, camera, seed)
    env.reset()
    rng = np.random.default_rng(seed)
    conn.send("ready")
    while True:
        seconds = conn.recv()
        if seconds is None:
            env.close()
            return
        conn.send(dm_loop(env, rng, seconds))


class DmProcs:
    """N dm-loop processes, each told to run the same segment at once."""

    def __init__(self, task: str, camera: int, num_procs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        for i in range(num_procs):
            parent, child = context.Pipe()
            proc = context.Process(target=_dm_worker, args=(child, task, camera, i), daemon=True)
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)
        for conn in self.conns:
            assert conn.recv() == "ready"

    def run(self, seconds: float) -> int:
        for conn in self.conns:
            conn.send(seconds)
        return sum(conn.recv() for conn in self.conns)

    def close(self) -> None:
        for conn in self.conns:
            conn.send(None)
        for proc in self.procs:
            proc.join(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="CheetahRun-v1", choices=sorted(DOMAINS))
    parser.add_argument("--camera", type=int, default=0, help="camera_id (DrQ's and EnvPool's pixel setups use 0)")
    bench.add_pixel_args(parser)
    args = parser.parse_args()

    cpus = os.cpu_count() or 1
    runners: dict[str, tuple[Callable[[float], int], Any]] = {}
    procs = DmProcs(args.task, args.camera, cpus)
    runners[f"dm-procs {cpus}"] = (procs.run, procs)
    runners["dm-loop"] = dm_loop_runner(args.task, args.camera)
    for n in args.num_envs:
        for is_async, name in ((False, "pp-sync"), (True, "pp-async")):
            if n >= 2 or not is_async:
                runners[f"{name} {n}"] = pp_runner(parallel_pool.make_gymnasium, args.task, n, is_async,
                                                   args.num_threads, frames_of=lambda obs: len(obs["pixels"]),
                                                   camera_id=args.camera)
    rates = measure(runners, args.rounds, args.seconds)
    print_table(f"{args.task}, {SIZE}x{SIZE} RGB pixel observations (camera {args.camera}), {cpus} CPUs, "
                f"median of {args.rounds} rounds of {args.seconds:g} s", rates, ["dm-loop", f"dm-procs {cpus}"])
    append_json(args.json, {"task": args.task, "camera": args.camera, "size": SIZE, "cpus": cpus,
                            "rounds": args.rounds, "seconds": args.seconds, "rates": rates})

if __name__ == "__main__":
    main()
