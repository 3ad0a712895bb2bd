"""MiniGrid-DoorKey-8x8-v0, MiniGrid-MultiRoom-N6-v0 and BabyAI-BossLevel-v0: parallel_pool against
EnvPool 1.2.5 and minigrid under Gymnasium's AsyncVectorEnv.

Measures env steps/s of our sync mode and async mode (batch_size = num_envs // 2) against
minigrid's own envs under Gymnasium's AsyncVectorEnv (without shared memory: the mission is a
str) and EnvPool's sync and async modes (when importable: EnvPool 1.2.5 lives in its own venv
here, so run with ``PYTHONPATH=<envpool venv's site-packages>`` appended, as below), for num_envs
1, 8 and 64, interleaved as ``parallel_pool_bench`` does (the segments of all methods of one
(task, num_envs) run in a rotating order, each method reporting its median); prints markdown
tables with the ratios to EnvPool and to AsyncVectorEnv, checks the issue's targets (ours >= 1.2x
EnvPool's same mode and >= 20x AsyncVectorEnv in every cell) and optionally appends everything to
a JSON file.

Random actions from a fixed generator, the same for every method: episodes end at the time limit
(or, rarely, at the goal) and reset as in training. Each side computes what its users get: our
observation (the 7x7x3 image, direction, mission) and EnvPool's (image, direction, 96 mission
bytes, 512 for BabyAI), minigrid's dict with its str mission.

Usage:
    python benchmarks/bench_minigrid.py                     # ~5 minutes on 2 cores
    PYTHONPATH=/work/venv-envpool/lib/python3.11/site-packages python benchmarks/bench_minigrid.py
    python benchmarks/bench_minigrid.py --tasks MiniGrid-DoorKey-8x8-v0 --num-envs 8 --repeats 3
"""

from __future__ import annotations

import minigrid  # registers the MiniGrid ids with Gymnasium, for the AsyncVectorEnv rows

import parallel_pool_bench as bench

TASKS = ("MiniGrid-DoorKey-8x8-v0", "MiniGrid-MultiRoom-N6-v0", "BabyAI-BossLevel-v0")
NUM_ENVS = (1, 8, 64)
METHODS = ("pp-sync", "pp-async", "gym-async", "envpool-sync", "envpool-async")
# The targets, in every cell: each of our modes at ENVPOOL_TARGET x EnvPool's same mode,
# and at ASYNC_VECTOR_TARGET x Gymnasium's AsyncVectorEnv.
ENVPOOL_TARGET = 1.2
ASYNC_VECTOR_TARGET = 20.0
PAIRS = (("pp-sync", "envpool-sync", ENVPOOL_TARGET), ("pp-async", "envpool-async", ENVPOOL_TARGET),
         ("pp-sync", "gym-async", ASYNC_VECTOR_TARGET), ("pp-async", "gym-async", ASYNC_VECTOR_TARGET))


def main(argv: list[str] | None = None) -> int:
    return bench.ratio_benchmark(
        argv, __doc__.splitlines()[0],
        lambda tasks: f"MiniGrid ({', '.join(tasks)}): parallel_pool vs EnvPool and minigrid {minigrid.__version__}",
        TASKS, NUM_ENVS, METHODS, PAIRS,
    )


if __name__ == "__main__":
    raise SystemExit(main())
