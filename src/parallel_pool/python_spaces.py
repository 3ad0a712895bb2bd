"""How a Python env's observations and actions travel between its worker process and the pool.

A fixed-size space (any nesting of ``Dict``/``Tuple`` over ``Box``, ``Discrete``, ``MultiDiscrete``
and ``MultiBinary``) is one engine field per leaf, written in place in shared memory by the worker;
a leaf whose dtype the engine's table lacks (``uint16``, ``float16``, ...) travels in a field of
the same item size and is viewed back as its own dtype. Any other space (``Text``, ``Graph``,
``Sequence``, ``OneOf``, a custom ``Space``, or a ``Dict``/``Tuple`` holding one) is pickled per env
into a byte row (a little-endian uint32 length, then the pickle), and a batch of them is built as
Gymnasium's ``concatenate`` builds it for ``batch_space(space, n)``.

Example:
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> layout = SpaceLayout(spaces.Dict({"a": spaces.Tuple((spaces.Discrete(3, dtype=np.int32),))}), "obs")
    >>> [(f["name"], f["dtype"]) for f in layout.fields]
    [('obs:a/0', 'int32')]
    >>> SpaceLayout(spaces.Text(8), "obs").pickled
    True
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import concatenate, create_empty_array, iterate

# The dtypes the engine's fields hold (native/core/dtype.h).
ENGINE_DTYPES = frozenset({"bool", "int8", "uint8", "int16", "int32", "int64", "float32", "float64"})
# A dtype the engine lacks rides in the signed integer field of its item size (the bytes are the same).
_CARRIERS: dict[int, np.dtype] = {size: np.dtype(f"int{8 * size}") for size in (1, 2, 4, 8)}
# The byte length that starts a pickled row (little-endian uint32).
PICKLE_HEADER = 4
# A pickled observation or action row holds at least this many bytes, and room for this many times
# a sampled value's pickle (Text, Sequence and Graph values vary in size).
PICKLE_MIN_BYTES = 4096
PICKLE_SAMPLE_FACTOR = 8
_FIXED_LEAVES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def is_fixed(space: spaces.Space) -> bool:
    """Whether every value of ``space`` has the same arrays (shapes and dtypes): a nesting of
    ``Dict``/``Tuple`` over ``Box``, ``Discrete``, ``MultiDiscrete``, ``MultiBinary``."""
    if isinstance(space, spaces.Dict):
        return all(is_fixed(sub) for sub in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return all(is_fixed(sub) for sub in space.spaces)
    return isinstance(space, _FIXED_LEAVES)


def field(name: str, dtype: np.dtype, shape: tuple[int, ...], space: str, low: list[float],
          high: list[float]) -> dict[str, Any]:
    """A native field dict (SpecToDict's form)."""
    # NaN actions are the env's to accept or refuse, as in Gymnasium: the pool does not check them.
    return {
        "name": name, "dtype": dtype.name, "shape": tuple(int(d) for d in shape), "space": space,
        "low": low, "high": high, "per_player": False, "allow_nan": True,
    }


def _bound(values: Any) -> list[float]:
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size and np.all(flat == flat[0]):
        return [float(flat[0])]
    return flat.tolist()


@dataclass(frozen=True)
class Leaf:
    """One array of a fixed-size space: where it sits in a value, its own dtype and shape, and its field."""

    path: tuple[Any, ...]  # Dict keys and Tuple indices from the root; () for a plain space
    dtype: np.dtype
    shape: tuple[int, ...]
    field: dict[str, Any]

    @property
    def carried(self) -> bool:
        """True when the field's dtype is not the leaf's own (the engine lacks it)."""
        return self.field["dtype"] != self.dtype.name


def _leaf(path: tuple[Any, ...], name: str, space: spaces.Space) -> Leaf:
    dtype = np.dtype(space.dtype)
    if isinstance(space, spaces.Discrete):
        shape: tuple[int, ...] = ()
        start = int(space.start)
        kind, low, high = "discrete", [float(start)], [float(start + int(space.n) - 1)]
    elif isinstance(space, spaces.Box):
        shape, kind, low, high = space.shape, "box", _bound(space.low), _bound(space.high)
    elif isinstance(space, spaces.MultiDiscrete):
        starts = np.broadcast_to(np.asarray(space.start, dtype=np.int64), space.shape)
        shape, kind = space.shape, "box"
        low, high = _bound(starts), _bound(starts + np.asarray(space.nvec, dtype=np.int64) - 1)
    else:
        assert isinstance(space, spaces.MultiBinary)
        shape = tuple(np.atleast_1d(np.asarray(space.n)).tolist())
        kind, low, high = "box", [0.0], [1.0]
    carrier: np.dtype | None = dtype if dtype.name in ENGINE_DTYPES else _CARRIERS.get(dtype.itemsize)
    if carrier is None:  # an item size with no integer of its own (float128): its bytes
        carrier, shape_in_field = np.dtype(np.uint8), (*shape, dtype.itemsize)
    else:
        shape_in_field = shape
    if carrier != dtype:
        # The engine checks a carried field as the carrier's numbers: no bounds, no range check.
        kind, low, high = "box", [], []
    return Leaf(path, dtype, tuple(int(d) for d in shape), field(name, carrier, shape_in_field, kind, low, high))


def _safe_key(key: Any) -> bool:
    # Field names are "<prefix>:<key>"; info names use "." for groups, nested paths use "/".
    return isinstance(key, str) and key != "" and not any(c in key for c in ":./#")


class SpaceLayout:
    """The engine fields that carry values of one Python env space (``prefix`` "obs" or "action"),
    and the functions that write, read, batch and unbatch its values.

    ``fields``: the native field dicts, in order. ``direct``: True when the fields themselves are
    the batch's value in the front-ends' usual form (one array, a flat dict of arrays keyed as the
    space, or a flat tuple), so no per-step Python work rebuilds it. ``pickled``: the whole value is
    pickled into one byte row (``pickle_bytes`` bytes after the length header).
    """

    def __init__(self, space: spaces.Space, prefix: str, pickle_bytes: int | None = None) -> None:
        self.space = space
        self.prefix = prefix
        self.pickled = not is_fixed(space)
        self.leaves: list[Leaf] = []
        self.pickle_bytes = 0
        if self.pickled:
            self.pickle_bytes = pickle_bytes if pickle_bytes is not None else default_pickle_bytes(space)
            self.fields = [field(prefix, np.dtype(np.uint8), (PICKLE_HEADER + self.pickle_bytes,), "box", [], [])]
            self.direct = False
            return
        self._collect(space, (), flat_names=_is_flat(space))
        names = [leaf.field["name"] for leaf in self.leaves]
        if len(set(names)) != len(names):  # keys that look like paths: number the leaves instead
            self.leaves = [Leaf(leaf.path, leaf.dtype, leaf.shape, {**leaf.field, "name": f"{prefix}:#{i}"})
                           for i, leaf in enumerate(self.leaves)]
        self.fields = [leaf.field for leaf in self.leaves]
        self.direct = _is_flat(space) and not any(leaf.carried for leaf in self.leaves)

    def _collect(self, space: spaces.Space, path: tuple[Any, ...], flat_names: bool) -> None:
        if isinstance(space, spaces.Dict):
            for key, sub in space.spaces.items():
                self._collect(sub, (*path, key), flat_names)
        elif isinstance(space, spaces.Tuple):
            for i, sub in enumerate(space.spaces):
                self._collect(sub, (*path, i), flat_names)
        else:
            if not path:
                name = self.prefix
            elif all(isinstance(k, int) or _safe_key(k) for k in path):
                name = f"{self.prefix}:" + "/".join(str(k) for k in path)
            else:
                name = f"{self.prefix}:#{len(self.leaves)}"
            self.leaves.append(_leaf(path, name, space))

    # --- the worker's side: one env's value in and out of its slot's views ---
    def writer(self, views: list[np.ndarray]) -> Callable[[Any], None]:
        """``write(value)``: one env's value into its slot (``views``: one per field, of the leaves'
        own dtypes and shapes, or the byte row)."""
        if self.pickled:
            row, room, what = views[0], self.pickle_bytes, self.prefix

            def write_pickled(value: Any) -> None:
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                if len(data) > room:
                    option = "obs_pickle" if what == "obs" else "action_pickle"
                    raise ValueError(f"the pickled {'observation' if what == 'obs' else 'action'} ({len(data)} bytes) "
                                     f"is larger than its row ({room} bytes); pass a larger {option}=")
                put_bytes(row, data)

            return write_pickled
        if len(self.leaves) == 1 and not self.leaves[0].path:
            only = views[0]

            def write_one(value: Any) -> None:
                only[...] = value

            return write_one
        pairs = [(leaf.path, view) for leaf, view in zip(self.leaves, views)]

        def write_leaves(value: Any) -> None:
            for path, view in pairs:
                item = value
                for key in path:
                    item = item[key]
                view[...] = item

        return write_leaves

    def reader(self, views: list[np.ndarray]) -> Callable[[], Any]:
        """``read()``: one env's value from its slot, as the space's own type (a scalar for a
        ``Discrete``, arrays copied out of the slot, dicts and tuples as the space nests them)."""
        if self.pickled:
            row = views[0]
            return lambda: unpickle_row(row)
        leaves = [(lambda v=view: v[()]) if view.shape == () else (lambda v=view: v.copy()) for view in views]
        return _assembler(self.space, leaves)

    # --- the parent's side ---
    def batch_reader(self, index: dict[str, int], prefix: str = "") -> Callable[[tuple], Any]:
        """``read(arrays)``: a batch's value from the arrays of one native result (``index``: field
        name -> position; ``prefix`` "final:" for the final observations), as Gymnasium batches the
        space."""
        if self.pickled:
            i, space = index[prefix + self.fields[0]["name"]], self.space
            return lambda arrays: unpickle_batch(space, arrays[i])
        getters = [_batch_getter(leaf, index[prefix + leaf.field["name"]]) for leaf in self.leaves]
        return lambda arrays: _assemble(self.space, iter([g(arrays) for g in getters]))

    def row_reader(self, index: dict[str, int], prefix: str = "") -> Callable[[tuple, int], Any]:
        """``read(arrays, row)``: one row's value (a single env's, as the env gave it)."""
        if self.pickled:
            i, space = index[prefix + self.fields[0]["name"]], self.space
            return lambda arrays, row: unpickle_row(arrays[i][row], space)
        getters = [_batch_getter(leaf, index[prefix + leaf.field["name"]]) for leaf in self.leaves]
        return lambda arrays, row: _assemble(self.space, iter([g(arrays)[row] for g in getters]))

    def flattener(self, num_envs: int) -> Callable[[Any], Any] | None:
        """``flatten(batch)``: a batch of values (Gymnasium's batched form, or a list of one value
        per env) as the engine's action arrays (one array, or a dict keyed by field); None when
        the engine takes the batch as it is (one array or a flat dict)."""
        if self.pickled:
            space, room = self.space, self.pickle_bytes
            return lambda batch: pickle_batch(space, batch, num_envs, room)
        if self.direct and not isinstance(self.space, spaces.Tuple):
            return None
        keys = [leaf.field["name"].split(":", 1)[1] if ":" in leaf.field["name"] else None for leaf in self.leaves]
        plans = [(key, leaf.path, leaf.dtype, np.dtype(leaf.field["dtype"]), leaf.carried)
                 for key, leaf in zip(keys, self.leaves)]
        space = self.space
        plain = keys == [None]

        def flatten(batch: Any) -> Any:
            if _is_per_env(space, batch):
                out = create_empty_array(space, len(batch))
                batch = concatenate(space, list(batch), out)
            arrays = {}
            for key, path, dtype, carrier, carried in plans:
                item = batch
                for k in path:
                    try:
                        item = item[k]
                    except (KeyError, IndexError, TypeError):
                        raise ValueError(f"the action has no entry {path!r} of the action space {space}") from None
                if carried:
                    array = np.ascontiguousarray(item, dtype=dtype)
                    # The bytes of a dtype with no integer of its size: an axis of its item size.
                    item = array.view(carrier) if carrier.itemsize == dtype.itemsize else \
                        array.reshape(*array.shape, 1).view(np.uint8)
                arrays[key] = item
            return arrays[None] if plain else arrays

        return flatten


def _is_flat(space: spaces.Space) -> bool:
    """A plain leaf, or a Dict (safe str keys) or Tuple of leaves: the front-ends' usual forms."""
    if isinstance(space, spaces.Dict):
        return all(_safe_key(k) and isinstance(s, _FIXED_LEAVES) for k, s in space.spaces.items())
    if isinstance(space, spaces.Tuple):
        return all(isinstance(s, _FIXED_LEAVES) for s in space.spaces)
    return True


def _is_per_env(space: spaces.Space, batch: Any) -> bool:
    """A list of one Dict/Tuple value per env (SB3's form), rather than Gymnasium's batched form
    (a dict of batched entries, or a tuple of them)."""
    if isinstance(space, spaces.Dict):
        return isinstance(batch, (list, tuple, np.ndarray)) and not isinstance(batch, dict)
    if isinstance(space, spaces.Tuple):
        return isinstance(batch, (list, np.ndarray)) and len(batch) > 0 and isinstance(batch[0], tuple)
    return False


def _batch_getter(leaf: Leaf, i: int) -> Callable[[tuple], np.ndarray]:
    if not leaf.carried:
        return lambda arrays: arrays[i]
    dtype = leaf.dtype
    if np.dtype(leaf.field["dtype"]).itemsize == dtype.itemsize:
        return lambda arrays: arrays[i].view(dtype)
    return lambda arrays: arrays[i].view(dtype)[..., 0]


def _assemble(space: spaces.Space, items: Any) -> Any:
    """The value of ``space`` whose leaves are the next items of ``items``, in leaf order."""
    if isinstance(space, spaces.Dict):
        return {key: _assemble(sub, items) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_assemble(sub, items) for sub in space.spaces)
    return next(items)


def _assembler(space: spaces.Space, leaves: Sequence[Callable[..., Any]]) -> Callable[[], Any]:
    if not isinstance(space, (spaces.Dict, spaces.Tuple)):
        return leaves[0]
    return lambda: _assemble(space, iter([get() for get in leaves]))


def default_pickle_bytes(space: spaces.Space) -> int:
    """Room for a pickled value of ``space``: ``PICKLE_SAMPLE_FACTOR`` times a sample's pickle, at least
    ``PICKLE_MIN_BYTES`` (a space that cannot sample gets the minimum)."""
    try:
        sample = len(pickle.dumps(space.sample(), protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 (a custom space without sample(): the minimum)
        sample = 0
    return max(PICKLE_MIN_BYTES, PICKLE_SAMPLE_FACTOR * sample)


def put_bytes(row: np.ndarray, data: bytes) -> None:
    """``data`` into a byte row after its length header (the caller checked that it fits)."""
    row[:PICKLE_HEADER] = np.frombuffer(len(data).to_bytes(PICKLE_HEADER, "little"), np.uint8)
    row[PICKLE_HEADER:PICKLE_HEADER + len(data)] = np.frombuffer(data, np.uint8)


def unpickle_row(row: np.ndarray, space: spaces.Space | None = None) -> Any:
    """The value pickled in a byte row (``put_bytes``); an empty row (an env that failed: its row
    holds zeros) is ``blank(space)``, or None without a space."""
    size = int.from_bytes(row[:PICKLE_HEADER].tobytes(), "little")
    if size == 0:
        return None if space is None else blank(space)
    return pickle.loads(row[PICKLE_HEADER:PICKLE_HEADER + size].tobytes())


def blank(space: spaces.Space) -> Any:
    """A zero-like value of ``space``, for the row of an env that failed (as a fixed-size row holds
    zeros): zeros, "" for ``Text``, empty for ``Sequence`` and ``Graph``, None for a custom space."""
    if isinstance(space, spaces.Dict):
        return {key: blank(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(blank(sub) for sub in space.spaces)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Discrete):
        return np.asarray(space.start, dtype=space.dtype)[()]
    if isinstance(space, spaces.Text):
        return ""
    if isinstance(space, spaces.Sequence):
        return tuple() if not space.stack else create_empty_array(space.feature_space, 0)
    if isinstance(space, spaces.Graph):
        node: Any = space.node_space
        return spaces.GraphInstance(np.zeros((0, *node.shape), dtype=node.dtype), None, None)
    if isinstance(space, spaces.OneOf):
        return (0, blank(space.spaces[0]))
    return None


def unpickle_batch(space: spaces.Space, rows: np.ndarray) -> Any:
    """The values pickled in ``rows`` (one per env) batched as Gymnasium batches ``space``."""
    items = [unpickle_row(row, space) for row in rows]
    return concatenate(space, items, create_empty_array(space, len(items)))


def _rows(space: spaces.Space, batch: Any) -> list[Any]:
    """The values of a batch in Gymnasium's batched form, one per env (``iterate``, which Gymnasium
    lacks for ``Text``, ``Graph``, ``Sequence`` and ``OneOf``: their batches are tuples already)."""
    if isinstance(space, spaces.Dict):
        columns = [_rows(sub, batch[key]) for key, sub in space.spaces.items()]
        return [dict(zip(space.spaces, values)) for values in zip(*columns)]
    if isinstance(space, spaces.Tuple):
        return [tuple(values) for values in zip(*[_rows(sub, batch[i]) for i, sub in enumerate(space.spaces)])]
    if isinstance(space, _FIXED_LEAVES):
        return list(iterate(space, batch))
    return list(batch)


def pickle_batch(space: spaces.Space, batch: Any, num_envs: int, room: int) -> np.ndarray:
    """A batch of values of a pickled space (Gymnasium's batched form, or a list of one per env) as
    the engine's byte rows, one per env."""
    items = list(batch) if _is_per_env(space, batch) else _rows(space, batch)
    rows = np.zeros((len(items), PICKLE_HEADER + room), dtype=np.uint8)
    for row, item in zip(rows, items):
        data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > room:
            raise ValueError(f"a pickled action ({len(data)} bytes) is larger than its row ({room} bytes); "
                             "pass a larger action_pickle=")
        put_bytes(row, data)
    return rows
