"""tests/reliability/test_soak.py's workloads on EnvPool 1.2.5, measured the same way, for the README's
"Reliability" comparison (EnvPool is not a dependency; run this in an environment that has it):

    python benchmarks/soak_envpool.py cartpole_async 10000000
    python benchmarks/soak_envpool.py pong_async 1000000
    python benchmarks/soak_envpool.py pools 1000

Each prints one JSON line with the fields test_soak.py's workloads print. The workloads are the
same but for what EnvPool lacks: no episode statistics (CartPole), no recv timeout, and the pools
mix has a sync CartPole pool where ours has the tutorial's GuessingGame-v0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import envpool  # type: ignore[import-not-found]
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "reliability"))
# The measurement and the stepping loops of tests/reliability/test_soak.py, not copies.
from test_soak import _soak_async, _soak_pools  # noqa: E402


def cartpole_async(steps: int) -> dict[str, Any]:
    env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=16, batch_size=8, seed=0)
    actions = np.random.default_rng(0).integers(0, 2, size=(64, 8))
    return _soak_async(env, actions, steps, 8, 200_000)


def pong_async(frames: int) -> dict[str, Any]:
    env = envpool.make("Pong-v5", env_type="gymnasium", num_envs=8, batch_size=4, seed=0)
    actions = np.random.default_rng(0).integers(0, 6, size=(64, 4))
    frames_per_recv = 4 * env.spec.config.frame_skip
    return _soak_async(env, actions, frames, frames_per_recv, 20_000)


def _one_pool(i: int) -> None:
    kind = i % 20
    if kind == 0:
        env = envpool.make("Pong-v5", env_type="gymnasium", num_envs=2, batch_size=1, seed=i)
        env.async_reset()
        _, _, _, _, info = env.recv()
        env.send(np.zeros(1, dtype=np.int64), info["env_id"])
    elif kind % 3 == 0:
        env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=i, num_threads=2)
        env.reset()
        env.step(np.zeros(4, dtype=np.int64))
    elif kind % 3 == 1:
        env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=8, batch_size=4, seed=i, num_threads=2)
        env.async_reset()
        _, _, _, _, info = env.recv()
        env.send(np.zeros(4, dtype=np.int64), info["env_id"])
    else:
        env = envpool.make("Pendulum-v1", env_type="gymnasium", num_envs=3, seed=i)
        env.reset()
        env.step(np.zeros((3, 1), dtype=np.float32))
    env.close()


def pools(count: int) -> dict[str, Any]:
    return _soak_pools(_one_pool, count)


if __name__ == "__main__":
    workloads = {"cartpole_async": cartpole_async, "pong_async": pong_async, "pools": pools}
    print(json.dumps(workloads[sys.argv[1]](int(sys.argv[2]))))
