"""The methods a benchmark compares, and one runner per method that steps its batched env.

A method is a way to step a batch of envs of one task: our pool in sync or async mode,
Gymnasium's ``SyncVectorEnv``/``AsyncVectorEnv``, SB3's ``SubprocVecEnv``, EnvPool's sync and
async modes. ``make_runner`` builds one (untimed) and returns a ``Runner`` whose ``run(calls)`` is
what gets timed; its actions are drawn beforehand, so no timing includes drawing them.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np

import parallel_pool

__all__ = [
    "ACTION_BATCHES",
    "DEFAULT_METHODS",
    "GYMNASIUM_METHODS",
    "MAX_SUBPROCESSES",
    "METHODS",
    "PUFFER_METHODS",
    "PYTHON_BACKEND_METHODS",
    "SUBPROCESS_METHODS",
    "AsyncRunner",
    "GymnasiumEquivalents",
    "Runner",
    "Skipped",
    "SyncRunner",
    "async_batch_size",
    "check_available",
    "draw_actions",
    "make_runner",
]

# Method keys, in table order, and the names the table shows.
METHODS: dict[str, str] = {
    "pp-sync": "parallel_pool sync",
    "pp-async": "parallel_pool async",
    "gym-sync": "gymnasium SyncVectorEnv",
    "gym-async": "gymnasium AsyncVectorEnv",
    "sb3-subproc": "sb3 SubprocVecEnv",
    "envpool-sync": "envpool sync",
    "envpool-async": "envpool async",
    "ale-sync": "ale_py AtariVectorEnv sync",
    "ale-async": "ale_py AtariVectorEnv async",
    # The Python-env backend: Gymnasium's own env (``gymnasium.make(task_id)``) in worker processes.
    "pp-python-sync": "parallel_pool Python backend sync",
    "pp-python-async": "parallel_pool Python backend async",
    # PufferLib's multiprocessing vectorisation of the same Gymnasium env (pufferlib 2.0.2: 3.0.0
    # does not build here), one process per core, in sync and in async (half the envs per batch) mode.
    "puffer-sync": "pufferlib Multiprocessing sync",
    "puffer-async": "pufferlib Multiprocessing async",
}
GYMNASIUM_METHODS = ("gym-sync", "gym-async")
PYTHON_BACKEND_METHODS = ("pp-python-sync", "pp-python-async")
PUFFER_METHODS = ("puffer-sync", "puffer-async")
# What `parallel-pool bench` runs unless told: the native pools and their peers.
DEFAULT_METHODS = tuple(m for m in METHODS if m not in PYTHON_BACKEND_METHODS + PUFFER_METHODS)

# Task ids whose Gymnasium/SB3 counterpart is not ``gymnasium.make(task_id)``, each with a
# picklable zero-argument constructor of the equivalent single env (e.g. Pong-v5: ale_py's
# ALE/Pong-v5 in AtariPreprocessing and FrameStackObservation, as benchmarks/bench_atari.py
# passes it).
GymnasiumEquivalents = Mapping[str, Callable[[], gymnasium.Env]]

# Distinct pre-drawn action batches a method cycles through: enough that the actions look random
# to the env, few enough that 256 envs of an 8-dim Box take a few MB.
ACTION_BATCHES = 512
# The subprocess-based methods start one process per env (SB3's workers each import torch): past
# this many a machine of a few cores only swaps, and 256 of them can exhaust its memory. They are
# not run above it (reported as such); the native pools are.
MAX_SUBPROCESSES = 64
SUBPROCESS_METHODS = ("gym-async", "sb3-subproc")


class Skipped(Exception):
    """A method that cannot run here (library not installed, task unknown to it); the message says why."""


def draw_actions(space: gymnasium.Space, batch: int, count: int, seed: int, players: int = 1) -> list[Any]:
    """``count`` batches of ``batch`` random actions of ``space``, drawn now so no timing includes it.

    With ``players`` > 1 (a multi-player task) each env's row holds one action per player.

    Example:
        >>> import gymnasium
        >>> from parallel_pool_bench import draw_actions
        >>> batches = draw_actions(gymnasium.spaces.Discrete(2), batch=4, count=3, seed=0)
        >>> len(batches), batches[0].shape
        (3, (4,))
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


