"""Ray: one pool actor per node of a real 3-node cluster on this machine (ray.cluster_utils.Cluster),
10^4 sync and async batches with nothing lost, and a killed node actor with and without restart."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray
from ray.cluster_utils import Cluster

import parallel_pool
from parallel_pool.errors import EnvError, PoolClosedError
from parallel_pool.integrations.ray import NodeFailedError, make_distributed

NUM_NODES = 3
NUM_BATCHES = 10_000  # the acceptance criterion: 10^4 batches in each mode
TIMEOUT = 60.0  # every wait in these tests is bounded


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """Three raylets of one CPU each; Ray's files in a short temp dir (Unix socket paths are limited
    to ~107 bytes), removed afterwards with everything else."""
    temp_root = tempfile.mkdtemp(prefix="rt-", dir="/tmp")
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "RAY_AUTH_MODE")}
    os.environ["RAY_TMPDIR"] = temp_root
    os.environ["RAY_AUTH_MODE"] = "disabled"
    os.makedirs(os.path.join(temp_root, "ray"))
    # Ray's workers start in the driver's working directory and put it first on sys.path: from the
    # repository root they would import the source tree's parallel_pool (no compiled module).
    saved_cwd = os.getcwd()
    os.chdir(temp_root)
    c = None
    try:
        c = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "temp_dir": os.path.join(temp_root, "ray"), "include_dashboard": False},
        )
        for _ in range(NUM_NODES - 1):
            c.add_node(num_cpus=1)
        c.wait_for_nodes(timeout=TIMEOUT)
        ray.init(address=c.address, log_to_driver=False)
        yield c
    finally:
        ray.shutdown()
        if c is not None:
            c.shutdown()
        os.chdir(saved_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(temp_root, ignore_errors=True)


def _kill(actor) -> None:
    """Kill an actor and wait until Ray reports it dead and its process is gone: `ray.kill` only
    sends the request, and the GCS reports the actor dead a moment before its process exits (the
    data plane, a socket to that process, sees the death when the process is gone)."""
    pid = ray.get(actor.describe.remote(), timeout=60)["pid"]
    ray.kill(actor, no_restart=True)
    _wait_process_gone(pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            pass
        time.sleep(0.05)
    raise AssertionError("the killed actor is still alive after 60 s")


def _wait_process_gone(pid: int, wait_s: float = 60.0) -> None:
    deadline = time.monotonic() + wait_s
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{pid}"), f"process {pid} still alive after {wait_s} s"


def _alive_nodes() -> set[str]:
    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


def _pool_actors_by_node() -> dict[str, int]:
    """Alive PoolActor actors per node, from the GCS actor table (the dashboard is not running)."""
    counts: dict[str, int] = {}
    for actor in ray._private.state.actors().values():
        if actor["ActorClassName"].endswith("PoolActor") and actor["State"] == "ALIVE":
            node = actor["Address"]["NodeID"]
            counts[node] = counts.get(node, 0) + 1
    return counts


def _pool_actors_after_close(wait_s: float = 15.0) -> dict[str, int]:
    """``_pool_actors_by_node()`` once close() has ended every actor: the GCS records an actor's
    death asynchronously (after the kill, once its raylet reports it), so poll, within a bound."""
    deadline = time.monotonic() + wait_s
    while (counts := _pool_actors_by_node()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return counts


def _check_continuity(elapsed: np.ndarray, prev_elapsed: np.ndarray, prev_done: np.ndarray) -> None:
    """Next-step autoreset: a row follows its env's previous row by one step, or is the reset row
    (elapsed_step 0) after an episode ended."""
    expected = np.where(prev_done, 0, prev_elapsed + 1)
    np.testing.assert_array_equal(elapsed, expected)


def test_cluster_is_on_loopback(cluster: Cluster) -> None:
    # conftest.py sets RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: every node, and the pool actors' data
    # links (bound to the node's address), stay off the machine's network.
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    assert ray.util.get_node_ip_address() == "127.0.0.1"


def test_wire_frames_round_trip() -> None:
    """The data plane's frames, without Ray: every dtype and shape (empty, 0-d, odd byte counts that
    need padding) arrives equal, read into one buffer of its own (head and data in one scatter read)
    or into given destinations; a 3 MB frame crosses a socket pair in pieces; Slot.nbytes is the
    array's byte count, kept through pickling and ignored by equality."""
    import pickle
    import socket
    import threading

    from parallel_pool.integrations.ray import wire

    rng = np.random.default_rng(0)
    message = (
        rng.integers(0, 255, size=(3, 4, 5), dtype=np.uint8),
        rng.normal(size=3).astype(np.float32),
        np.zeros(0, dtype=np.int64),
        np.array(7, dtype=np.int16),
        {"env_id": np.arange(3, dtype=np.int32), "flag": np.array([True, False, True]), "name": "x"},
    )
    for shape, dtype in (((3, 4, 5), "|u1"), ((), "<i2"), ((0,), "<i8"), ((2, 3), "<f8")):
        slot = wire.Slot(0, dtype, shape)
        assert slot.nbytes == np.zeros(shape, dtype=dtype).nbytes
        copy = pickle.loads(pickle.dumps(slot))
        assert copy == slot and copy.nbytes == slot.nbytes
    a, b = socket.socketpair()
    try:
        wire.send_frame(a, 100, message, {"extra": 1})
        frame = wire.read_frame(b)
        assert frame.kind == 100 and frame.extra == {"extra": 1}
        for got, sent in zip(frame.message[:4], message[:4]):
            assert got.dtype == sent.dtype and got.shape == sent.shape
            np.testing.assert_array_equal(got, sent)
        for key in ("env_id", "flag"):
            np.testing.assert_array_equal(frame.message[4][key], message[4][key])
        assert frame.message[4]["name"] == "x"
        # Into destinations (a sync call's merged rows), and a frame whose destinations are refused.
        batch = (np.arange(6, dtype=np.float64).reshape(3, 2), np.array([1, 2, 3], dtype=np.uint8))
        targets = [np.empty_like(x) for x in batch]
        wire.send_frame(a, 101, batch)
        wire.send_frame(a, 102, batch)
        frame = wire.read_frame(b, lambda skeleton, slots: [t.reshape(-1).view(np.uint8).data for t in targets])
        assert frame.kind == 101 and frame.message is None
        for got, sent in zip(targets, batch):
            np.testing.assert_array_equal(got, sent)
        frame = wire.read_frame(b, lambda skeleton, slots: None)
        np.testing.assert_array_equal(frame.message[0], batch[0])
        np.testing.assert_array_equal(frame.message[1], batch[1])
        big = rng.integers(0, 255, size=3 << 20, dtype=np.uint8)
        sender = threading.Thread(target=wire.send_frame, args=(a, 103, (big,), None))
        sender.start()
        frame = wire.read_frame(b)
        sender.join(TIMEOUT)
        np.testing.assert_array_equal(frame.message[0], big)
    finally:
        a.close()
        b.close()


