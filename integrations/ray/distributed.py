"""One native pool per Ray node behind one driver-side object with the pool's API and global env ids.

Global env ``i`` lives on node ``i // num_envs_per_node`` (nodes in the order of ``.nodes``).
Sync ``step``/``reset`` fan out to every node and merge the rows in global order; async ``recv``
returns whichever node's batch arrives first (``ray.wait``), as that node's arrays.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import ray
from ray.exceptions import GetTimeoutError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from parallel_pool.errors import EnvError, PoolClosedError
from parallel_pool.integrations.common import reject_kwargs, take_rows
from parallel_pool.integrations.ray.actor import PoolActor

__all__ = ["DistributedPool", "NodeFailedError", "make_distributed"]

logger = logging.getLogger(__name__)

# Every wait on an actor is bounded: a hung node becomes a TimeoutError, never a hung driver.
DEFAULT_CALL_TIMEOUT = 120.0
# Closing waits this long for each actor to join its threads before killing it.
CLOSE_TIMEOUT = 10.0
# Every wait on actors returns to Python at least this often (seconds), so that Ctrl-C raises
# KeyboardInterrupt within 100 ms: Ray's own waits run signal handlers only every half second or so.
# A result that arrives sooner costs nothing extra; a longer wait costs one timed-out ray.get per slice.
SIGNAL_POLL = 0.02

_RemotePoolActor = ray.remote(PoolActor)


class NodeFailedError(RuntimeError):
    """A node's pool actor died (killed, crashed, or its node left the cluster).

    ``node_id`` names the node, ``env_ids`` the global ids of the envs it held. Without
    ``restart=True`` every later call (but ``close``) raises it again.
    """

    def __init__(self, node_id: str, env_ids: list[int], reason: str) -> None:
        self.node_id = node_id
        self.env_ids = list(env_ids)
        self.reason = reason
        super().__init__(
            f"the parallel_pool actor on Ray node {node_id} failed ({reason}); its envs "
            f"{env_ids[0]}..{env_ids[-1]} (global ids) are lost. make_distributed(..., restart=True) "
            "recreates a failed node's pool and resets its envs."
        )


@dataclass
class _Node:
    """The driver's record of one node: its actor and which of its envs are in flight (async)."""

    index: int
    node_id: str
    offset: int
    seed: Any
    actor: Any
    in_flight: int = 0
    pending: Any = None  # the ObjectRef of a recv submitted and not collected yet
    busy: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    failure: NodeFailedError | None = None


