"""The data plane between the driver and a node's pool actor: one TCP stream per node, one frame per
batch, every NumPy array of the batch sent as raw bytes into one contiguous receive buffer.

Why not Ray's actor calls: measured on this machine (2 Ray nodes of a ``ray.cluster_utils.Cluster``),
an actor call that does nothing takes 0.65-0.9 ms and one returning 226 KB (8 Pong frames stacks)
6.6 ms (past 100 KB a return goes through the object store, node to node), where this stream takes
0.03 ms and 0.13 ms. Ray still places the actors, reports their deaths, and carries what is sent
once (the policy, its weights: ``ray.put`` once per update).

A frame is a 24-byte prefix ``(kind, skeleton_len, extra_len, data_len)``, the *skeleton* (the
pickled structure of the message with every numeric array replaced by a ``Slot`` naming its dtype
and shape), the *extra* (a pickled small object, or nothing) and the data: each array's bytes,
each padded to 8 bytes. Two batches of the same task have the same skeleton bytes, which is what
lets the driver receive every node's rows straight into the merged arrays (``read_frame``'s
``into``). The peer is authenticated by a token the actor hands the driver through Ray; a frame
comes only from that peer, so unpickling it trusts what Ray's own calls would.
"""

from __future__ import annotations

import math
import pickle
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:  # the native data plane (native/python/dataplane.cc); the Python one below is its reference
    from parallel_pool._native import dataplane as _native_dataplane

    _dataplane: Any = _native_dataplane
except ImportError:  # pragma: no cover - the package is always built with it
    _dataplane = None

__all__ = ["Frame", "Slot", "decode", "encode", "read_frame", "send_frame", "send_native"]

_PREFIX = struct.Struct("<IIIQxxxx")  # kind, skeleton length, extra length, data length
_ALIGN = 8  # every array starts 8-byte aligned in the receive buffer: its views need no copy
_PAD = bytes(_ALIGN)
# sendmsg takes at most IOV_MAX (1024 on Linux) pieces per call; a frame of more is sent in parts.
_MAX_PIECES = 512


@dataclass(frozen=True)
class Slot:
    """An array of the message, sent as raw bytes: which one (``index``), its dtype and shape."""

    index: int
    dtype: str
    shape: tuple[int, ...]
    # Computed once when the slot is made (and carried in its pickle): every frame of a task reads
    # it for each of its arrays, and np.prod per read added up to a large part of a frame's cost.
    nbytes: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nbytes", np.dtype(self.dtype).itemsize * math.prod(self.shape))


@dataclass
class Frame:
    """A received frame: ``kind``, the message (arrays viewing one buffer), the extra object."""

    kind: int
    message: Any
    extra: Any
    skeleton: bytes


def _padded(nbytes: int) -> int:
    return (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN


def encode(message: Any) -> tuple[bytes, list[np.ndarray]]:
    """``(skeleton bytes, arrays)``: the message's structure (tuples, lists, dicts) with its
    numeric arrays replaced by ``Slot``s, and those arrays in slot order. Object arrays, scalars and
    anything else stay in the skeleton (pickled)."""
    arrays: list[np.ndarray] = []
    cacheable = True

    def strip(value: Any) -> Any:
        nonlocal cacheable
        if isinstance(value, np.ndarray) and value.dtype != object:
            # (np.ascontiguousarray would make a 0-d array 1-d: only a strided one is copied)
            array = value if value.flags.c_contiguous else np.ascontiguousarray(value)
            arrays.append(array)
            return Slot(len(arrays) - 1, array.dtype.str, array.shape)
        if isinstance(value, tuple):
            return tuple(strip(v) for v in value)
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        if value is not None:
            cacheable = False  # a value, not only structure: pickled each time
        return value

    tree = strip(message)
    if not cacheable:
        return pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL), arrays
    # A task's batches repeat one structure: its skeleton is pickled once (the key is cheap to
    # build and hash, the pickling is not).
    key = _signature(tree)
    skeleton = _encoded.get(key)
    if skeleton is None:
        skeleton = pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL)
        _remember(_encoded, key, skeleton)
    return skeleton, arrays


