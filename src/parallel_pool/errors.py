"""Exceptions raised by parallel_pool, besides the built-in ValueError/TypeError/TimeoutError."""

from __future__ import annotations

from typing import Any

from parallel_pool._native import PoolClosedError, PoolForkedError

__all__ = ["EnvError", "PoolClosedError", "PoolForkedError"]


class EnvError(RuntimeError):
    """An env raised an exception while stepping or resetting.

    The rest of the batch is not lost: ``result`` holds the batch as the call would have returned
    it (``(obs, info)`` from ``reset``, the 5-tuple from ``step``/``recv``, a ``TimeStep`` from the
    dm_env front-end, each integration's own form from its adapter). ``errors`` lists
    ``(env_id, message)`` per failed env and ``env_ids`` their ids, both in the order of the batch's
    rows (``info["env_id"]``), whichever env failed first. A failed env's row holds zeros
    in its observation and info fields, reward 0, not terminated or truncated, ``elapsed_step`` the
    step that raised. In async mode the batch counts as received: its envs can be sent again. A
    failed env starts a new episode on its next step, even if its first reset raised (except with
    ``autoreset_mode="disabled"``, where it must be reset explicitly). The README's "Reliability"
    section has the details.
    """

    def __init__(self, errors: list[tuple[int, str]], result: Any) -> None:
        self.errors = list(errors)
        self.env_ids = [env_id for env_id, _ in errors]
        self.result = result
        detail = "; ".join(f"env {env_id}: {message}" for env_id, message in errors)
        super().__init__(f"{len(errors)} env(s) raised: {detail}")

    def __reduce__(self) -> tuple:
        # Pickle by the constructor's arguments (Ray ships exceptions between processes).
        return (type(self), (self.errors, self.result))