def _raw_frames(send: Any, count: int) -> bytes:
    """The bytes ``send(sock)`` writes to a socket pair (read until ``count`` bytes of it came)."""
    import socket

    a, b = socket.socketpair()
    try:
        send(a)
        a.close()
        chunks = []
        while chunk := b.recv(1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
        assert len(data) == count or count < 0
        return data
    finally:
        b.close()


def test_native_data_plane_matches_the_python_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The native frame I/O (native/python/dataplane.cc) against wire.py's Python reference: the
    same bytes on the wire for the same message (structure, padding, the skeleton cache keyed by
    the native walk), frames of one read by the other, messages it cannot key (a scalar, a strided
    array, a non-str key) through the Python walk, more pieces than one sendmsg takes, destinations
    as (targets, byte offsets), and the socket errors a Python socket raises: TimeoutError on its
    timeout, ConnectionResetError when the peer closes mid-frame, BrokenPipeError to a closed peer."""
    import socket
    import threading

    from parallel_pool.integrations.ray import wire

    native = wire._dataplane
    assert native is not None, "the package is built with the native data plane"
    rng = np.random.default_rng(1)
    messages = [
        (rng.integers(0, 255, size=(3, 4, 5), dtype=np.uint8), rng.normal(size=3).astype(np.float32),
         np.zeros(0, dtype=np.int64), np.array(7, dtype=np.int16),
         {"env_id": np.arange(3, dtype=np.int32), "flag": np.array([True, False, True])}),
        (np.arange(12.0).reshape(3, 4)[:, ::2], None),  # strided: copied by the Python walk
        {"a": np.float64(2.5), "b": [np.ones(2)]},  # a scalar: pickled in the skeleton
        {1: np.ones(3)},  # a non-str key
        tuple(np.full(i % 5 + 1, i % 251, dtype=np.uint8) for i in range(700)),  # > 512 pieces with padding
        None,
    ]
    for message in messages:
        for extra in (None, {"x": [1, 2]}):
            monkeypatch.setattr(wire, "_dataplane", None)
            python_bytes = _raw_frames(lambda s, m=message, e=extra: wire.send_frame(s, 100, m, e), -1)
            monkeypatch.setattr(wire, "_dataplane", native)
            native_bytes = _raw_frames(lambda s, m=message, e=extra: wire.send_frame(s, 100, m, e),
                                       len(python_bytes))
            assert native_bytes == python_bytes
            for sender, reader in ((None, native), (native, None), (native, native)):
                a, b = socket.socketpair()
                try:
                    monkeypatch.setattr(wire, "_dataplane", sender)
                    thread = threading.Thread(target=wire.send_frame, args=(a, 101, message, extra))
                    thread.start()
                    monkeypatch.setattr(wire, "_dataplane", reader)
                    frame = wire.read_frame(b)
                    thread.join(TIMEOUT)
                finally:
                    a.close()
                    b.close()
                assert frame.kind == 101 and frame.extra == extra
                _assert_same_tree(frame.message, message)
    # Destinations as (targets, byte offsets): node 1's rows of merged arrays, both readers.
    batch = (np.arange(6, dtype=np.float64).reshape(3, 2), np.array([1, 2, 3], dtype=np.uint8))
    for reader in (native, None):
        monkeypatch.setattr(wire, "_dataplane", reader)
        merged = [np.zeros((9, 2)), np.zeros(9, dtype=np.uint8)]
        a, b = socket.socketpair()
        try:
            wire.send_frame(a, 102, batch)
            frame = wire.read_frame(b, lambda skeleton, slots, m=merged: (m, [3 * 16, 3]))
        finally:
            a.close()
            b.close()
        assert frame.message is None and frame.kind == 102
        np.testing.assert_array_equal(merged[0][3:6], batch[0])
        np.testing.assert_array_equal(merged[1][3:6], batch[1])
        assert not merged[0][:3].any() and not merged[0][6:].any() and not merged[1][6:].any()
    monkeypatch.setattr(wire, "_dataplane", native)
    # A destination too small is refused before a byte is read.
    a, b = socket.socketpair()
    try:
        wire.send_frame(a, 102, batch)
        with pytest.raises(ValueError, match="smaller"):
            wire.read_frame(b, lambda skeleton, slots: ([np.zeros(5), np.zeros(3, np.uint8)], [0, 0]))
    finally:
        a.close()
        b.close()
    # Errors as a Python socket raises them.
    a, b = socket.socketpair()
    try:
        b.settimeout(0.2)
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            wire.read_frame(b)
        assert 0.15 < time.monotonic() - start < 5
        # A frame that stops halfway: TimeoutError too (a Python socket's timeout counts per call;
        # here per wait without progress).
        a.sendall(wire._PREFIX.pack(100, 0, 0, 64) + bytes(8))  # 64 bytes of data promised, 8 sent
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            wire.read_frame(b)
        assert 0.15 < time.monotonic() - start < 5
        a.sendall(b"\x01\x00")  # part of a prefix, then the peer goes
        a.close()
        with pytest.raises(ConnectionResetError):
            wire.read_frame(b)
    finally:
        a.close()
        b.close()
    a, b = socket.socketpair()
    b.close()
    try:
        with pytest.raises(BrokenPipeError):
            wire.send_frame(a, 100, batch)
    finally:
        a.close()


def _read_raw_frame(sock: Any) -> bytes:
    """One whole frame's bytes from ``sock``, as the peer wrote them."""
    from parallel_pool.integrations.ray import wire

    def exactly(n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = sock.recv(n - got)
            assert chunk, "the peer closed mid-frame"
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    prefix = exactly(wire._PREFIX.size)
    _, skeleton_len, extra_len, data_len = wire._PREFIX.unpack(prefix)
    return prefix + exactly(skeleton_len + extra_len + data_len)


def _serve_script(native_serve: bool, monkeypatch: pytest.MonkeyPatch,
                  **make_kwargs: Any) -> tuple[list[Any], int, Any]:
    """A node's replies to one script of driver frames, with its async batches served natively
    (after the first) or every frame in Python: (the replies' bytes, frames _handle saw). Faulty-v0,
    3 envs of global ids 3-5 in batches of 1, one in flight at a time (so every reply is the same
    whichever path makes it): env 4 raises on its 7th step (ENV_ERROR), a wrong action shape is
    refused (SEND_ERROR, then the native loop again), an async reset comes between batches (a frame
    the native loop gives back; its three rows compared as a set: they finish in any order), and
    CLOSE ends it. Returns the node's plan too (None: every frame went through Python)."""
    import socket
    import threading

    from parallel_pool.integrations.ray import actor as actor_module
    from parallel_pool.integrations.ray import wire

    monkeypatch.setattr(actor_module.PoolActor, "native_serve", native_serve)
    node = actor_module.PoolActor("Faulty-v0", 3, {"num_envs": 3, "batch_size": 1, "num_threads": 1, "seed": 0,
                                                   "fault_env_id": 1, "raise_on_step": 7, "episode_length": 5,
                                                   **make_kwargs})
    handled = [0]
    handle = node._handle

    def counted(conn: Any, frame: Any) -> bool:
        handled[0] += 1
        return handle(conn, frame)

    monkeypatch.setattr(node, "_handle", counted)
    driver, served = socket.socketpair()
    thread = threading.Thread(target=node._serve_connection, args=(served,), daemon=True)
    thread.start()
    replies: list[Any] = []
    try:
        driver.settimeout(TIMEOUT)

        def async_reset() -> None:
            wire.send_frame(driver, actor_module.ASYNC_RESET, None, None)
            rows = []
            for _ in range(3):
                wire.send_frame(driver, actor_module.RECV)
                rows.append(_read_raw_frame(driver))
            replies.append(sorted(rows))

        async_reset()
        for t in range(30):
            if t == 12:
                async_reset()
            for env in (3, 4, 5):
                bad = t == 5 and env == 4
                actions = np.zeros(2 if bad else 1, dtype=np.int64) + t % 2
                wire.send_frame(driver, actor_module.SEND, (actions, np.array([env], dtype=np.int32)), True)
                replies.append(_read_raw_frame(driver))
        wire.send_frame(driver, actor_module.CLOSE)
        replies.append(_read_raw_frame(driver))
        thread.join(TIMEOUT)
        assert not thread.is_alive()
    finally:
        driver.close()
        served.close()
    return replies, handled[0], node._plan


def test_native_serving_of_async_batches_matches_the_python_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node's async batches served in one native call (dataplane.serve_batches) send the driver the same
    bytes as the Python path, for every kind of reply (OK, ENV_ERROR, SEND_ERROR after a refused
    send, the rows of an async reset, CLOSE), and the Python path sees only what the native loop
    gives back."""
    from parallel_pool.integrations.ray import actor as actor_module
    from parallel_pool.integrations.ray import wire

    python_replies, python_handled, plan = _serve_script(False, monkeypatch)
    assert plan is None
    native_replies, native_handled, plan = _serve_script(True, monkeypatch)
    assert plan is not None
    assert native_replies == python_replies
    kinds = [wire._PREFIX.unpack(r[:wire._PREFIX.size])[0] for r in python_replies if isinstance(r, bytes)]
    assert kinds.count(actor_module.ENV_ERROR) == 1 and kinds.count(actor_module.SEND_ERROR) == 1
    assert kinds.count(actor_module.OK) == len(kinds) - 2
    # Python: the 2 async resets with their 6 RECVs, 90 batches, CLOSE. Native: the first batch,
    # the resets' frames, the refused send (given back), CLOSE (the ENV_ERROR batch is given back
    # received and answered without _handle).
    assert python_handled == 2 * 4 + 90 + 1
    assert native_handled == 1 + 2 * 4 + 1 + 1
    # A front-end whose unpacking is not flat (episode_stats: info keys that come and go) is served
    # in Python throughout, as before.
    stats_replies, stats_handled, plan = _serve_script(True, monkeypatch, episode_stats=True)
    assert plan is None and stats_handled == python_handled
    assert len(stats_replies) == len(python_replies) and stats_replies != python_replies


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_driver_links_wait_read_and_count(native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's side of the data plane, without Ray: a request counts its reply (``owed``) and
    arrives whole; ``_wait_read`` serves the nodes in the order given (a stashed reply first, raw or
    decoded, then the first to arrive), counts the reply down, returns None when nothing came in
    time, reports a broken stream as ``(index, None, None, error)``, and Ctrl-C during its wait
    raises KeyboardInterrupt with nothing read or counted. Native (``dataplane.send_message``,
    ``dataplane.wait_read``) and the Python reference alike."""
    import signal
    import socket
    import threading

    from parallel_pool.integrations.ray import distributed, wire

    if not native:
        monkeypatch.setattr(wire, "_dataplane", None)
    nodes, peers = [], []
    for i in range(3):
        with socket.create_server(("127.0.0.1", 0)) as listener:  # (the backlog takes the connection)
            link = distributed._Link("127.0.0.1", listener.getsockname()[1], b"t" * 8, TIMEOUT)
            peer = listener.accept()[0]
        assert peer.recv(8, socket.MSG_WAITALL) == b"t" * 8
        peer.settimeout(TIMEOUT)
        nodes.append(distributed._Node(i, f"node{i}", 4 * i, 0, None, link=link))
        peers.append(peer)
    try:
        batch = (np.arange(8, dtype=np.float32).reshape(4, 2), {"env_id": np.arange(4, dtype=np.int32)})
        links = [node.link for node in nodes]
        links[0].request(3, batch, True)
        links[1].request(5, None, 7, reply=False)
        assert [link.owed for link in links] == [1, 0, 0]
        got = wire.read_frame(peers[0])
        assert got.kind == 3 and got.extra is True
        _assert_same_tree(got.message, batch)
        got = wire.read_frame(peers[1])
        assert (got.kind, got.message, got.extra) == (5, None, 7)
        # Nothing to read: None once the wait is over.
        start = time.monotonic()
        assert distributed._wait_read(nodes, 0.2) is None
        assert 0.15 < time.monotonic() - start < 5
        # Replies on nodes 2 and 1: served in the order given, each counted down.
        for link in links:
            link.owed = 1
        wire.send_frame(peers[2], 0, batch, "two")
        wire.send_frame(peers[1], 0, batch, "one")
        time.sleep(0.1)  # both have arrived
        index, kind, message, extra = distributed._wait_read(nodes, TIMEOUT)
        assert (index, kind, extra) == (1, 0, "one")
        _assert_same_tree(message, batch)
        assert [link.owed for link in links] == [1, 0, 1]
        index, kind, message, extra = distributed._wait_read([nodes[2], nodes[0]], TIMEOUT)
        assert (index, kind, extra) == (0, 0, "two") and links[2].owed == 0
        # A stashed reply is served before the socket is read, raw (as the native wait leaves one
        # it had read when Ctrl-C came) or decoded, and by the link's own read() too.
        wire.send_frame(peers[0], 0, batch, "sock")
        time.sleep(0.1)
        if native:
            other = socket.socketpair()
            try:
                wire.send_frame(other[0], 0, batch, "raw")
                raw_copy = wire._dataplane.recv_frame(other[1].fileno(), TIMEOUT)
                links[2].stash.append(raw_copy)
                wire.send_frame(other[0], 0, batch, "raw again")
                links[1].stash.append(wire._dataplane.recv_frame(other[1].fileno(), TIMEOUT))
            finally:
                other[0].close()
                other[1].close()
            index, kind, message, extra = distributed._wait_read(nodes, TIMEOUT)
            assert (index, kind, extra) == (1, 0, "raw again") and not links[1].stash
            _assert_same_tree(message, batch)
            frame = links[2].read()
            assert (frame.kind, frame.extra) == (0, "raw") and not links[2].stash
            _assert_same_tree(frame.message, batch)
            # A raw frame that cannot be decoded raises once and is dropped, not served again.
            kind, skeleton, extra_bytes, data = raw_copy
            links[2].stash.append((kind, skeleton, extra_bytes, data[:3].copy()))
            with pytest.raises(ValueError, match="shorter"):
                distributed._wait_read([nodes[2]], TIMEOUT)
            assert not links[2].stash
        links[1].stash.append(wire.Frame(0, batch, "decoded", b""))
        assert distributed._wait_read(nodes, TIMEOUT)[::3] == (1, "decoded")
        assert distributed._wait_read(nodes, TIMEOUT)[::3] == (0, "sock") and links[0].owed == 0
        # Ctrl-C during the wait: KeyboardInterrupt, nothing read or counted.
        # (Python's own handler: a process started in the background by a shell ignores SIGINT.)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            main = threading.get_ident()
            timer = threading.Timer(0.2, lambda: signal.pthread_kill(main, signal.SIGINT))
            timer.start()
            start = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                distributed._wait_read(nodes, 10.0)
            timer.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        assert time.monotonic() - start < 5
        assert [link.owed for link in links] == [0, 0, 0] and not any(link.stash for link in links)
        # A stream that breaks mid-frame: its node's index and the error.
        peers[2].sendall(wire._PREFIX.pack(0, 0, 0, 64) + bytes(8))
        peers[2].close()
        index, kind, message, extra = distributed._wait_read(nodes, TIMEOUT)
        assert (index, kind, message) == (2, None, None) and isinstance(extra, ConnectionResetError)
        # A link closed while its node is waited on (from another thread) is not read through its
        # old fd: its node's stream is reported broken.
        if native:
            polled = links[1].fd

            def close_then_reply() -> None:
                links[1].fd = -1  # as close() leaves it, the socket still open under the old number
                wire.send_frame(peers[1], 0, batch, "late")

            timer = threading.Timer(0.2, close_then_reply)
            timer.start()
            got = distributed._wait_read([nodes[1]], TIMEOUT)
            timer.join()
            assert got[:3] == (0, None, None) and isinstance(got[3], OSError), got
            links[1].fd = polled
        # A closed link's requests fail as a closed socket's do.
        links[0].close()
        with pytest.raises(OSError):
            links[0].request(3, batch)
        assert links[0].owed == 0
    finally:
        for node in nodes:
            node.link.close()
        for peer in peers:
            peer.close()


def _assert_same_tree(got: Any, sent: Any) -> None:
    if isinstance(sent, dict):
        assert isinstance(got, dict) and list(got) == list(sent)
        for key in sent:
            _assert_same_tree(got[key], sent[key])
    elif isinstance(sent, (tuple, list)):
        assert type(got) is type(sent) and len(got) == len(sent)
        for g, s in zip(got, sent):
            _assert_same_tree(g, s)
    elif isinstance(sent, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == sent.dtype and got.shape == sent.shape
        np.testing.assert_array_equal(got, sent)
    else:
        assert got == sent and type(got) is type(sent)


def test_one_pool_actor_per_node(cluster: Cluster) -> None:
    pool = make_distributed("CartPole-v1", num_envs_per_node=4, seed=0)
    try:
        assert len(pool.nodes) == NUM_NODES
        assert set(pool.nodes) == _alive_nodes()
        assert [a["node_id"] for a in pool.actor_info()] == pool.nodes
        assert all(a["num_threads"] == 1 for a in pool.actor_info())  # the node's CPUs
        assert _pool_actors_by_node() == {node: 1 for node in pool.nodes}
        assert pool.num_envs == 4 * NUM_NODES
        assert pool.single_action_space == parallel_pool.make_spec("CartPole-v1").action_space
    finally:
        pool.close()
    assert _pool_actors_after_close() == {}
    with pytest.raises(PoolClosedError):
        pool.step(np.zeros(pool.num_envs, dtype=np.int64))


def test_python_env_pools_on_every_node_match_one_local_pool(cluster: Cluster, step_alike: Any) -> None:
    """``gymnasium:<id>``: each node's actor runs Gymnasium's own envs in worker processes (the
    Python backend); global env i is seeded seed + i, so the cluster gives one local pool's rows."""
    n = 2
    pool = make_distributed("gymnasium:CartPole-v1", num_envs_per_node=n, seed=3, num_workers=1)
    local = parallel_pool.make("gymnasium:CartPole-v1", num_envs=n * NUM_NODES, seed=3, num_workers=1)
    rng = np.random.default_rng(1)
    try:
        assert len(pool.nodes) == NUM_NODES and pool.num_envs == n * NUM_NODES
        np.testing.assert_array_equal(pool.reset()[0], local.reset()[0])
        ends = 0
        for _ in range(100):
            (_, _, term, trunc, info), _ = step_alike(pool, local, rng.integers(0, 2, pool.num_envs))
            np.testing.assert_array_equal(info["env_id"], np.arange(pool.num_envs))
            ends += int((term | trunc).sum())
        assert ends > 5
    finally:
        pool.close()
        local.close()


def test_sync_10k_batches_match_one_local_pool(cluster: Cluster) -> None:
    """Rows in global env id order; global env i is seeded seed + i, so the cluster reproduces one
    local pool of all the envs row for row."""
    n = 4
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=7)
    local = parallel_pool.make("CartPole-v1", num_envs=n * NUM_NODES, seed=7)
    rng = np.random.default_rng(0)
    try:
        obs, info = pool.reset()
        local_obs, _ = local.reset()
        np.testing.assert_array_equal(obs, local_obs)
        np.testing.assert_array_equal(info["env_id"], np.arange(pool.num_envs))
        prev_elapsed, prev_done = info["elapsed_step"], np.zeros(pool.num_envs, dtype=bool)
        sent = np.zeros(pool.num_envs, dtype=np.int64)
        received = np.zeros(pool.num_envs, dtype=np.int64)
        for _ in range(NUM_BATCHES):
            actions = rng.integers(0, 2, size=pool.num_envs)
            obs, reward, terminated, truncated, info = pool.step(actions)
            sent += 1
            np.add.at(received, info["env_id"], 1)
            np.testing.assert_array_equal(info["env_id"], np.arange(pool.num_envs))
            _check_continuity(info["elapsed_step"], prev_elapsed, prev_done)
            prev_elapsed, prev_done = info["elapsed_step"], terminated | truncated
            l_obs, l_reward, l_terminated, l_truncated, _ = local.step(actions)
            np.testing.assert_array_equal(obs, l_obs)
            np.testing.assert_array_equal(reward, l_reward)
            np.testing.assert_array_equal(terminated, l_terminated)
            np.testing.assert_array_equal(truncated, l_truncated)
        np.testing.assert_array_equal(sent, received)
        assert sent.sum() == NUM_BATCHES * pool.num_envs
    finally:
        pool.close()
        local.close()


def _run_async(pool, rng, num_batches, prev_elapsed, prev_done, sent, received, resets_allowed=None):
    """recv/send ``num_batches`` times; counts sends and receives per global env id and checks
    each env's elapsed_step continuity (``resets_allowed`` envs may restart at 0 once)."""
    for _ in range(num_batches):
        obs, reward, terminated, truncated, info = pool.recv(timeout=TIMEOUT)
        ids = info["env_id"]
        assert len(ids) == pool.batch_size_per_node and obs.shape == (len(ids), 4)
        assert len(set((ids // pool.num_envs_per_node).tolist())) == 1  # one node's batch
        np.add.at(received, ids, 1)
        expected = np.where(prev_done[ids], 0, prev_elapsed[ids] + 1)
        elapsed = info["elapsed_step"]
        if resets_allowed is not None:
            restarted = resets_allowed[ids] & (elapsed == 0) & (expected != 0)
            expected[restarted] = 0
            resets_allowed[ids[restarted]] = False
        np.testing.assert_array_equal(elapsed, expected)
        prev_elapsed[ids], prev_done[ids] = elapsed, terminated | truncated
        pool.send(rng.integers(0, 2, size=len(ids)), ids)
        np.add.at(sent, ids, 1)


def _start_async(pool, rng, num_batches):
    """``async_reset``, then ``_run_async`` for ``num_batches`` batches from fresh counts: returns
    them, ``(prev_elapsed, prev_done, sent, received)``."""
    prev_elapsed = np.full(pool.num_envs, -1)
    prev_done = np.ones(pool.num_envs, dtype=bool)  # the first row of every env is a reset row
    sent = np.zeros(pool.num_envs, dtype=np.int64)
    received = np.zeros(pool.num_envs, dtype=np.int64)
    pool.async_reset()
    _run_async(pool, rng, num_batches, prev_elapsed, prev_done, sent, received)
    return prev_elapsed, prev_done, sent, received


def _drain(pool, received, prev_done) -> None:
    while True:
        try:
            _, _, terminated, truncated, info = pool.recv(timeout=TIMEOUT)
        except RuntimeError as e:  # nothing left in flight anywhere
            assert "would wait for ever" in str(e)
            return
        np.add.at(received, info["env_id"], 1)


def test_async_10k_batches_nothing_lost(cluster: Cluster) -> None:
    n, batch = 8, 4
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, batch_size_per_node=batch, seed=0)
    rng = np.random.default_rng(1)
    try:
        assert pool.is_async and pool.num_envs == n * NUM_NODES
        _, prev_done, sent, received = _start_async(pool, rng, NUM_BATCHES)
        _drain(pool, received, prev_done)
        # Every env: one reset row plus one row per step sent, and every node took part.
        np.testing.assert_array_equal(received, sent + 1)
        assert received.sum() == NUM_BATCHES * batch + pool.num_envs  # the last recvs drained every env
        per_node = received.reshape(NUM_NODES, n).sum(axis=1)
        assert (per_node > 0).all()
        with pytest.raises(ValueError, match="in flight"):
            pool.async_reset()
            pool.send(np.zeros(1, dtype=np.int64), np.array([0]))
    finally:
        pool.close()


def test_async_whole_node_batches_nothing_lost(cluster: Cluster) -> None:
    """asynchronous=True with a whole node per batch: each recv is one node's every env (whichever
    finished first), nothing lost over 300 batches; the option's bad values raise."""
    n = 3
    for bad in ({"batch_size_per_node": 0}, {"batch_size_per_node": n + 1},
                {"batch_size_per_node": 1, "asynchronous": False}):
        with pytest.raises(ValueError, match="batch_size_per_node"):
            make_distributed("CartPole-v1", num_envs_per_node=n, **bad)
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, asynchronous=True, seed=0)
    rng = np.random.default_rng(2)
    try:
        assert pool.is_async and pool.batch_size == pool.batch_size_per_node == n
        with pytest.raises(ValueError, match="sync pool"):
            pool.set_policy(lambda obs: obs)
        _, prev_done, sent, received = _start_async(pool, rng, 300)
        _drain(pool, received, prev_done)
        np.testing.assert_array_equal(received, sent + 1)
        assert (received.reshape(NUM_NODES, n).sum(axis=1) > 0).all()
    finally:
        pool.close()


def test_killed_node_raises_node_failed_error(cluster: Cluster) -> None:
    n = 4
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=0)
    try:
        pool.reset()
        for _ in range(20):
            pool.step(np.zeros(pool.num_envs, dtype=np.int64))
        victim = pool.nodes[1]
        _kill(pool.actors[1])
        with pytest.raises(NodeFailedError) as excinfo:
            pool.step(np.zeros(pool.num_envs, dtype=np.int64))
        assert excinfo.value.node_id == victim
        assert excinfo.value.env_ids == list(range(n, 2 * n))
        assert victim in str(excinfo.value) and "4..7" in str(excinfo.value)
        with pytest.raises(NodeFailedError):  # and on every later call
            pool.reset()
    finally:
        pool.close()
    assert _pool_actors_after_close() == {}


def test_killed_node_async_raises(cluster: Cluster) -> None:
    pool = make_distributed("CartPole-v1", num_envs_per_node=4, batch_size_per_node=2, seed=0)
    try:
        pool.async_reset()
        _kill(pool.actors[2])
        with pytest.raises(NodeFailedError, match=pool.nodes[2]):
            for _ in range(50):
                _, _, _, _, info = pool.recv(timeout=TIMEOUT)
                pool.send(np.zeros(2, dtype=np.int64), info["env_id"])
    finally:
        pool.close()


def test_restart_sync_continues_with_reset_rows(cluster: Cluster) -> None:
    n = 4
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=0, restart=True)
    try:
        _, info = pool.reset()
        prev_elapsed, prev_done = info["elapsed_step"], np.zeros(pool.num_envs, dtype=bool)
        victim_rows = slice(n, 2 * n)
        for step in range(300):
            if step == 100:
                old_pid = pool.actor_info()[1]["pid"]
                _kill(pool.actors[1])
            obs, reward, terminated, truncated, info = pool.step(np.ones(pool.num_envs, dtype=np.int64))
            if step == 100:
                # The restarted node's rows are reset rows; the other nodes step on.
                assert (info["elapsed_step"][victim_rows] == 0).all()
                assert (reward[victim_rows] == 0).all() and not terminated[victim_rows].any()
                expected = np.where(prev_done, 0, prev_elapsed + 1)
                expected[victim_rows] = 0
                np.testing.assert_array_equal(info["elapsed_step"], expected)
            else:
                _check_continuity(info["elapsed_step"], prev_elapsed, prev_done)
            np.testing.assert_array_equal(info["env_id"], np.arange(pool.num_envs))
            prev_elapsed, prev_done = info["elapsed_step"], terminated | truncated
        assert pool.restarts == [(pool.nodes[1], list(range(n, 2 * n)))]
        described = pool.actor_info()
        assert described[1]["node_id"] == pool.nodes[1] and described[1]["pid"] != old_pid
        assert _pool_actors_by_node() == {node: 1 for node in pool.nodes}
    finally:
        pool.close()


def test_restart_async_continues_nothing_lost(cluster: Cluster) -> None:
    n, batch = 4, 2
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, batch_size_per_node=batch, seed=0, restart=True)
    rng = np.random.default_rng(2)
    try:
        prev_elapsed, prev_done, sent, received = _start_async(pool, rng, 300)
        _kill(pool.actors[0])
        resets_allowed = np.zeros(pool.num_envs, dtype=bool)
        resets_allowed[:n] = True
        before = received[:n].copy()
        # The other nodes' batches go on meanwhile; how soon Ray reports the death depends on the
        # machine's load (once, not within 600 batches): go on until node 0 is back and its envs
        # have been stepped again, for at most 120 s.
        deadline = time.monotonic() + 120
        while not (received[:n] > before + 1).all() and time.monotonic() < deadline:
            _run_async(pool, rng, 100, prev_elapsed, prev_done, sent, received, resets_allowed)
        assert (received[:n] > before + 1).all()  # node 0 came back and its envs were stepped again
        _drain(pool, received, prev_done)
        assert pool.restarts == [(pool.nodes[0], list(range(n)))]
        # Each envs' lost step was replaced by one reset row: still one row per send, plus the first.
        np.testing.assert_array_equal(received, sent + 1)
    finally:
        pool.close()