class DistributedPool:
    """``num_envs_per_node`` envs on each alive Ray node, one native pool (one actor) per node.

    Sync mode (``batch_size_per_node == num_envs_per_node``): ``step(actions)`` takes one row per
    global env and returns every env's row in global order. Async mode: ``send(actions, env_id)``
    with global ids splits the rows by node; ``recv()`` returns the first node batch to arrive
    (``batch_size_per_node`` rows, ``info["env_id"]`` global).

    Faults: when a node's actor dies, the call that finds out raises ``NodeFailedError``. With
    ``restart=True`` the actor is recreated on the same node (if that node is still alive, else
    ``NodeFailedError``) with the same seeds, and its envs are reset. In sync mode the ``step`` (or
    ``reset``) that found the failure returns those envs' rows as reset rows (first observation,
    reward 0, not terminated or truncated, ``elapsed_step`` 0); the steps of theirs in flight are
    lost. In async mode a reset of all of that node's envs is queued: their rows arrive through
    ``recv`` as reset rows (one per env, replacing the lost results), and until then those envs
    count as in flight. ``restarts`` lists ``(node_id, env_ids)`` for each restart.

    An exception inside an env (not a node failure) is raised as ``parallel_pool.EnvError`` naming
    the global env ids and messages, with ``result`` the call's return value (sync: every node's
    rows merged in global order; async: that node's batch, received all the same, so its envs can
    be sent again); the failed envs' rows hold zeros, and each starts a new episode on its next step.

    Ctrl-C: every wait raises ``KeyboardInterrupt`` within 100 ms (it returns to Python every
    ``SIGNAL_POLL`` seconds). What was sent stays in flight, as in a native pool: after an
    interrupted async ``recv`` the next ``recv`` returns that batch; after an interrupted sync
    ``step`` or ``reset`` the nodes finish it, ``recv()`` returns its rows (a ``step``/``reset``
    before that raises ``ValueError``), and ``close()`` works at any time.

    Example:
        >>> import numpy as np, ray
        >>> from parallel_pool.integrations.ray import make_distributed
        >>> ray.init(num_cpus=1)  # doctest: +SKIP
        >>> pool = make_distributed("CartPole-v1", num_envs_per_node=4, seed=0)  # doctest: +SKIP
        >>> obs, info = pool.reset()  # doctest: +SKIP
        >>> obs, rew, terminated, truncated, info = pool.step(np.zeros(pool.num_envs, dtype=np.int64))  # doctest: +SKIP
        >>> pool.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        task_id: str,
        num_envs_per_node: int,
        batch_size_per_node: int | None = None,
        num_threads_per_node: int | None = None,
        restart: bool = False,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        **make_kwargs: Any,
    ) -> None:
        if not ray.is_initialized():
            raise RuntimeError("make_distributed needs a Ray cluster: call ray.init(...) first")
        reject_kwargs(make_kwargs, ("num_envs", "batch_size", "num_threads"),
                      "pass {key}_per_node, not {key}: each node holds its own pool")
        if batch_size_per_node is None:
            batch_size_per_node = num_envs_per_node
        self.task_id = task_id
        self.num_envs_per_node = int(num_envs_per_node)
        self.batch_size_per_node = int(batch_size_per_node)
        self.is_async = self.batch_size_per_node < self.num_envs_per_node
        self.restart = restart
        self.call_timeout = call_timeout
        self.restarts: list[tuple[str, list[int]]] = []
        self._num_threads = num_threads_per_node
        self._make_kwargs = dict(make_kwargs)
        self._closed = False
        # Sync: the refs of a step or reset whose wait was interrupted (Ctrl-C), for recv().
        self._sync_pending: list[Any] | None = None

        alive = [n for n in ray.nodes() if n.get("Alive")]
        if not alive:
            raise RuntimeError("the Ray cluster has no alive node")
        self._nodes: list[_Node] = []
        n = self.num_envs_per_node
        for index, info in enumerate(alive):
            node = _Node(index, info["NodeID"], index * n, _node_seed(make_kwargs.get("seed"), index, n), None)
            node.busy = np.zeros(n, dtype=bool)
            node.actor = self._start_actor(node, int(info.get("Resources", {}).get("CPU", 1)))
            self._nodes.append(node)
        try:
            described = self._get([node.actor.describe.remote() for node in self._nodes])
        except BaseException:
            self._kill_all()
            raise
        for node, desc in zip(self._nodes, described):
            if desc["node_id"] != node.node_id:  # node affinity with soft=False guarantees this
                self._kill_all()
                raise RuntimeError(f"pool actor for node {node.node_id} started on {desc['node_id']}")
        first = described[0]
        self._described = described
        self.single_observation_space = self.observation_space = first["observation_space"]
        self.single_action_space = self.action_space = first["action_space"]
        self.metadata = first["metadata"]
        self.num_envs = n * len(self._nodes)
        self.batch_size = self.batch_size_per_node if self.is_async else self.num_envs

    # --- what runs where ---
    @property
    def nodes(self) -> list[str]:
        """The Ray node id of each pool, in the order of global env ids."""
        return [node.node_id for node in self._nodes]

    @property
    def actors(self) -> list[Any]:
        """The pool actor handle of each node, in the order of ``nodes``."""
        return [node.actor for node in self._nodes]

    def actor_info(self) -> list[dict[str, Any]]:
        """Each actor's node id, pid, pool size and thread count."""
        return [{k: v for k, v in d.items() if k.endswith("id") or k.startswith("num")}
                for d in self._get([node.actor.describe.remote() for node in self._nodes])]

    def env_ids_of(self, node_id: str) -> list[int]:
        """The global env ids held by ``node_id``."""
        node = next(node for node in self._nodes if node.node_id == node_id)
        return list(range(node.offset, node.offset + self.num_envs_per_node))

    # --- sync ---
    def reset(self, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Resets every env. Sync: every env's row in global order. Async: queues the resets and
        returns the first node batch. An int ``seed`` gives global env ``i`` the seed ``seed + i``."""
        if options:
            raise ValueError("DistributedPool.reset takes no options (a reset_mask is not supported)")
        self._check_usable()
        try:
            if self.is_async:
                self.async_reset(seed)
                obs, _, _, _, info = self.recv()
                return obs, info
            n = self.num_envs_per_node
            for node in self._nodes:
                if seed is not None:
                    node.seed = _node_seed(seed, node.index, n)
            self._check_no_sync_pending("reset")
            refs = [node.actor.reset.remote(node.seed) for node in self._nodes]
            obs, _, _, _, info = _merge_rows(self._gather_sync(refs))
            return obs, info
        except EnvError as e:  # the result in reset's form
            result = None if e.result is None else (e.result[0], e.result[4])
            raise EnvError(e.errors, result) from None

    def step(self, actions: Any, env_id: Any = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Sync: steps every env (one action row per global env) and returns rows in global order.
        Async: ``send(actions, env_id)`` then ``recv()``."""
        if self.is_async:
            self._check_usable()
            if self._sync_pending is None and not self._can_fill_after(env_id):
                # Checked before queuing anything: a step that raised has changed nothing.
                raise ValueError(
                    f"step() of these env ids cannot fill a batch of batch_size_per_node={self.batch_size_per_node} "
                    "on any node: step enough envs of one node, or use send() and recv()"
                )
            self.send(actions, env_id)
            return self.recv()
        if env_id is not None:
            raise ValueError("a sync DistributedPool steps every env: pass env_id=None")
        self._check_usable()
        self._check_no_sync_pending("step")
        _check_rows(actions, self.num_envs)
        n = self.num_envs_per_node
        refs = [node.actor.step.remote(take_rows(actions, slice(node.offset, node.offset + n))) for node in self._nodes]
        return _merge_rows(self._gather_sync(refs))

    # --- async ---
    def async_reset(self, seed: Any = None) -> None:
        """Queues a reset of every env on every node; collect the rows with ``recv``."""
        self._check_usable()
        n = self.num_envs_per_node
        for node in self._nodes:
            if seed is not None:
                node.seed = _node_seed(seed, node.index, n)
            node.actor.async_reset.remote(node.seed)
            node.in_flight = n
            node.busy[:] = True

    def send(self, actions: Any, env_id: Any) -> None:
        """Queues one step for each global id in ``env_id`` (rows of ``actions`` in that order)."""
        self._check_usable()
        ids = np.asarray(env_id)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"env_id must be a 1-d array of int env ids, got {env_id!r}")
        if len(ids) == 0:
            return
        if ids.min() < 0 or ids.max() >= self.num_envs:
            raise ValueError(f"env ids must be in [0, {self.num_envs}), got {ids.min()}..{ids.max()}")
        _check_rows(actions, len(ids))
        node_of = ids // self.num_envs_per_node
        if node_of[0] == node_of[-1] and (node_of == node_of[0]).all():
            # The common case: a batch that came from one node goes back to it whole.
            node = self._nodes[int(node_of[0])]
            self._check_send(node, ids)
            self._send_to(node, actions, ids)
            return
        groups = [(self._nodes[int(k)], node_of == k) for k in np.unique(node_of)]
        # Every node's part is checked before any is sent: a send that raises queues nothing.
        for node, mask in groups:
            self._check_send(node, ids[mask])
        for node, mask in groups:
            self._send_to(node, take_rows(actions, mask), ids[mask])

    def recv(self, timeout: float | None = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The next node batch to arrive (``batch_size_per_node`` rows), as that node's arrays.

        ``TimeoutError`` after ``timeout`` seconds; ``RuntimeError`` instead of waiting for ever
        when no node has ``batch_size_per_node`` envs in flight. In sync mode it returns the rows of
        a ``step`` or ``reset`` that Ctrl-C interrupted (every env's, in global order).
        """
        self._check_usable()
        if self._sync_pending is not None:
            return _merge_rows(self._gather_sync(self._sync_pending))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for node in self._nodes:
                if node.pending is None and node.in_flight >= self.batch_size_per_node:
                    node.pending = node.actor.recv.remote(self.call_timeout)
            by_ref = {node.pending: node for node in self._nodes if node.pending is not None}
            if not by_ref:
                raise RuntimeError(
                    f"recv() would wait for ever: no node has batch_size_per_node={self.batch_size_per_node} "
                    "envs in flight; send() actions (or async_reset) first"
                )
            ready = _wait(list(by_ref), 1, deadline)
            if not ready:
                raise TimeoutError(f"no node returned a batch within {timeout} s")
            node = by_ref[ready[0]]
            try:
                batch, send_error = ray.get(ready[0], timeout=self.call_timeout)  # ready: at once
            except KeyboardInterrupt:
                raise  # the batch stays pending: the next recv() returns it
            except RayActorError as e:
                node.pending = None
                self._node_failed(node, e)  # raises unless the node was restarted
                continue
            except EnvError as e:
                # An env on that node raised. The batch was received all the same (the actor made
                # its ids global): its envs, the failed ones too, can be sent again.
                node.pending = None
                self._received(node, e.result)
                raise EnvError(e.errors, e.result) from None
            except BaseException:
                node.pending = None
                raise
            node.pending = None
            if send_error is not None:
                message, ids = send_error
                local = np.asarray(ids) - node.offset
                node.in_flight -= int(node.busy[local].sum())
                node.busy[local] = False
                raise ValueError(f"send to env ids {ids} failed on node {node.node_id}: {message}")
            self._received(node, batch)
            return batch

    def close(self) -> None:
        """Closes every node's pool and ends its actor. Idempotent."""
        if self._closed:
            return
        self._closed = True
        refs = []
        for node in self._nodes:
            if node.failure is None:
                refs.append(node.actor.close.remote())
        try:
            _wait(refs, len(refs), time.monotonic() + CLOSE_TIMEOUT)
        finally:
            self._kill_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> DistributedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_envs

    def __repr__(self) -> str:
        mode = f"async, batch_size_per_node={self.batch_size_per_node}" if self.is_async else "sync"
        return (f"DistributedPool({self.task_id!r}, nodes={len(self._nodes)}, "
                f"num_envs_per_node={self.num_envs_per_node}, {mode}{', closed' if self._closed else ''})")

    # --- internals ---
    def _start_actor(self, node: _Node, node_cpus: int) -> Any:
        threads = self._num_threads if self._num_threads is not None else max(1, min(node_cpus, self.num_envs_per_node))
        kwargs = {
            **self._make_kwargs,
            "num_envs": self.num_envs_per_node,
            "batch_size": self.batch_size_per_node,
            "num_threads": threads,
            "seed": node.seed,
        }
        # num_cpus=0: the actor is a placement, its threads are the node's; asking for CPUs could
        # leave it waiting for resources other work holds. max_restarts=0: restarts are ours.
        return _RemotePoolActor.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            num_cpus=0,
            max_restarts=0,
            max_task_retries=0,
        ).remote(self.task_id, node.offset, kwargs)

    def _get(self, refs: list[Any]) -> list[Any]:
        try:
            return _get(refs, time.monotonic() + self.call_timeout)
        except GetTimeoutError as e:
            raise TimeoutError(f"a pool actor did not answer within {self.call_timeout} s") from e

    def _check_no_sync_pending(self, call: str) -> None:
        if self._sync_pending is not None:
            raise ValueError(f"{call}(): the previous step or reset was interrupted before its results were "
                             "received: recv() them first")

    def _gather_sync(self, refs: list[Any]) -> list[tuple]:
        """``_gather``, keeping the refs for ``recv`` if the wait is interrupted (Ctrl-C)."""
        self._sync_pending = refs
        try:
            results = self._gather(refs)
        except KeyboardInterrupt:
            raise
        except BaseException:
            self._sync_pending = None
            raise
        self._sync_pending = None
        return results

    def _gather(self, refs: list[Any]) -> list[tuple]:
        """Each node's result of a sync call; a dead node raises or, with restart, gives reset rows."""
        deadline = time.monotonic() + self.call_timeout
        results: list[Any] = [None] * len(refs)
        failed: list[tuple[_Node, Exception]] = []
        env_errors: list[EnvError] = []
        for node, ref in zip(self._nodes, refs):
            try:
                results[node.index] = _get(ref, deadline)
            except EnvError as e:  # an env raised on that node; its other rows are in e.result
                env_errors.append(e)
                results[node.index] = e.result
            except RayActorError as e:
                failed.append((node, e))
            except GetTimeoutError as e:
                raise TimeoutError(f"the pool actor on node {node.node_id} did not answer within "
                                   f"{self.call_timeout} s") from e
        for node, error in failed:
            self._node_failed(node, error)
            results[node.index] = self._get([node.actor.reset.remote(node.seed)])[0]
        if env_errors:
            # One error for the whole batch, naming every failed env by its global id; the batch,
            # merged as the call would have returned it, is not lost.
            errors = [entry for e in env_errors for entry in e.errors]
            merged = _merge_rows(results) if all(r is not None for r in results) else None
            raise EnvError(errors, merged)
        return results

    def _node_failed(self, node: _Node, error: Exception) -> None:
        """Raises NodeFailedError, or with ``restart`` recreates the node's actor (async: queues a
        reset of its envs; sync callers fetch the reset rows themselves)."""
        env_ids = list(range(node.offset, node.offset + self.num_envs_per_node))
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if not self.restart:
            node.failure = NodeFailedError(node.node_id, env_ids, reason)
            raise node.failure
        alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}
        if node.node_id not in alive:
            node.failure = NodeFailedError(node.node_id, env_ids, reason + "; the node is no longer alive, "
                                           "so its pool cannot be restarted")
            raise node.failure
        logger.warning("parallel_pool: restarting the pool actor on node %s (envs %d..%d): %s",
                       node.node_id, env_ids[0], env_ids[-1], reason)
        ray.kill(node.actor, no_restart=True)
        node.actor = self._start_actor(node, int(alive[node.node_id].get("Resources", {}).get("CPU", 1)))
        node.pending = None
        self.restarts.append((node.node_id, env_ids))
        if self.is_async:
            node.actor.async_reset.remote(node.seed)
            node.in_flight = self.num_envs_per_node
            node.busy[:] = True

    def _received(self, node: _Node, batch: tuple) -> None:
        """The envs of a batch received from ``node`` are no longer in flight."""
        local = batch[4]["env_id"] - node.offset
        node.busy[local] = False
        node.in_flight -= len(local)

    def _check_send(self, node: _Node, ids: np.ndarray) -> None:
        local = ids - node.offset
        if len(np.unique(local)) != len(local):
            raise ValueError(f"duplicate env ids in {ids.tolist()}")
        if node.busy[local].any():
            busy = ids[node.busy[local]]
            raise ValueError(f"env ids {busy.tolist()} have a step in flight: recv() their results first")

    def _can_fill_after(self, env_id: Any) -> bool:
        """Whether ``recv`` finds a batch to wait for once ``env_id`` is sent (ids not checked here:
        ``send`` does)."""
        ids = np.asarray(env_id)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer) or len(ids) == 0:
            return True  # send raises its own error
        if ids.min() < 0 or ids.max() >= self.num_envs:
            return True  # likewise
        added = np.bincount(ids // self.num_envs_per_node, minlength=len(self._nodes))
        return any(
            node.pending is not None or node.in_flight + int(added[node.index]) >= self.batch_size_per_node
            for node in self._nodes
        )

    def _send_to(self, node: _Node, actions: Any, ids: np.ndarray) -> None:
        local = ids - node.offset
        node.actor.send.remote(actions, ids)
        node.busy[local] = True
        node.in_flight += len(local)

    def _check_usable(self) -> None:
        if self._closed:
            raise PoolClosedError("the distributed pool is closed")
        for node in self._nodes:
            if node.failure is not None:
                raise node.failure

    def _kill_all(self) -> None:
        for node in self._nodes:
            if node.actor is not None:
                try:
                    ray.kill(node.actor, no_restart=True)
                except Exception:  # already gone: nothing to end
                    pass


def make_distributed(
    task_id: str,
    num_envs_per_node: int,
    batch_size_per_node: int | None = None,
    num_threads_per_node: int | None = None,
    restart: bool = False,
    **make_kwargs: Any,
) -> DistributedPool:
    """One pool of ``num_envs_per_node`` envs of ``task_id`` on each alive node of the Ray cluster.

    ``batch_size_per_node`` (default ``num_envs_per_node``: sync) is the rows per ``recv``;
    ``num_threads_per_node`` defaults to the node's CPUs (at most ``num_envs_per_node``); an int
    ``seed`` gives global env ``i`` the seed ``seed + i``; other kwargs go to ``parallel_pool.make``
    on every node. ``call_timeout`` (seconds, default 120) bounds every wait on an actor.
    """
    return DistributedPool(task_id, num_envs_per_node, batch_size_per_node, num_threads_per_node, restart,
                           **make_kwargs)


def _node_seed(seed: Any, index: int, num_envs_per_node: int) -> Any:
    """The seeds of node ``index``: ``seed + index * num_envs_per_node`` (global env i gets seed + i)."""
    if seed is None:
        return None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed) + index * num_envs_per_node
    seeds = list(seed)  # one per global env
    return seeds[index * num_envs_per_node:(index + 1) * num_envs_per_node]


