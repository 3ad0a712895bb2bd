"""ViZDoom: parallel_pool against EnvPool 1.2.5 and the vizdoom package under AsyncVectorEnv.

Frames/s (engine tics: env steps x frame_skip 4) of two single-player tasks, ``Basic-v1`` (the
``D1Basic``-style task: the wheel's basic.cfg, EnvPool's ``Basic-v1`` on the same scenario) and
``Deathmatch-v1`` (deathmatch.cfg), each with 84x84 RGB frames (EnvPool takes the colour format from
the scenario, RGB for both, and has no grey option), a 4-frame stack and frame_skip 4 on every side,
for num_envs 4 and 8, of:

- ``pp-sync``: ``parallel_pool.make(task, num_envs=n)``, ``step`` of every env;
- ``pp-async``: the same with ``batch_size = n // 2``, ``send``/``recv``;
- ``envpool-sync`` / ``envpool-async``: ``envpool.make_gymnasium(task, ...)`` of EnvPool 1.2.5, the
  same two ways (its ViZDoom actions are button vectors: the one-hot rows of our discrete actions);
- ``gym-async``: Gymnasium's ``AsyncVectorEnv`` over a one-env wrapper of ``vizdoom.DoomGame``
  doing what ours does (make_action with frame_skip, RGB INTER_AREA resize, 4-frame stack), one
  subprocess per env.

The segments of all methods of one (task, num_envs) run interleaved in a rotating order, each
method reporting its median; random actions from a fixed generator; episodes end and reset as in
training. Prints markdown tables and the ratios (ours / each reference). Multi-player
(``max_num_players=2``) is not in these tables: EnvPool 1.2.5 has no multi-player ViZDoom, and the
vizdoom package's own way to drive a net game (each player's make_action(a, 4) at once) is not
reproducible and stalls (tests/envs/vizdoom/test_vizdoom.py); ours drives its tics in turn (VizdoomEnv::NetTic).

EnvPool is not a dependency: put an environment holding envpool 1.2.5 on the path, e.g.
``PYTHONPATH=/path/to/venv-envpool/lib/python3.11/site-packages`` (the envpool rows are skipped
without it).

Usage:
    python benchmarks/bench_vizdoom.py                    # ~4 minutes on 2 cores
    python benchmarks/bench_vizdoom.py --tasks Basic-v1 --num-envs 4 --repeats 3 --seconds 1
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

TASKS = ("Basic-v1", "Deathmatch-v1")
NUM_ENVS = (4, 8)
METHODS = ("pp-sync", "pp-async", "envpool-sync", "envpool-async", "gym-async")
REFERENCES = ("envpool-sync", "envpool-async", "gym-async")
FRAME_SKIP = 4
SIZE = 84
STACK = 4


def scenario(task: str) -> str:
    import vizdoom

    stem = {"Basic-v1": "basic", "Deathmatch-v1": "deathmatch"}[task]
    return os.path.join(os.path.dirname(vizdoom.__file__), "scenarios", stem + ".cfg")


class OneDoomEnv(gymnasium.Env):
    """One vizdoom.DoomGame as a gymnasium.Env doing what a parallel_pool ViZDoom env does: the
    scenario's buttons one at a time, make_action with frame_skip, RGB 84x84 INTER_AREA, 4 frames."""

    def __init__(self, task: str) -> None:
        import cv2
        import vizdoom

        self.cv2 = cv2
        self.game = vizdoom.DoomGame()
        self.game.load_config(scenario(task))
        self.game.set_screen_format(vizdoom.ScreenFormat.RGB24)
        self.game.set_window_visible(False)
        self.game.set_sound_enabled(False)
        self.game.set_mode(vizdoom.Mode.PLAYER)
        self.game.init()
        n = len(self.game.get_available_buttons())
        self.buttons = np.eye(n).tolist()
        self.action_space = gymnasium.spaces.Discrete(n)
        self.observation_space = gymnasium.spaces.Box(0, 255, (STACK * 3, SIZE, SIZE), np.uint8)
        self.frames = np.zeros((STACK * 3, SIZE, SIZE), np.uint8)
        self.steps = 0

    def _frame(self) -> np.ndarray:
        state = self.game.get_state()
        if state is None:
            return np.zeros((3, SIZE, SIZE), np.uint8)
        frame = self.cv2.resize(state.screen_buffer, (SIZE, SIZE), interpolation=self.cv2.INTER_AREA)
        return frame.transpose(2, 0, 1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is not None:
            self.game.set_seed(seed)
        self.game.new_episode()
        self.steps = 0
        self.frames[:] = np.tile(self._frame(), (STACK, 1, 1))
        return self.frames.copy(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        reward = self.game.make_action(self.buttons[int(action)], FRAME_SKIP)
        self.steps += 1
        finished = self.game.is_episode_finished()
        timeout = finished and self.game.is_episode_timeout_reached()
        self.frames[:-3] = self.frames[3:]
        self.frames[-3:] = self._frame()
        return self.frames.copy(), reward, finished and not timeout, timeout or self.steps >= 525, {}

    def close(self) -> None:
        self.game.close()


class Runner:
    """One method at one (task, num_envs): ``run(seconds)`` steps it for about that long, returns frames/s."""

    def __init__(self, method: str, task: str, num_envs: int, seed: int) -> None:
        self.method, self.num_envs = method, num_envs
        kwargs: dict[str, Any] = dict(img_height=SIZE, img_width=SIZE, stack_num=STACK, frame_skip=FRAME_SKIP)
        batch = num_envs if method.endswith("sync") and not method.endswith("async") else max(1, num_envs // 2)
        self.step: Callable[[], int]
        if method.startswith("pp-"):
            self.env: Any = parallel_pool.make(task, num_envs=num_envs, batch_size=batch, seed=seed, gray_scale=False,
                                               **kwargs)
            num_actions = int(self.env.action_space.n)
        elif method.startswith("envpool-"):
            import envpool

            self.env = envpool.make_gymnasium(task, num_envs=num_envs, batch_size=batch, seed=seed,
                                              cfg_path=scenario(task), **kwargs)
            num_actions = int(self.env.action_space.shape[0])
        elif method == "gym-async":
            self.env = gymnasium.vector.AsyncVectorEnv([lambda: OneDoomEnv(task)] * num_envs)
            num_actions = int(self.env.single_action_space.n)
        else:
            raise ValueError(method)
        rng = np.random.default_rng(seed)
        self.actions = rng.integers(0, num_actions, (64, num_envs))  # a cycle of 64 batches
        self.one_hot = np.eye(num_actions)
        self.t = 0
        if method.endswith("async") and method != "gym-async":
            self.env.async_reset()
            self.step = self._async
        else:
            self.env.reset(seed=seed) if method == "gym-async" else self.env.reset()
            self.step = self._sync

    def _next(self, n: int) -> np.ndarray:
        self.t = (self.t + 1) % len(self.actions)
        a = self.actions[self.t][:n]
        return self.one_hot[a] if self.method.startswith("envpool-") else a

    def _sync(self) -> int:
        self.env.step(self._next(self.num_envs))
        return self.num_envs

    def _async(self) -> int:
        info = self.env.recv()[-1]
        ids = info["env_id"]
        self.env.send(self._next(len(ids)), ids)
        return len(ids)

    def run(self, seconds: float) -> float:
        steps = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            steps += self.step()
        return steps * FRAME_SKIP / elapsed

    def close(self) -> None:
        self.env.close()


def available(method: str) -> str | None:
    if method.startswith("envpool-") and importlib.util.find_spec("envpool") is None:
        return "envpool is not importable (PYTHONPATH=<a venv with envpool 1.2.5>/lib/python3.11/site-packages)"
    if method == "gym-async" and importlib.util.find_spec("vizdoom") is None:
        return "vizdoom is not installed (pip install --no-deps vizdoom==1.3.2)"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    bench.add_runner_args(parser, num_envs=NUM_ENVS, methods=METHODS, seconds=2.0, repeats=3)
    args = parser.parse_args(argv)

    bench.start_report("ViZDoom: parallel_pool vs EnvPool 1.2.5 and vizdoom under AsyncVectorEnv")
    methods = bench.available_methods(args.methods, available)
    rates: dict[tuple[str, str, int], float] = {}
    for task in args.tasks:
        for n in args.num_envs:
            make = partial(Runner, task=task, num_envs=n, seed=args.seed)
            medians = bench.interleaved_methods(
                methods, make, args.seconds, args.repeats, warmup=min(0.5, args.seconds), label=f"{task} num_envs={n}"
            )
            rates.update({(task, m, n): rate for m, rate in medians.items()})
    pairs = [(ours, ref) for ours in ("pp-sync", "pp-async") for ref in REFERENCES]
    ratios = []
    for task in args.tasks:
        table = {m: [rates[(task, m, n)] for n in args.num_envs] for m in methods}
        heading = f"{task}: frames/s (median of {args.repeats} interleaved segments of ~{args.seconds} s)"
        for (ours, ref), cells in bench.print_rates(heading, args.num_envs, table, pairs, digits=2).items():
            ratios += [
                {"task": task, "ours": ours, "reference": ref, "num_envs": n, "ratio": c}
                for n, c in zip(args.num_envs, cells)
            ]
    if args.json:
        record = {
            "command": " ".join(["python", *sys.argv]),
            "rates": [{"task": t, "method": m, "num_envs": n, "frames_per_s": r} for (t, m, n), r in rates.items()],
            "ratios": ratios,
        }
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