def test_env_error_names_global_env_ids(cluster: Cluster) -> None:
    """An exception inside an env on a node reaches the driver as EnvError with global env ids."""
    pool = make_distributed("GuessingGame-v0", num_envs_per_node=2, seed=0, max_num_players=1, raise_on_step=2)
    try:
        pool.reset()
        action = np.zeros((pool.num_envs, 1), dtype=np.int64)
        pool.step(action)
        with pytest.raises(EnvError) as excinfo:
            pool.step(action)
        assert sorted(excinfo.value.env_ids) == list(range(pool.num_envs))
        assert "raised on step 2" in str(excinfo.value)
        # The batch is not lost: merged in global env order, as step returns it.
        np.testing.assert_array_equal(excinfo.value.result[4]["env_id"], np.arange(pool.num_envs))
        _, _, _, _, info = pool.step(action)  # the failed envs start new episodes
        np.testing.assert_array_equal(info["elapsed_step"], 0)
    finally:
        pool.close()


def test_env_faults_async_nothing_lost(cluster: Cluster) -> None:
    """Async across the nodes, Faulty-v0 with each node's local env 1 (global 1, 3, 5) raising on
    its 2nd step and on its 2nd reset: each error comes with its node's batch, which is received all
    the same (its envs, the failed one too, can be sent again at once), and every env sent comes
    back exactly once."""
    pool = make_distributed("Faulty-v0", num_envs_per_node=2, batch_size_per_node=1, seed=0, fault_env_id=1,
                            raise_on_step=2, raise_on_reset=2, episode_length=3)
    try:
        n = pool.num_envs
        sent = np.ones(n, dtype=int)  # the resets
        received = np.zeros(n, dtype=int)
        errors: list[tuple[int, str]] = []

        def recv() -> np.ndarray:
            try:
                obs, _, _, _, info = pool.recv(timeout=TIMEOUT)
            except EnvError as e:
                errors.extend(e.errors)
                obs, reward, terminated, _, info = e.result
                assert set(e.env_ids) <= set(info["env_id"].tolist())  # named by global id, in its batch
                for k in np.flatnonzero(np.isin(info["env_id"], e.env_ids)):
                    np.testing.assert_array_equal(obs[k], [0, 0, 0])  # the failed row
                    assert reward[k] == 0 and not terminated[k]
            ids = info["env_id"].copy()
            received[ids] += 1
            return ids

        pool.async_reset()
        # At least 60 batches, and until each faulty env has come back 10 times (its two faults
        # come within its first 5): a node the scheduler holds back for a few ms gets few of the
        # first 60 batches when the others answer in ~0.2 ms each.
        batches = 0
        while batches < 60 or received[[1, 3, 5]].min() < 10:
            assert batches < 10_000, received
            ids = recv()
            pool.send(np.ones(len(ids), dtype=np.int64), ids)
            sent[ids] += 1
            batches += 1
        for _ in range(n):  # what is still in flight
            recv()
        np.testing.assert_array_equal(received, sent)
        assert sorted(env_id for env_id, _ in errors) == [1, 1, 3, 3, 5, 5]
        assert sum("Step() raised" in message for _, message in errors) == 3
    finally:
        pool.close()