class Runner:
    """Steps one batched env ``calls`` times with pre-drawn actions; ``steps_per_call`` env steps each.

    ``abortable`` runners can be closed from another thread while ``run`` blocks (our native pool
    can); ``abort`` does that, and ``run`` then raises.
    """

    steps_per_call: int
    abortable = False
    aborted = False
    # Seconds this runner's processes keep using CPU after its last call (busy-waiting workers):
    # the benchmark waits that long, untimed, before it times the next method.
    settle_s = 0.0

    def run(self, calls: int) -> None:
        """Makes ``calls`` calls (the timed part)."""
        raise NotImplementedError

    def close(self) -> None:
        """Closes the batched env (not timed)."""
        raise NotImplementedError

    def abort(self) -> None:
        """Marks the runner aborted and closes it, from any thread."""
        self.aborted = True
        self.close()


class SyncRunner(Runner):
    """Anything with ``step(actions)`` over every env: our sync mode, Gymnasium/SB3 vector envs, EnvPool.

    The env must have been reset; ``close`` is called to close it.
    """

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


class AsyncRunner(Runner):
    """EnvPool-style ``recv`` / ``send(actions, info["env_id"])``: our async mode, and EnvPool's.

    Calls ``env.async_reset()`` when made; every call receives one batch of ``batch_size`` envs and
    sends their next actions.
    """

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


def check_available(
    method: str, task_id: str, gymnasium_equivalents: GymnasiumEquivalents | None = None
) -> str | None:
    """None if ``method`` can run ``task_id`` here, else the reason it cannot.

    The Gymnasium and SB3 methods need ``task_id`` in Gymnasium's registry or in
    ``gymnasium_equivalents``.
    """
    if method in GYMNASIUM_METHODS + PYTHON_BACKEND_METHODS + PUFFER_METHODS or method == "sb3-subproc":
        if task_id not in gymnasium.registry and task_id not in (gymnasium_equivalents or {}):
            return f"Gymnasium has no env {task_id!r}"
    if method == "sb3-subproc" and importlib.util.find_spec("stable_baselines3") is None:
        return "stable-baselines3 not installed"
    if method in PUFFER_METHODS and importlib.util.find_spec("pufferlib") is None:
        return "pufferlib not installed"
    if method == "puffer-async" and _physical_cores() < 2:
        return "PufferLib's async mode needs two worker processes, one per physical core"
    if method.startswith("envpool"):
        if importlib.util.find_spec("envpool") is None:
            return "envpool not installed"
        import envpool

        if task_id not in envpool.list_all_envs():
            return f"EnvPool has no env {task_id!r}"
    if method.startswith("ale-"):
        if parallel_pool.tasks.task_info(task_id)["family"] != "atari":
            return "not an Atari task"
        if importlib.util.find_spec("ale_py.vector_env") is None:
            return "ale_py has no vector_env (ale-py >= 0.10)"
    return None


def _physical_cores() -> int:
    """Physical cores, as PufferLib counts them (psutil: a PufferLib dependency, not ours)."""
    import psutil

    return psutil.cpu_count(logical=False) or 1


class _PufferCreator:
    """A picklable factory of PufferLib's wrapper around one Gymnasium env (its workers build them)."""

    def __init__(self, make_one: Callable[[], gymnasium.Env]) -> None:
        self.make_one = make_one

    def __call__(self) -> Any:
        import pufferlib.emulation

        return pufferlib.emulation.GymnasiumPufferEnv(env_creator=self.make_one)


class _PufferRunner(Runner):
    """PufferLib's own loop: ``send(actions)`` then ``recv()``, which returns the next ready batch
    (all envs in sync mode; one worker's envs in async mode, the others stepping meanwhile)."""

    # PufferLib's workers spin on their shared-memory flag for 0.5 s after their last step (then
    # sleep 10 ms at a time): timed right after it, another method would share the cores with them.
    settle_s = 0.6

    def __init__(self, vecenv: Any, actions: list[Any], batch_size: int, seed: int) -> None:
        self._env = vecenv
        self._actions = actions
        self.steps_per_call = batch_size
        self.abortable = False
        vecenv.async_reset(seed)
        vecenv.recv()

    def run(self, calls: int) -> None:
        send, recv = self._env.send, self._env.recv
        for action in itertools.islice(itertools.cycle(self._actions), calls):
            send(action)
            recv()

    def close(self) -> None:
        self._env.close()


