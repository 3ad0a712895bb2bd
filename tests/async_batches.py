"""The tests' two drivers of an async pool, whose rows each env's oracle (a Gymnasium env) checks in
whatever order the batches come. ``async_rows`` (conftest's fixture) sends each env its own next
action, shuffled, drains what is in flight and checks that every env came back once per send.
``run_async_batches`` leaves a batch's actions to the caller (one draw per batch, frames rendered
before the send), as the Box2D and toy-text mirror tests need. Imported by name: pytest puts
``tests/`` on ``sys.path`` (the directory of the rootdir's conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

# An async batch as ``recv`` returns it, and per row the action that produced it (None for a reset row).
AsyncBatch = tuple[tuple[Any, Any, Any, Any, dict[str, Any]], list[Any]]


def run_async_batches(pool: Any, batches: int, next_actions: Callable[[int, tuple], Any]) -> None:
    """``async_reset``, then ``batches`` batches from ``recv()``, the envs of batch ``b`` sent
    ``next_actions(b, batch)`` (one action per row, in the batch's order), then the batch still
    in flight received; the pool is closed after, also when a check fails."""
    try:
        pool.async_reset()
        for b in range(batches):
            batch = pool.recv()
            pool.send(next_actions(b, batch), batch[4]["env_id"])
        pool.recv()
    finally:
        pool.close()


def async_rows(pool: Any, next_action: Callable[[int, Any], Any], batches: int, seed: int = 0,
                timeout: float | None = 60.0) -> Iterator[AsyncBatch]:
    """``async_reset``, then ``batches`` batches from ``recv``, then what is still in flight.

    Yields each batch with the action each of its rows was produced by (None for the first reset
    row of an env). After the caller is done with a batch, every env in it is sent its next action,
    ``next_action(env_id, obs_row)``: each env follows its own sequence of actions, whatever order
    the batches come in. The envs of a batch are sent in an order shuffled by ``seed``, so that
    later batches mix envs whatever the threads' timing. Checks that every env comes back exactly
    once per send (the reset included); every wait is bounded by ``timeout`` (None: a plain
    ``recv()``, whose caller steps envs while it waits; one with a timeout only waits).
    """
    assert pool.num_envs % pool.batch_size == 0, "whole batches only: the drain receives every env"
    order = np.random.default_rng(seed)
    last_action: dict[int, Any] = {}
    sent = np.zeros(pool.num_envs, dtype=np.int64)
    received = np.zeros(pool.num_envs, dtype=np.int64)
    pool.async_reset()
    sent += 1
    for n in range(batches + pool.num_envs // pool.batch_size):
        batch = pool.recv(timeout=timeout)
        ids = batch[4]["env_id"].copy()
        received[ids] += 1
        yield batch, [last_action.get(int(i)) for i in ids]
        if n >= batches:
            continue  # draining what is in flight
        obs = batch[0]
        actions = {int(i): next_action(int(i), obs[k]) for k, i in enumerate(ids)}
        shuffled = order.permutation(ids)
        last_action.update(actions)
        pool.send(np.stack([actions[int(i)] for i in shuffled]), shuffled)
        sent[shuffled] += 1
    assert (received == sent).all(), (received, sent)
