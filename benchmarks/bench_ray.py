"""The distributed pool (one native pool per Ray node) against one local pool on the same cores:
2 nodes x n envs against one local pool of 2n envs, sync, async and rollouts on the node.

Each node is a real raylet of ``ray.cluster_utils.Cluster`` on this machine (``num_cpus=1`` each,
so each node's pool has one thread); the local pool has ``2n`` envs and two threads. The nodes add
no cores: the ratio is the layer's cost. Each cell is measured in ``--rounds`` rounds, the local
and the distributed pool alternating (interleaved, so a change in the machine's load hits both),
and reports the median of the rounds' ratios.

- sync: ``step`` of every env (2n rows per call);
- async: ``recv`` of half of the envs' worth (local: ``n`` rows; distributed: one node's ``n/2``)
  and ``send`` back;
- async-node: the same with the same rows per call on both sides: the distributed pool made with
  ``asynchronous=True``, each ``recv`` one whole node of ``n`` envs (whichever finished first);
- rollout: ``K`` steps of every env with a NumPy policy (a linear layer on a few pixels for Atari,
  on the observation for MuJoCo): on the driver for the local pool, on each node for the
  distributed one (``set_policy`` + ``rollout(K)``), returning the segment;
- rollout2: the same with two segments in flight on the distributed side (``send_rollout(K)``
  before ``recv_rollout()`` of the last: each node steps the next segment while the last crosses);
- the floor: a no-op Ray actor call, and a data-plane round trip of a 1-env CartPole step.

``--trace``: where a batch's wall time goes, on the Ray cluster, local and distributed interleaved:
per batch the wall time, the user and system CPU and the context switches of the driver, of each
node's process and of Ray's own processes, and the machine's idle cores (docs/ray.md, fourth round).

``--timeline``: where a sync call's wall time goes, on ``--profile``'s two processes: timestamps on
both sides (the request's way to each node, the pool's step, the node's work after it, the frame's
send and read, the driver's time between calls, the nodes' imbalance).

``--profile``: the data plane's CPU per batch without Ray (docs/ray.md's profile): two processes
serve ``PoolActor`` over the data plane on this machine, the driver is a ``DistributedPool`` wired
to them by hand; it reports the driver's CPU per sync call or async batch (``time.thread_time``)
and each node's data-plane thread's CPU per frame, in all and beyond the env work (the front-end's
calls timed on that thread: only where every frame is served in Python, ``--python-serve``; the
native serving of async batches makes those calls itself), for every task and n given.

Usage:
    python benchmarks/bench_ray.py                                  # the issue's cells, ~8 minutes
    python benchmarks/bench_ray.py --profile                        # the CPU per batch, ~1 minute
    python benchmarks/bench_ray.py --profile --python-serve --tasks CartPole-v1 --num-envs 8  # Python serving
    python benchmarks/bench_ray.py --trace --num-envs 8 --modes sync async --rounds 2   # per-process CPU
    python benchmarks/bench_ray.py --timeline --num-envs 8 --calls 1000           # a sync call's parts
    python benchmarks/bench_ray.py --tasks CartPole-v1 --num-envs 8 --seconds 1 --rounds 1
    python benchmarks/bench_ray.py --tasks Pong-v5 --num-envs 8 --modes sync async --make-kwargs '{"stack_num": 1}'
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import parallel_pool


class LinearPolicy:
    """A NumPy policy: a fixed random linear layer on (a few pixels of) the observation; argmax for
    a discrete action space, tanh for a box. Picklable, so it can be shipped to the nodes."""

    def __init__(self, obs_shape: tuple[int, ...], action_space: Any, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.pixels = len(obs_shape) == 3  # (stack, height, width): use every 8th pixel of the last frame
        features = int(np.prod(self._features(np.zeros((1, *obs_shape))).shape[1:]))
        self.discrete = hasattr(action_space, "n")
        outputs = int(action_space.n) if self.discrete else int(np.prod(action_space.shape))
        self.weights = rng.normal(0, 1 / np.sqrt(features), size=(features, outputs)).astype(np.float32)

    def _features(self, obs: np.ndarray) -> np.ndarray:
        if self.pixels:
            obs = obs[:, -1, ::8, ::8]
        return obs.reshape(len(obs), -1).astype(np.float32)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        logits = self._features(obs) @ self.weights
        if self.discrete:
            return logits.argmax(axis=1).astype(np.int64)
        return np.tanh(logits)


def _rate(run_batches: Callable[[int], int], seconds: float) -> float:
    """Env steps/s of ``run_batches(n)`` (which returns the env steps done), over at least
    ``seconds`` after a warm-up."""
    run_batches(3)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += run_batches(5)
    return steps / (time.perf_counter() - start)


def _sync(env: Any, actions: np.ndarray) -> Callable[[int], int]:
    def run(n: int) -> int:
        for _ in range(n):
            env.step(actions)
        return n * len(actions)

    return run


def _async(env: Any, actions: np.ndarray) -> Callable[[int], int]:
    def run(n: int) -> int:
        for _ in range(n):
            # No timeout: a native pool's recv() then steps envs on the caller while it waits (with
            # a timeout it only waits, leaving one of its num_threads idle: half the rate here).
            _, _, _, _, info = env.recv()
            env.send(actions, info["env_id"])
        return n * len(actions)

    return run


def _local_rollout(env: Any, policy: LinearPolicy, num_steps: int) -> Callable[[int], int]:
    """The local pool's rollout, recording the same segment a node returns (env-major)."""
    obs = env.reset()[0]

    def run(n: int) -> int:
        nonlocal obs
        for _ in range(n):
            obs_buf = None
            act_buf = None
            rewards = np.empty((env.num_envs, num_steps), np.float32)
            dones = np.empty((env.num_envs, num_steps), bool)
            for t in range(num_steps):
                actions = policy(obs)
                if obs_buf is None:
                    obs_buf = np.empty((env.num_envs, num_steps, *obs.shape[1:]), obs.dtype)
                    act_buf = np.empty((env.num_envs, num_steps, *actions.shape[1:]), actions.dtype)
                obs_buf[:, t] = obs
                act_buf[:, t] = actions
                obs, reward, terminated, truncated, _ = env.step(actions)
                rewards[:, t] = reward
                dones[:, t] = terminated | truncated
        return n * num_steps * env.num_envs

    return run


