"""What the drop-in contracts cost per step, each against the same pool without it, interleaved.

Two pairs, each measured as env steps/s (median of ``--repeats`` segments of ``--seconds`` each,
the two sides of a pair alternating segment by segment in one process):

- ``info``: the Python backend's info side channel. ``make_python([gymnasium.make(task)] * n)``
  with ``info_pickle=True`` (the default: every info value an env returns, 1 KB per env and step)
  against ``info_pickle=False`` (numeric info alone).
- ``view``: Gymnasium's strict vector view. ``gymnasium.make_vec("parallel_pool/<task>")``
  (the reference's info exactly: ``_key`` masks, step-only keys masked in autoreset rows) against
  the pool it wraps, ``parallel_pool.make_gymnasium(task)``.

Usage:
    python benchmarks/ab_dropin.py                      # ~3 minutes on 2 cores
    python benchmarks/ab_dropin.py --pairs view --tasks Ant-v5 --num-envs 8 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import gymnasium
import numpy as np

import parallel_pool


def _python_pool(task: str, n: int, info_pickle: bool) -> Any:
    return parallel_pool.make_python([lambda: gymnasium.make(task)] * n, seed=0, info_pickle=info_pickle)


def _view(task: str, n: int) -> Any:
    return gymnasium.make_vec(f"parallel_pool/{task}", num_envs=n)


def _pool(task: str, n: int) -> Any:
    return parallel_pool.make_gymnasium(task, num_envs=n, seed=0)


PAIRS: dict[str, tuple[str, Callable[[str, int], Any], str, Callable[[str, int], Any], tuple[str, ...]]] = {
    "info": ("info_pickle=True", lambda t, n: _python_pool(t, n, True),
             "info_pickle=False", lambda t, n: _python_pool(t, n, False), ("CartPole-v1", "LunarLander-v3")),
    "view": ("strict view", _view, "pool", _pool, ("CartPole-v1", "Ant-v5")),
}


def _segment(env: Any, actions: list[np.ndarray], seconds: float) -> float:
    """Steps the env for about ``seconds``; returns env steps/s."""
    n = len(actions[0])
    steps, start = 0, time.perf_counter()
    while True:
        for a in actions:
            env.step(a)
        steps += len(actions)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * n / elapsed


def measure(pair: str, task: str, n: int, seconds: float, repeats: int) -> tuple[float, float]:
    """Median steps/s of side A and side B."""
    _, make_a, _, make_b, _ = PAIRS[pair]
    envs = [make_a(task, n), make_b(task, n)]
    try:
        space = getattr(envs[1], "single_action_space", envs[1].action_space)  # one env's space
        space.seed(0)
        actions = [np.stack([space.sample() for _ in range(n)]) for _ in range(32)]
        for env in envs:
            env.reset(seed=0)
            _segment(env, actions, seconds / 4)  # warm up
        rates: list[list[float]] = [[], []]
        for r in range(repeats):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for side in order:
                rates[side].append(_segment(envs[side], actions, seconds))
        return statistics.median(rates[0]), statistics.median(rates[1])
    finally:
        for env in envs:
            env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", choices=sorted(PAIRS), default=sorted(PAIRS))
    parser.add_argument("--tasks", nargs="+", help="tasks (default: each pair's own)")
    parser.add_argument("--num-envs", nargs="+", type=int, default=[8, 32])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print("| pair | task | envs | A | A steps/s | B | B steps/s | A / B |")
    print("|---|---|---|---|---|---|---|---|")
    for pair in args.pairs:
        name_a, _, name_b, _, default_tasks = PAIRS[pair]
        for task in args.tasks or default_tasks:
            for n in args.num_envs:
                a, b = measure(pair, task, n, args.seconds, args.repeats)
                row = [pair, task, n, name_a, f"{a:,.0f}", name_b, f"{b:,.0f}", f"{a / b:.2f}"]
                print("| " + " | ".join(map(str, row)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
