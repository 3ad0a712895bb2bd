"""The distributed pool (one native pool per Ray node) over 1, 2 and 3 local nodes, against one
local native pool: env steps/s in sync and async mode, and the per-batch overhead Ray adds.

Each node is a real raylet of ``ray.cluster_utils.Cluster`` on this machine (num_cpus=1 each, as
many nodes as asked, added one at a time). For each node count the script times

- sync: ``step`` of every env (one actor call per node, results merged in global env order);
- async: ``recv`` of one node's batch (``num_envs_per_node // 2`` rows) and ``send`` back;
- a no-op actor call round trip (``ray.get(actor.describe.remote())``), Ray's own floor;

and, as the baseline, one local ``parallel_pool.make`` pool of ``num_envs_per_node`` envs (and of
``nodes * num_envs_per_node`` envs) stepped the same way in this process. The per-batch overhead is
``time per distributed batch - time per local batch of the same rows``.

Usage:
    python benchmarks/bench_ray.py                          # ~2 minutes
    python benchmarks/bench_ray.py --num-envs-per-node 256 --seconds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable

import numpy as np

import parallel_pool


def _rate(run_batches: Callable[[int], int], seconds: float) -> tuple[float, float]:
    """(env steps/s, seconds per batch) of ``run_batches(n)`` (which returns the env steps done),
    timed over at least ``seconds`` after a warm-up."""
    run_batches(20)
    batches, steps, start = 0, 0, time.perf_counter()
    chunk = 50
    while time.perf_counter() - start < seconds:
        steps += run_batches(chunk)
        batches += chunk
    elapsed = time.perf_counter() - start
    return steps / elapsed, elapsed / batches


def _sync_runner(env, num_envs: int, num_actions: int) -> Callable[[int], int]:
    actions = np.zeros(num_envs, dtype=np.int64) if num_actions else None

    def run(n: int) -> int:
        for _ in range(n):
            env.step(actions)
        return n * num_envs

    return run


def _async_runner(env, batch: int) -> Callable[[int], int]:
    actions = np.zeros(batch, dtype=np.int64)

    def run(n: int) -> int:
        for _ in range(n):
            _, _, _, _, info = env.recv(timeout=60)
            env.send(actions, info["env_id"])
        return n * batch

    return run


def _local(task: str, num_envs: int, seconds: float) -> dict[str, float]:
    out = {}
    with parallel_pool.make(task, num_envs=num_envs, num_threads=1, seed=0) as env:
        env.reset()
        out["sync"], out["sync_batch_s"] = _rate(_sync_runner(env, num_envs, 1), seconds)
    batch = num_envs // 2
    with parallel_pool.make(task, num_envs=num_envs, batch_size=batch, num_threads=1, seed=0) as env:
        env.async_reset()
        out["async"], out["async_batch_s"] = _rate(_async_runner(env, batch), seconds)
    return out


def _distributed(task: str, n: int, seconds: float) -> dict[str, float]:
    import ray

    from parallel_pool.integrations.ray import make_distributed

    out = {}
    pool = make_distributed(task, num_envs_per_node=n, seed=0, call_timeout=60)
    try:
        pool.reset()
        out["sync"], out["sync_batch_s"] = _rate(_sync_runner(pool, pool.num_envs, 1), seconds)
        actor = pool.actors[0]
        start, calls = time.perf_counter(), 200
        for _ in range(calls):
            ray.get(actor.describe.remote(), timeout=60)
        out["noop_call_s"] = (time.perf_counter() - start) / calls
    finally:
        pool.close()
    pool = make_distributed(task, num_envs_per_node=n, batch_size_per_node=n // 2, seed=0, call_timeout=60)
    try:
        pool.async_reset()
        out["async"], out["async_batch_s"] = _rate(_async_runner(pool, n // 2), seconds)
    finally:
        pool.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="CartPole-v1")
    parser.add_argument("--num-envs-per-node", type=int, default=64)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per timed measurement")
    args = parser.parse_args(argv)

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # short: Unix socket paths are limited
    os.environ["RAY_TMPDIR"] = temp_root
    os.makedirs(os.path.join(temp_root, "ray"))
    import ray
    from ray.cluster_utils import Cluster

    n = args.num_envs_per_node
    print(f"# {args.task}: distributed pool (Ray {ray.__version__}) vs one local native pool; "
          f"{os.cpu_count()} CPUs, {n} envs per node, async batch {n // 2}")
    rows = []
    for k in sorted(set(args.nodes)):
        local = _local(args.task, n * k, args.seconds)
        rows.append((f"local pool, {n * k} envs", n * k, local, None))
    local_1 = rows[0][2] if rows[0][1] == n else _local(args.task, n, args.seconds)

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "temp_dir": os.path.join(temp_root, "ray"), "include_dashboard": False})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        num_nodes = 1
        for k in sorted(set(args.nodes)):
            while num_nodes < k:
                cluster.add_node(num_cpus=1)
                num_nodes += 1
            cluster.wait_for_nodes(timeout=60)
            dist = _distributed(args.task, n, args.seconds)
            rows.append((f"distributed, {k} node(s) x {n} envs", n * k, dist, k))
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp_root, ignore_errors=True)

    print()
    print("| pool | envs | sync steps/s | sync ms/batch | async steps/s | async ms/batch | "
          "overhead/batch sync, async (ms) | no-op actor call (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, envs, r, k in rows:
        if k is None:
            overhead, noop = "", ""
        else:
            # Sync: against one local pool of all k*n envs; async: a batch is n/2 rows either way.
            local_all = next(r2 for _, e2, r2, k2 in rows if k2 is None and e2 == envs)
            overhead = (f"{1e3 * (r['sync_batch_s'] - local_all['sync_batch_s']):.2f}, "
                        f"{1e3 * (r['async_batch_s'] - local_1['async_batch_s']):.2f}")
            noop = f"{1e3 * r['noop_call_s']:.2f}"
        print(f"| {name} | {envs} | {r['sync']:,.0f} | {1e3 * r['sync_batch_s']:.2f} | {r['async']:,.0f} | "
              f"{1e3 * r['async_batch_s']:.2f} | {overhead} | {noop} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
