"""Ctrl-C (SIGINT) during a blocking ``step``/``recv`` whose envs take seconds: ``KeyboardInterrupt``
is raised promptly, the interrupted batch stays in flight and comes back on a later ``recv``, and
the pool closes cleanly. The same for the Ray layer (``make_distributed``).

Each case runs a child process that prints ``BLOCK <name>`` right before a blocking call; this
process waits ``DELAY`` seconds, notes the time and sends SIGINT; the child prints when its
``KeyboardInterrupt`` arrived (``time.monotonic`` is the same clock in both processes), checks that
the pool is usable or closes it, and goes on to the next case.

The bound: the engine promises 100 ms (the main thread's waits return every 20 ms to run signal
handlers). The median latency of each test's cases must be under ``TARGET`` = 0.1 s; a single case
may take up to ``BOUND`` = 0.5 s because this machine has 2 cores shared with CI and other jobs,
where a process can wait a few hundred ms to be scheduled; the latencies measured here
are printed (``pytest -s``), and recorded in the README. Every env step in these cases takes 1.5 s
or more and SIGINT comes ``DELAY`` = 0.3 s into it, so a wait that is not interrupted fails the
bound: before this was fixed the latency was the rest of the step (1.2 s and more) for the native
pool, and 0.7 s for the Ray layer (Ray's own waits run signal handlers once a second).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

BOUND = 0.5  # seconds: no case may take longer (a scheduling hiccup on a loaded machine)
TARGET = 0.1  # seconds: the engine's promise, which the median case must keep
DELAY = 0.3  # seconds between BLOCK and SIGINT: the child is inside the call by then
STEP_SLEEP_US = 1_500_000  # env i's step takes (1 + i % 4) * 1.5 s
CHILD_TIMEOUT = 240.0

_CHILD_COMMON = """
import signal, sys, time
# A terminal's Ctrl-C, as a user has it: Python's handler even when SIGINT came in ignored (the
# children of a background job inherit SIG_IGN, and Python then installs none).
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np

def block(name):
    print("BLOCK", name, flush=True)

def caught(name):
    print("CAUGHT", name, repr(time.monotonic()), flush=True)

def expect_interrupt(name, call):
    try:
        block(name)
    except KeyboardInterrupt:
        raise AssertionError(name + ": SIGINT came before the call started (a machine too busy for DELAY)")
    try:
        call()
    except KeyboardInterrupt:
        caught(name)
        return
    raise AssertionError(name + ": the call returned without KeyboardInterrupt")
"""

_NATIVE_CHILD = """
import parallel_pool
from parallel_pool import PoolClosedError

def make(**kwargs):
    return parallel_pool.make("GuessingGame-v0", max_num_players=1, seed=0, step_sleep_us=STEP_SLEEP_US, **kwargs)

zeros = lambda n: np.zeros((n, 1), dtype=np.int64)

# 1. sync, one env: no worker threads; a stand-in steps the env while the main thread waits.
env = make(num_envs=1)
env.reset()
expect_interrupt("sync-one-env step", lambda: env.step(zeros(1)))
assert env._native.outstanding == 1          # the step is still in flight ...
obs, reward, term, trunc, info = env.recv()  # ... and comes back here
assert list(info["env_id"]) == [0] and list(info["elapsed_step"]) == [1], info
env.close()

# 2. sync, two envs on two threads: interrupted, then closed with the step in flight.
env = make(num_envs=2, num_threads=2)
env.reset()
expect_interrupt("sync step then close", lambda: env.step(zeros(2)))
assert env._native.outstanding == 2
env.close()
try:
    env.recv()
    raise AssertionError("recv after close did not raise")
except PoolClosedError:
    pass

# 3. async: recv() and recv(timeout=...) interrupted; then every sent env comes back once.
env = make(num_envs=2, batch_size=1, num_threads=2)
env.async_reset()
env.recv(); env.recv()
env.send(zeros(2), np.arange(2))
expect_interrupt("async recv", lambda: env.recv())
expect_interrupt("async recv with timeout", lambda: env.recv(timeout=60.0))
assert env._native.outstanding == 2
ids = sorted(int(env.recv(timeout=60.0)[4]["env_id"][0]) for _ in range(2))
assert ids == [0, 1], ids
assert env._native.outstanding == 0
env.close()
print("DONE", flush=True)
"""

_RAY_CHILD = """
import os
import ray
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
from parallel_pool.integrations.ray import make_distributed

