"""Unpacking of native results: the field arrays of one ``recv`` as Gymnasium's 5-tuple.

A native ``recv`` returns one array per output field, all views into one recycled output block;
``Unpacker`` turns them into ``(obs, reward, terminated, truncated, info)`` without copying.
"""

from __future__ import annotations

import collections
import operator
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from parallel_pool.python_spaces import PICKLE_HEADER
from parallel_pool.spec import PICKLED_INFO, EnvSpec


class _InfoBatch:
    """Gymnasium's own rule for batching per-env info dicts (``VectorEnv._add_info``: values,
    ``_key`` masks, nested dicts), on a batch of ``num_envs`` rows."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        # Gymnasium's method reads only num_envs and _add_info (for nested dicts) of its self.
        self_: Any = self
        return VectorEnv._add_info(self_, vector_infos, env_info, env_num)


def merge_pickled(info: dict[str, Any], rows: np.ndarray, which: Any = None) -> dict[str, Any]:
    """Adds to ``info`` the pickled entries of rows ``which`` (all if None) of a pickled-info field;
    an entry the engine also wrote (``info`` has it) stays the engine's."""
    for key, value in unpickle_info(rows, range(rows.shape[0]) if which is None else which).items():
        info.setdefault(key, value)
    return info


def unpickle_info(rows: np.ndarray, which: Any) -> dict[str, Any]:
    """The pickled info entries of rows ``which`` of a pickled-info field, batched as Gymnasium's
    vector envs batch infos (empty rows add nothing)."""
    # Every row's length at once: most rows are empty (an info with typed entries only).
    sizes = np.ascontiguousarray(rows[:, :PICKLE_HEADER]).view("<u4")[:, 0]
    if not sizes.any():
        return {}
    batch = _InfoBatch(rows.shape[0])
    out: dict[str, Any] = {}
    for row in which:
        size = int(sizes[row])
        if size:
            out = batch._add_info(out, pickle.loads(rows[row, PICKLE_HEADER:PICKLE_HEADER + size].tobytes()), row)
    return out


def decode_text(array: np.ndarray) -> Any:
    """A text field's NUL-padded ASCII bytes, ``(..., max_length)`` uint8, as an array of ``str``
    of shape ``(...)`` (a batch), or one ``str`` for a single row."""
    if array.ndim == 1:
        return bytes(array).rstrip(b"\0").decode("ascii")
    raw = np.ascontiguousarray(array).view(f"S{array.shape[-1]}")[..., 0]
    return raw.astype(str)


def _tuple_getter(indices: list[int]) -> Any:
    """``arrays -> tuple(arrays[i] for i in indices)`` at C speed (itemgetter of one index returns
    the item itself, not a 1-tuple, and of none is refused: both are wrapped)."""
    if not indices:
        return lambda arrays: ()
    getter = operator.itemgetter(*indices)
    return getter if len(indices) != 1 else (lambda arrays: (getter(arrays),))


def _dict_getter(keys: tuple[str, ...], indices: list[int]) -> Callable[[tuple], dict[str, Any]]:
    """``arrays -> {key: arrays[i] for key, i in zip(keys, indices)}``: for up to four keys a dict
    display of that size, about three times quicker than ``dict(zip(keys, getter(arrays)))``,
    which is the rest's."""
    if len(keys) == 0:
        return lambda a: {}
    if len(keys) == 1:
        (k0,), (i0,) = keys, indices
        return lambda a: {k0: a[i0]}
    if len(keys) == 2:
        (k0, k1), (i0, i1) = keys, indices
        return lambda a: {k0: a[i0], k1: a[i1]}
    if len(keys) == 3:
        (k0, k1, k2), (i0, i1, i2) = keys, indices
        return lambda a: {k0: a[i0], k1: a[i1], k2: a[i2]}
    if len(keys) == 4:
        (k0, k1, k2, k3), (i0, i1, i2, i3) = keys, indices
        return lambda a: {k0: a[i0], k1: a[i1], k2: a[i2], k3: a[i3]}
    getter = _tuple_getter(indices)
    return lambda a: dict(zip(keys, getter(a)))