def _dist_rollout(pool: Any, num_steps: int, in_flight: int) -> Callable[[int], int]:
    """``n`` segments; with ``in_flight`` 2 the next is always sent before the last is received
    (``send_rollout`` twice: each node steps segment i + 1 while segment i crosses to the driver),
    as a learner that collects while it learns does. Nothing is in flight between calls, so no
    node works while the local pool is timed."""
    def run(n: int) -> int:
        if in_flight == 1:
            for _ in range(n):
                pool.rollout(num_steps)
            return n * num_steps * pool.num_envs
        pool.send_rollout(num_steps)
        for i in range(n):
            if i + 1 < n:
                pool.send_rollout(num_steps)
            pool.recv_rollout()
        return n * num_steps * pool.num_envs

    return run


def _actions(space: Any, rows: int, seed: int = 0) -> np.ndarray:
    space.seed(seed)
    return np.stack([space.sample() for _ in range(rows)])


def _cell(task: str, n: int, mode: str, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """(local steps/s per round, distributed steps/s per round) for one cell, interleaved."""
    local, dist, runs = _pair(task, n, mode, args)
    local_rates, dist_rates = [], []
    try:
        for _ in range(args.rounds):
            local_rates.append(_rate(runs[0], args.seconds))
            dist_rates.append(_rate(runs[1], args.seconds))
    finally:
        local.close()
        dist.close()
    return local_rates, dist_rates


def _pair(task: str, n: int, mode: str, args: argparse.Namespace) -> tuple[Any, Any, tuple[Any, Any]]:
    """The local pool, the distributed one, and a batch loop for each (``_rate``'s ``run_batches``)."""
    from parallel_pool.integrations.ray import make_distributed

    kwargs: dict[str, Any] = {"seed": 0, **args.make_kwargs}
    # The nodes' pool threads run at this process's nice value, as the local pool's do (under
    # `nice -n -20` both sides get -20; left at make_distributed's default 0 they would compete
    # with the machine's other work at a lower priority than the local pool).
    dist_kwargs: dict[str, Any] = {**kwargs, "niceness": os.getpriority(os.PRIO_PROCESS, 0),
                                   "num_threads_per_node": args.threads_per_node}
    if mode in ("async", "async-node"):
        local = parallel_pool.make(task, num_envs=2 * n, batch_size=n, num_threads=2, **kwargs)
        per_node = n if mode == "async-node" else n // 2  # async-node: a whole node per recv
        dist = make_distributed(task, num_envs_per_node=n, batch_size_per_node=per_node, asynchronous=True,
                                call_timeout=120, **dist_kwargs)
        local.async_reset()
        dist.async_reset()
        runs = (_async(local, _actions(local.action_space, n)), _async(dist, _actions(dist.action_space, per_node)))
    else:
        local = parallel_pool.make(task, num_envs=2 * n, num_threads=2, **kwargs)
        dist = make_distributed(task, num_envs_per_node=n, call_timeout=120, **dist_kwargs)
        if mode == "sync":
            local.reset()
            dist.reset()
            actions = _actions(local.action_space, 2 * n)
            runs = (_sync(local, actions), _sync(dist, actions))
        else:
            policy = LinearPolicy(local.observation_space.shape, local.action_space)
            dist.reset()
            dist.set_policy(policy)
            in_flight = 2 if mode == "rollout2" else 1
            runs = (_local_rollout(local, policy, args.rollout_steps),
                    _dist_rollout(dist, args.rollout_steps, in_flight))
    return local, dist, runs


def _proc_times(pid: int) -> tuple[float, float, int, int]:
    """(user s, system s, voluntary, involuntary context switches) of a process, all its threads."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        voluntary = involuntary = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            voluntary += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            involuntary += int(line.split()[1])
            except FileNotFoundError:  # a thread that ended
                pass
        return int(fields[11]) / tick, int(fields[12]) / tick, voluntary, involuntary
    except FileNotFoundError:
        return 0.0, 0.0, 0, 0


def _idle_seconds() -> float:
    """The machine's idle (and iowait) CPU seconds since boot, all cores."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    return (values[3] + values[4]) / os.sysconf("SC_CLK_TCK")


def _traced(run_batches: Callable[[int], int], seconds: float, groups: dict[str, list[int]]) -> dict[str, Any]:
    """Per batch over ``seconds``: wall time, each group's user and system CPU and context switches
    (voluntary: it waited; involuntary: it was preempted), the machine's idle cores."""
    run_batches(3)
    pids = [pid for group in groups.values() for pid in group]
    before, idle, start = {pid: _proc_times(pid) for pid in pids}, _idle_seconds(), time.perf_counter()
    batches = 0
    while time.perf_counter() - start < seconds:
        run_batches(5)
        batches += 5
    wall = time.perf_counter() - start
    after, idle = {pid: _proc_times(pid) for pid in pids}, _idle_seconds() - idle
    out: dict[str, Any] = {"wall_us": wall / batches * 1e6, "idle_cores": idle / wall}
    for name, group in groups.items():
        sums = [sum(after[pid][k] - before[pid][k] for pid in group) / batches for k in range(4)]
        out[name] = (sums[0] * 1e6, sums[1] * 1e6, sums[2], sums[3])
    return out


def _ray_pids(exclude: list[int]) -> list[int]:
    """Ray's own processes on this machine (raylets, GCS, idle workers, ...), by their command line."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"ray" in cmd and (b"raylet" in cmd or b"gcs_server" in cmd or b"ray/" in cmd or b"ray::" in cmd):
            found.append(int(entry))
    return found


def _trace(task: str, n: int, mode: str, args: argparse.Namespace) -> None:
    """``--trace``: where a batch's wall time goes, local pool and distributed one interleaved: per
    batch, the wall time and each process's CPU (user/system) and context switches, and how many of
    the machine's cores idled. Wall time not covered by CPU is latency (wake-ups, waits)."""
    local, dist, runs = _pair(task, n, mode, args)
    try:
        nodes = [info["pid"] for info in dist.actor_info()]
        groups = {"driver": [os.getpid()], **{f"node{i}": [pid] for i, pid in enumerate(nodes)},
                  "ray": _ray_pids([os.getpid(), *nodes])}
        rows = int(local.batch_size)
        dist_rows = int(dist.batch_size) if mode not in ("rollout", "rollout2") else int(dist.num_envs)
        for _ in range(args.rounds):
            for name, run, per in (("local", runs[0], rows), ("dist", runs[1], dist_rows)):
                r = _traced(run, args.seconds, groups)
                parts = "; ".join(f"{g} {u:.0f}+{s:.0f} us, {v:.2f}/{i:.2f} cs" for g, (u, s, v, i) in
                                  ((g, r[g]) for g in groups))
                print(f"{task} n={n} {mode} {name}: {r['wall_us']:.0f} us per batch of {per} rows "
                      f"({r['wall_us'] / per:.1f} us/row), idle cores {r['idle_cores']:.2f}; "
                      f"CPU user+sys, voluntary/involuntary switches per batch: {parts}", flush=True)
    finally:
        local.close()
        dist.close()


def _floor(seconds: float) -> tuple[float, float]:
    """(ms per no-op Ray actor call, ms per data-plane round trip of a 1-env CartPole step)."""
    import ray

    from parallel_pool.integrations.ray import make_distributed

    pool = make_distributed("CartPole-v1", num_envs_per_node=1, seed=0, call_timeout=60)
    try:
        pool.reset()
        actor = pool.actors[-1]
        ray.get(actor.describe.remote())
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            ray.get(actor.__ray_ready__.remote(), timeout=60)
            calls += 1
        noop = (time.perf_counter() - start) / calls
        actions = np.zeros(pool.num_envs, dtype=np.int64)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            pool.step(actions)
            calls += 1
        step = (time.perf_counter() - start) / calls
    finally:
        pool.close()
    return 1e3 * noop, 1e3 * step


def _profile_node(task: str, offset: int, n: int, batch: int, serve: str = "native") -> None:
    """A node of ``--profile``: one PoolActor on this machine, serving its data plane (``serve``
    "python": every frame in Python); on SIGUSR1 prints (the data-plane thread's CPU, the pool
    calls' CPU on it) in seconds."""
    import json
    import signal
    import sys

    import ray.util

    ray.util.get_node_ip_address = lambda: "127.0.0.1"  # no Ray: the actor's address is this machine's
    from parallel_pool.integrations.ray.actor import PoolActor

    PoolActor.native_serve = serve == "native"
    actor = PoolActor(task, offset, {"num_envs": n, "batch_size": batch, "num_threads": 1, "seed": offset},
                      os.getpriority(os.PRIO_PROCESS, 0))
    env_cpu = [0.0]

    def timed(call: Any) -> Any:
        def run(*a: Any, **kw: Any) -> Any:
            start = time.thread_time()
            try:
                return call(*a, **kw)
            finally:
                env_cpu[0] += time.thread_time() - start
        return run

    for name in ("step", "send", "recv", "reset_as_step", "async_reset"):
        setattr(actor._env, name, timed(getattr(actor._env, name)))
    if os.environ.get("PP_BENCH_TIMELINE"):
        _log_node_timeline(actor)
    host, port, token = actor.open_data_plane()
    assert actor._server is not None
    clock = time.pthread_getcpuclockid(actor._server.ident)  # type: ignore[arg-type]
    signal.signal(signal.SIGUSR1, lambda *_: print(json.dumps([time.clock_gettime(clock), env_cpu[0]]), flush=True))
    print(json.dumps([host, port, token.hex()]), flush=True)
    while actor._server.is_alive():
        actor._server.join(0.1)
    sys.exit(0)


def _log_node_timeline(actor: Any) -> None:
    """``--timeline``'s node side: a timestamp (``time.perf_counter``, one clock for every process
    of the machine) when each frame has been read, around the pool's step, and around each frame's
    send; printed as JSON (and cleared) on SIGUSR2."""
    import json
    import signal
    import sys

    from parallel_pool.integrations.ray import actor as actor_module
    from parallel_pool.integrations.ray import wire

    log: list[tuple[str, float]] = []
    read_frame, send_frame, step = wire.read_frame, wire.send_frame, actor._env.step

    def logged_read(*a: Any, **kw: Any) -> Any:
        frame = read_frame(*a, **kw)
        log.append(("read", time.perf_counter()))
        return frame

    def logged_send(*a: Any, **kw: Any) -> None:
        log.append(("send0", time.perf_counter()))
        send_frame(*a, **kw)
        log.append(("send1", time.perf_counter()))

    def logged_step(*a: Any, **kw: Any) -> Any:
        log.append(("step0", time.perf_counter()))
        try:
            return step(*a, **kw)
        finally:
            log.append(("step1", time.perf_counter()))

    actor_module.wire = type("LoggedWire", (), {"read_frame": staticmethod(logged_read),
                                                "send_frame": staticmethod(logged_send)})
    actor._env.step = logged_step

    def dump(*_: Any) -> None:
        sys.stdout.write(json.dumps(log) + "\n")
        sys.stdout.flush()
        log.clear()

    signal.signal(signal.SIGUSR2, dump)


def _timeline(task: str, n: int, calls: int) -> None:
    """``--timeline``: where the wall time of a sync call goes, without Ray (``--profile``'s two node
    processes, timestamps on both sides): per call, the medians (and p90) of the request's way to
    each node, the pool's step, the node's work after it, the frame's send, the driver's read of
    it, and the driver's time between calls; the two nodes' imbalance. What is not the step is the
    layer's wall cost per call."""
    import json
    import signal
    import statistics
    import subprocess
    import sys

    from parallel_pool.integrations.ray import distributed

    env = {**os.environ, "PP_BENCH_TIMELINE": "1"}
    procs = [subprocess.Popen([sys.executable, __file__, "--profile-node", task, str(i * n), str(n), str(n), "native"],
                              stdout=subprocess.PIPE, text=True, env=env) for i in range(2)]
    events: list[tuple[str, int, float]] = []
    link_class = distributed._Link
    request, read = link_class.request, link_class.read
    try:
        pool = _wired_pool(task, n, n, [json.loads(p.stdout.readline()) for p in procs])  # type: ignore[union-attr]
        index = {id(node.link): node.index for node in pool._nodes}

        def logged_request(link: Any, *a: Any, **kw: Any) -> None:
            request(link, *a, **kw)
            events.append(("request", index[id(link)], time.perf_counter()))

        def logged_read(link: Any, *a: Any, **kw: Any) -> Any:
            frame = read(link, *a, **kw)
            events.append(("read", index[id(link)], time.perf_counter()))
            return frame

        link_class.request, link_class.read = logged_request, logged_read  # type: ignore[method-assign]
        actions = _actions(parallel_pool.make_gymnasium(task, num_envs=1).single_action_space, 2 * n)
        pool.reset()
        for _ in range(20):
            pool.step(actions)
        for p in procs:
            p.send_signal(signal.SIGUSR2)
            p.stdout.readline()  # type: ignore[union-attr]
        events.clear()
        starts = []
        for _ in range(calls):
            starts.append(time.perf_counter())
            pool.step(actions)
        starts.append(time.perf_counter())
        logs = []
        for p in procs:
            p.send_signal(signal.SIGUSR2)
            logs.append(json.loads(p.stdout.readline()))  # type: ignore[union-attr]
        for node in pool._nodes:
            node.link.close()  # type: ignore[union-attr]
    finally:
        link_class.request, link_class.read = request, read  # type: ignore[method-assign]
        for p in procs:
            p.kill()
            p.wait()
    # Per call and node: the driver's request and read times, the node's read, step and send times.
    driver: list[dict[tuple[str, int], float]] = [{} for _ in range(calls)]
    call = -1
    for kind, node_index, t in events:
        while call + 1 < calls and t >= starts[call + 1]:
            call += 1
        driver[call].setdefault((kind, node_index), t)
    frames = []
    for log in logs:
        rows: list[dict[str, float]] = []
        for kind, t in log:
            if kind == "read":
                rows.append({})
            if rows:
                rows[-1].setdefault(kind, t)
        frames.append(rows)
    parts: dict[str, list[float]] = {k: [] for k in ("to node", "pool step", "after step", "send", "driver read",
                                                   "driver between calls", "imbalance", "call")}
    for c in range(min(calls, *(len(f) for f in frames)) - 1):
        for i in range(2):
            f = frames[i][c]
            parts["to node"].append(f["read"] - driver[c][("request", i)])
            parts["pool step"].append(f["step1"] - f["step0"])
            parts["after step"].append(f["send0"] - f["step1"])
            parts["send"].append(f["send1"] - f["send0"])
            parts["driver read"].append(driver[c][("read", i)] - f["send0"])
        parts["imbalance"].append(abs(frames[0][c]["step1"] - frames[1][c]["step1"]))
        parts["driver between calls"].append(min(driver[c + 1][("request", i)] for i in range(2))
                                             - max(driver[c][("read", i)] for i in range(2)))
        parts["call"].append(starts[c + 1] - starts[c])
    print(f"# {task} n={n} sync, 2 nodes without Ray, {calls} calls; load average {os.getloadavg()[0]:.1f}")
    print("| part (us) | median | mean | p90 |")
    print("|---|---:|---:|---:|")
    for name, values in parts.items():
        values.sort()
        print(f"| {name} | {statistics.median(values) * 1e6:.0f} | {statistics.mean(values) * 1e6:.0f} | "
              f"{values[int(0.9 * len(values))] * 1e6:.0f} |")


def _wired_pool(task: str, n: int, batch: int, addresses: list[Any]) -> Any:
    """The driver's object as make_distributed builds it, with links to the node processes at
    ``addresses`` (``--profile``'s nodes), without Ray."""
    from parallel_pool.integrations.ray import distributed

    pool = object.__new__(distributed.DistributedPool)
    pool.__dict__.update(task_id=task, num_envs_per_node=n, batch_size_per_node=batch, is_async=batch < n,
                         restart=False, call_timeout=60.0, niceness=0, restarts=[], _closed=False,
                         _policy_ref=None, _weights_ref=None, _recv_sequence=0, _sync_pending=None,
                         _sync_behind=[], num_envs=2 * n, batch_size=batch if batch < n else 2 * n, _nodes=[])
    for i, (host, port, token) in enumerate(addresses):
        node = distributed._Node(i, f"node{i}", i * n, i * n, None, busy=[False] * n)
        node.link = distributed._Link(host, port, bytes.fromhex(token), 60.0)
        pool._nodes.append(node)
    return pool


def _profile(task: str, n: int, mode: str, calls: int, serve: str = "native") -> dict[str, Any]:
    """The CPU of ``calls`` sync calls (``mode`` "sync") or async batches of ``n/2`` ("async") on 2
    nodes of ``n`` envs, without Ray: per call or batch, the driver's, and each node's data-plane
    thread's in all and beyond the pool's own calls (those timed only when ``serve`` is "python":
    the native serving of async batches calls the pool itself)."""
    import json
    import signal
    import subprocess
    import sys

    batch = n if mode == "sync" else n // 2
    procs = [subprocess.Popen([sys.executable, __file__, "--profile-node", task, str(i * n), str(n), str(batch),
                               serve], stdout=subprocess.PIPE, text=True) for i in range(2)]

    def node_cpu() -> list[list[float]]:
        out = []
        for p in procs:
            p.send_signal(signal.SIGUSR1)
            out.append(json.loads(p.stdout.readline()))  # type: ignore[union-attr]
        return out

    try:
        pool = _wired_pool(task, n, batch, [json.loads(p.stdout.readline()) for p in procs])  # type: ignore[union-attr]
        actions = _actions(parallel_pool.make_gymnasium(task, num_envs=1).single_action_space, 2 * n)
        if mode == "sync":
            pool.reset()

            def run() -> None:
                pool.step(actions)
        else:
            pool.async_reset()

            def run() -> None:
                info = pool.recv()[4]
                pool.send(actions[:batch], info["env_id"])
        for _ in range(10):
            run()
        before, start = node_cpu(), time.thread_time()
        for _ in range(calls):
            run()
        driver = (time.thread_time() - start) / calls
        after = node_cpu()
        for node in pool._nodes:
            node.link.close()  # type: ignore[union-attr]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    # Per async batch only one node frames; the nodes' CPU per batch is their sum over the calls.
    total = [(b[0] - a[0]) / calls for a, b in zip(before, after)]
    nodes = [((b[0] - a[0]) - (b[1] - a[1])) / calls for a, b in zip(before, after)]
    return {"task": task, "n": n, "mode": mode, "serve": serve, "driver_us": driver * 1e6,
            "node_total_us": [x * 1e6 for x in total], "node_us": [x * 1e6 for x in nodes]}


def _json_object(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object of make() kwargs, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["Pong-v5", "Ant-v5"])
    parser.add_argument("--num-envs", type=int, nargs="+", default=[8, 32], help="n: envs per node")
    modes = ["sync", "async", "async-node", "rollout", "rollout2"]
    parser.add_argument("--modes", nargs="+", default=modes, choices=modes)
    parser.add_argument("--rollout-steps", type=int, default=32, help="K: steps per rollout")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per timed measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per cell")
    parser.add_argument("--make-kwargs", type=_json_object, default={},
                        help='JSON object of make() kwargs for both sides, e.g. \'{"stack_num": 1}\' (a quarter of '
                             "Pong's bytes per step: what the sync cells owe to the bytes)")
    parser.add_argument("--threads-per-node", type=int, default=None,
                        help="each node pool's threads (default: the node's CPUs as Ray reports them, 1 here)")
    parser.add_argument("--profile", action="store_true", help="the data plane's CPU per batch, without Ray")
    parser.add_argument("--profile-node", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--python-serve", action="store_true",
                        help="--profile: the nodes serve every frame in Python (not async batches natively)")
    parser.add_argument("--calls", type=int, default=300, help="--profile: calls (or batches) timed per cell")
    parser.add_argument("--timeline", action="store_true",
                        help="where a sync call's wall time goes, without Ray (timestamps on both sides)")
    parser.add_argument("--trace", action="store_true",
                        help="per batch: wall time, each process's CPU and context switches, idle cores (on Ray)")
    args = parser.parse_args(argv)
    if args.profile_node:
        task, offset, n, batch, serve = args.profile_node
        _profile_node(task, int(offset), int(n), int(batch), serve)
    if args.timeline:
        for task in args.tasks:
            for n in args.num_envs:
                _timeline(task, n, args.calls)
        return 0
    if args.profile:
        serve = "python" if args.python_serve else "native"
        print("# CPU per sync call (2 nodes) or per async batch (one node's n/2 envs), without Ray; the nodes "
              f"serve {'every frame in Python' if args.python_serve else 'async batches natively'}; "
              f"load average {os.getloadavg()[0]:.1f} at start")
        print("| task | n | mode | driver (us) | node data-plane thread: all (us, each node) | beyond the pool |")
        print("|---|---:|---|---:|---|---|")
        for task in args.tasks:
            for n in args.num_envs:
                for mode in ("sync", "async"):
                    r = _profile(task, n, mode, args.calls, serve)
                    total = ", ".join(f"{x:.0f}" for x in r["node_total_us"])
                    beyond = ", ".join(f"{x:.0f}" for x in r["node_us"])
                    if mode == "async" and serve == "native":
                        beyond = "-"  # the native loop makes the front-end's calls itself: not timed
                    print(f"| {task} | {n} | {mode} | {r['driver_us']:.0f} | {total} | {beyond} |", flush=True)
        print(f"# load average {os.getloadavg()[0]:.1f} at the end")
        return 0

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # short: Unix socket paths are limited
    os.environ["RAY_TMPDIR"] = temp_root
    os.makedirs(os.path.join(temp_root, "ray"))
    saved_cwd = os.getcwd()
    os.chdir(temp_root)  # Ray's workers must not import a source tree's parallel_pool
    import ray
    from ray.cluster_utils import Cluster

    threads = args.threads_per_node or 1
    print(f"# distributed pool (Ray {ray.__version__}, 2 nodes x n envs, {threads} thread(s) each) vs one local pool "
          f"(2n envs, 2 threads); {os.cpu_count()} CPUs; {args.rounds} interleaved rounds of {args.seconds} s; "
          f"rollout K={args.rollout_steps}; load average {os.getloadavg()[0]:.1f} at start"
          + (f"; make kwargs {json.dumps(args.make_kwargs)}" if args.make_kwargs else ""))
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "temp_dir": os.path.join(temp_root, "ray"), "include_dashboard": False})
    rows = []
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(timeout=60)
        ray.init(address=cluster.address, log_to_driver=False)
        noop_ms, step_ms = _floor(args.seconds) if not args.trace else (0.0, 0.0)
        for task in args.tasks:
            for n in args.num_envs:
                for mode in args.modes:
                    if args.trace:
                        _trace(task, n, mode, args)
                        continue
                    local, dist = _cell(task, n, mode, args)
                    ratio = statistics.median(d / lo for d, lo in zip(dist, local))
                    rows.append((task, n, mode, local, dist, ratio))
                    print(f"{task} n={n} {mode}: local {statistics.median(local):,.0f} distributed "
                          f"{statistics.median(dist):,.0f} steps/s, ratio {ratio:.2f}", flush=True)
    finally:
        ray.shutdown()
        cluster.shutdown()
        os.chdir(saved_cwd)
        shutil.rmtree(temp_root, ignore_errors=True)
    if args.trace:
        return 0

    print()
    print(f"no-op Ray actor call: {noop_ms:.2f} ms; data-plane round trip (1-env CartPole step per node, 2 nodes): "
          f"{step_ms:.3f} ms; load average {os.getloadavg()[0]:.1f} at the end")
    print()
    print("| task | n | mode | local pool, 2n envs (steps/s) | 2 nodes x n envs (steps/s) "
          "| ratio (median of rounds) | ratios per round |")
    print("|---|---:|---|---:|---:|---:|---|")
    for task, n, mode, local, dist, ratio in rows:
        per_round = ", ".join(f"{d / lo:.2f}" for d, lo in zip(dist, local))
        print(f"| {task} | {n} | {mode} | {statistics.median(local):,.0f} | {statistics.median(dist):,.0f} | "
              f"{ratio:.2f} | {per_round} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
