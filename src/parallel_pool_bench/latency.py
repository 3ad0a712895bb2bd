"""The latency of one ``step`` of a single env: ours against ``gymnasium.make(task_id)``."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium

import parallel_pool
from parallel_pool_bench.progress import Progress
from parallel_pool_bench.runners import draw_actions

__all__ = ["single_env_latency"]


def single_env_latency(
    task_id: str = "CartPole-v1",
    calls: int = 10_000,
    repeats: int = 20,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Median µs per ``step`` call of one env: ours against ``gymnasium.make(task_id)``.

    Both follow the same episode logic, Gymnasium 1.x's next-step autoreset: our pool resets an env
    on the call after its episode ended, and the Gymnasium loop calls ``reset()`` instead of
    ``step()`` on the call after ``terminated or truncated``; so each timed call is one step or one
    reset on both sides, and reset time is counted on both. Actions are drawn beforehand (ours as
    a (1,) array per call, Gymnasium's as ``action_space.sample()`` returns them). The ``repeats``
    segments of ``calls`` calls alternate between the two; each figure is the median segment.

    Two reference figures say where our time goes: the native ``step`` without the Python
    front-end (the pool's internal native object, on purpose) and Gymnasium's unwrapped env (no
    wrappers, same loop).

    Example:
        >>> from parallel_pool_bench import format_latency, single_env_latency
        >>> latency = single_env_latency("CartPole-v1", calls=1000, repeats=3, progress=False)
        >>> sorted(latency["us_per_step"])[:2]
        ['gymnasium', 'gymnasium unwrapped env (reference)']
    """
    env = parallel_pool.make_gymnasium(task_id, num_envs=1, seed=seed)
    env.reset()
    ours_actions = draw_actions(env.action_space, 1, calls, seed, env.spec.max_num_players)
    gym_env = gymnasium.make(task_id)
    gym_env.reset(seed=seed)
    gym_env.action_space.seed(seed)
    gym_actions = [gym_env.action_space.sample() for _ in range(calls)]
    raw_env = gymnasium.make(task_id).unwrapped
    raw_env.reset(seed=seed)
    # The native pool under the front-end: the reference that says what the front-end costs.
    native = env._native

    def ours() -> None:
        step = env.step
        for a in ours_actions:
            step(a)

    def ours_native() -> None:
        step = native.step
        for a in ours_actions:
            step(a, None)

    def gym_loop(e: Any) -> Callable[[], None]:
        def loop() -> None:
            step, reset = e.step, e.reset
            done = False
            for a in gym_actions:
                if done:
                    reset()
                    done = False
                else:
                    _, _, terminated, truncated, _ = step(a)
                    done = terminated or truncated

        return loop

    loops = {
        "parallel_pool": ours,
        "gymnasium": gym_loop(gym_env),
        "parallel_pool native step (reference)": ours_native,
        "gymnasium unwrapped env (reference)": gym_loop(raw_env),
    }
    samples: dict[str, list[float]] = {k: [] for k in loops}
    bar = Progress(repeats * len(loops), progress)
    try:
        for loop in loops.values():  # warm-up
            loop()
        for r in range(repeats):
            for name, loop in loops.items():
                bar.describe(f"{task_id} single-env step latency: {name} ({r + 1}/{repeats})")
                start = time.perf_counter()
                loop()
                samples[name].append((time.perf_counter() - start) / calls * 1e6)
                bar.advance()
    finally:
        bar.close()
        env.close()
        gym_env.close()
        raw_env.close()
    medians = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "task_id": task_id,
        "calls_per_segment": calls,
        "repeats": repeats,
        "us_per_step": medians,
        "samples_us": samples,
        "speedup_vs_gymnasium": medians["gymnasium"] / medians["parallel_pool"],
    }
