"""One native pool per Ray node behind one driver-side object with the pool's API and global env ids.

Global env ``i`` lives on node ``i // num_envs_per_node`` (nodes in the order of ``.nodes``).
Ray places one ``PoolActor`` per node and reports its death; batches go over the data plane
(``wire``: one TCP stream per node, one frame per batch). Sync ``step``/``reset``/``rollout`` send
every node its request before waiting on any, and receive each node's rows straight into the
merged arrays, in whichever order the nodes answer; async ``recv`` returns whichever node's batch
arrives first, and a node's next ``recv`` is requested as soon as it has a batch's worth of envs in
flight, so every node works while the driver does.
"""

from __future__ import annotations

import _signal
import logging
import select
import signal
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import ray
from ray.exceptions import GetTimeoutError, RayError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from parallel_pool.base import PoolContext
from parallel_pool.errors import EnvError, PoolClosedError
from parallel_pool.integrations.common import reject_kwargs, take_rows
from parallel_pool.integrations.ray import wire
from parallel_pool.integrations.ray.actor import (
    ASYNC_RESET,
    CLOSE,
    ENV_ERROR,
    ERROR,
    OK,
    RECV,
    RESET,
    ROLLOUT,
    SEND,
    SEND_ERROR,
    STEP,
    PoolActor,
)

__all__ = ["DistributedPool", "NodeFailedError", "make_distributed"]

logger = logging.getLogger(__name__)

# Every wait on a node is bounded: a hung node becomes a TimeoutError, never a hung driver.
DEFAULT_CALL_TIMEOUT = 120.0
# Closing waits this long for each actor to close its pool before killing it.
CLOSE_TIMEOUT = 10.0
# Ray's own waits (actor start, set_policy) return to Python at least this often (seconds), so that
# Ctrl-C raises KeyboardInterrupt within 100 ms: Ray runs signal handlers only every half second or
# so. The data plane's waits are select() calls, which Ctrl-C interrupts at once.
SIGNAL_POLL = 0.02
# How long a node that stopped answering gets to answer Ray's ping before it counts as dead.
PING_TIMEOUT = 10.0
# Rollouts that send_rollout may have in flight: two is double buffering (a node steps the next
# segment while the last crosses the network); more would only add staleness.
MAX_ROLLOUTS_IN_FLIGHT = 2

_RemotePoolActor = ray.remote(PoolActor)
_KIND_NAMES = {STEP: "step", RESET: "reset", ROLLOUT: "rollout"}


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

    def __reduce__(self) -> tuple:
        return (type(self), (self.node_id, self.env_ids, self.reason))


