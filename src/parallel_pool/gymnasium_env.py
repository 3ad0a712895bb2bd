"""The Gymnasium front-end: ``reset`` and ``step`` with Gymnasium's 5-tuple, over a native pool.

As EnvPool's pools, a pool is an instance of ``gymnasium.vector.VectorEnv`` (so Gymnasium's vector
wrappers, e.g. ``NormalizeObservation`` or ``RecordEpisodeStatistics`` from
``gymnasium.wrappers.vector``, wrap it directly) and of ``gymnasium.Env`` (so a ``gymnasium.Wrapper``,
such as CleanRL's ``RecordEpisodeStatistics``, does too). Unlike a strict ``VectorEnv``, its
``observation_space``/``action_space`` are the single-env spaces, as in EnvPool (equal to
``single_observation_space``/``single_action_space``, which are what the vector wrappers read); for
batched spaces use ``gymnasium.make_vec("parallel_pool/<id>")``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import VectorEnv

from parallel_pool.base import BasePoolEnv
from parallel_pool.errors import EnvError
from parallel_pool.options import gymnasium_autoreset_mode
from parallel_pool.python_envs import PythonEnvSource


class GymnasiumEnv(BasePoolEnv, VectorEnv, gymnasium.Env):  # type: ignore[misc]  # render(env_id) returns an array
    """A batch of envs with Gymnasium's API.

    Example:
        >>> import numpy as np, parallel_pool
        >>> env = parallel_pool.make("CartPole-v1", num_envs=4, seed=0)
        >>> obs, info = env.reset()
        >>> obs.shape
        (4, 4)
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(4, dtype=np.int64))
        >>> info["env_id"]
        array([0, 1, 2, 3], dtype=int32)
        >>> env.close()
    """

    def __init__(self, task_id: str | PythonEnvSource, **kwargs: Any) -> None:
        super().__init__(task_id, **kwargs)
        self._unpack = self._unpacker.unpack
        self.metadata: dict[str, Any] = {
            "autoreset_mode": gymnasium_autoreset_mode(self.autoreset_mode),
            "render_modes": [] if self.render_mode is None else [self.render_mode],
        }

    def reset(
        self, env_id: Any = None, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resets every env (or those in ``env_id``, or ``options["reset_mask"]``).

        ``seed`` re-seeds: an int gives env ``i`` the seed ``seed + i``; a list gives one per env.
        Rows come back in ``env_id`` order. In async mode, ``reset()`` of every env queues the
        resets and returns the first ``batch_size`` results (EnvPool's behaviour); ``reset(env_id)``
        resets those envs now (they must not be in flight) and returns exactly their rows, while
        the other envs' steps stay in flight for ``recv``.
        """
        arrays = self._reset_arrays(env_id, seed, options)
        return self._unpacker.obs(arrays), self._unpacker.info(arrays)

    def reset_as_step(
        self, env_id: Any = None, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """``reset``, with the rows in ``step``'s form: ``(obs, reward, terminated, truncated, info)``
        with reward 0 and both flags False. For code that merges reset rows with step rows (the
        Ray layer); an ``EnvError``'s ``result`` takes that form too."""
        return self._unpack(self._reset_arrays(env_id, seed, options, as_step=True))

    def step(self, action: Any, env_id: Any = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Steps the envs in ``env_id`` (all if None) and returns their rows, in that order in sync
        mode. In async mode this is ``send`` and ``recv`` in one call: the next ``batch_size`` rows.

        A step that cannot complete a batch (fewer envs than ``batch_size``, counting those already
        in flight) is a ``ValueError`` before anything is queued."""
        # The hot path of stepping: kept flat on purpose (the native call checks everything).
        if self._flatten_action is not None:
            action = self._flatten_action(action)  # a Python env's Tuple, nested or pickled actions (base.py)
        arrays, errors = self._native.step(action, env_id)
        if errors:
            raise EnvError(errors, self._unpack(arrays))
        return self._unpack(arrays)

    def _convert(self, arrays: tuple, reset: bool) -> Any:
        if reset:
            return self._unpacker.obs(arrays), self._unpacker.info(arrays)
        return self._unpack(arrays)

    def _xla_result(self, arrays: tuple) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        return self._unpacker.unpack_traced(arrays)

    def recv(self, timeout: float | None = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Waits for the next ``batch_size`` results; ``TimeoutError`` after ``timeout`` seconds.

        Raises ``RuntimeError`` instead of blocking for ever when fewer than ``batch_size`` envs are
        in flight.
        """
        return self._unpack(self._recv_arrays(timeout))


class GymEnv(GymnasiumEnv):
    """The gym-style front-end (``env_type="gym"``): the same 5-tuple API as ``GymnasiumEnv``.

    It exists for code that asks for ``env_type="gym"`` (as EnvPool's users do); gym 0.26 and
    Gymnasium share the ``(obs, reward, terminated, truncated, info)`` step API. Each step's ``info``
    also has ``"TimeLimit.truncated"``, as gym's ``TimeLimit`` wrapper set it and CleanRL's EnvPool
    scripts read it: True where the step hit the time limit and the env did not terminate.
    """

    def __init__(self, task_id: str, **kwargs: Any) -> None:
        super().__init__(task_id, **kwargs)
        unpack = self._unpacker.unpack

        def unpack_with_time_limit(arrays: tuple) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
            obs, reward, terminated, truncated, info = unpack(arrays)
            info["TimeLimit.truncated"] = np.logical_and(truncated, np.logical_not(terminated))
            return obs, reward, terminated, truncated, info

        self._unpack = unpack_with_time_limit

    def _xla_result(self, arrays: tuple) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self._unpacker.unpack_traced(arrays)
        info["TimeLimit.truncated"] = truncated & ~terminated  # JAX arrays: operators, not NumPy's ufuncs
        return obs, reward, terminated, truncated, info
