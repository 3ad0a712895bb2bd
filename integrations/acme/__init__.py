"""Acme-style ``dm_env.Environment`` adapters over ``parallel_pool.make_dm``.

- ``Environment``: one env, the plain ``dm_env`` contract an Acme ``EnvironmentLoop`` drives:
  ``FIRST`` steps carry no reward or discount, ``step`` on a fresh env or after ``LAST`` starts a
  new episode (its action is ignored), ``LAST`` has discount 0 when the episode terminated and 1
  when it was only truncated (time limit), so a learner bootstraps exactly where it should.
- ``BatchedEnvironment``: ``num_envs`` envs stepped together (sync), every ``TimeStep`` field
  batched; rows follow the same rules, except that a ``FIRST`` row carries reward 0 and discount 1
  (arrays have no None). Its specs are batched too, so a batched actor can read its shapes.

An exception inside an env is raised from ``reset``/``step`` as ``parallel_pool.EnvError`` naming
the env ids and messages, with ``result`` the ``TimeStep`` the call would have returned (the failed
env's row: zero observation, reward 0, discount 1, ``MID``, or ``FIRST`` if its reset raised); its
next ``step`` starts a new episode (``FIRST``). NaN in an observation or reward passes through.

``dm-acme`` itself does not install on Python 3.11; these classes depend only on ``dm_env``.
"""

from __future__ import annotations

from typing import Any

import dm_env
import numpy as np
from dm_env import specs

import parallel_pool
from parallel_pool.errors import EnvError
from parallel_pool.integrations.common import check_sync_batch_size, reject_kwargs, take_rows

__all__ = ["BatchedEnvironment", "Environment"]


def _batched_spec(spec: Any, n: int) -> Any:
    """A single-env spec with a leading batch dimension of ``n``."""
    if isinstance(spec, dict):
        return {key: _batched_spec(s, n) for key, s in spec.items()}
    shape = (n, *spec.shape)
    if isinstance(spec, specs.DiscreteArray):
        return specs.BoundedArray(shape, spec.dtype, 0, spec.num_values - 1, name=spec.name)
    if isinstance(spec, specs.BoundedArray):
        low = np.broadcast_to(spec.minimum, spec.shape)
        high = np.broadcast_to(spec.maximum, spec.shape)
        return specs.BoundedArray(shape, spec.dtype, low, high, name=spec.name)
    return specs.Array(shape, spec.dtype, name=spec.name)