def _puffer_runner(method: str, make_one: Callable[[], gymnasium.Env], num_envs: int, async_fraction: float,
                   seed: int) -> Runner:
    import pufferlib.vector

    # PufferLib's advice and its default limit is one worker process per physical core, each holding
    # num_envs / num_workers envs; a batch is a whole number of workers' envs. Its driver busy-waits
    # too, so in sync mode (every worker in each batch) that is one spinning process more than cores:
    # CartPole-v1 x 8 on 2 cores ran at ~570 steps/s with 2 workers and ~39,000 with 1. So sync mode
    # gets one worker per core but one, its best here; async mode needs two workers at least (one
    # steps while the other's batch is out) and gets one per core.
    cores = _physical_cores()
    num_workers = max(1, min(num_envs, cores - 1 if method == "puffer-sync" else cores))
    while num_envs % num_workers:
        num_workers -= 1
    envs_per_worker = num_envs // num_workers
    batch = num_envs
    if method == "puffer-async":
        batch = max(envs_per_worker, async_batch_size(num_envs, async_fraction) // envs_per_worker * envs_per_worker)
        if batch == num_envs:
            raise ValueError(f"{num_workers} worker(s) for {num_envs} envs leave no async batch smaller than all envs")
    vecenv = pufferlib.vector.make(
        _PufferCreator(make_one), backend=pufferlib.vector.Multiprocessing, num_envs=num_envs,
        num_workers=num_workers, batch_size=batch,
    )
    actions = draw_actions(vecenv.single_action_space, batch, ACTION_BATCHES, seed)
    return _PufferRunner(vecenv, actions, batch, seed)


def _ale_vector_env(task_id: str, num_envs: int, batch_size: int, num_threads: int) -> Any:
    """ale_py's threaded C++ AtariVectorEnv configured as our pool of ``task_id``: the same ROM,
    preprocessing (frame skip and max-pool, grayscale 84x84, frame stack, no-op starts, fire reset),
    reward clipping, episodic life and time limit, so both do the same work per step."""
    from ale_py.vector_env import AtariVectorEnv

    config = parallel_pool.make_spec(task_id).config
    return AtariVectorEnv(
        os.path.splitext(os.path.basename(config["rom_path"]))[0],
        num_envs,
        batch_size=batch_size,
        num_threads=num_threads,
        max_num_frames_per_episode=config["max_episode_steps"] * config["frame_skip"],
        repeat_action_probability=config["repeat_action_probability"],
        full_action_space=config["full_action_space"],
        img_height=config["img_height"],
        img_width=config["img_width"],
        grayscale=config["gray_scale"],
        stack_num=config["stack_num"],
        frameskip=config["frame_skip"],
        noop_max=config["noop_max"],
        episodic_life=config["episodic_life"],
        reward_clipping=config["reward_clip"],
        use_fire_reset=config["use_fire_reset"],
    )


class _ResetThenRecv:
    """ale_py's async AtariVectorEnv under AsyncRunner's ``async_reset``/``recv``/``send``: its
    ``reset`` queues every env's reset and returns the first batch, which ``recv`` hands out first;
    its ``send`` takes no env ids (it steps the envs of the last batch received, as ours are told)."""

    def __init__(self, env: Any, seed: int) -> None:
        self._env, self._seed = env, seed
        self._first: Any = None
        self.close = env.close

    def send(self, actions: Any, env_id: Any) -> None:
        self._env.send(actions)

    def async_reset(self) -> None:
        obs, info = self._env.reset(seed=self._seed)
        self._first = (obs, None, None, None, info)

    def recv(self) -> Any:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return self._env.recv()


def make_runner(
    method: str,
    task_id: str,
    num_envs: int,
    *,
    seed: int = 0,
    num_threads: int = 0,
    async_fraction: float = 0.5,
    gymnasium_equivalents: GymnasiumEquivalents | None = None,
) -> Runner:
    """Builds ``method``'s batched env of ``task_id`` with ``num_envs`` envs, reset and ready to run.

    The async modes use ``async_batch_size(num_envs, async_fraction)``; the Gymnasium and SB3
    methods build each env with ``gymnasium_equivalents[task_id]`` when given, else
    ``gymnasium.make(task_id)``. Raises ``Skipped`` when the method is not available here.

    Example:
        >>> from parallel_pool_bench import make_runner
        >>> runner = make_runner("pp-sync", "CartPole-v1", 4)
        >>> runner.run(10)  # 10 calls of step(actions): 40 env steps
        >>> runner.steps_per_call
        4
        >>> runner.close()
    """
    reason = check_available(method, task_id, gymnasium_equivalents)
    if reason is not None:
        raise Skipped(reason)
    if method in ("pp-sync", "pp-async"):
        batch = num_envs if method == "pp-sync" else async_batch_size(num_envs, async_fraction)
        env = parallel_pool.make_gymnasium(
            task_id, num_envs=num_envs, batch_size=batch, num_threads=num_threads, seed=seed
        )
        actions = draw_actions(env.action_space, batch, ACTION_BATCHES, seed, env.spec.max_num_players)
        if method == "pp-sync":
            env.reset()
            return SyncRunner(env, actions, num_envs, env.close, abortable=True)
        return AsyncRunner(env, actions, batch, abortable=True)
    if method in ("envpool-sync", "envpool-async"):
        import envpool

        batch = num_envs if method == "envpool-sync" else async_batch_size(num_envs, async_fraction)
        envpool_env = envpool.make(
            task_id, env_type="gymnasium", num_envs=num_envs, batch_size=batch,
            num_threads=num_threads, seed=seed,
        )
        actions = draw_actions(envpool_env.action_space, batch, ACTION_BATCHES, seed)
        if method == "envpool-sync":
            envpool_env.reset()
            return SyncRunner(envpool_env, actions, num_envs, envpool_env.close)
        return AsyncRunner(envpool_env, actions, batch)
    if method in ("ale-sync", "ale-async"):
        batch = num_envs if method == "ale-sync" else async_batch_size(num_envs, async_fraction)
        ale_env = _ale_vector_env(task_id, num_envs, batch if batch < num_envs else 0, num_threads)
        actions = draw_actions(ale_env.single_action_space, batch, ACTION_BATCHES, seed)
        if method == "ale-sync":
            ale_env.reset(seed=seed)
            return SyncRunner(ale_env, actions, num_envs, ale_env.close)
        return AsyncRunner(_ResetThenRecv(ale_env, seed), actions, batch)
    make_one = (gymnasium_equivalents or {}).get(task_id) or functools.partial(gymnasium.make, task_id)
    if method in PYTHON_BACKEND_METHODS:
        batch = num_envs if method == "pp-python-sync" else async_batch_size(num_envs, async_fraction)
        py_env: Any = parallel_pool.make_python(
            [make_one] * num_envs, batch_size=batch, num_threads=num_threads, seed=seed
        )
        actions = draw_actions(py_env.action_space, batch, ACTION_BATCHES, seed)
        if method == "pp-python-sync":
            py_env.reset()
            return SyncRunner(py_env, actions, num_envs, py_env.close, abortable=True)
        return AsyncRunner(py_env, actions, batch, abortable=True)
    if method in PUFFER_METHODS:
        return _puffer_runner(method, make_one, num_envs, async_fraction, seed)
    if method in GYMNASIUM_METHODS:
        cls = gymnasium.vector.SyncVectorEnv if method == "gym-sync" else gymnasium.vector.AsyncVectorEnv
        try:
            venv = cls([make_one] * num_envs)
        except ValueError:
            # AsyncVectorEnv cannot put every space in shared memory (minigrid's MissionSpace, a
            # str): its workers then send observations through their pipes.
            venv = gymnasium.vector.AsyncVectorEnv([make_one] * num_envs, shared_memory=False)
        venv.reset(seed=seed)
        actions = draw_actions(venv.single_action_space, num_envs, ACTION_BATCHES, seed)
        return SyncRunner(venv, actions, num_envs, venv.close)
    if method == "sb3-subproc":
        from stable_baselines3.common.vec_env import SubprocVecEnv

        sb3_venv = SubprocVecEnv([make_one] * num_envs)
        sb3_venv.seed(seed)
        sb3_venv.reset()
        actions = draw_actions(sb3_venv.action_space, num_envs, ACTION_BATCHES, seed)
        return SyncRunner(sb3_venv, actions, num_envs, sb3_venv.close)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