def test_env_fault_in_a_sync_reset_has_the_reset_form(cluster: Cluster) -> None:
    pool = make_distributed("Faulty-v0", num_envs_per_node=2, seed=0, fault_env_id=0, raise_on_reset=1)
    try:
        with pytest.raises(EnvError) as excinfo:
            pool.reset()
        assert sorted(excinfo.value.env_ids) == [0, 2, 4]  # each node's local env 0, by global id
        obs, info = excinfo.value.result  # reset's form, merged in global order
        np.testing.assert_array_equal(info["env_id"], np.arange(pool.num_envs))
        np.testing.assert_array_equal(obs, [[0, 0, 0], [1, 0, -1]] * NUM_NODES)
        obs, _, _, _, info = pool.step(np.ones(pool.num_envs, dtype=np.int64))
        np.testing.assert_array_equal(obs, [[2, 0, -1], [1, 1, 1]] * NUM_NODES)  # the failed envs reset
    finally:
        pool.close()


def test_async_step_that_cannot_fill_a_batch_raises_before_queuing(cluster: Cluster) -> None:
    """An async step() of too few envs of any one node once queued them and then raised from
    recv(), leaving them in flight; and a send() to two nodes whose second part was refused had
    already queued the first. Both now raise before anything is queued."""
    n, batch = 4, 2
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, batch_size_per_node=batch, seed=0)
    try:
        pool.async_reset()
        rows = [pool.recv(timeout=TIMEOUT)[4]["env_id"] for _ in range(NUM_NODES * n // batch)]
        assert sorted(np.concatenate(rows)) == list(range(pool.num_envs))  # nothing in flight now
        # One env on each of two nodes: neither node can fill a batch of 2.
        ids = np.array([0, n])
        with pytest.raises(ValueError, match="cannot fill a batch"):
            pool.step(np.zeros(2, dtype=np.int64), ids)
        # Nothing was queued: the same ids can be sent now, and then they fill no batch either.
        pool.send(np.zeros(2, dtype=np.int64), ids)
        with pytest.raises(RuntimeError, match="would wait for ever"):
            pool.recv(timeout=TIMEOUT)
        # A send to two nodes whose second part is refused (env n has a step in flight) queues
        # nothing on the first node either.
        with pytest.raises(ValueError, match="in flight"):
            pool.send(np.zeros(2, dtype=np.int64), np.array([1, n]))
        # Env 1 was not queued: with env 0 it fills node 0's batch, and exactly those two return.
        obs, _, _, _, info = pool.step(np.zeros(1, dtype=np.int64), np.array([1]))
        assert sorted(info["env_id"]) == [0, 1] and obs.shape == (batch, 4)
    finally:
        pool.close()


# --- rollouts on the node ---
def _threshold_policy_class():
    """A NumPy policy class defined here so that cloudpickle ships it by value (the workers cannot
    import this test module): push right when the pole angle is past ``threshold``, and report a
    'value' extra (the cart position)."""

    class ThresholdPolicy:
        def __init__(self, threshold: float) -> None:
            self.threshold = threshold

        def set_weights(self, threshold: float) -> None:
            self.threshold = threshold

        def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
            return (obs[:, 2] > self.threshold).astype(np.int64), {"value": obs[:, 0].astype(np.float32)}

    return ThresholdPolicy


def _local_rollout(env, policy, obs, num_steps: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """What a rollout must return, computed by stepping a local pool (time-major, then transposed)."""
    rows: dict[str, list] = {k: [] for k in ("obs", "actions", "value", "rewards", "terminated", "truncated")}
    for _ in range(num_steps):
        actions, extras = policy(obs)
        rows["obs"].append(obs)
        rows["actions"].append(actions)
        rows["value"].append(extras["value"])
        obs, reward, terminated, truncated, _ = env.step(actions)
        rows["rewards"].append(reward)
        rows["terminated"].append(terminated)
        rows["truncated"].append(truncated)
    return {k: np.swapaxes(np.stack(v), 0, 1) for k, v in rows.items()}, obs


def test_rollout_on_the_nodes_matches_local_stepping(cluster: Cluster) -> None:
    """A rollout of K steps with the node's policy is, row for row, what one local pool of all the
    envs gives with the same policy on the driver; the next rollout (and step) go on from there;
    new weights reach every node (one ray.put) and apply from the next rollout."""
    n, k = 4, 60
    policy_class = _threshold_policy_class()
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=3)
    local = parallel_pool.make("CartPole-v1", num_envs=n * NUM_NODES, seed=3)
    try:
        obs, _ = pool.reset()
        local_obs, _ = local.reset()
        pool.set_policy(policy_class(0.0))
        lengths: list[np.ndarray] = []
        for threshold in (0.0, 0.0, 0.05):
            if threshold:
                pool.set_weights(threshold)
            segment, episodes = pool.rollout(k)
            expected, local_obs = _local_rollout(local, policy_class(threshold), local_obs, k)
            assert segment["obs"].shape == (pool.num_envs, k, 4)
            for key, value in expected.items():
                np.testing.assert_array_equal(segment[key], value, err_msg=key)
            np.testing.assert_array_equal(segment["next_obs"], local_obs)
            np.testing.assert_array_equal(segment["env_id"], np.arange(pool.num_envs))
            # Episodes: next-step autoreset, so an episode's steps are the rows up to its done.
            done = expected["terminated"] | expected["truncated"]
            assert sorted(episodes["env_id"].tolist()) == sorted(np.nonzero(done)[0].tolist())
            assert (episodes["return"] == episodes["length"]).all()  # CartPole: reward 1 per step
            lengths.append(episodes["length"])
        assert sum(len(x) for x in lengths) > 0  # some episodes ended, so the counting was exercised
        # A sync step goes on from the rollout's last observation.
        actions = np.ones(pool.num_envs, dtype=np.int64)
        obs, *_ = pool.step(actions)
        np.testing.assert_array_equal(obs, local.step(actions)[0])
    finally:
        pool.close()
        local.close()


def test_episodes_span_steps_and_rollouts(cluster: Cluster) -> None:
    """An episode that starts in sync steps and ends in a rollout is reported whole: the node counts
    each data-plane step's episodes, and the rollout goes on from those counts. Each episode's env
    and length are what one local pool with the same actions gives (``elapsed_step`` at the done
    row), and its return its length (CartPole pays 1 per step)."""
    n, steps, k = 2, 30, 120
    policy = _threshold_policy_class()(0.0)
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=5)
    local = parallel_pool.make("CartPole-v1", num_envs=n * NUM_NODES, seed=5)
    try:
        pool.reset()
        obs, _ = local.reset()
        for _ in range(steps):  # through the data plane, as sync steps
            actions = policy(obs)[0]
            stepped = pool.step(actions)[0]
            obs = local.step(actions)[0]
            np.testing.assert_array_equal(stepped, obs)
        pool.set_policy(policy)
        segment, episodes = pool.rollout(k)
        expected: list[tuple[int, int]] = []
        spans = False  # an episode that ended in the rollout and began before it
        for t in range(k):
            obs, _, terminated, truncated, info = local.step(policy(obs)[0])
            for i in np.flatnonzero(terminated | truncated):
                expected.append((int(i), int(info["elapsed_step"][i])))
                spans |= int(info["elapsed_step"][i]) > t + 1
        assert spans and expected
        assert sorted(zip(episodes["env_id"].tolist(), episodes["length"].tolist())) == sorted(expected)
        np.testing.assert_array_equal(episodes["return"], episodes["length"])
        np.testing.assert_array_equal(segment["next_obs"], obs)
    finally:
        pool.close()
        local.close()


def test_rollout_with_a_torch_policy(cluster: Cluster) -> None:
    """A torch module is called on tensors (no gradients); load_state_dict takes new weights."""
    import torch  # the rllib extra's (the test extra installs it)

    class TorchPolicy(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 2)

        def forward(self, obs):
            return self.layer(obs.float()).argmax(dim=1)

    module = TorchPolicy()
    pool = make_distributed("CartPole-v1", num_envs_per_node=2, seed=0)
    try:
        pool.reset()
        pool.set_policy(module)
        for _ in range(2):
            segment, _ = pool.rollout(8)
            with torch.no_grad():
                expected = module.layer(torch.as_tensor(segment["obs"]).float()).argmax(dim=-1).numpy()
            np.testing.assert_array_equal(segment["actions"], expected)
            with torch.no_grad():
                module.layer.weight.neg_()  # other weights: other actions
            pool.set_weights(module.state_dict())
    finally:
        pool.close()


def test_rollout_send_recv_and_its_errors(cluster: Cluster) -> None:
    pool = make_distributed("CartPole-v1", num_envs_per_node=2, seed=0)
    try:
        with pytest.raises(ValueError, match="set_policy"):
            pool.rollout(4)
        pool.set_policy(lambda obs: np.zeros(len(obs), dtype=np.int64))
        with pytest.raises(ValueError, match=r"reset\(\) before the first rollout"):
            pool.rollout(4)
        pool.reset()
        pool.send_rollout(5)
        with pytest.raises(ValueError, match="rollout is in flight"):
            pool.step(np.zeros(pool.num_envs, dtype=np.int64))
        segment, _ = pool.recv_rollout()
        assert segment["actions"].shape == (pool.num_envs, 5)
        with pytest.raises(RuntimeError, match="no rollout in flight"):
            pool.recv_rollout()
        for bad in (0, -1, True, 2.5):
            with pytest.raises(ValueError, match="num_steps"):
                pool.send_rollout(bad)
        # Two in flight (double buffering): the segments of rollouts one after the other, in order.
        k = 40
        pool.set_policy(_threshold_policy_class()(0.0))
        obs, _ = pool.reset(seed=11)
        local = parallel_pool.make("CartPole-v1", num_envs=pool.num_envs)
        local_obs, _ = local.reset(seed=11)
        np.testing.assert_array_equal(obs, local_obs)
        pool.send_rollout(k)
        pool.send_rollout(k)
        with pytest.raises(ValueError, match="rollout is in flight"):
            pool.send_rollout(k)
        with pytest.raises(ValueError, match="rollout is in flight"):
            pool.step(np.zeros(pool.num_envs, dtype=np.int64))
        buffered = [pool.recv_rollout()]
        pool.send_rollout(k)
        buffered += [pool.recv_rollout(), pool.recv_rollout()]
        ended = 0
        for segment, episodes in buffered:
            expected, local_obs = _local_rollout(local, _threshold_policy_class()(0.0), local_obs, k)
            for key, value in expected.items():
                np.testing.assert_array_equal(segment[key], value, err_msg=key)
            np.testing.assert_array_equal(segment["next_obs"], local_obs)
            done = expected["terminated"] | expected["truncated"]
            assert sorted(episodes["env_id"].tolist()) == sorted(np.nonzero(done)[0].tolist())
            ended += len(episodes["env_id"])
        local.close()
        assert ended > 0  # episodes ended: counted across double-buffered segments too
        # A key the policy no longer returns does not come back from the last segment's arrays.
        pool.set_policy(lambda obs: np.zeros(len(obs), dtype=np.int64))
        segment, _ = pool.rollout(k)
        assert "value" not in segment and (segment["actions"] == 0).all()
    finally:
        pool.close()
    async_pool = make_distributed("CartPole-v1", num_envs_per_node=2, batch_size_per_node=1, seed=0)
    try:
        with pytest.raises(ValueError, match="sync pool"):
            async_pool.set_policy(lambda obs: obs)
    finally:
        async_pool.close()


def test_rollout_env_error_keeps_the_segment(cluster: Cluster) -> None:
    """An env raising during a rollout: EnvError naming it by global id, with the whole segment;
    the env goes on with a new episode."""
    pool = make_distributed("Faulty-v0", num_envs_per_node=2, seed=0, fault_env_id=1, raise_on_step=3,
                            episode_length=100)
    try:
        pool.reset()
        pool.set_policy(lambda obs: np.ones(len(obs), dtype=np.int64))
        with pytest.raises(EnvError) as excinfo:
            pool.rollout(6)
        assert sorted(excinfo.value.env_ids) == [1, 3, 5]
        segment, episodes = excinfo.value.result
        assert segment["obs"].shape[:2] == (pool.num_envs, 6)
        np.testing.assert_array_equal(segment["env_id"], np.arange(pool.num_envs))
        segment, _ = pool.rollout(2)  # the pool goes on
        assert segment["rewards"].shape == (pool.num_envs, 2)
    finally:
        pool.close()


def test_rollout_restart_and_node_failure(cluster: Cluster) -> None:
    """A node killed between rollouts: with restart, the next rollout has its envs from their reset
    (with the policy and weights it had); without, NodeFailedError."""
    n = 2
    policy_class = _threshold_policy_class()
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=0, restart=True)
    try:
        pool.reset()
        pool.set_policy(policy_class(0.0))
        pool.set_weights(1.0)  # never past: always push left
        pool.rollout(10)
        _kill(pool.actors[1])
        segment, _ = pool.rollout(10)
        assert pool.restarts == [(pool.nodes[1], [2, 3])]
        local = parallel_pool.make("CartPole-v1", num_envs=n, seed=n)  # node 1's envs: seeds 2, 3
        np.testing.assert_array_equal(segment["obs"][n:2 * n, 0], local.reset()[0])  # from their reset
        assert (segment["actions"] == 0).all()  # the restarted node has the weights too
        local.close()
        # Killed with two rollouts sent: the first has its envs from their reset, the second goes
        # on from the first's end; one restart more, nothing else lost.
        _kill(pool.actors[0])
        pool.send_rollout(10)
        pool.send_rollout(10)
        first, _ = pool.recv_rollout()
        second, _ = pool.recv_rollout()
        assert pool.restarts == [(pool.nodes[1], [2, 3]), (pool.nodes[0], [0, 1])]
        local = parallel_pool.make("CartPole-v1", num_envs=n, seed=0)  # node 0's envs: seeds 0, 1
        np.testing.assert_array_equal(first["obs"][:n, 0], local.reset()[0])
        local.close()
        for part in (first, second):
            assert part["obs"].shape == (pool.num_envs, 10, 4) and (part["actions"] == 0).all()
        np.testing.assert_array_equal(second["obs"][:, 0], first["next_obs"])
    finally:
        pool.close()
    pool = make_distributed("CartPole-v1", num_envs_per_node=n, seed=0)
    try:
        pool.reset()
        pool.set_policy(policy_class(0.0))
        _kill(pool.actors[2])
        with pytest.raises(NodeFailedError, match=pool.nodes[2]):
            pool.rollout(4)
    finally:
        pool.close()
    assert _pool_actors_after_close() == {}


