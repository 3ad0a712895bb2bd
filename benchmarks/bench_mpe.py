"""simple_spread_v3: parallel_pool's PettingZoo front-end against mpe2 vectorised the usual ways.

Env steps/s (one step of every agent of one env) for num_envs 8, 32 and 64, of:

- ``pp-sync``: ``parallel_pool.make_pettingzoo("simple_spread_v3", num_envs=n)``, ``step`` with a
  dict of per-agent action arrays (what a multi-agent training loop gets: dicts keyed by agent);
- ``pp-async``: the same with ``batch_size = n // 2``, ``send``/``recv``;
- ``supersuit``: mpe2's ``parallel_env`` through SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and
  ``concat_vec_envs_v1(..., num_cpus=<CPUs>, base_class="gymnasium")`` (the SB3-style recipe of
  PettingZoo's tutorials; every agent a row of a vector env, envs split over worker processes);
- ``gym-async``: Gymnasium's ``AsyncVectorEnv`` over a one-env wrapper of mpe2's ``parallel_env``
  (observation ``(agents, 18)``, ``MultiDiscrete`` action), one subprocess per env.

EnvPool 1.2.5 has no MPE task, so there is no EnvPool row. The segments of all methods of one
num_envs run interleaved in a rotating order, each method reporting its median; random actions
from a fixed generator; episodes end at max_cycles (25) and reset as in training. Prints markdown
tables, the ratios, and checks the issue's target (ours >= 10x each Python reference) per cell.

SuperSuit is not a dependency of parallel_pool or its tests; install it for this script with
``pip install --no-deps supersuit==3.11.0`` (its other requirement, tinyscaler, is only for its
image wrappers). Without it the supersuit rows are skipped.

Usage:
    python benchmarks/bench_mpe.py                       # ~3 minutes on 2 cores
    python benchmarks/bench_mpe.py --num-envs 8 --repeats 3 --seconds 0.5
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium
import numpy as np

import parallel_pool
import parallel_pool_bench as bench

TASK = "simple_spread_v3"
NUM_ENVS = (8, 32, 64)
METHODS = ("pp-sync", "pp-async", "supersuit", "gym-async")
PYTHON_REFERENCES = ("supersuit", "gym-async")
TARGET = 10.0  # the issue's: ours >= 10x the Python references
NUM_AGENTS = 3  # simple_spread_v3's default N
NUM_MOVES = 5


class OneMpeEnv(gymnasium.Env):
    """One mpe2 simple_spread_v3 parallel env as a gymnasium.Env: every agent's observation stacked,
    one MultiDiscrete action; the episode ends when mpe2's does (for AsyncVectorEnv)."""

    def __init__(self) -> None:
        from mpe2 import simple_spread_v3

        self.env = simple_spread_v3.parallel_env()
        self.agents = list(self.env.possible_agents)
        dim = self.env.observation_space(self.agents[0]).shape[0]
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (len(self.agents), dim), np.float32)
        self.action_space = gymnasium.spaces.MultiDiscrete([NUM_MOVES] * len(self.agents))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, _ = self.env.reset(seed=seed)
        return np.stack([obs[a] for a in self.agents]), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, rew, term, trunc, _ = self.env.step({a: int(action[i]) for i, a in enumerate(self.agents)})
        done_term, done_trunc = any(term.values()), any(trunc.values())
        return np.stack([obs[a] for a in self.agents]), float(sum(rew.values())), done_term, done_trunc, {}