def _get(refs: Any, deadline: float) -> Any:
    """``ray.get(refs)`` by the ``deadline`` (``time.monotonic()``; ``GetTimeoutError`` after it),
    returning to Python every ``SIGNAL_POLL`` seconds so that Ctrl-C is not held up."""
    while True:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            return ray.get(refs, timeout=min(SIGNAL_POLL, remaining))
        except GetTimeoutError:
            if remaining <= SIGNAL_POLL:
                raise


def _wait(refs: list[Any], num_returns: int, deadline: float | None) -> list[Any]:
    """``ray.wait(refs, num_returns=num_returns)`` until ``deadline`` (``time.monotonic()``; None:
    for ever), in ``SIGNAL_POLL`` slices; returns the refs ready (fewer than asked at the deadline)."""
    while True:
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        slice_s = SIGNAL_POLL if remaining is None else min(SIGNAL_POLL, remaining)
        ready, _ = ray.wait(refs, num_returns=num_returns, timeout=slice_s)
        if len(ready) >= num_returns or (remaining is not None and remaining <= SIGNAL_POLL):
            return ready


def _check_rows(actions: Any, expected: int) -> None:
    if isinstance(actions, dict):
        for value in actions.values():
            _check_rows(value, expected)
        return
    rows = len(actions) if hasattr(actions, "__len__") else None
    if rows != expected:
        raise ValueError(f"expected one action row per env id ({expected}), got {rows}")


def _merge_rows(results: list[tuple]) -> tuple:
    """Node results in node order as one batch. A key some nodes lack (``episode`` appears only
    where an episode ended) is filled with zeros (``False``, or ``None`` for objects) there."""
    if len(results) == 1:
        return results[0]
    sizes = [len(r[1]) for r in results]
    return tuple(_concat([r[i] for r in results], sizes) for i in range(5))


def _concat(parts: list[Any], sizes: list[int]) -> Any:
    if any(isinstance(p, dict) for p in parts):
        keys = list(dict.fromkeys(k for p in parts if isinstance(p, dict) for k in p))
        return {k: _concat([p.get(k) if isinstance(p, dict) else None for p in parts], sizes) for k in keys}
    like = next(p for p in parts if p is not None)
    filled = []
    for p, size in zip(parts, sizes):
        if p is None:
            p = np.full((size, *like.shape[1:]), None if like.dtype == object else 0, dtype=like.dtype)
        filled.append(p)
    return np.concatenate(filled)
