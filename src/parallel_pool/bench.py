"""Throughput and latency measurements of parallel_pool against the vector envs users replace.

Shared by the ``parallel-pool bench`` command and the scripts in ``benchmarks/``. Every method is
timed the same way: actions are drawn before the clock starts and cycled through, creation and
``close`` are not timed, each method is warmed up (which also estimates its rate), and then timed
in ``repeats`` segments interleaved with the other methods of the same ``num_envs``, so noise
from a shared machine hits every method alike. The reported rate is the median segment's.

Example:
    >>> from parallel_pool import bench
    >>> result = bench.run_benchmarks(["CartPole-v1"], [1, 4], ["pp-sync", "gym-sync"], steps=2000,
    ...                               repeats=1, progress=False)
    >>> print(bench.format_table(result))  # doctest: +SKIP
"""

from __future__ import annotations

import datetime
import functools
import importlib.util
import itertools
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium
import numpy as np

# Method keys, in table order, and the names the table shows.
METHODS: dict[str, str] = {
    "pp-sync": "parallel_pool sync",
    "pp-async": "parallel_pool async",
    "gym-sync": "gymnasium SyncVectorEnv",
    "gym-async": "gymnasium AsyncVectorEnv",
    "sb3-subproc": "sb3 SubprocVecEnv",
    "envpool-sync": "envpool sync",
    "envpool-async": "envpool async",
}
GYMNASIUM_METHODS = ("gym-sync", "gym-async")
DEFAULT_METHODS = tuple(METHODS)
# Task ids whose Gymnasium/SB3 counterpart is not ``gymnasium.make(task_id)``: a picklable
# zero-argument constructor of the equivalent single env (e.g. Pong-v5: ale_py's ALE/Pong-v5 in
# AtariPreprocessing and FrameStackObservation). benchmarks/bench_atari.py fills it.
GYMNASIUM_EQUIVALENTS: dict[str, Callable[[], gymnasium.Env]] = {}

# Distinct pre-drawn action batches a method cycles through: enough that the actions look random
# to the env, few enough that 256 envs of an 8-dim Box take a few MB.
ACTION_BATCHES = 512
# The subprocess-based methods start one process per env (SB3's workers each import torch): past
# this many a machine of a few cores only swaps, and 256 of them can exhaust its memory. They are
# not run above it (reported as such); the native pools are.
MAX_SUBPROCESSES = 64
SUBPROCESS_METHODS = ("gym-async", "sb3-subproc")

# Warm-up: run at least this long (it also estimates the rate that sizes a timed segment).
WARMUP_SECONDS = 0.05
# A native pool that returns nothing for this long (or 10x its expected segment time, if longer)
# is closed from a watchdog thread and reported as hung, so one stuck recv() cannot stall a run.
HANG_SECONDS = 30.0


class Hung(Exception):
    """A method whose env returned nothing within the watchdog limit; it was closed."""


class Skipped(Exception):
    """A method that cannot run here (library not installed, task unknown to it); the message says why."""


@dataclass
class Measurement:
    """The env steps per second of one method at one ``num_envs`` (the median of its segments)."""

    task_id: str
    method: str
    num_envs: int
    batch_size: int
    steps_per_s: float | None
    samples: list[float] = field(default_factory=list)
    steps_per_segment: int = 0
    note: str = ""

    @property
    def label(self) -> str:
        return METHODS[self.method]


@dataclass
class BenchResult:
    """Measurements, plus one note per (task, method) that was skipped."""

    measurements: list[Measurement]
    skipped: dict[tuple[str, str], str]
    settings: dict[str, Any]

    def best_gymnasium(self, task_id: str, num_envs: int) -> float | None:
        """Steps/s of the faster Gymnasium vector env at this ``num_envs``, if one was measured."""
        rates = [
            m.steps_per_s
            for m in self.measurements
            if m.task_id == task_id and m.num_envs == num_envs and m.method in GYMNASIUM_METHODS
            and m.steps_per_s
        ]
        return max(rates) if rates else None

    def ratio(self, m: Measurement) -> float | None:
        best = self.best_gymnasium(m.task_id, m.num_envs)
        return m.steps_per_s / best if best and m.steps_per_s else None

    def to_json(self) -> dict[str, Any]:
        return {
            "machine": machine_info(),
            "settings": self.settings,
            "throughput": [
                {**asdict(m), "label": m.label, "ratio_to_best_gymnasium": self.ratio(m)}
                for m in self.measurements
            ],
            "skipped": [{"task_id": t, "method": k, "note": n} for (t, k), n in self.skipped.items()],
        }