class Runner:
    """One method at one num_envs: ``run(seconds)`` steps it for about that long, returns env steps/s."""

    def __init__(self, method: str, num_envs: int, seed: int) -> None:
        self.method, self.num_envs = method, num_envs
        rng = np.random.default_rng(seed)
        self.actions = rng.integers(0, NUM_MOVES, (64, num_envs, NUM_AGENTS))  # a cycle of 64 batches
        self.t = 0
        self.step: Callable[[], int]
        if method in ("pp-sync", "pp-async"):
            batch = num_envs if method == "pp-sync" else max(1, num_envs // 2)
            self.env: Any = parallel_pool.make_pettingzoo(TASK, num_envs=num_envs, batch_size=batch, seed=seed)
            self.agents = self.env.possible_agents
            if method == "pp-sync":
                self.env.reset()
                self.step = self._pp_sync
            else:
                self.env.async_reset()
                self.step = self._pp_async
        elif method == "supersuit":
            import supersuit
            from mpe2 import simple_spread_v3

            vec = supersuit.pettingzoo_env_to_vec_env_v1(simple_spread_v3.parallel_env())
            self.env = supersuit.concat_vec_envs_v1(vec, num_envs, num_cpus=os.cpu_count() or 1, base_class="gymnasium")
            self.env.reset(seed=seed)
            self.step = self._vector
        elif method == "gym-async":
            self.env = gymnasium.vector.AsyncVectorEnv([OneMpeEnv] * num_envs)
            self.env.reset(seed=seed)
            self.step = self._vector
        else:
            raise ValueError(method)

    def _next_actions(self) -> np.ndarray:
        self.t = (self.t + 1) % len(self.actions)
        return self.actions[self.t]

    def _pp_sync(self) -> int:
        a = self._next_actions()
        self.env.step({agent: a[:, p] for p, agent in enumerate(self.agents)})
        return self.num_envs

    def _pp_async(self) -> int:
        _, _, _, _, infos = self.env.recv()
        ids = infos[self.agents[0]]["env_id"]
        a = self._next_actions()[: len(ids)]
        self.env.send({agent: a[:, p] for p, agent in enumerate(self.agents)}, ids)
        return len(ids)

    def _vector(self) -> int:
        a = self._next_actions()
        self.env.step(a.reshape(-1) if self.method == "supersuit" else a)
        return self.num_envs

    def run(self, seconds: float) -> float:
        steps = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            steps += self.step()
        return steps / elapsed

    def close(self) -> None:
        self.env.close()


def available(method: str) -> str | None:
    if method == "supersuit" and importlib.util.find_spec("supersuit") is None:
        return "supersuit is not installed (pip install --no-deps supersuit==3.11.0)"
    if method in PYTHON_REFERENCES and importlib.util.find_spec("mpe2") is None:
        return "mpe2 is not installed (pip install --no-deps mpe2==1.1.1)"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench.add_runner_args(parser, num_envs=NUM_ENVS, methods=METHODS, seconds=1.0, repeats=5)
    args = parser.parse_args(argv)

    import mpe2

    bench.start_report(f"{TASK}: parallel_pool's PettingZoo front-end vs mpe2 {mpe2.__version__}")
    methods = bench.available_methods(args.methods, available)
    rates: dict[tuple[str, int], float] = {}
    for n in args.num_envs:
        make = partial(Runner, num_envs=n, seed=args.seed)
        medians = bench.interleaved_methods(
            methods, make, args.seconds, args.repeats, warmup=min(0.3, args.seconds), label=f"num_envs={n}"
        )
        rates.update({(m, n): rate for m, rate in medians.items()})
    table = {m: [rates[(m, n)] for n in args.num_envs] for m in methods}
    pairs = [(ours, ref) for ours in ("pp-sync", "pp-async") for ref in PYTHON_REFERENCES]
    heading = f"env steps/s (median of {args.repeats} interleaved segments of ~{args.seconds} s)"
    checks = [
        (f"{ours} >= {TARGET:g}x {ref}, {n} envs", c >= TARGET, c)
        for (ours, ref), cells in bench.print_rates(heading, args.num_envs, table, pairs, digits=1).items()
        for n, c in zip(args.num_envs, cells)
    ]
    if checks:
        print()
        met = sum(ok for _, ok, _ in checks)
        print(f"Target (ours >= {TARGET:g}x each Python reference): {met} of {len(checks)} cells met")
        for name, ok, c in checks:
            if not ok:
                print(f"- NOT MET: {name}: {c:.1f}x")
    if args.json:
        record = {
            "task": TASK,
            "command": " ".join(["python", *sys.argv]),
            "rates": [{"method": m, "num_envs": n, "env_steps_per_s": r} for (m, n), r in rates.items()],
            "targets": [{"target": name, "met": ok, "ratio": c} for name, ok, c in checks],
        }
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
