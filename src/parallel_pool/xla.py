"""``env.xla()``: a pool's ``send``, ``recv`` and ``step`` as XLA custom calls, for jitted JAX code.

EnvPool's interface: ``handle, recv, send, step = env.xla()`` gives pure functions that thread a
``handle`` (a small uint8 array naming the pool) through every call, so they run inside
``jax.jit``, ``jax.lax.scan`` and ``jax.lax.fori_loop`` on the CPU:

- ``send(handle, action, env_id=None) -> handle`` queues one step per env (all envs when
  ``env_id`` is None), as ``env.send``;
- ``recv(handle) -> (handle, result)`` waits for the next batch, ``result`` being what ``env.recv()``
  returns in this front-end's form (Gymnasium's and gym's 5-tuple, dm_env's ``TimeStep``), as JAX
  arrays;
- ``step(handle, action, env_id=None) -> (handle, result)`` is ``send`` then ``recv`` in one call.

The calls are XLA FFI custom calls (native/python/xla_ffi.cc) with side effects: XLA neither drops
nor merges them, and each one's handle comes from the one before, which orders them. Arrays are in
JAX's dtypes: with 64-bit types disabled (JAX's default) float64 fields arrive as float32 and int64
as int32. Only what JAX can trace is in ``info``: every info key on every step (keys that the plain
API adds only when an episode ends, ``episode``/``_episode``, are always there, masked), text fields
as their uint8 bytes. Per-player fields (a row count that changes per batch) and
``autoreset_mode="same_step"`` (object arrays of final observations) are refused, as EnvPool refuses
dynamic shapes. Bad input is refused when the function is traced (shapes and dtypes) or raised by
JAX when the call runs (out-of-range actions, env ids in flight, a closed pool); nothing crashes.

jax is imported when ``xla()`` is first called: ``import parallel_pool`` never imports it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from parallel_pool import _native
from parallel_pool.spec import FieldInfo

if TYPE_CHECKING:
    import jax

HANDLE_BYTES = 8  # the pool's number in native/python/pool_handles.h, as bytes

_registered = False
_register_lock = threading.Lock()


def _register_targets(jax: Any) -> None:
    """Registers the custom-call targets with JAX, once per process (they serve every pool)."""
    global _registered
    with _register_lock:
        if _registered:
            return
        for name, capsule in _native._xla_targets().items():
            jax.ffi.register_ffi_target(name, capsule, platform="cpu")
        _registered = True


def _field_shape(shape: Any) -> str:
    return str(tuple(int(d) for d in shape))


class XlaFunctions:
    """Builds the jittable calls of one pool; ``make_xla`` returns its ``(handle, recv, send, step)``."""

    def __init__(self, env: Any) -> None:
        import jax  # here, not at the top: importing parallel_pool must not import jax
        import jax.numpy as jnp

        self._jax, self._jnp = jax, jnp
        self._env = env
        native = env._native
        native.check_open()
        if env.autoreset_mode == "same_step":
            raise ValueError(
                "xla() needs fixed shapes, and autoreset_mode='same_step' returns final observations as object "
                "arrays; use autoreset_mode='next_step' (the default) or 'disabled'"
            )
        self._fields: list[tuple[str, np.dtype, tuple[int, ...]]] = []
        for name, dtype, shape, per_player in native.field_layout:
            if per_player:
                raise ValueError(
                    f"xla() needs fixed shapes, and {env.task_id}'s field {name!r} has one row per player acting "
                    "(a count that changes from batch to batch)"
                )
            self._fields.append((name, np.dtype(dtype), tuple(shape)))
        self._actions: list[FieldInfo] = list(env.spec.action_fields)
        self._num_envs: int = env.num_envs
        self._batch_size: int = env.batch_size
        _register_targets(jax)
        self.handle = np.frombuffer(native.xla_handle(), dtype=np.uint8).copy()

    # --- what the calls take and return, in JAX's dtypes of the moment (64-bit types on or off) ---
    def _handle_type(self) -> jax.ShapeDtypeStruct:
        return self._jax.ShapeDtypeStruct((HANDLE_BYTES,), self._jnp.uint8)

    def _result_types(self) -> list[jax.ShapeDtypeStruct]:
        return [
            self._jax.ShapeDtypeStruct((self._batch_size, *shape), self._jax.dtypes.canonicalize_dtype(dtype))
            for _, dtype, shape in self._fields
        ]

    def _check_handle(self, handle: Any) -> jax.Array:
        handle = self._jnp.asarray(handle)
        if handle.shape != (HANDLE_BYTES,) or handle.dtype != self._jnp.uint8:
            raise TypeError(
                f"handle must be the uint8 array of shape ({HANDLE_BYTES},) that xla() returned (or a call returned), "
                f"got {handle.dtype} of shape {_field_shape(handle.shape)}"
            )
        return handle

    def _env_ids(self, env_id: Any) -> jax.Array:
        if env_id is None:
            return self._jnp.arange(self._num_envs, dtype=self._jnp.int32)
        ids = self._jnp.asarray(env_id)
        if ids.ndim != 1:
            raise ValueError(f"env_id must be a 1-d array of env ids, got shape {_field_shape(ids.shape)}")
        if ids.shape[0] > 0 and not self._jnp.issubdtype(ids.dtype, self._jnp.integer):
            raise TypeError(f"env_id must be integers, got dtype {ids.dtype}")
        return ids.astype(self._jnp.int32)

    def _action_arrays(self, action: Any, n: int) -> list[jax.Array]:
        """One array per action field, checked against the field's shape and kind and cast to the
        field's JAX dtype, as the plain API checks and casts its NumPy actions."""
        jnp = self._jnp
        fields = self._actions
        keys = [f.key for f in fields]
        if len(fields) == 1 and not isinstance(action, dict):
            values = [action]
        else:
            if not isinstance(action, dict):
                raise TypeError(f"this env takes a dict of actions with keys {keys}")
            if sorted(action) != sorted(keys):
                raise ValueError(f"expected action keys {keys}, got {sorted(action)}")
            values = [action[k] for k in keys]
        arrays = []
        for field, value in zip(fields, values):
            array = jnp.asarray(value)
            kind = field.dtype.kind
            ok = (
                jnp.issubdtype(array.dtype, jnp.number) and not jnp.issubdtype(array.dtype, jnp.complexfloating)
                if kind == "f"
                else array.dtype == jnp.bool_
                if kind == "b"
                else jnp.issubdtype(array.dtype, jnp.integer)
            )
            if not ok:
                what = "number" if kind == "f" else "bool" if kind == "b" else "integer"
                raise TypeError(
                    f"action '{field.key}' must have dtype {field.dtype} (or a castable {what} type), got {array.dtype}"
                )
            expect = (n, *field.shape)
            if tuple(array.shape) != expect:
                raise ValueError(
                    f"action '{field.key}' must have shape {expect} for {n} env(s), got {_field_shape(array.shape)}"
                )
            arrays.append(array.astype(self._jax.dtypes.canonicalize_dtype(field.dtype)))
        return arrays

    # --- the calls ---
    def send(self, handle: Any, action: Any, env_id: Any = None) -> jax.Array:
        handle = self._check_handle(handle)
        ids = self._env_ids(env_id)
        actions = self._action_arrays(action, ids.shape[0])
        call = self._jax.ffi.ffi_call("parallel_pool_send", self._handle_type(), has_side_effect=True)
        return call(handle, ids, *actions)

    def recv(self, handle: Any) -> tuple[jax.Array, Any]:
        handle = self._check_handle(handle)
        results = [self._handle_type(), *self._result_types()]
        call = self._jax.ffi.ffi_call("parallel_pool_recv", results, has_side_effect=True)
        out = call(handle)
        return out[0], self._env._xla_result(tuple(out[1:]))

    def step(self, handle: Any, action: Any, env_id: Any = None) -> tuple[jax.Array, Any]:
        handle = self._check_handle(handle)
        ids = self._env_ids(env_id)
        actions = self._action_arrays(action, ids.shape[0])
        results = [self._handle_type(), *self._result_types()]
        call = self._jax.ffi.ffi_call("parallel_pool_step", results, has_side_effect=True)
        out = call(handle, ids, *actions)
        return out[0], self._env._xla_result(tuple(out[1:]))


def make_xla(env: Any) -> tuple[np.ndarray, Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """``(handle, recv, send, step)`` of a pool: see this module's docstring."""
    functions = XlaFunctions(env)
    return functions.handle, functions.recv, functions.send, functions.step