# --- actions ------------------------------------------------------------------------------------


def draw_actions(space: gymnasium.Space, batch: int, count: int, seed: int, players: int = 1) -> list[Any]:
    """``count`` batches of ``batch`` random actions of ``space``, drawn now so no timing includes it.

    With ``players`` > 1 (a multi-player task) each env's row holds one action per player.
    """
    batched = gymnasium.vector.utils.batch_space(space, batch * count * players)
    batched.seed(seed)
    sample = batched.sample()

    def split(x: Any, i: int) -> Any:
        if isinstance(x, dict):
            return {k: split(v, i) for k, v in x.items()}
        rows = x[i * batch * players : (i + 1) * batch * players]
        if players > 1:
            rows = rows.reshape((batch, players) + rows.shape[1:])
        return np.ascontiguousarray(rows)

    return [split(sample, i) for i in range(count)]


# --- one runner per method: build (untimed), run(calls) (timed), close (untimed) ----------------


class Runner:
    """Steps one batched env ``calls`` times with the pre-drawn actions; ``steps_per_call`` env steps each.

    ``abortable`` runners can be closed from another thread while ``run`` blocks (our native pool
    can); ``abort`` does that, and ``run`` then raises.
    """

    steps_per_call: int
    abortable = False
    aborted = False

    def run(self, calls: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        self.aborted = True
        self.close()


class _SyncRunner(Runner):
    """Anything with ``step(actions)`` over every env: our sync mode, Gymnasium/SB3 vector envs, EnvPool."""

    def __init__(
        self, env: Any, actions: list[Any], num_envs: int, close: Callable[[], None], abortable: bool = False
    ) -> None:
        self._step = env.step
        self._actions = actions
        self._close = close
        self.steps_per_call = num_envs
        self.abortable = abortable

    def run(self, calls: int) -> None:
        step = self._step
        for action in itertools.islice(itertools.cycle(self._actions), calls):
            step(action)

    def close(self) -> None:
        self._close()


class _AsyncRunner(Runner):
    """EnvPool-style ``recv`` / ``send(actions, info["env_id"])``: our async mode, and EnvPool's."""

    def __init__(self, env: Any, actions: list[Any], batch_size: int, abortable: bool = False) -> None:
        self._env = env
        self._actions = actions
        self.steps_per_call = batch_size
        self.abortable = abortable
        env.async_reset()

    def run(self, calls: int) -> None:
        recv, send = self._env.recv, self._env.send
        for action in itertools.islice(itertools.cycle(self._actions), calls):
            info = recv()[-1]
            send(action, info["env_id"])

    def close(self) -> None:
        self._env.close()


def async_batch_size(num_envs: int, fraction: float) -> int:
    """The batch size of the async modes: ``fraction`` of ``num_envs``, at least 1."""
    return max(1, min(num_envs, int(num_envs * fraction)))


def check_available(method: str, task_id: str) -> str | None:
    """None if ``method`` can run ``task_id`` here, else the reason it cannot."""
    if method in GYMNASIUM_METHODS or method == "sb3-subproc":
        if task_id not in gymnasium.registry and task_id not in GYMNASIUM_EQUIVALENTS:
            return f"Gymnasium has no env {task_id!r}"
    if method == "sb3-subproc" and importlib.util.find_spec("stable_baselines3") is None:
        return "stable-baselines3 not installed"
    if method.startswith("envpool"):
        if importlib.util.find_spec("envpool") is None:
            return "envpool not installed"
        import envpool

        if task_id not in envpool.list_all_envs():
            return f"EnvPool has no env {task_id!r}"
    return None


def make_runner(
    method: str,
    task_id: str,
    num_envs: int,
    *,
    seed: int = 0,
    num_threads: int = 0,
    async_fraction: float = 0.5,
) -> Runner:
    """Builds ``method``'s batched env of ``task_id`` with ``num_envs`` envs, reset and ready to run.

    Raises ``Skipped`` when the method is not available here.
    """
    reason = check_available(method, task_id)
    if reason is not None:
        raise Skipped(reason)
    if method in ("pp-sync", "pp-async"):
        import parallel_pool

        batch = num_envs if method == "pp-sync" else async_batch_size(num_envs, async_fraction)
        env = parallel_pool.make(
            task_id, num_envs=num_envs, batch_size=batch, num_threads=num_threads, seed=seed
        )
        actions = draw_actions(env.action_space, batch, ACTION_BATCHES, seed, env.spec.max_num_players)
        if method == "pp-sync":
            env.reset()
            return _SyncRunner(env, actions, num_envs, env.close, abortable=True)
        return _AsyncRunner(env, actions, batch, abortable=True)
    if method in ("envpool-sync", "envpool-async"):
        import envpool

        batch = num_envs if method == "envpool-sync" else async_batch_size(num_envs, async_fraction)
        env = envpool.make(
            task_id, env_type="gymnasium", num_envs=num_envs, batch_size=batch, num_threads=num_threads,
            seed=seed,
        )
        actions = draw_actions(env.action_space, batch, ACTION_BATCHES, seed)
        if method == "envpool-sync":
            env.reset()
            return _SyncRunner(env, actions, num_envs, env.close)
        return _AsyncRunner(env, actions, batch)
    make_one = GYMNASIUM_EQUIVALENTS.get(task_id) or functools.partial(gymnasium.make, task_id)
    if method in GYMNASIUM_METHODS:
        cls = gymnasium.vector.SyncVectorEnv if method == "gym-sync" else gymnasium.vector.AsyncVectorEnv
        venv = cls([make_one] * num_envs)
        venv.reset(seed=seed)
        actions = draw_actions(venv.single_action_space, num_envs, ACTION_BATCHES, seed)
        return _SyncRunner(venv, actions, num_envs, venv.close)
    if method == "sb3-subproc":
        from stable_baselines3.common.vec_env import SubprocVecEnv

        venv = SubprocVecEnv([make_one] * num_envs)
        venv.seed(seed)
        venv.reset()
        actions = draw_actions(venv.action_space, num_envs, ACTION_BATCHES, seed)
        return _SyncRunner(venv, actions, num_envs, venv.close)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")


# --- timing -------------------------------------------------------------------------------------


def _time_calls(runner: Runner, calls: int, limit: float | None = None) -> float:
    """Seconds ``runner`` takes for ``calls`` calls; ``Hung`` if it is still blocked after ``limit`` s."""
    watchdog = None
    if limit is not None and runner.abortable:
        watchdog = threading.Timer(limit, runner.abort)
        watchdog.daemon = True
        watchdog.start()
    try:
        start = time.perf_counter()
        runner.run(calls)
        return time.perf_counter() - start
    except Exception as e:
        if runner.aborted:
            raise Hung(f"hung: no result for {limit:.3g} s, pool closed by the watchdog") from e
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()


def warm_up(runner: Runner, min_seconds: float = WARMUP_SECONDS) -> float:
    """Runs ``runner`` for at least ``min_seconds`` and returns its rate in calls per second."""
    calls = 1
    while True:
        elapsed = _time_calls(runner, calls, HANG_SECONDS)
        if elapsed >= min_seconds:
            return calls / elapsed
        calls *= 4 if elapsed < min_seconds / 8 else 2


class Progress:
    """A progress bar on stderr: tqdm when installed, else one plain line per update."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self._total, self._done, self._enabled = total, 0, enabled
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, file=sys.stderr, unit="run", leave=False, dynamic_ncols=True)

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(text)
        elif self._enabled:
            print(f"[{self._done}/{self._total}] {text}", file=sys.stderr, flush=True)

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_benchmarks(
    task_ids: Sequence[str],
    num_envs_list: Sequence[int],
    methods: Sequence[str] = DEFAULT_METHODS,
    *,
    seconds: float | None = 0.5,
    steps: int | None = None,
    repeats: int = 3,
    seed: int = 0,
    num_threads: int = 0,
    async_fraction: float = 0.5,
    progress: bool = True,
) -> BenchResult:
    """Env steps per second of every method, task and ``num_envs``.

    Each timed segment lasts about ``seconds`` (sized from the warm-up rate) or, when ``steps`` is
    given, covers at least ``steps`` env steps. The ``repeats`` segments of the methods of one
    (task, num_envs) run interleaved, in a rotating order, and each method reports its median.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    if (seconds is None) == (steps is None):
        raise ValueError("give exactly one of seconds and steps")
    skipped: dict[tuple[str, str], str] = {}
    for task_id in task_ids:
        for method in methods:
            reason = check_available(method, task_id)
            if reason is not None:
                skipped[(task_id, method)] = reason
    measurements: list[Measurement] = []
    configs = [(t, n) for t in task_ids for n in num_envs_list]
    runnable = {t: [m for m in methods if (t, m) not in skipped] for t in task_ids}
    bar = Progress(sum(len(runnable[t]) * (repeats + 1) for t, _ in configs), progress)
    try:
        for task_id, num_envs in configs:
            runners: dict[str, Runner] = {}
            rates: dict[str, float] = {}
            failed: dict[str, str] = {}
            samples: dict[str, list[float]] = {m: [] for m in runnable[task_id]}
            calls: dict[str, int] = {}
            here = [m for m in runnable[task_id] if not (m in SUBPROCESS_METHODS and num_envs > MAX_SUBPROCESSES)]
            for method in runnable[task_id]:
                if method not in here:
                    bar.advance(repeats + 1)
                    measurements.append(Measurement(
                        task_id=task_id, method=method, num_envs=num_envs, batch_size=num_envs, steps_per_s=None,
                        note=f"not run: {num_envs} subprocesses (more than {MAX_SUBPROCESSES})",
                    ))
            try:
                for method in here:
                    bar.describe(f"{task_id} num_envs={num_envs}: starting {METHODS[method]}")
                    runners[method] = runner = make_runner(
                        method, task_id, num_envs, seed=seed, num_threads=num_threads,
                        async_fraction=async_fraction,
                    )
                    try:
                        rates[method] = warm_up(runner)
                    except Hung as e:
                        failed[method] = str(e)
                    if steps is not None:
                        calls[method] = max(1, -(-steps // runner.steps_per_call))
                    elif method in rates:
                        calls[method] = max(1, round(seconds * rates[method]))  # type: ignore[operator]
                    bar.advance()
                order = list(runners)
                for r in range(repeats):
                    shift = r % max(1, len(order))
                    for method in order[shift:] + order[:shift]:
                        bar.advance()
                        if method in failed:
                            continue
                        bar.describe(f"{task_id} num_envs={num_envs}: {METHODS[method]} ({r + 1}/{repeats})")
                        runner = runners[method]
                        limit = max(HANG_SECONDS, 10 * calls[method] / rates[method])
                        try:
                            elapsed = _time_calls(runner, calls[method], limit)
                        except Hung as e:
                            failed[method] = str(e)
                            continue
                        samples[method].append(calls[method] * runner.steps_per_call / elapsed)
            finally:
                for runner in runners.values():
                    if not runner.aborted:
                        runner.close()
            for method in order:
                runner = runners[method]
                note = ""
                if method in ("pp-async", "envpool-async") and runner.steps_per_call == num_envs:
                    note = "batch_size = num_envs: a sync pool driven by send/recv"
                if method in failed:
                    done = len(samples[method])
                    note = failed[method] + (f"; median of the {done} segments before" if done else "")
                measurements.append(
                    Measurement(
                        task_id=task_id,
                        method=method,
                        num_envs=num_envs,
                        batch_size=runner.steps_per_call,
                        steps_per_s=statistics.median(samples[method]) if samples[method] else None,
                        samples=samples[method],
                        steps_per_segment=calls.get(method, 0) * runner.steps_per_call,
                        note=note,
                    )
                )
    finally:
        bar.close()
    settings = {
        "task_ids": list(task_ids),
        "num_envs": list(num_envs_list),
        "methods": list(methods),
        "seconds": seconds,
        "steps": steps,
        "repeats": repeats,
        "seed": seed,
        "num_threads": num_threads,
        "async_fraction": async_fraction,
    }
    return BenchResult(measurements, skipped, settings)


# --- single-env latency -------------------------------------------------------------------------


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
    front-end (``env._native.step``) and Gymnasium's unwrapped env (no wrappers, same loop).
    """
    import parallel_pool

    env = parallel_pool.make(task_id, num_envs=1, seed=seed)
    env.reset()
    ours_actions = draw_actions(env.action_space, 1, calls, seed, env.spec.max_num_players)
    gym_env = gymnasium.make(task_id)
    gym_env.reset(seed=seed)
    gym_env.action_space.seed(seed)
    gym_actions = [gym_env.action_space.sample() for _ in range(calls)]
    raw_env = gymnasium.make(task_id).unwrapped
    raw_env.reset(seed=seed)
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


# --- output -------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 0
    import parallel_pool

    return {
        "nproc": nproc,
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": gymnasium.__version__,
        "parallel_pool": parallel_pool.__version__,
        "platform": platform.platform(),
        "date": datetime.date.today().isoformat(),
    }


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def format_table(result: BenchResult) -> str:
    """A markdown table: steps/s per task, num_envs and method, and the ratio to the faster of
    Gymnasium's SyncVectorEnv and AsyncVectorEnv at the same num_envs; skipped methods as notes."""
    header = ["task", "num_envs", "method", "batch_size", "steps/s", "vs best Gymnasium", "note"]
    rows = []
    for m in result.measurements:
        rows.append([m.task_id, str(m.num_envs), m.label, str(m.batch_size), _rate(m.steps_per_s),
                     _ratio(result.ratio(m)), m.note])
    tasks = list(dict.fromkeys([m.task_id for m in result.measurements] + [t for t, _ in result.skipped]))
    methods = list(METHODS)

    def order(item: tuple[tuple[str, str], str]) -> tuple[int, int]:
        return tasks.index(item[0][0]), methods.index(item[0][1])

    for (task_id, method), note in sorted(result.skipped.items(), key=order):
        rows.append([task_id, "all", METHODS[method], "-", "-", "-", f"skipped: {note}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = {1, 3, 4, 5}

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ) + " |"

    rules = [("-" * (w + 1) + ":") if i in right else "-" * (w + 2) for i, w in enumerate(widths)]
    sep = "|" + "|".join(rules) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def format_latency(latency: dict[str, Any]) -> str:
    """A markdown table of ``single_env_latency``'s result."""
    us = latency["us_per_step"]
    gym = us["gymnasium"]
    lines = [
        "| single env, one call | µs/step (median) | Gymnasium / this |",
        "|---|---:|---:|",
    ]
    for name, value in us.items():
        lines.append(f"| {name} | {value:.2f} | {gym / value:.2f}x |")
    return "\n".join(lines)


def plot(result: BenchResult, path: str) -> None:
    """Writes a PNG: steps/s against num_envs, one line per method, one panel per task."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(m.task_id for m in result.measurements))
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(6 * max(1, len(tasks)), 4.5), squeeze=False)
    for ax, task_id in zip(axes[0], tasks):
        for method, label in METHODS.items():
            points = sorted(
                (m.num_envs, m.steps_per_s)
                for m in result.measurements
                if m.task_id == task_id and m.method == method and m.steps_per_s
            )
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, marker="o", label=label)
        ax.set_xscale("log", base=2)
        sizes = sorted({m.num_envs for m in result.measurements if m.task_id == task_id})
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.set_xlabel("num_envs")
        ax.set_ylabel("env steps / s")
        ax.set_title(task_id)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_json(path: str, record: dict[str, Any], append: bool = False) -> None:
    """Writes ``record`` to ``path``; with ``append``, adds it to the list of records already there."""
    records: list[Any] = []
    if append and os.path.exists(path):
        with open(path) as f:
            previous = json.load(f)
        records = previous if isinstance(previous, list) else [previous]
    with open(path, "w") as f:
        json.dump(records + [record] if append else record, f, indent=2)
        f.write("\n")
