"""The pixel benchmarks' shared parts: our from_pixels runner, the interleaved rounds, the JSON record.

Used by bench_mujoco_pixels.py (against Gymnasium's rgb_array loop) and bench_dm_control_pixels.py
(against dm_control's physics.render loop). A runner is ``(run, env)``: ``run(seconds)`` steps for
about that long and returns the frames it produced; ``env.close()`` ends it.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any, Callable

import numpy as np

SIZE = 84  # the frame size of DrQ/EnvPool pixel setups

Runner = tuple[Callable[[float], int], Any]


def pp_runner(make: Callable[..., Any], task: str, num_envs: int, is_async: bool, num_threads: int,
              frames_of: Callable[[Any], int] = len, **kwargs: Any) -> Runner:
    """``make(task, from_pixels=True, width=SIZE, height=SIZE, **kwargs)`` stepped with random actions:
    sync (``step``) or async (``batch_size = num_envs // 2``, ``send``/``recv``)."""
    batch = max(1, num_envs // 2) if is_async else num_envs
    env = make(task, num_envs=num_envs, batch_size=batch, num_threads=num_threads, seed=0, from_pixels=True,
               width=SIZE, height=SIZE, **kwargs)
    space = getattr(env, "single_action_space", env.action_space)
    rng = np.random.default_rng(0)
    low, high = space.low, space.high
    if is_async:
        env.async_reset()
    else:
        env.reset()

    def run(seconds: float) -> int:
        frames, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            if is_async:
                obs, *_, info = env.recv()
                ids = info["env_id"]
                env.send(rng.uniform(low, high, (len(ids), *low.shape)).astype(space.dtype), ids)
            else:
                obs, *_ = env.step(rng.uniform(low, high, (num_envs, *low.shape)).astype(space.dtype))
            frames += frames_of(obs)
        return frames
    return run, env


def measure(runners: dict[str, Runner], rounds: int, seconds: float) -> dict[str, list[float]]:
    """One warm-up segment per runner (GL contexts, uploads, shader compilation), then `rounds` rounds
    of one `seconds` segment per runner, interleaved (this shared machine's speed drifts); closes
    every runner. Returns each runner's frames/s per round."""
    for run, _ in runners.values():
        run(1.0)
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, (run, _) in runners.items():
            start = time.perf_counter()
            frames = run(seconds)
            rates[name].append(frames / (time.perf_counter() - start))
    for _, env in runners.values():
        env.close()
    return rates


def print_table(title: str, rates: dict[str, list[float]], baselines: list[str]) -> None:
    """A markdown table: each method's median frames/s and its ratio to each baseline's median."""
    base = {name: statistics.median(rates[name]) for name in baselines}
    print(f"\n{title}\n")
    print("| method | frames/s | " + " | ".join(f"vs {b}" for b in baselines) + " |")
    print("|---|---:|" + "---:|" * len(baselines))
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} | " + " | ".join(f"{median / base[b]:.2f}x" for b in baselines) + " |")


def append_json(path: str | None, record: dict[str, Any]) -> None:
    """Appends `record` to the JSON list in `path` (made if missing); nothing when path is None."""
    if not path:
        return
    existing = json.load(open(path)) if os.path.exists(path) else []
    existing.append(record)
    with open(path, "w") as f:
        json.dump(existing, f, indent=1)