class _Link:
    """The driver's end of one node's data-plane stream: requests out, replies in, in order.

    A frame is never cut by Ctrl-C (the stream would lose its place): the native send is one call,
    which Ctrl-C cannot cut; otherwise SIGINT is held while a frame is sent or read and raised right
    after, with the frame read kept for the next ``read``.
    """

    def __init__(self, host: str, port: int, token: bytes, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(token)
        # A frame that stops arriving halfway raises TimeoutError instead of hanging.
        self.sock.settimeout(timeout)
        self.fd = self.sock.fileno()  # for the native calls (-1 once closed)
        self.timeout = timeout
        self.owed = 0  # replies the node has yet to send
        # Replies read and not yet returned: Frames, or raw frames (``dataplane.recv_frame``'s tuples)
        # that ``_wait_read`` read and had not decoded when Ctrl-C came.
        self.stash: deque[Any] = deque()

    def request(self, kind: int, message: Any = None, extra: Any = None, reply: bool = True) -> None:
        if wire._dataplane is not None:
            # One native call sends the frame and counts its reply: Ctrl-C cannot come between
            # them, so no SIGINT hold (four sigaction calls per batch).
            wire.send_native(self.fd, self.timeout, kind, message, extra, self if reply else None)
            return
        with _sigint_held():
            wire.send_frame(self.sock, kind, message, extra)
            if reply:
                self.owed += 1

    def read(self, into: wire.Destinations | None = None) -> wire.Frame:
        if not self.stash:
            with _sigint_held():
                frame = wire.read_frame(self.sock, into)
                self.owed -= 1
                self.stash.append(frame)
        frame = self.stash.popleft()
        return frame if type(frame) is wire.Frame else wire.frame_of(frame)

    def close(self) -> None:
        self.fd = -1
        try:
            self.sock.close()
        except OSError:
            pass


_held_depth = 0  # nesting of _sigint_held on the main thread: only the outermost swaps handlers


class _sigint_held:  # noqa: N801 - used as a function: `with _sigint_held():`
    """Holds SIGINT for the block (main thread only) and delivers it after, to the handler that
    was in place (Python's default raises KeyboardInterrupt). A sync call holds it once around
    all of its requests, and once around the replies it reads in a row; the frames' own holds
    inside are then free. ``_signal.signal`` is the C function that ``signal.signal`` wraps: the
    wrapper's enum conversions cost several times the call itself, and a hold runs four times per
    node per step (BENCHMARKS.md, "SIGINT holds in the Ray layer"). A class, not a
    ``contextlib.contextmanager`` generator, whose set-up costs more than the hold."""

    __slots__ = ("outer", "previous", "received")

    def __enter__(self) -> None:
        global _held_depth
        self.outer = not _held_depth and threading.get_ident() == _MAIN_THREAD_ID
        if not self.outer:
            return
        self.received: list[int] = []
        self.previous = _signal.signal(_SIGINT, lambda signum, frame: self.received.append(signum))
        _held_depth = 1

    def __exit__(self, *exc: object) -> None:
        global _held_depth
        if not self.outer:
            return
        _held_depth = 0
        _signal.signal(_SIGINT, self.previous)
        if self.received:
            signal.raise_signal(signal.SIGINT)


_SIGINT = int(signal.SIGINT)
_MAIN_THREAD_ID = threading.main_thread().ident  # (cheaper than current_thread() is main_thread())


@dataclass
class _Node:
    """The driver's record of one node: its actor, its stream, and which of its envs are in flight."""

    index: int
    node_id: str
    offset: int
    seed: Any
    actor: Any
    link: _Link | None = None
    in_flight: int = 0
    recv_requested: int = 0  # 0, or the sequence number of the RECV it owes (async)
    # Per local env: in flight. A list, not a NumPy array: a batch touches a few entries, where each
    # NumPy fancy index or reduction costs 2-3 us (more with the caches the envs' steps left cold).
    busy: list[bool] = field(default_factory=list)
    failure: NodeFailedError | None = None


_SCATTERED = object()  # a node's rows went straight into the merged arrays
_RESTARTED = RuntimeError("restarted")  # a node of a sync call that was restarted while it was awaited


@dataclass
class _Gather:
    """A sync call (step, reset, rollout) sent to every node and not yet fully received."""

    kind: int
    arg: Any
    parts: list[Any]
    kinds: list[int]
    extras: list[Any]
    skeleton: bytes | None = None
    merged: list[np.ndarray] = field(default_factory=list)
    row_bytes: list[int] = field(default_factory=list)  # bytes per env row of each merged array
    received: set[int] = field(default_factory=set)  # the indices of the nodes that answered
    lost: dict[int, Exception] = field(default_factory=dict)  # node index -> why its stream broke


class DistributedPool(PoolContext):
    """``num_envs_per_node`` envs on each alive Ray node, one native pool (one actor) per node.

    Sync mode (``batch_size_per_node == num_envs_per_node``): ``step(actions)`` takes one row per
    global env and returns every env's row in global order. Async mode (``batch_size_per_node <
    num_envs_per_node``, or ``asynchronous=True``): ``send(actions, env_id)`` with global ids
    splits the rows by node; ``recv()`` returns the first node batch to arrive
    (``batch_size_per_node`` rows, ``info["env_id"]`` global).

    Rollouts on the nodes (sync mode): ``set_policy(policy)`` ships a picklable callable (from a
    batch of observations to actions, or to ``(actions, extras)``; NumPy, or a ``torch.nn.Module``
    on the node's CPU) to every node once; ``rollout(K)`` has every node step its envs ``K`` times
    with it and returns ``(segment, episodes)``: one round trip per ``K`` steps instead of per step.
    ``set_weights(weights)`` sends new weights (``ray.put`` once, every node reads that object).
    ``send_rollout``/``recv_rollout`` split ``rollout`` so the nodes collect the next segment while
    the driver learns from the last one.

    Faults: when a node's actor dies (killed, crashed, its node removed) the call that finds out
    raises ``NodeFailedError``. With ``restart=True`` the actor is recreated on the same node (if
    that node is still alive, else ``NodeFailedError``) with the same seeds (and policy, and
    weights), and its envs are reset. In sync mode the ``step`` (or ``reset``) that found the
    failure returns those envs' rows as reset rows (first observation, reward 0, not terminated or
    truncated, ``elapsed_step`` 0), and a ``rollout`` returns the new envs' segment from their
    reset; the steps of theirs in flight are lost. In async mode a reset of all of that node's envs
    is queued: their rows arrive through ``recv`` as reset rows (one per env, replacing the lost
    results), and until then those envs count as in flight. ``restarts`` lists ``(node_id,
    env_ids)`` for each restart.

    An exception inside an env (not a node failure) is raised as ``parallel_pool.EnvError`` naming
    the global env ids and messages, with ``result`` the call's return value (sync: every node's
    rows merged in global order; async: that node's batch, received all the same, so its envs can
    be sent again); the failed envs' rows hold zeros, and each starts a new episode on its next step.

    Ctrl-C: a wait raises ``KeyboardInterrupt`` at once (a frame being read is finished first).
    What was sent stays in flight, as in a native pool: after an interrupted async ``recv`` the next
    ``recv`` returns that batch; after an interrupted sync ``step`` or ``reset`` the nodes finish it,
    ``recv()`` returns its rows (a ``step``/``reset`` before that raises ``ValueError``), and
    ``close()`` works at any time.

    Example:
        >>> import numpy as np, ray
        >>> from parallel_pool.integrations.ray import make_distributed
        >>> ray.init(num_cpus=1)  # doctest: +SKIP
        >>> pool = make_distributed("CartPole-v1", num_envs_per_node=4, seed=0)  # doctest: +SKIP
        >>> obs, info = pool.reset()  # doctest: +SKIP
        >>> obs, rew, terminated, truncated, info = pool.step(np.zeros(pool.num_envs, dtype=np.int64))  # doctest: +SKIP
        >>> pool.set_policy(lambda obs: np.zeros(len(obs), dtype=np.int64))  # doctest: +SKIP
        >>> segment, episodes = pool.rollout(32)  # doctest: +SKIP
        >>> segment["obs"].shape  # doctest: +SKIP
        (4, 32, 4)
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
        niceness: int | None = 0,
        asynchronous: bool | None = None,
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
        if not 1 <= self.batch_size_per_node <= self.num_envs_per_node:
            raise ValueError(f"batch_size_per_node must be in [1, num_envs_per_node={self.num_envs_per_node}], "
                             f"got {batch_size_per_node}")
        if asynchronous is None:
            self.is_async = self.batch_size_per_node < self.num_envs_per_node
        elif asynchronous is False and self.batch_size_per_node < self.num_envs_per_node:
            raise ValueError("asynchronous=False needs batch_size_per_node == num_envs_per_node (a sync pool)")
        else:
            # True with a whole node per batch: async across the nodes (recv returns whichever
            # node's envs all finished first), sync within each.
            self.is_async = bool(asynchronous)
        self.restart = restart
        self.call_timeout = call_timeout
        self.niceness = niceness
        self.restarts: list[tuple[str, list[int]]] = []
        self._num_threads = num_threads_per_node
        self._make_kwargs = dict(make_kwargs)
        self._closed = False
        self._policy_ref: Any = None
        self._weights_ref: Any = None
        self._recv_sequence = 0
        # Sync: the call (step, reset, rollout) sent and not yet received (interrupted, or a
        # rollout sent with send_rollout), for recv() / recv_rollout().
        self._sync_pending: _Gather | None = None
        # Rollouts sent behind the pending one (send_rollout twice): each node runs them in order,
        # so it steps the next segment while the driver receives or learns from the last.
        self._sync_behind: list[_Gather] = []

        alive = [n for n in ray.nodes() if n.get("Alive")]
        if not alive:
            raise RuntimeError("the Ray cluster has no alive node")
        self._nodes: list[_Node] = []
        n = self.num_envs_per_node
        for index, info in enumerate(alive):
            node = _Node(index, info["NodeID"], index * n, _node_seed(make_kwargs.get("seed"), index, n), None)
            node.busy = [False] * n
            node.actor = self._start_actor(node, int(info.get("Resources", {}).get("CPU", 1)))
            self._nodes.append(node)
        try:
            described = self._get([node.actor.describe.remote() for node in self._nodes])
            for node, desc in zip(self._nodes, described):
                if desc["node_id"] != node.node_id:  # node affinity with soft=False guarantees this
                    raise RuntimeError(f"pool actor for node {node.node_id} started on {desc['node_id']}")
            addresses = self._get([node.actor.open_data_plane.remote() for node in self._nodes])
            for node, address in zip(self._nodes, addresses):
                node.link = _Link(address[0], address[1], address[2], self.call_timeout)
        except BaseException:
            self._close_links()
            self._kill_all()
            raise
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
        if self.is_async:
            self.async_reset(seed)
            obs, _, _, _, info = self.recv()
            return obs, info
        self._check_usable()
        self._check_no_sync_pending("reset")
        try:
            n = self.num_envs_per_node
            for node in self._nodes:
                if seed is not None:
                    node.seed = _node_seed(seed, node.index, n)
            self._send_sync(RESET, None, lambda node: node.seed)
            obs, _, _, _, info = self._finish_sync()
            return obs, info
        except EnvError as e:  # the result in reset's form
            result = None if e.result is None else (e.result[0], e.result[4])
            raise EnvError(e.errors, result) from None

    def step(self, actions: Any, env_id: Any = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Sync: steps every env (one action row per global env) and returns rows in global order.
        Async: ``send(actions, env_id)`` then ``recv()``."""
        if self.is_async:
            self._check_usable()
            if not self._can_fill_after(env_id):
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
        self._send_sync(STEP, lambda node: take_rows(actions, slice(node.offset, node.offset + n)), None)
        return self._finish_sync()

    # --- rollouts on the nodes ---
    def set_policy(self, policy: Any) -> None:
        """Ships ``policy`` to every node (``ray.put`` once): ``policy(obs)`` returns the actions,
        or ``(actions, extras)`` with ``extras`` a dict of per-env arrays (log-probabilities,
        values) recorded in the segment. NumPy arrays in and out, or a ``torch.nn.Module`` (called
        on CPU tensors without gradients). A restarted node gets it too."""
        self._check_usable()
        if self.is_async:
            raise ValueError("rollouts step a sync pool: make_distributed without batch_size_per_node")
        self._policy_ref = ray.put(policy)
        self._weights_ref = None
        self._get([node.actor.set_policy.remote(self._policy_ref) for node in self._nodes])

    def set_weights(self, weights: Any) -> None:
        """Broadcasts new policy weights: one ``ray.put``, each node reads that object and applies
        it (``policy.set_weights(weights)``, or ``load_state_dict`` for a torch module) before
        its next rollout. A rollout already in flight keeps the weights it started with."""
        self._check_usable()
        if self._policy_ref is None:
            raise ValueError("set_weights before set_policy: there is no policy to update")
        self._weights_ref = ray.put(weights)
        self._get([node.actor.set_weights.remote(self._weights_ref) for node in self._nodes])

    def rollout(self, num_steps: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Every node steps its envs ``num_steps`` times with the policy, from where they are.

        Returns ``(segment, episodes)``; ``segment`` is env-major, rows in global env order:
        ``obs`` ``(num_envs, num_steps, *obs_shape)`` (what each action was chosen from),
        ``actions``, ``rewards``, ``terminated``, ``truncated``, the policy's extras, all
        ``(num_envs, num_steps, ...)``, ``next_obs`` (after the last step) and ``env_id``.
        ``episodes`` has ``env_id``, ``return`` and ``length`` of every episode that ended in it.
        The pool's autoreset mode applies as in ``step``: with ``"next_step"`` the step after a
        done is a reset step (reward 0, its action ignored); ``"same_step"`` has none.
        """
        self.send_rollout(num_steps)
        return self.recv_rollout()

    def send_rollout(self, num_steps: int) -> None:
        """Starts ``rollout(num_steps)`` on every node and returns at once.

        Up to ``MAX_ROLLOUTS_IN_FLIGHT`` (2) may be in flight: each node runs them one after the
        other, so with two sent it steps segment ``i + 1`` while segment ``i`` crosses the network
        and the driver learns from it (double buffering; ``recv_rollout`` returns them in the
        order sent). The segments are the same as one ``rollout`` after the other; only the
        weights may differ: a rollout uses the weights its node has when it starts, so weights
        sent while two are in flight apply from the first that has not started (usually the
        next one sent)."""
        self._check_usable()
        if self.is_async:
            raise ValueError("rollouts step a sync pool: make_distributed without batch_size_per_node")
        if self._policy_ref is None:
            raise ValueError("set_policy(...) before rollout")
        if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
            raise ValueError(f"num_steps must be an int >= 1, got {num_steps!r}")
        pending = self._sync_pending
        if pending is None or pending.kind != ROLLOUT or 1 + len(self._sync_behind) >= MAX_ROLLOUTS_IN_FLIGHT:
            self._check_no_sync_pending("rollout")
        self._send_sync(ROLLOUT, None, lambda node: int(num_steps), arg=int(num_steps))

    def recv_rollout(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The ``(segment, episodes)`` of the oldest rollout started by ``send_rollout``."""
        self._check_usable()
        if self._sync_pending is None or self._sync_pending.kind != ROLLOUT:
            raise RuntimeError("recv_rollout() would wait for ever: no rollout in flight (send_rollout first)")
        return self._finish_sync()

    # --- async ---
    def async_reset(self, seed: Any = None) -> None:
        """Queues a reset of every env on every node; collect the rows with ``recv``."""
        self._check_usable()
        n = self.num_envs_per_node
        for node in self._nodes:
            if seed is not None:
                node.seed = _node_seed(seed, node.index, n)
            if not self._request(node, ASYNC_RESET, None, node.seed, reply=False):
                continue  # restarted: its reset is queued already
            node.in_flight = n
            node.busy = [True] * n
            self._request_recv(node)

    def send(self, actions: Any, env_id: Any) -> None:
        """Queues one step for each global id in ``env_id`` (rows of ``actions`` in that order)."""
        self._check_usable()
        ids = np.asarray(env_id)
        if ids.ndim != 1 or ids.dtype.kind not in "iu":  # (not np.issubdtype: a call per batch adds up)
            raise ValueError(f"env_id must be a 1-d array of int env ids, got {env_id!r}")
        if len(ids) == 0:
            return
        # The checks on a Python list: a batch is a few dozen ids, where NumPy's per-call overhead
        # (a reduction, np.unique) costs more than the work.
        id_list = ids.tolist()
        lo, hi = min(id_list), max(id_list)
        if lo < 0 or hi >= self.num_envs:
            raise ValueError(f"env ids must be in [0, {self.num_envs}), got {lo}..{hi}")
        _check_rows(actions, len(ids))
        if lo // self.num_envs_per_node == hi // self.num_envs_per_node:
            # The common case: a batch that came from one node goes back to it whole.
            node = self._nodes[lo // self.num_envs_per_node]
            self._check_send(node, id_list)
            self._send_to(node, actions, ids, id_list)
            return
        node_of = ids // self.num_envs_per_node
        parts = []
        for k in np.unique(node_of):
            mask = node_of == k
            part = ids[mask]
            parts.append((self._nodes[int(k)], mask, part, part.tolist()))
        # Every node's part is checked before any is sent: a send that raises queues nothing.
        for node, _, _, part_list in parts:
            self._check_send(node, part_list)
        for node, mask, part, part_list in parts:
            self._send_to(node, take_rows(actions, mask), part, part_list)

    def recv(self, timeout: float | None = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The next node batch to arrive (``batch_size_per_node`` rows), as that node's arrays.

        ``TimeoutError`` after ``timeout`` seconds; ``RuntimeError`` instead of waiting for ever
        when no node has ``batch_size_per_node`` envs in flight. In sync mode it returns the rows of
        a ``step`` or ``reset`` that Ctrl-C interrupted (every env's, in global order).
        """
        self._check_usable()
        if self._sync_pending is not None:
            if self._sync_pending.kind == ROLLOUT:
                raise ValueError("a rollout is in flight: recv_rollout() it")
            return self._finish_sync()
        user_deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for node in self._nodes:
                if not node.recv_requested and node.in_flight >= self.batch_size_per_node:
                    self._request_recv(node)
            waiting = [node for node in self._nodes if node.recv_requested]
            if not waiting:
                raise RuntimeError(
                    f"recv() would wait for ever: no node has batch_size_per_node={self.batch_size_per_node} "
                    "envs in flight; send() actions (or async_reset) first"
                )
            now = time.monotonic()
            call_deadline = now + self.call_timeout
            deadline = call_deadline if user_deadline is None else min(user_deadline, call_deadline)
            if len(waiting) > 1:
                waiting.sort(key=_requested)  # the longest waiting first
            got = _wait_read(waiting, deadline - now)
            if got is None:
                if user_deadline is not None and user_deadline <= call_deadline:
                    raise TimeoutError(f"no node returned a batch within {timeout} s")
                for node in waiting:
                    self._diagnose(node, TimeoutError("no answer"))  # raises, or restarts a dead node
                continue
            index, kind, batch, extra = got
            node = waiting[index]
            node.recv_requested = 0
            if kind is None:  # its stream broke (TimeoutError included: the frame stopped halfway)
                self._link_broken(node, extra)  # raises unless the node was restarted
                continue
            if kind == SEND_ERROR:
                message, ids = extra
                busy, offset = node.busy, node.offset
                for i in ids:
                    if busy[i - offset]:
                        busy[i - offset] = False
                        node.in_flight -= 1
                raise ValueError(f"send to env ids {ids} failed on node {node.node_id}: {message}")
            if kind == ERROR:
                raise _remote_error(extra, node)
            self._received(node, batch)
            if kind == ENV_ERROR:
                # An env on that node raised. The batch was received all the same (the actor made
                # its ids global): its envs, the failed ones too, can be sent again.
                raise EnvError(extra, batch)
            return batch

    def close(self) -> None:
        """Closes every node's pool and ends its actor. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            deadline = time.monotonic() + CLOSE_TIMEOUT
            open_nodes = []
            for node in self._nodes:
                if node.failure is None and node.link is not None:
                    try:
                        node.link.request(CLOSE)
                        open_nodes.append(node)
                    except OSError:
                        pass
            # Each node answers what it owes, the close last.
            while open_nodes:
                ready = _readable(open_nodes, deadline)
                if not ready:
                    break
                for node in ready:
                    try:
                        node.link.read()  # type: ignore[union-attr]
                    except OSError:
                        node.link.owed = 0  # type: ignore[union-attr]
                open_nodes = [node for node in open_nodes if node.link.owed > 0]  # type: ignore[union-attr]
        finally:
            self._close_links()
            self._kill_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        mode = f"async, batch_size_per_node={self.batch_size_per_node}" if self.is_async else "sync"
        return (f"DistributedPool({self.task_id!r}, nodes={len(self._nodes)}, "
                f"num_envs_per_node={self.num_envs_per_node}, {mode}{', closed' if self._closed else ''})")

    # --- internals: actors ---
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
        ).remote(self.task_id, node.offset, kwargs, self.niceness)

    def _get(self, refs: list[Any]) -> list[Any]:
        try:
            return _get(refs, time.monotonic() + self.call_timeout)
        except GetTimeoutError as e:
            raise TimeoutError(f"a pool actor did not answer within {self.call_timeout} s") from e

    def _diagnose(self, node: _Node, error: Exception) -> None:
        """A node that has not answered in ``call_timeout``: if Ray says its actor is dead (or does
        not answer a ping either), it failed; else raise ``TimeoutError``."""
        try:
            ray.get(node.actor.__ray_ready__.remote(), timeout=PING_TIMEOUT)
        except (RayError, GetTimeoutError) as e:
            self._link_broken(node, e)
            return
        raise TimeoutError(f"the pool actor on node {node.node_id} did not answer within {self.call_timeout} s")

    def _link_broken(self, node: _Node, error: Exception) -> None:
        """The node's stream broke (its actor died, or its node left): NodeFailedError, or with
        ``restart`` a new actor (async: its envs' reset queued)."""
        self._node_failed(node, error)

    def _node_failed(self, node: _Node, error: Exception) -> None:
        """Raises NodeFailedError, or with ``restart`` recreates the node's actor (async: queues a
        reset of its envs; sync callers fetch the reset rows themselves)."""
        env_ids = list(range(node.offset, node.offset + self.num_envs_per_node))
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if node.link is not None:
            node.link.close()
            node.link = None
        node.recv_requested = 0
        try:
            ray.kill(node.actor, no_restart=True)  # if it is alive but unreachable, end it
        except Exception:  # already gone
            pass
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
        node.actor = self._start_actor(node, int(alive[node.node_id].get("Resources", {}).get("CPU", 1)))
        try:
            calls = [node.actor.open_data_plane.remote()]
            if self._policy_ref is not None:
                calls.append(node.actor.set_policy.remote(self._policy_ref))
            if self._weights_ref is not None:
                calls.append(node.actor.set_weights.remote(self._weights_ref))
            address = self._get(calls)[0]
            node.link = _Link(address[0], address[1], address[2], self.call_timeout)
        except (RayError, TimeoutError, OSError) as e:  # its node went away meanwhile
            node.failure = NodeFailedError(node.node_id, env_ids, f"{reason}; restarting it failed: "
                                           f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            raise node.failure from None
        self.restarts.append((node.node_id, env_ids))
        if self.is_async:
            node.link.request(ASYNC_RESET, None, node.seed, reply=False)
            node.in_flight = self.num_envs_per_node
            node.busy = [True] * self.num_envs_per_node

    # --- internals: the data plane ---
    def _request(self, node: _Node, kind: int, message: Any, extra: Any, reply: bool = True) -> bool:
        """Sends a request to ``node``; False if its stream broke and the node was restarted
        (with NodeFailedError raised otherwise)."""
        try:
            node.link.request(kind, message, extra, reply)  # type: ignore[union-attr]
            return True
        except OSError as e:
            self._link_broken(node, e)
            return False

    def _request_recv(self, node: _Node) -> None:
        if node.recv_requested or node.in_flight < self.batch_size_per_node:
            return
        if self._request(node, RECV, None, None):
            self._recv_sequence += 1
            node.recv_requested = self._recv_sequence
        else:  # restarted; its reset is queued
            self._request_recv(node)

    def _send_sync(self, kind: int, message_of: Any, extra_of: Any, arg: Any = None) -> None:
        """Sends a sync call to every node before waiting on any; ``_finish_sync`` gathers it."""
        k = len(self._nodes)
        gather = _Gather(kind, arg, [None] * k, [OK] * k, [None] * k)
        if self._sync_pending is None:
            self._sync_pending = gather
        else:  # a rollout behind a rollout (send_rollout checked)
            self._sync_behind.append(gather)
        with _sigint_held():
            for node in self._nodes:
                message = None if message_of is None else message_of(node)
                extra = None if extra_of is None else extra_of(node)
                try:
                    node.link.request(kind, message, extra)  # type: ignore[union-attr]
                except OSError as e:
                    gather.lost[node.index] = e

    def _finish_sync(self) -> Any:
        """Receives every node's part of the pending sync call, straight into the merged arrays
        (in the order the nodes answer), and returns the merged result."""
        gather = self._sync_pending
        assert gather is not None
        deadline = time.monotonic() + self.call_timeout
        while True:
            waiting = [node for node in self._nodes
                       if node.index not in gather.received and node.index not in gather.lost]
            if not waiting:
                break
            ready = _readable(waiting, deadline)
            if not ready:
                for node in waiting:
                    try:
                        self._diagnose(node, TimeoutError("no answer"))
                    except NodeFailedError:
                        self._drop_sync_pending()
                        raise
                    except TimeoutError:
                        raise  # the call stays pending: recv() collects it
                    gather.lost[node.index] = _RESTARTED  # its part is fetched below
                continue
            with _sigint_held():
                for node in ready:
                    into = lambda skeleton, slots, node=node: self._into(gather, node, skeleton, slots)  # noqa: E731
                    try:
                        frame = node.link.read(into)  # type: ignore[union-attr]
                    except OSError as e:
                        gather.lost[node.index] = e
                        continue
                    scattered = frame.message is None and frame.kind in (OK, ENV_ERROR)
                    gather.parts[node.index] = _SCATTERED if scattered else frame.message
                    gather.received.add(node.index)
                    gather.kinds[node.index] = frame.kind
                    gather.extras[node.index] = frame.extra
        self._sync_pending = self._sync_behind.pop(0) if self._sync_behind else None
        for index, error in sorted(gather.lost.items()):
            node = self._nodes[index]
            if error is not _RESTARTED:
                try:
                    self._link_broken(node, error)  # raises unless the node was restarted
                except NodeFailedError:
                    self._drop_sync_pending()
                    raise
            self._refetch(node, gather)
            self._resend_behind(node)
        for index, kind in enumerate(gather.kinds):
            if kind == ERROR:
                raise _remote_error(gather.extras[index], self._nodes[index])
        errors: list[tuple[int, str]] = []
        for index, kind in enumerate(gather.kinds):
            if kind == ENV_ERROR:
                if gather.kind == ROLLOUT:  # (errors, episodes)
                    node_errors, gather.extras[index] = gather.extras[index]
                else:
                    node_errors = gather.extras[index]
                errors.extend(node_errors)
        result = self._merged(gather)
        if errors:
            raise EnvError(errors, result)
        return result

    def _drop_sync_pending(self) -> None:
        self._sync_pending = None
        self._sync_behind.clear()

    def _resend_behind(self, node: _Node) -> None:
        """A restarted node lost the rollouts queued behind the one just refetched: sends them
        again on its new stream (they then run from its reset, after the refetched one)."""
        for gather in ([self._sync_pending] if self._sync_pending is not None else []) + self._sync_behind:
            gather.lost.pop(node.index, None)
            gather.received.discard(node.index)
            try:
                node.link.request(gather.kind, None, gather.arg)  # type: ignore[union-attr]
            except OSError as e:
                gather.lost[node.index] = e

    def _refetch(self, node: _Node, gather: _Gather) -> None:
        """A restarted node's part of a sync call: its reset rows, or a rollout from its reset."""
        link = node.link
        assert link is not None
        try:
            link.request(RESET, None, node.seed)
            frame = link.read()
            if gather.kind == ROLLOUT and frame.kind == OK:
                link.request(ROLLOUT, None, gather.arg)
                frame = link.read()
        except OSError as e:
            node.failure = NodeFailedError(node.node_id, self.env_ids_of(node.node_id),
                                           f"it failed again right after its restart: {e}")
            self._drop_sync_pending()
            raise node.failure from None
        gather.parts[node.index] = frame.message
        gather.kinds[node.index] = frame.kind
        gather.extras[node.index] = frame.extra

    def _into(self, gather: _Gather, node: _Node, skeleton: bytes,
              slots: list[wire.Slot]) -> tuple[list[np.ndarray], list[int]] | None:
        """Where a node's arrays go: its rows of the merged arrays, when its message has the same
        structure as the first node's to answer (the usual case), else a buffer of its own."""
        n = self.num_envs_per_node
        if gather.skeleton is None:
            if any(not slot.shape or slot.shape[0] != n for slot in slots):
                gather.skeleton = b""  # not rows of envs: merged after
                return None
            gather.skeleton = skeleton
            total = n * len(self._nodes)
            gather.merged = [np.empty((total, *slot.shape[1:]), dtype=np.dtype(slot.dtype)) for slot in slots]
            gather.row_bytes = [slot.nbytes // n for slot in slots]
        if skeleton != gather.skeleton:
            return None
        # Each array's rows of this node, as (array, byte offset): no view made per array per frame.
        lo = node.index * n
        return gather.merged, [row_bytes * lo for row_bytes in gather.row_bytes]

    def _merged(self, gather: _Gather) -> Any:
        n = self.num_envs_per_node
        tree = wire.parse_skeleton(gather.skeleton)[0] if gather.skeleton else None
        if all(part is _SCATTERED for part in gather.parts):
            message = wire.decode(tree, gather.merged)
        else:
            parts = [
                wire.decode(tree, [a[node.index * n:(node.index + 1) * n] for a in gather.merged])
                if part is _SCATTERED else part
                for node, part in zip(self._nodes, gather.parts)
            ]
            message = _concat_node_results(parts) if gather.kind != ROLLOUT else _merge_tree(parts)
        if gather.kind != ROLLOUT:
            return message
        return message, _merge_tree([extra for extra in gather.extras])

    def _check_no_sync_pending(self, call: str) -> None:
        if self._sync_pending is not None:
            what = "a rollout is in flight: recv_rollout()" if self._sync_pending.kind == ROLLOUT else (
                "the previous step or reset was interrupted before its results were received: recv()")
            raise ValueError(f"{call}(): {what} them first")

    def _received(self, node: _Node, batch: tuple) -> None:
        """The envs of a batch received from ``node`` are no longer in flight."""
        busy, offset = node.busy, node.offset
        ids = batch[4]["env_id"].tolist()
        for i in ids:
            busy[i - offset] = False
        node.in_flight -= len(ids)

    def _check_send(self, node: _Node, id_list: list[int]) -> None:
        if len(set(id_list)) != len(id_list):
            raise ValueError(f"duplicate env ids in {id_list}")
        busy, offset = node.busy, node.offset
        if any(busy[i - offset] for i in id_list):
            in_flight = [i for i in id_list if busy[i - offset]]
            raise ValueError(f"env ids {in_flight} have a step in flight: recv() their results first")

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
            node.recv_requested or node.in_flight + int(added[node.index]) >= self.batch_size_per_node
            for node in self._nodes
        )

    def _send_to(self, node: _Node, actions: Any, ids: np.ndarray, id_list: list[int]) -> None:
        # The node's next batch is asked for now, so it is on its way while the driver works: when
        # these envs make a batch's worth in flight, the RECV rides in the SEND's frame (a frame
        # fewer to write and for the node to read, per batch).
        ask = not node.recv_requested and node.in_flight + len(id_list) >= self.batch_size_per_node
        if not self._request(node, SEND, (actions, ids), True if ask else None, reply=ask):
            return  # restarted: every env of it has its reset queued (recv() asks for it)
        busy, offset = node.busy, node.offset
        for i in id_list:
            busy[i - offset] = True
        node.in_flight += len(id_list)
        if ask:
            self._recv_sequence += 1
            node.recv_requested = self._recv_sequence

    def _check_usable(self) -> None:
        if self._closed:
            raise PoolClosedError("the distributed pool is closed")
        for node in self._nodes:
            if node.failure is not None:
                raise node.failure

    def _close_links(self) -> None:
        for node in self._nodes:
            if node.link is not None:
                node.link.close()
                node.link = None

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
    ``asynchronous=True`` with ``batch_size_per_node == num_envs_per_node`` is async across nodes
    (``send``/``recv``; each ``recv`` returns one whole node, whichever finished first: a frame per
    node-batch of all its envs, where a smaller batch pays the frame's fixed cost more often);
    ``num_threads_per_node`` defaults to the node's CPUs (at most ``num_envs_per_node``); an int
    ``seed`` gives global env ``i`` the seed ``seed + i``; other kwargs go to ``parallel_pool.make``
    on every node. ``call_timeout`` (seconds, default 120) bounds every wait on a node.
    ``niceness`` (default 0) is the nice value of each pool's threads: Ray runs its workers at 15,
    where the envs would get only the CPU that other work on the node leaves (None keeps Ray's).
    The driver must reach each node's address (as Ray's own workers do); ``docs/ray.md`` has
    how to start a cluster, what crosses the network and how throughput scales.
    """
    return DistributedPool(task_id, num_envs_per_node, batch_size_per_node, num_threads_per_node, restart,
                           **make_kwargs)


def _requested(node: _Node) -> int:
    return node.recv_requested


def _wait_read(nodes: list[_Node], wait_s: float) -> tuple[int, Any, Any, Any] | None:
    """The next reply of ``nodes`` (served in that order: a stashed one first, else the first to
    arrive within ``wait_s``) as ``(index in nodes, kind, message, extra)``; ``(index, None, None,
    error)`` when that node's stream broke; None when none came. Ctrl-C interrupts the wait, not a
    frame. Natively one call (``dataplane.wait_read``: the poll, the read and the decoding)."""
    native = wire._dataplane
    if native is not None:
        return native.wait_read([node.link for node in nodes], wait_s, wire._decoded, wire._layout, wire.Slot)
    ready = _readable(nodes, time.monotonic() + wait_s)
    if not ready:
        return None
    index = nodes.index(ready[0])
    try:
        frame = nodes[index].link.read()  # type: ignore[union-attr]
    except OSError as e:
        return index, None, None, e
    return index, frame.kind, frame.message, frame.extra


def _readable(nodes: list[_Node], deadline: float) -> list[_Node]:
    """The nodes with a reply to read (stashed, or arriving) by ``deadline``; [] at the deadline.
    Ctrl-C interrupts the wait at once."""
    by_socket = {}
    for node in nodes:
        link = node.link
        if link is not None:
            if link.stash:
                return [node for node in nodes if node.link is not None and node.link.stash]
            by_socket[link.sock] = node
    if not by_socket:
        return []
    ready, _, _ = select.select(list(by_socket), [], [], max(0.0, deadline - time.monotonic()))
    return [by_socket[sock] for sock in ready]


def _remote_error(extra: tuple[str, str], node: _Node) -> Exception:
    """The exception a node's request raised, as the same built-in type when it is one."""
    name, message = extra
    kinds: dict[str, type[Exception]] = {"ValueError": ValueError, "TypeError": TypeError,
                                         "TimeoutError": TimeoutError, "PoolClosedError": PoolClosedError}
    return kinds.get(name, RuntimeError)(f"{message} (on node {node.node_id})" if name in kinds
                                         else f"{name}: {message} (on node {node.node_id})")


def _merge_tree(parts: list[Any]) -> Any:
    """Per-node trees of arrays concatenated leaf by leaf along the first axis (node order)."""
    first = parts[0]
    if isinstance(first, dict):
        return {k: _merge_tree([p[k] for p in parts]) for k in first}
    return np.concatenate([np.asarray(p) for p in parts])


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


def _concat_node_results(results: list[tuple]) -> tuple:
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