def test_removed_node_is_reported(cluster: Cluster) -> None:
    """A node removed from the cluster (its raylet and workers stopped, not only the actor killed):
    NodeFailedError names it, in a sync call (the path rollouts share) and an async one, and with
    restart=True too (a node that left cannot hold a new pool)."""
    for restart, mode in [(False, "sync"), (True, "async")]:
        extra = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(timeout=TIMEOUT)
        async_kwargs = {"batch_size_per_node": 1} if mode == "async" else {}
        pool = make_distributed("CartPole-v1", num_envs_per_node=2, seed=0, restart=restart, **async_kwargs)
        try:
            assert len(pool.nodes) == NUM_NODES + 1
            victim = pool.nodes.index(extra.node_id)
            if mode == "async":
                pool.async_reset()
            else:
                pool.reset()
            cluster.remove_node(extra)
            deadline = time.monotonic() + TIMEOUT
            with pytest.raises(NodeFailedError) as excinfo:
                while time.monotonic() < deadline:  # until the driver sees the node go
                    if mode == "async":
                        _, _, _, _, info = pool.recv(timeout=TIMEOUT)
                        pool.send(np.zeros(len(info["env_id"]), dtype=np.int64), info["env_id"])
                    else:
                        pool.step(np.zeros(pool.num_envs, dtype=np.int64))
            assert excinfo.value.node_id == extra.node_id
            assert excinfo.value.env_ids == [2 * victim, 2 * victim + 1]
            if restart:
                assert "no longer alive" in str(excinfo.value) or "restarting it failed" in str(excinfo.value)
        finally:
            pool.close()
    assert _alive_nodes() == {n["NodeID"] for n in ray.nodes() if n["Alive"]} and len(_alive_nodes()) == NUM_NODES


