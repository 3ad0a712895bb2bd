"""The Ray actor that owns one native pool on one node, and serves it to the driver.

Ray places it and carries what is sent once (``describe``, ``set_policy``, ``set_weights``); every
batch goes through the data plane (``integrations.ray.wire``): one TCP stream from the driver,
served by one thread of the actor, which steps the pool and sends its arrays as they are (no copy
of its own). Its methods also work as plain Ray calls (``reset``, ``step``, ``send``, ``recv``),
with env ids made global (``offset + local id``) on the way out and local on the way in.

Rollouts on the node: with a policy (``set_policy``), ``rollout(K)`` steps every env ``K`` times,
calling the policy on the node, and returns the trajectory segment, so one round trip carries
``K`` steps.
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import socket
import threading
from typing import Any

import numpy as np

import parallel_pool
from parallel_pool.errors import EnvError
from parallel_pool.integrations.ray import wire

# Frame kinds: requests from the driver (SEND and ASYNC_RESET get no reply: their errors come
# with the next RECV, as the actor methods defer them) and replies.
STEP, RESET, SEND, RECV, ASYNC_RESET, ROLLOUT, CLOSE = 1, 2, 3, 4, 5, 6, 7
OK, ENV_ERROR, SEND_ERROR, ERROR = 100, 101, 102, 103
_TOKEN_BYTES = 16
# A step that ended no episode (never written: the segment's episodes are concatenated copies).
_NO_IDS = np.zeros(0, dtype=np.int64)
_NO_RETURNS = np.zeros(0, dtype=np.float64)
# How long the actor waits for the driver to connect after handing it the address.
_ACCEPT_TIMEOUT = 120.0


class PoolActor:
    """One native pool of ``num_envs`` envs whose global ids are ``offset .. offset + num_envs - 1``.

    Used through ``ray.remote``; ``make_distributed`` places one per node. ``send`` and
    ``async_reset`` return at once, so their errors (a bad action, a busy env) are kept and
    reported by the next ``recv``, which then returns ``(None, (message, global_env_ids))``
    instead of waiting.

    Example:
        >>> import ray
        >>> from parallel_pool.integrations.ray import PoolActor
        >>> actor = ray.remote(PoolActor).remote("CartPole-v1", 0, {"num_envs": 4, "seed": 0})  # doctest: +SKIP
        >>> obs, reward, terminated, truncated, info = ray.get(actor.reset.remote())  # doctest: +SKIP
    """

    # Whether the data plane serves async batches natively (dataplane.serve_batches) after the first; off,
    # every frame goes through _handle (the tests compare the two).
    native_serve = True

    def __init__(self, task_id: str, offset: int, make_kwargs: dict[str, Any], niceness: int | None = None) -> None:
        # Ray starts its workers at nice 15 (below the raylet), so a pool in one would get only the
        # CPU that nice-0 work on its node leaves: the learner on the head node, Ray's own threads.
        # The pool's threads inherit the nice value of the thread that creates them (this one),
        # and the data-plane thread sets its own.
        self._niceness = niceness
        _set_niceness(niceness)
        self._env = parallel_pool.make_gymnasium(task_id, **make_kwargs)
        self._offset = offset
        self._deferred_error: tuple[str, list[int]] | None = None
        # Rollouts: the policy, weights sent but not applied yet (applied between rollouts, by
        # the thread that runs them), the last observations and each env's running episode.
        self._lock = threading.Lock()
        self._policy: Any = None
        self._pending_weights: Any = None
        self._obs: Any = None
        self._after_done = np.zeros(self._env.num_envs, dtype=bool)
        self._any_after_done = False  # whether _after_done has a True (the usual step has none)
        self._episode_return = np.zeros(self._env.num_envs, dtype=np.float64)
        self._episode_length = np.zeros(self._env.num_envs, dtype=np.int64)
        self._server: threading.Thread | None = None
        self._spare_segment: dict[str, Any] | None = None  # the data plane's last segment, sent
        # How the data plane serves async batches natively (_recv_planned), once worked out; whether
        # that was tried (a pool it cannot serve so is asked once, not on every batch).
        self._plan: tuple | None = None
        self._plan_tried = False

    def describe(self) -> dict[str, Any]:
        """Where this actor runs and what its pool is."""
        import ray

        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "num_envs": self._env.num_envs,
            "batch_size": self._env.batch_size,
            "num_threads": self._env.spec.config["num_threads"],
            "observation_space": self._env.observation_space,
            "action_space": self._env.action_space,
            "metadata": self._env.metadata,
        }

    # --- the data plane ---
    def open_data_plane(self) -> tuple[str, int, bytes]:
        """Listens on this node's address; returns ``(host, port, token)``. The first connection
        that sends the token is served (by a thread of this actor) until it closes."""
        import ray

        host = ray.util.get_node_ip_address()
        listener = socket.create_server((host, 0))
        listener.settimeout(_ACCEPT_TIMEOUT)
        token = secrets.token_bytes(_TOKEN_BYTES)
        self._server = threading.Thread(target=self._serve, args=(listener, token), daemon=True,
                                        name="parallel_pool-data-plane")
        self._server.start()
        return host, listener.getsockname()[1], token

    def _serve(self, listener: socket.socket, token: bytes) -> None:
        _set_niceness(self._niceness)
        with listener:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:  # nobody connected in time
                    return
                conn.settimeout(_ACCEPT_TIMEOUT)
                try:
                    given = conn.recv(_TOKEN_BYTES, socket.MSG_WAITALL)
                except OSError:
                    given = b""
                if secrets.compare_digest(given, token):
                    break
                conn.close()  # not our driver
        conn.settimeout(None)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            self._serve_connection(conn)

    def _serve_connection(self, conn: socket.socket) -> None:
        """Serves the driver's frames on ``conn`` until it closes or sends CLOSE. The async batches
        (a SEND with its RECV riding along) go through one native call once the first has been
        served here (``dataplane.serve_batches``, which gives back what it does not serve)."""
        while True:
            try:
                if self._plan is not None and self._deferred_error is None:
                    frame = self._serve_natively(conn, self._plan)
                    if frame is None:
                        continue
                else:
                    frame = wire.read_frame(conn)
            except OSError:  # the driver went away
                return
            if not self._handle(conn, frame):
                return

    def _serve_natively(self, conn: socket.socket, plan: tuple) -> wire.Frame | None:
        """Runs the native loop until it stops; returns the frame it left for ``_handle``, or None
        when what it left (a batch it did not reply to, an error of the pool's recv) was answered
        here, as ``_handle`` answers a RECV."""
        got = wire._dataplane.serve_batches(conn.fileno(), -1.0, self._env._native, plan, wire._decoded,
                                             wire._layout, wire.Slot)
        if got[0] == "frame":
            return wire.frame_of(got[1])
        if got[0] == "raised":
            _send_error(conn, got[1])
            return None
        _, arrays, errors = got
        if errors:
            _send_error(conn, self._global_env_error(EnvError(errors, self._env._convert(arrays, reset=False))))
        else:
            wire.send_frame(conn, OK, self._globalize(self._env._unpack(arrays)))
        return None

    def _handle(self, conn: socket.socket, frame: wire.Frame) -> bool:
        kind, message, extra = frame.kind, frame.message, frame.extra
        rode_along = False
        if kind == SEND:
            actions, env_id = message
            self.send(actions, env_id)
            if not extra:
                return True
            kind = RECV  # extra True: the driver's RECV rode along (one frame per batch, not two)
            rode_along = True
        if kind == ASYNC_RESET:
            self.async_reset(extra)
            return True
        try:
            if kind == STEP:
                result: Any = self.step(message)
            elif kind == RESET:
                result = self.reset(extra)
            elif kind == RECV:
                # Without a timeout: a native pool's recv() then steps queued envs on this thread
                # while it waits (it is one of the pool's num_threads: num_threads - 1 workers);
                # with one it would only wait, leaving a core idle (half the rate at 2 threads).
                # The driver bounds the wait itself (call_timeout, then Ray's ping).
                if rode_along and not self._plan_tried and self._deferred_error is None and self._may_plan():
                    # The first async batch: its reply also says how to serve the next ones natively
                    # (worked out again with the next batch when this one raises).
                    result, self._plan = self._recv_planned(frame.skeleton)
                    self._plan_tried = True
                else:
                    result, send_error = self.recv(None)
                    if send_error is not None:
                        wire.send_frame(conn, SEND_ERROR, None, send_error)
                        return True
            elif kind == ROLLOUT:
                # The segment is written into the last one's arrays (sent, so free again): no new
                # pages to fault in per segment (7 MB for 32 steps of 8 Pong envs).
                spare, self._spare_segment = self._spare_segment, None
                try:
                    segment, episodes = self.rollout(int(extra), spare)
                except EnvError as e:  # the segment is not lost; the errors go with the episodes
                    segment, episodes = e.result
                    wire.send_frame(conn, ENV_ERROR, segment, (e.errors, episodes))
                else:
                    wire.send_frame(conn, OK, segment, episodes)
                # (next_obs views the pool's output block: not kept, so the pool can reuse it)
                self._spare_segment = {k: v for k, v in segment.items() if k not in ("next_obs", "env_id")}
                return True
            elif kind == CLOSE:
                self.close()
                wire.send_frame(conn, OK)
                return False
            else:
                raise ValueError(f"unknown request kind {kind}")
        except Exception as e:  # an env's error, a bad action, a closed pool, a timeout
            _send_error(conn, e)
            return True
        wire.send_frame(conn, OK, result)
        return True

    # --- sync ---
    def reset(self, seed: Any = None) -> tuple:
        """Resets every env; returns the reset rows as a step would (reward 0, not done)."""
        try:
            result = self._globalize(self._env.reset_as_step(seed=seed))
        except EnvError as e:
            raise self._global_env_error(e) from None
        self._track(result, reset=True)
        return result

    def step(self, actions: Any) -> tuple:
        try:
            result = self._globalize(self._env.step(actions))
        except EnvError as e:
            error = self._global_env_error(e)
            if error.result is not None:
                self._track(error.result)
            raise error from None
        self._track(result)
        return result

    # --- async ---
    def async_reset(self, seed: Any = None) -> None:
        try:
            self._env.async_reset(seed)
        except (ValueError, TypeError, RuntimeError) as e:
            self._defer(e, np.arange(self._env.num_envs))

    def send(self, actions: Any, env_id: np.ndarray) -> None:
        """Queues one step for each of the global ``env_id``."""
        try:
            self._env.send(actions, env_id - self._offset)
        except (ValueError, TypeError, RuntimeError) as e:
            self._defer(e, env_id - self._offset)

    def recv(self, timeout: float | None) -> tuple[tuple | None, tuple[str, list[int]] | None]:
        """``(batch, None)``, or ``(None, (message, global env ids))`` if a send failed since."""
        if self._deferred_error is not None:
            error, self._deferred_error = self._deferred_error, None
            return None, error
        try:
            return self._globalize(self._env.recv(timeout)), None
        except EnvError as e:
            raise self._global_env_error(e) from None

    def close(self) -> None:
        self._env.close()

    # --- the data plane's native serving of async batches ---
    def _may_plan(self) -> bool:
        """Whether the async batches can be served natively: an async pool whose front-end sends the
        actions as they come and returns each field of a batch as it is (its flat unpacking: no
        info key that comes and goes, no final observations, no text, no pickled info)."""
        env = self._env
        return (PoolActor.native_serve and wire._dataplane is not None and env.batch_size < env.num_envs
                and env._flatten_action is None and env._unpacker._simple and env._unpack == env._unpacker.unpack)

    def _recv_planned(self, send_skeleton: bytes) -> tuple[tuple, tuple | None]:
        """``recv`` for the first async batch: ``(the reply, the plan of dataplane.serve_batches or None)``.
        The plan maps the reply's arrays, in the order the wire sends them, to the batch's fields:
        each must be one of them, except the global ids, which are a field plus the offset."""
        try:
            arrays = self._env._recv_arrays(None)
        except EnvError as e:
            raise self._global_env_error(e) from None
        result = self._env._unpack(arrays)
        local_ids = result[4]["env_id"]
        leaves = wire.encode(result)[1]  # in wire order, before the ids are made global
        result = self._globalize(result)
        skeleton, sent = wire.encode(result)
        field_of = {id(a): k for k, a in enumerate(arrays)}
        plan_leaves: list[tuple[int, bool]] = []
        for leaf, out in zip(leaves, sent):
            k = field_of.get(id(leaf))
            if k is None or not arrays[k].flags.c_contiguous:
                return result, None
            derived = out is not leaf
            if out.dtype != leaf.dtype or out.shape != leaf.shape or (derived and not (
                    leaf is local_ids and leaf.dtype == np.int32)):
                return result, None
            plan_leaves.append((k, derived))
        if len(leaves) != len(sent) or not isinstance(skeleton, bytes):
            return result, None
        plan = (send_skeleton, pickle.dumps(True, protocol=pickle.HIGHEST_PROTOCOL), self._offset, skeleton,
                plan_leaves, [arrays[k].nbytes for k, _ in plan_leaves], SEND, OK)
        return result, plan

    # --- rollouts on the node ---
    def set_policy(self, policy: Any) -> None:
        """The policy ``rollout`` calls: ``policy(obs) -> actions`` or ``(actions, extras)`` (a dict
        of per-env arrays recorded with the segment), on NumPy arrays, or a ``torch.nn.Module``
        (called on tensors, without gradients)."""
        with self._lock:
            self._policy = policy
            self._pending_weights = None

    def set_weights(self, weights: Any) -> None:
        """New weights for the policy, applied before the next rollout step: through its
        ``set_weights(weights)``, or ``load_state_dict`` for a ``torch.nn.Module``."""
        with self._lock:
            if self._policy is None:
                raise ValueError("set_weights before set_policy: there is no policy to update")
            if not hasattr(self._policy, "set_weights") and not hasattr(self._policy, "load_state_dict"):
                raise TypeError(f"the policy ({type(self._policy).__name__}) has no set_weights or "
                                "load_state_dict method to take the weights")
            self._pending_weights = weights

    def rollout(self, num_steps: int,
                spare: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Steps every env ``num_steps`` times with the policy; returns ``(segment, episodes)``.

        ``segment`` is env-major: ``obs`` ``(num_envs, num_steps, *obs_shape)`` (the observation
        each action was chosen from), ``actions``, ``rewards``, ``terminated``, ``truncated``,
        each extra the policy returned (``(num_envs, num_steps, ...)``), ``next_obs`` (the
        observation after the last step) and ``env_id`` (global). ``episodes`` has ``env_id``,
        ``return`` and ``length`` of each episode that ended during the segment. ``spare``: a
        segment no longer used, whose arrays of the same shape and dtype are written over.
        """
        if self._env.batch_size != self._env.num_envs:
            raise ValueError("rollouts step a sync pool: make_distributed without batch_size_per_node")
        if num_steps < 1:
            raise ValueError(f"num_steps must be at least 1, got {num_steps}")
        policy = self._current_policy()
        if self._obs is None:
            raise ValueError("reset() before the first rollout")
        n = self._env.num_envs
        obs = self._obs
        buffers: dict[str, Any] = {}
        errors: list[tuple[int, str]] = []
        ended: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for t in range(num_steps):
            _put(buffers, "obs", obs, t, num_steps, spare)
            actions, extras = _call_policy(policy, obs)
            _put(buffers, "actions", actions, t, num_steps, spare)
            for key, value in extras.items():
                _put(buffers, key, value, t, num_steps, spare)
            try:
                obs, reward, terminated, truncated, info = self._env.step(actions)
            except EnvError as e:  # the failed rows hold zeros and start new episodes: go on
                errors.extend((env_id + self._offset, message) for env_id, message in e.errors)
                obs, reward, terminated, truncated, info = e.result
            _put(buffers, "rewards", reward, t, num_steps, spare)
            _put(buffers, "terminated", terminated, t, num_steps, spare)
            _put(buffers, "truncated", truncated, t, num_steps, spare)
            ended.append(self._count_episodes(reward, terminated | truncated))
        self._obs = obs
        segment = {**buffers, "next_obs": obs,
                   "env_id": np.arange(self._offset, self._offset + n, dtype=np.int32)}
        episodes = {
            "env_id": np.concatenate([e[0] for e in ended]).astype(np.int32) + self._offset,
            "return": np.concatenate([e[1] for e in ended]),
            "length": np.concatenate([e[2] for e in ended]),
        }
        if errors:
            raise EnvError(errors, (segment, episodes))
        return segment, episodes

    def _current_policy(self) -> Any:
        with self._lock:
            policy, weights, self._pending_weights = self._policy, self._pending_weights, None
        if policy is None:
            raise ValueError("no policy on this node: set_policy(...) before rollout")
        if weights is not None:
            if hasattr(policy, "set_weights"):
                policy.set_weights(weights)
            else:
                policy.load_state_dict(weights)
        return policy

    def _track(self, result: tuple, reset: bool = False) -> None:
        """Keeps the last observations (rollouts start from them) and, for a sync pool, each env's
        running episode return and length."""
        if self._env.batch_size != self._env.num_envs:
            return
        # A reference, not a copy: the arrays view an output block the pool reuses only once no
        # array views it, so holding them costs one block, not a copy of every observation.
        self._obs = result[0]
        if reset:
            self._after_done[:] = False
            self._any_after_done = False
            self._episode_return[:] = 0
            self._episode_length[:] = 0
        else:
            self._count_episodes(result[1], result[2] | result[3])

    def _count_episodes(self, reward: np.ndarray, done: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Adds a step's rewards to the running episodes; returns the ended ones (local ids)."""
        # Every sync step on the node runs this: most steps end no episode and follow none, and
        # take the short way, a few NumPy calls instead of masking every row.
        done = np.asarray(done, dtype=bool)
        ending = done
        if self._any_after_done and self._env.autoreset_mode == "next_step":
            # With next-step autoreset the row after a done is a reset row, not part of an episode.
            live = ~self._after_done
            self._episode_return[live] += reward[live]
            self._episode_length[live] += 1
            ending = done & live
        else:
            self._episode_return += reward
            self._episode_length += 1
        any_done = bool(done.any())
        if any_done:
            ended = np.flatnonzero(ending)
            out = (ended, self._episode_return[ended].copy(), self._episode_length[ended].copy())
            self._episode_return[ended] = 0
            self._episode_length[ended] = 0
            self._after_done[:] = done
        else:
            out = (_NO_IDS, _NO_RETURNS, _NO_IDS)
            if self._any_after_done:
                self._after_done[:] = False
        self._any_after_done = any_done
        return out

    # --- helpers ---
    def _defer(self, error: Exception, local_ids: np.ndarray) -> None:
        if self._deferred_error is None:  # the first error is the one that explains the others
            ids = [int(i) + self._offset for i in np.asarray(local_ids).reshape(-1)]
            self._deferred_error = (f"{type(error).__name__}: {error}", ids)

    def _global_env_error(self, error: EnvError) -> EnvError:
        """The same error with global env ids, and the rest of the batch as a step returns it."""
        errors = [(env_id + self._offset, message) for env_id, message in error.errors]
        result = self._globalize(error.result) if error.result is not None else None
        return EnvError(errors, result)

    def _globalize(self, result: tuple) -> tuple:
        if self._offset:
            info = result[4]
            info["env_id"] = info["env_id"] + self._offset
            players = info.get("players")
            if isinstance(players, dict) and "env_id" in players:
                players["env_id"] = players["env_id"] + self._offset
        return result


def _send_error(conn: socket.socket, error: Exception) -> None:
    """An error as the driver gets it: an env's (EnvError) as ENV_ERROR, the batch not lost (the
    message, with the errors by global id as the extra); any other as ERROR, raised there."""
    if isinstance(error, EnvError):
        wire.send_frame(conn, ENV_ERROR, error.result, error.errors)
    else:
        wire.send_frame(conn, ERROR, None, (type(error).__name__, str(error)))


def _set_niceness(niceness: int | None) -> None:
    """Sets the calling thread's nice value (Linux: per thread); a refusal (no CAP_SYS_NICE to go
    below the current value) is logged, not raised."""
    if niceness is None or not hasattr(os, "setpriority"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except OSError as e:
        logging.getLogger(__name__).warning("parallel_pool: cannot set the pool's nice value to %d (%s); it "
                                            "keeps Ray's %d", niceness, e, os.getpriority(os.PRIO_PROCESS, 0))


def _call_policy(policy: Any, obs: Any) -> tuple[Any, dict[str, Any]]:
    """``policy(obs)`` as ``(actions, extras)`` of NumPy arrays; a torch module gets tensors."""
    if _is_torch_module(policy):
        import torch

        with torch.no_grad():
            out = policy(_map(torch.as_tensor, obs))
    else:
        out = policy(obs)
    actions, extras = out if isinstance(out, tuple) else (out, {})
    return _map(_numpy, actions), {k: _numpy(v) for k, v in dict(extras).items()}


def _is_torch_module(policy: Any) -> bool:
    return any(cls.__module__.startswith("torch.nn") and cls.__name__ == "Module" for cls in type(policy).__mro__)


def _numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _map(fn: Any, tree: Any) -> Any:
    return {k: _map(fn, v) for k, v in tree.items()} if isinstance(tree, dict) else fn(tree)


def _put(buffers: dict[str, Any], key: str, value: Any, t: int, num_steps: int, spare: Any = None) -> None:
    """Writes step ``t``'s rows into ``buffers[key]`` (env-major), taking it at the first step from
    ``spare[key]`` when that has the shape and dtype, else allocating it."""
    old = spare.get(key) if isinstance(spare, dict) else None
    if isinstance(value, dict):
        inner = buffers.setdefault(key, {})
        for k, v in value.items():
            _put(inner, k, v, t, num_steps, old)
        return
    value = np.asarray(value)
    buffer = buffers.get(key)
    if buffer is None:
        shape = (value.shape[0], num_steps, *value.shape[1:])
        if isinstance(old, np.ndarray) and old.shape == shape and old.dtype == value.dtype:
            buffer = buffers[key] = old
        else:
            buffer = buffers[key] = np.empty(shape, dtype=value.dtype)
    buffer[:, t] = value