# Skeletons already pickled (by structure) and unpickled (by bytes), a few dozen at most.
_encoded: dict[Any, bytes] = {}
_decoded: dict[bytes, _Layout] = {}
_encoded_by_key: dict[bytes, bytes] = {}  # the native walk's structure key -> skeleton
_CACHE_SIZE = 64


def _remember(cache: dict, key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value


def _signature(tree: Any) -> Any:
    if isinstance(tree, Slot):
        return (tree.dtype, tree.shape)
    if isinstance(tree, tuple):
        return ("t", *(_signature(v) for v in tree))
    if isinstance(tree, list):
        return ("l", *(_signature(v) for v in tree))
    if isinstance(tree, dict):
        return ("d", *((k, _signature(v)) for k, v in tree.items()))
    return None


@dataclass(frozen=True)
class _Layout:
    """What a reader needs of a skeleton, worked out once per skeleton: the unpickled tree, its
    slots (in index order) and, for the native calls, their dtypes, shapes and byte counts. Every
    frame of a task has the same skeleton, so each frame costs one dictionary lookup here (on the
    driver each further Python call costs a few us in the caches the nodes' env steps left cold)."""

    tree: Any
    slots: list[Slot]
    dtypes: list[np.dtype]
    shapes: list[tuple[int, ...]]
    sizes: list[int]


def _layout(skeleton: bytes) -> _Layout:
    """The skeleton's layout, cached by the bytes (unless they are long: a skeleton that carries
    values, not only structure, may differ every frame)."""
    layout = _decoded.get(skeleton)
    if layout is None:
        tree = pickle.loads(skeleton)
        found = slots(tree)
        layout = _Layout(tree, found, [np.dtype(slot.dtype) for slot in found], [slot.shape for slot in found],
                         [slot.nbytes for slot in found])
        if len(skeleton) < 65536:
            _remember(_decoded, skeleton, layout)
    return layout


def parse_skeleton(skeleton: bytes) -> tuple[Any, list[Slot]]:
    """The unpickled skeleton and its slots (in index order), cached by the bytes."""
    layout = _layout(skeleton)
    return layout.tree, layout.slots


def decode(skeleton: Any, arrays: list[np.ndarray]) -> Any:
    """The message of ``skeleton`` (unpickled) with each ``Slot`` replaced by its array."""
    if _dataplane is not None:  # the same walk in C++: in Python it is a dozen calls per batch
        return _dataplane.decode(skeleton, list(arrays), Slot)
    return _decode(skeleton, arrays)


def _decode(skeleton: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(skeleton, Slot):
        return arrays[skeleton.index]
    if isinstance(skeleton, tuple):
        return tuple(_decode(v, arrays) for v in skeleton)
    if isinstance(skeleton, list):
        return [_decode(v, arrays) for v in skeleton]
    if isinstance(skeleton, dict):
        return {k: _decode(v, arrays) for k, v in skeleton.items()}
    return skeleton


def slots(skeleton: Any) -> list[Slot]:
    """The ``Slot``s of an unpickled skeleton, in index order."""
    found: list[Slot] = []

    def walk(value: Any) -> None:
        if isinstance(value, Slot):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(skeleton)
    return sorted(found, key=lambda s: s.index)


def send_frame(sock: socket.socket, kind: int, message: Any = None, extra: Any = None) -> None:
    """Sends one frame; the arrays go from their own memory (``sendmsg``), not through a copy."""
    if _dataplane is not None:
        send_native(sock.fileno(), _timeout(sock), kind, message, extra)
        return
    extra_bytes = b"" if extra is None else pickle.dumps(extra, protocol=pickle.HIGHEST_PROTOCOL)
    skeleton, arrays = encode(message)
    pieces: list[Any] = [b"", skeleton, extra_bytes]
    data_len = 0
    for array in arrays:
        view = array.reshape(-1).view(np.uint8).data if array.nbytes else b""
        pieces.append(view)
        pad = _padded(array.nbytes) - array.nbytes
        if pad:
            pieces.append(_PAD[:pad])
        data_len += _padded(array.nbytes)
    pieces[0] = _PREFIX.pack(kind, len(skeleton), len(extra_bytes), data_len)
    _send_pieces(sock, [p for p in pieces if len(p)])


def send_native(fd: int, timeout: float, kind: int, message: Any = None, extra: Any = None,
                counter: Any = None) -> None:
    """``send_frame`` through the native data plane (``dataplane.send_message``: the message walked, its
    skeleton taken from this module's cache, every piece sent, in one call) on a raw fd; ``timeout``
    as ``_timeout`` gives it. ``counter``: an object whose ``owed`` counts the reply, in the same
    call (a driver's link), or None."""
    _dataplane.send_message(fd, timeout, kind, message, extra, _encoded_by_key, _CACHE_SIZE, encode, counter)


def _timeout(sock: socket.socket) -> float:
    """The socket's timeout for the native calls: per call without progress, -1 for none."""
    timeout = sock.gettimeout()
    return -1.0 if timeout is None else timeout


def _send_pieces(sock: socket.socket, pieces: list[Any]) -> None:
    views = [memoryview(p).cast("B") for p in pieces]
    while views:
        sent = sock.sendmsg(views[:_MAX_PIECES])
        while sent:
            if sent >= len(views[0]):
                sent -= len(views[0])
                views.pop(0)
            else:
                views[0] = views[0][sent:]
                sent = 0


def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ConnectionResetError("the peer closed the connection")
        got += n


def _recv_exact_many(sock: socket.socket, views: list[memoryview]) -> None:
    """Fills ``views`` in order from the stream: one ``recvmsg_into`` (a scatter read) per arrival."""
    views = [v for v in views if len(v)]
    while views:
        n = sock.recvmsg_into(views[:_MAX_PIECES])[0]
        if n == 0:
            raise ConnectionResetError("the peer closed the connection")
        while n:
            if n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            else:
                views[0] = views[0][n:]
                n = 0


# ``into(skeleton bytes, slots)``: a writable byte view per slot (``slot.nbytes`` long) to receive
# that array into (the merged arrays of a sync step), or ``(targets, offsets)`` (slot ``i`` into
# ``targets[i]`` from byte ``offsets[i]``), or None to receive the frame into a buffer of its own.
Destinations = Callable[[bytes, list[Slot]], "list[memoryview] | tuple[list[Any], list[int]] | None"]


def read_frame(sock: socket.socket, into: Destinations | None = None) -> Frame:
    """Reads one whole frame. Its arrays view one new contiguous buffer (no copy after the socket),
    or, when ``into`` gives destinations, are received there (``message`` is then None: the
    caller, which owns the destinations, builds it). ``into`` may also return ``(targets,
    offsets)``: slot ``i`` is received into ``targets[i]`` at byte ``offsets[i]`` (the native path's
    spelling of a row block, with no view made per array)."""
    if _dataplane is not None:
        return _read_frame_native(sock, into)
    prefix = bytearray(_PREFIX.size)
    _recv_exact(sock, memoryview(prefix))
    kind, skeleton_len, extra_len, data_len = _PREFIX.unpack(prefix)
    head = bytearray(skeleton_len + extra_len)
    buffer = None
    if into is None:
        # Nowhere to choose: the head and the data (the batch's one contiguous buffer) in one
        # scatter read, a system call fewer per frame.
        buffer = np.empty(data_len, dtype=np.uint8)
        _recv_exact_many(sock, [memoryview(head), buffer.data])
    else:
        _recv_exact(sock, memoryview(head))
    skeleton = bytes(head[:skeleton_len])
    extra = pickle.loads(head[skeleton_len:]) if extra_len else None
    tree, tree_slots = parse_skeleton(skeleton)
    targets = into(skeleton, tree_slots) if into is not None and tree_slots else None
    if targets is not None:
        if isinstance(targets, tuple):  # (targets, offsets)
            targets = [memoryview(t).cast("B")[o:o + slot.nbytes] for t, o, slot in zip(*targets, tree_slots)]
        pad = memoryview(bytearray(_ALIGN))
        views: list[memoryview] = []
        for target, slot in zip(targets, tree_slots):
            views.append(target)
            if _padded(slot.nbytes) > slot.nbytes:
                views.append(pad[: _padded(slot.nbytes) - slot.nbytes])
        _recv_exact_many(sock, views)
        return Frame(kind, None, extra, skeleton)
    if buffer is None:  # destinations were offered but not taken
        buffer = np.empty(data_len, dtype=np.uint8)
        if data_len:
            _recv_exact(sock, buffer.data)
    return Frame(kind, decode(tree, _views(buffer, tree_slots)), extra, skeleton)


def _views(buffer: np.ndarray, tree_slots: list[Slot]) -> list[np.ndarray]:
    """Each slot's array, viewing ``buffer`` (the frame's data) at its padded offset (the Python
    reference of ``_native_message``'s ``dataplane.views``)."""
    arrays, offset = [], 0
    for slot in tree_slots:
        arrays.append(buffer[offset:offset + slot.nbytes].view(np.dtype(slot.dtype)).reshape(slot.shape))
        offset += _padded(slot.nbytes)
    return arrays


def _read_frame_native(sock: socket.socket, into: Destinations | None) -> Frame:
    """``read_frame`` through the native calls: the prefix, then the head and the data in one
    scatter read (or, with ``into``, the head, then the data straight into the destinations)."""
    fd, timeout = sock.fileno(), _timeout(sock)
    if into is None:
        return frame_of(_dataplane.recv_frame(fd, timeout))
    kind, skeleton, extra_bytes, data_len = _dataplane.recv_head(fd, timeout)
    extra = pickle.loads(extra_bytes) if extra_bytes else None
    layout = _layout(skeleton)
    targets = into(skeleton, layout.slots) if layout.slots else None
    if targets is not None:
        if isinstance(targets, tuple):
            targets, offsets = targets
        else:
            offsets = [0] * len(targets)
        _dataplane.recv_into(fd, list(targets), offsets, layout.sizes, data_len, timeout)
        return Frame(kind, None, extra, skeleton)
    buffer = np.empty(data_len, dtype=np.uint8)
    if data_len:
        _dataplane.recv_into(fd, [buffer], [0], [data_len], data_len, timeout)
    return Frame(kind, _native_message(layout, buffer), extra, skeleton)


def frame_of(raw: tuple[int, bytes, bytes, np.ndarray]) -> Frame:
    """The ``Frame`` of a frame read whole (``dataplane.recv_frame``'s ``(kind, skeleton, extra bytes,
    data)``), decoded by ``dataplane.decode_raw`` (the Python steps: ``_layout``, ``_native_message``)."""
    kind, message, extra = _dataplane.decode_raw(raw, _decoded, _layout, Slot)
    return Frame(kind, message, extra, raw[1])


def _native_message(layout: _Layout, buffer: np.ndarray) -> Any:
    """The message of a frame whose data is ``buffer``: each slot's array viewing it (``dataplane.views``,
    one call for all the arrays rather than three NumPy calls each), put in the tree (``dataplane.decode``)."""
    arrays = _dataplane.views(buffer, layout.dtypes, layout.shapes) if layout.slots else []
    return _dataplane.decode(layout.tree, arrays, Slot)