zeros = lambda n: np.zeros((n, 1), dtype=np.int64)
kwargs = dict(max_num_players=1, seed=0, step_sleep_us=STEP_SLEEP_US)

# sync: step interrupted; its rows come back through recv(); a step before that is refused.
pool = make_distributed("GuessingGame-v0", num_envs_per_node=1, **kwargs)
pool.reset()
expect_interrupt("ray sync step", lambda: pool.step(zeros(1)))
try:
    pool.step(zeros(1))
    raise AssertionError("step after an interrupted step was not refused")
except ValueError as e:
    assert "recv() them first" in str(e), e
obs, reward, term, trunc, info = pool.recv()
assert list(info["env_id"]) == [0] and list(info["elapsed_step"]) == [1], info
pool.close()

# async: recv interrupted, then each sent env comes back once.
pool = make_distributed("GuessingGame-v0", num_envs_per_node=2, batch_size_per_node=1, **kwargs)
pool.async_reset()
pool.recv(); pool.recv()
pool.send(zeros(2), np.arange(2))
expect_interrupt("ray async recv", lambda: pool.recv())
expect_interrupt("ray async recv with timeout", lambda: pool.recv(timeout=60.0))
ids = sorted(int(pool.recv(timeout=60.0)[4]["env_id"][0]) for _ in range(2))
assert ids == [0, 1], ids
pool.close()
ray.shutdown()
print("DONE", flush=True)
"""


def _run_child(body: str, cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Runs ``body`` in a child, interrupting each BLOCK; returns each case's latency (seconds)."""
    source = textwrap.dedent(_CHILD_COMMON) + f"STEP_SLEEP_US = {STEP_SLEEP_US}\n" + textwrap.dedent(body)
    proc = subprocess.Popen([sys.executable, "-c", source], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.strip())
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    sent: dict[str, float] = {}
    latency: dict[str, float] = {}
    done = False
    deadline = time.monotonic() + CHILD_TIMEOUT
    try:
        while True:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                break
            word, _, rest = line.partition(" ")
            if word == "BLOCK":
                time.sleep(DELAY)
                sent[rest] = time.monotonic()
                os.kill(proc.pid, signal.SIGINT)
            elif word == "CAUGHT":
                name, _, when = rest.rpartition(" ")
                latency[name] = float(when) - sent[name]
            elif word == "DONE":
                done = True
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except (queue.Empty, subprocess.TimeoutExpired):
        proc.kill()
        raise AssertionError(f"the child did not finish within {CHILD_TIMEOUT} s; latencies so far {latency}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert done and proc.returncode == 0, (
        f"child failed (rc {proc.returncode}); Ctrl-C latencies so far {latency}:\n{stderr[-5000:]}")
    assert set(latency) == set(sent), (sent, latency)
    print("Ctrl-C latencies (ms):", {name: round(t * 1e3, 1) for name, t in latency.items()})
    return latency


def _check_latencies(latency: dict[str, float]) -> None:
    slow = {name: t for name, t in latency.items() if not 0 <= t < BOUND}
    assert not slow, f"KeyboardInterrupt later than {BOUND} s after SIGINT: {slow}"
    median = sorted(latency.values())[(len(latency) - 1) // 2]  # the lower median: no case averaged in
    assert median < TARGET, f"median Ctrl-C latency {median:.3f} s is over {TARGET} s: {latency}"


def test_ctrl_c_interrupts_native_step_and_recv(tmp_path: Path) -> None:
    latency = _run_child(_NATIVE_CHILD, tmp_path)
    assert set(latency) == {"sync-one-env step", "sync step then close", "async recv", "async recv with timeout"}
    _check_latencies(latency)


def test_ctrl_c_interrupts_the_ray_layer(tmp_path: Path) -> None:
    # Ray's socket paths must be short, its workers must not import the source tree, and the
    # cluster is the child's own (started and shut down there).
    ray_tmp = Path("/tmp") / f"rs-{os.getpid()}"
    ray_tmp.mkdir(exist_ok=True)
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp), "RAY_AUTH_MODE": "disabled"}
    try:
        latency = _run_child(_RAY_CHILD, tmp_path, env)
    finally:
        subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)
    assert set(latency) == {"ray sync step", "ray async recv", "ray async recv with timeout"}
    _check_latencies(latency)
