"""The async loop of the mirror tests, which check each env's rows of an async pool against its own
oracle (a Gymnasium env) in whatever order the batches come. Imported by name: pytest puts
``tests/`` on ``sys.path`` (the directory of the rootdir's conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