class Unpacker:
    """Turns the native field arrays of one recv into ``(obs, reward, terminated, truncated, info)``."""

    def __init__(self, spec: EnvSpec, field_names: list[str]) -> None:
        index = {name: i for i, name in enumerate(field_names)}
        self._reward = index["reward"]
        self._terminated = index["terminated"]
        self._truncated = index["truncated"]
        if len(spec.obs_fields) == 1 and spec.obs_fields[0].name == "obs":
            self._obs: int | list[tuple[str, int]] = index["obs"]
        else:
            self._obs = [(f.key, index[f.name]) for f in spec.obs_fields]
        self._tuple_obs = spec.tuple_obs  # a Tuple observation: a tuple of arrays, not a dict
        # A Python env's observation that its fields do not give as they are (nested, carried in
        # another dtype, or pickled): the spec's readers rebuild it.
        readers = spec.obs_readers(index)
        self._obs_read: Callable[[tuple], Any] | None = readers[0] if readers else None
        # Dict keys of text fields (MiniGrid's mission): bytes in the block, str for the user.
        self._text_keys = frozenset(f.key for f in spec.obs_fields if f.space == "text")
        # info entries: (key, index) at the top level, or grouped ("players", "episode").
        self._info: list[tuple[str, int]] = []
        self._groups: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
        for name, i in index.items():
            if not name.startswith("info:"):
                continue
            key = name[5:]
            if "." in key:
                group, sub = key.split(".", 1)
                self._groups[group].append((sub, i))
            else:
                self._info.append((key, i))
        self._info_keys = tuple(key for key, _ in self._info)
        self._info_dict = _dict_getter(self._info_keys, [i for _, i in self._info])
        # A Python env's info (python_envs.py): keys a row may lack, each with its "_key" mask field,
        # and the pickled entries.
        self._masked = [(key, index["info:" + key], index["info:_" + key]) for key in spec.masked_info_keys]
        self._pickled = index.get(PICKLED_INFO)
        self._final_masked: list[tuple[str, int, int]] = []
        self._final_pickled = index.get("final:" + PICKLED_INFO)
        self._final_mask = index.get("info:_final")
        self._final_obs: int | list[tuple[str, int]] | None = None
        self._final_row: Callable[[tuple, int], Any] | None = None
        self._final_info: list[tuple[str, int]] = []
        if self._final_mask is not None:
            final_readers = spec.obs_readers(index, "final:") if readers else None
            self._final_row = final_readers[1] if final_readers else None
            if isinstance(self._obs, int):
                self._final_obs = index["final:obs"]
            else:
                self._final_obs = [(f.key, index["final:" + f.name]) for f in spec.obs_fields]
            masked = set(spec.masked_info_keys) | {"_" + key for key in spec.masked_info_keys}
            self._final_info = [
                (f.key, index["final:" + f.name]) for f in spec.info_fields if not f.per_player and f.key not in masked
            ]
            self._final_masked = [
                (key, index["final:info:" + key], index["final:info:_" + key]) for key in spec.masked_info_keys
            ]
        # The obs fields' keys and a getter of their arrays (a dict's values, a tuple's items), and
        # of their dict; none for one obs array.
        self._obs_keys: tuple[str, ...] = ()
        self._obs_getter: Any = None
        self._obs_dict: Any = None
        if not isinstance(self._obs, int):
            self._obs_keys = tuple(key for key, _ in self._obs)
            self._obs_getter = _tuple_getter([i for _, i in self._obs])
            self._obs_dict = _dict_getter(self._obs_keys, [i for _, i in self._obs])
        # ``unpack(arrays) -> (obs, reward, terminated, truncated, info)``. The flat layout, nearly
        # every native task's (one obs array or a plain dict of them, no text, not a tuple, and info
        # entries at the top level only), gets a closure over its indices, with no branch and no
        # further Python frame but the dicts': it runs on every step and recv, and its cost is a
        # share of a fast env's own step time.
        # A Python env's pool with only the pickled info beyond that (info_pickle, the default) gets
        # one too, which adds the pickled entries.
        self._simple = (self._obs_read is None and not self._tuple_obs and not self._text_keys and not self._groups
                        and self._final_mask is None and not self._masked)
        self.unpack: Callable[[tuple], tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]] = (
            self._simple_unpack() if self._simple else self._unpack
        )

    def _simple_unpack(self) -> Callable[[tuple], tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]]:
        reward, terminated, truncated, info_dict = self._reward, self._terminated, self._truncated, self._info_dict
        if self._pickled is not None:
            plain_info, pickled = info_dict, self._pickled

            def info_dict(a: tuple) -> dict[str, Any]:
                return merge_pickled(plain_info(a), a[pickled])
        if isinstance(self._obs, int):
            obs = self._obs
            return lambda a: (a[obs], a[reward], a[terminated], a[truncated], info_dict(a))
        obs_dict = self._obs_dict
        return lambda a: (obs_dict(a), a[reward], a[terminated], a[truncated], info_dict(a))

    def obs(self, arrays: tuple) -> Any:
        if self._obs_read is not None:
            return self._obs_read(arrays)
        if isinstance(self._obs, int):
            return arrays[self._obs]
        if self._tuple_obs:
            return self._obs_getter(arrays)
        if self._text_keys:
            return {key: decode_text(arrays[i]) if key in self._text_keys else arrays[i] for key, i in self._obs}
        return self._obs_dict(arrays)

    def info(self, arrays: tuple) -> dict[str, Any]:
        info = self._info_dict(arrays)
        for group, entries in self._groups.items():
            info[group] = {key: arrays[i] for key, i in entries}
        if "_episode" in info and not info["_episode"].any():
            # As Gymnasium's RecordEpisodeStatistics: the keys appear only when an episode ended.
            del info["_episode"], info["episode"]
        for key, _, mask in self._masked:
            if not arrays[mask].any():  # no row has it: absent, as from SyncVectorEnv
                del info[key], info["_" + key]
        if self._pickled is not None:
            merge_pickled(info, arrays[self._pickled])
        if self._final_mask is not None:
            del info["_final"]
            mask = arrays[self._final_mask]
            if mask.any():
                self._add_final(info, arrays, mask)
        return info

    def _add_final(self, info: dict[str, Any], arrays: tuple, mask: np.ndarray) -> None:
        # Gymnasium's same_step layout: an object array of final observations, and the final step's
        # info as batched arrays, each with a `_key` mask.
        final_obs = np.full(mask.shape[0], None, dtype=object)
        fields = self._final_obs
        assert fields is not None  # set whenever _final_mask is
        for row in np.flatnonzero(mask):
            if self._final_row is not None:
                final_obs[row] = self._final_row(arrays, int(row))
            elif isinstance(fields, int):
                final_obs[row] = arrays[fields][row]
            elif self._tuple_obs:
                final_obs[row] = tuple(arrays[i][row] for _, i in fields)
            else:
                final_obs[row] = {
                    key: decode_text(arrays[i][row]) if key in self._text_keys else arrays[i][row] for key, i in fields
                }
        final_info: dict[str, Any] = {}
        for key, i in self._final_info:
            final_info[key] = arrays[i]
            final_info["_" + key] = mask
        for key, value, key_mask in self._final_masked:
            has = mask & arrays[key_mask]
            if has.any():
                values = np.zeros_like(arrays[value])  # zeros where a row lacks it, as Gymnasium's
                values[has] = arrays[value][has]
                final_info[key], final_info["_" + key] = values, has
        if self._final_pickled is not None:
            merge_pickled(final_info, arrays[self._final_pickled], np.flatnonzero(mask))
        info["final_obs"] = final_obs
        info["_final_obs"] = mask
        info["final_info"] = final_info
        info["_final_info"] = mask

    def unpack_traced(self, arrays: tuple) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """``unpack`` for arrays whose values are not known yet (JAX tracers, xla()): the same
        structure on every batch. Every info key is there (``episode``/``_episode`` too, masked),
        text fields stay uint8 bytes, and there is no same_step entry (xla() refuses that mode)."""
        if isinstance(self._obs, int):
            obs: Any = arrays[self._obs]
        elif self._tuple_obs:
            obs = self._obs_getter(arrays)
        else:
            obs = self._obs_dict(arrays)
        info = self._info_dict(arrays)
        for group, entries in self._groups.items():
            info[group] = {key: arrays[i] for key, i in entries}
        return obs, arrays[self._reward], arrays[self._terminated], arrays[self._truncated], info

    def _unpack(self, arrays: tuple) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        return (
            self.obs(arrays),
            arrays[self._reward],
            arrays[self._terminated],
            arrays[self._truncated],
            self.info(arrays),
        )