class BatchedEnvironment(dm_env.Environment):
    """``num_envs`` envs of ``task_id`` as one ``dm_env.Environment`` with batched ``TimeStep``s.

    ``step_type`` is an int32 array of ``dm_env.StepType`` values; ``observation`` is the batch of
    observations (a dict of batches for Dict observations). An env whose row was ``LAST`` starts a
    new episode on the next ``step`` (its action is ignored) and that row is ``FIRST``.
    ``info`` holds the last step's extra fields (``env_id``, ``elapsed_step``, ...).

    Example:
        >>> import numpy as np
        >>> from parallel_pool.integrations.acme import BatchedEnvironment
        >>> env = BatchedEnvironment("CartPole-v1", num_envs=3, seed=0)
        >>> ts = env.reset()
        >>> ts.observation.shape, ts.step_type
        ((3, 4), array([0, 0, 0], dtype=int32))
        >>> ts = env.step(np.zeros(3, dtype=np.int64))
        >>> env.close()
    """

    def __init__(self, task_id: str, num_envs: int = 1, **make_kwargs: Any) -> None:
        check_sync_batch_size(
            make_kwargs, num_envs, "a BatchedEnvironment steps every env at once: batch_size must equal num_envs"
        )
        self.pool = parallel_pool.make_dm(task_id, num_envs=num_envs, **make_kwargs)
        self.num_envs = num_envs
        self.info: dict[str, np.ndarray] = {}
        self._fresh = True

    def _convert(self, ts: dm_env.TimeStep) -> dm_env.TimeStep:
        observation = ts.observation
        fields = observation._asdict()
        obs_keys = [f.key for f in self.pool.spec.obs_fields]
        if "obs" in fields and len(obs_keys) == 1:
            obs = fields.pop("obs")
        else:
            obs = {key: fields.pop(key) for key in obs_keys}
        self.info = fields
        return dm_env.TimeStep(ts.step_type, ts.reward, ts.discount, obs)

    def reset(self) -> dm_env.TimeStep:
        self._fresh = False
        return self._convert_or_raise(self.pool.reset)

    def step(self, action: Any) -> dm_env.TimeStep:
        if self._fresh:
            return self.reset()
        return self._convert_or_raise(lambda: self.pool.step(np.asarray(action)))

    def _convert_or_raise(self, call: Any) -> dm_env.TimeStep:
        try:
            return self._convert(call())
        except EnvError as e:
            raise EnvError(e.errors, self._convert(e.result)) from None

    def observation_spec(self) -> Any:
        return _batched_spec(self.pool.spec.observation_spec(), self.num_envs)

    def action_spec(self) -> Any:
        return _batched_spec(self.pool.action_spec(), self.num_envs)

    def reward_spec(self) -> Any:
        return specs.Array((self.num_envs,), np.float64, name="reward")

    def discount_spec(self) -> Any:
        return specs.BoundedArray((self.num_envs,), np.float32, 0.0, 1.0, name="discount")

    def close(self) -> None:
        self.pool.close()


class Environment(dm_env.Environment):
    """One env of ``task_id`` with the plain ``dm_env.Environment`` API (what Acme's
    ``EnvironmentLoop`` drives), stepped by a one-env native pool.

    Example:
        >>> from parallel_pool.integrations.acme import Environment
        >>> env = Environment("CartPole-v1", seed=0)
        >>> ts = env.reset()
        >>> ts.first(), ts.reward, ts.observation.shape
        (True, None, (4,))
        >>> ts = env.step(1)
        >>> ts.mid(), float(ts.reward), float(ts.discount)
        (True, 1.0, 1.0)
        >>> env.close()
    """

    def __init__(self, task_id: str, **make_kwargs: Any) -> None:
        reject_kwargs(make_kwargs, ("num_envs", "batch_size"), "an Environment is one env: {key} cannot be set")
        self._batched = BatchedEnvironment(task_id, num_envs=1, **make_kwargs)
        self.pool = self._batched.pool
        self.info: dict[str, Any] = {}

    def _single(self, ts: dm_env.TimeStep) -> dm_env.TimeStep:
        step_type = dm_env.StepType(int(ts.step_type[0]))
        obs = take_rows(ts.observation, 0)
        self.info = take_rows(self._batched.info, 0)
        if step_type is dm_env.StepType.FIRST:
            return dm_env.TimeStep(step_type, None, None, obs)
        return dm_env.TimeStep(step_type, np.float64(ts.reward[0]), np.float32(ts.discount[0]), obs)

    def reset(self) -> dm_env.TimeStep:
        return self._single_or_raise(self._batched.reset)

    def step(self, action: Any) -> dm_env.TimeStep:
        action = np.asarray(action)
        return self._single_or_raise(lambda: self._batched.step(action[None]))

    def _single_or_raise(self, call: Any) -> dm_env.TimeStep:
        try:
            return self._single(call())
        except EnvError as e:
            raise EnvError(e.errors, self._single(e.result)) from None

    def observation_spec(self) -> Any:
        return self.pool.spec.observation_spec()

    def action_spec(self) -> Any:
        return self.pool.action_spec()

    def reward_spec(self) -> Any:
        return specs.Array((), np.float64, name="reward")

    def discount_spec(self) -> Any:
        return specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount")

    def close(self) -> None:
        self._batched.close()
