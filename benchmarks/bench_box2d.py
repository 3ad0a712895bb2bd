"""LunarLander-v3, BipedalWalker-v3 and CarRacing-v3: parallel_pool against EnvPool 1.2.5 and Gymnasium.

Measures env steps/s of our sync mode and async mode (batch_size = num_envs // 2) against
Gymnasium's AsyncVectorEnv (Gymnasium's own Box2D envs on box2d-py) and EnvPool's sync and async
modes (when installed: ``pip install envpool==1.2.5``), for num_envs 1, 8 and 32, interleaved as
``parallel_pool_bench`` does (the segments of all methods of one (task, num_envs) run in a
rotating order, each method reporting its median); prints markdown tables with the ratios to
EnvPool and to Gymnasium, checks the issue's target (ours >= 1.2x EnvPool in every cell, sync
against sync and async against async) and optionally appends everything to a JSON file.

Random actions from a fixed generator, the same for every method; episodes end (landers crash,
walkers fall, cars reach the time limit or leave the playfield) and reset as they do in training.
EnvPool 1.2.5's ``CarRacing-v3`` draws its 96x96 frame its own way (OpenCV), where ours and
Gymnasium's draw Gymnasium's 1000x800 frame and smoothscale it, as the observation must be
Gymnasium's pixel for pixel.

Usage:
    python benchmarks/bench_box2d.py                        # ~6 minutes on 2 cores
    python benchmarks/bench_box2d.py --json benchmarks/results_box2d.json
    python benchmarks/bench_box2d.py --tasks LunarLander-v3 --num-envs 8 --repeats 5
"""

from __future__ import annotations

import gymnasium

import parallel_pool_bench as bench

TASKS = ("LunarLander-v3", "BipedalWalker-v3", "CarRacing-v3")
NUM_ENVS = (1, 8, 32)
METHODS = ("pp-sync", "pp-async", "gym-async", "envpool-sync", "envpool-async")
# The target: each of our modes at this multiple of EnvPool's same mode, in every cell.
ENVPOOL_TARGET = 1.2
# Ours over EnvPool's same mode (the target) and over Gymnasium's AsyncVectorEnv (shown).
PAIRS = (("pp-sync", "envpool-sync", ENVPOOL_TARGET), ("pp-async", "envpool-async", ENVPOOL_TARGET),
         ("pp-sync", "gym-async", None), ("pp-async", "gym-async", None))


def main(argv: list[str] | None = None) -> int:
    return bench.ratio_benchmark(
        argv, __doc__.splitlines()[0],
        lambda tasks: f"Box2D ({', '.join(tasks)}): parallel_pool vs EnvPool and Gymnasium {gymnasium.__version__}",
        TASKS, NUM_ENVS, METHODS, PAIRS,
    )


if __name__ == "__main__":
    raise SystemExit(main())