# --- the examples: PPO collecting on every node, RLlib env runners on every node ---
def _load_example(name: str):
    """An example script as a module; cloudpickle ships its classes by value (the workers cannot
    import it)."""
    import importlib.util

    from ray import cloudpickle  # Ray's own copy: the one that pickles the policy

    path = Path(__file__).resolve().parents[2] / "examples" / name
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    cloudpickle.register_pickle_by_value(module)
    return module


def test_ppo_example_collects_on_every_node(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    """The CleanRL-style PPO of examples/ppo_ray.py, a smoke run: 3 iterations of rollouts on
    the 3 nodes (a torch agent on each), updates, weights broadcast."""
    ppo = _load_example("ppo_ray.py")
    ppo.main(["--num-envs-per-node", "2", "--num-steps", "16", "--total-timesteps", str(3 * 6 * 16),
              "--update-epochs", "1"])
    out = capsys.readouterr().out
    assert f"{NUM_NODES} nodes x 2 envs; 96 steps per iteration" in out
    assert "step 288: mean episode return" in out


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_ppo_example_reaches_475_on_cartpole(cluster: Cluster) -> None:
    ppo = _load_example("ppo_ray.py")
    best = ppo.main(["--target", "475", "--total-timesteps", "1000000"])
    assert best >= 475, f"PPO on the cluster reached a mean return of only {best}"


def test_rllib_config_for_every_node(cluster: Cluster) -> None:
    """env_runners_on_every_node asks for one env runner per alive node, each for a whole node's
    CPUs (so no node can hold two), each a VectorEnv over one native pool."""
    from ray.rllib.algorithms.ppo import PPOConfig

    from parallel_pool.integrations.rllib import VECTORIZE_MODE, env_runners_on_every_node

    config = env_runners_on_every_node(PPOConfig(), num_envs_per_env_runner=4)
    assert config.num_env_runners == NUM_NODES
    assert config.num_cpus_per_env_runner == 1  # each node of this cluster has one CPU
    assert config.num_envs_per_env_runner == 4 and config.gym_env_vectorize_mode == VECTORIZE_MODE
    assert env_runners_on_every_node(PPOConfig(), 4, cpus_per_node=3).num_cpus_per_env_runner == 3


@pytest.mark.slow  # building the algorithm starts a runner process per node: ~40 s here
def test_rllib_env_runners_on_every_node(cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """env_runners_on_every_node: one RLlib env runner per node (each asks for a whole node's
    CPUs), each stepping one native pool."""
    import ray.tune.trainable.trainable as trainable_module
    from ray.rllib.algorithms.ppo import PPOConfig

    from parallel_pool.integrations.rllib import env_runners_on_every_node, register

    monkeypatch.setattr(trainable_module, "DEFAULT_STORAGE_PATH", str(tmp_path / "ray_results"))
    config = env_runners_on_every_node(PPOConfig().environment(register("CartPole-v1")), num_envs_per_env_runner=4)
    config = config.training(train_batch_size_per_learner=600, minibatch_size=200, num_epochs=1).debugging(seed=0)
    algo = config.build_algo()
    try:
        placed = algo.env_runner_group.foreach_env_runner(
            lambda runner: (ray.get_runtime_context().get_node_id(), type(runner.env.unwrapped).__name__,
                            runner.env.unwrapped.num_envs),
            local_env_runner=False,
        )
        assert sorted(node for node, _, _ in placed) == sorted(_alive_nodes())  # one on each node
        assert {(kind, num) for _, kind, num in placed} == {("ParallelPoolVectorEnv", 4)}
        # Each samples from its pool (training through the plug-in is test_integration_rllib's).
        sampled = algo.env_runner_group.foreach_env_runner(
            lambda runner: sum(len(episode) for episode in runner.sample(num_timesteps=40)), local_env_runner=False
        )
        assert len(sampled) == NUM_NODES and all(steps >= 40 for steps in sampled)
    finally:
        algo.stop()


def test_pool_threads_run_at_nice_0(cluster: Cluster) -> None:
    """Ray starts its workers at nice 15, where a pool would get only the CPU that nice-0 work on
    its node leaves (on the head node: the driver, the learner): the pool runs at nice 0 (checked
    on the data-plane thread, which steps the envs in a sync pool) unless niceness=None keeps Ray's."""

    def niceness_of_pool_threads(actor) -> list[int]:
        threads = [actor._server.native_id]  # the data-plane thread
        threads += [int(t) for t in os.listdir("/proc/self/task") if int(t) > actor._server.native_id]
        return [os.getpriority(os.PRIO_PROCESS, t) for t in threads]

    for niceness, expected in [(0, 0), (None, 15)]:
        pool = make_distributed("CartPole-v1", num_envs_per_node=2, seed=0, niceness=niceness)
        try:
            values = ray.get(pool.actors[0].__ray_call__.remote(niceness_of_pool_threads), timeout=TIMEOUT)
            assert values and set(values) == {expected}, values
            pool.reset()  # and the pool works
        finally:
            pool.close()
