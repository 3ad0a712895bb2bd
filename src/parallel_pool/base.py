"""What every front-end shares: building the native pool, the sync/async calls, close and repr."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any, Self

import numpy as np

from parallel_pool import _native, attributes, tasks, xla
from parallel_pool.errors import EnvError
from parallel_pool.options import env_seeds, resolve
from parallel_pool.python_envs import PythonEnvSource, WorkerGroup, python_source
from parallel_pool.spec import EnvSpec
from parallel_pool.unpack import Unpacker


class PoolContext:
    """What a pool of ``num_envs`` envs with a ``close()`` is besides: a context manager that closes
    it on exit, and ``len(pool) == pool.num_envs``. Shared by ``BasePoolEnv`` and the Ray layer's
    ``DistributedPool``."""

    num_envs: int

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.num_envs


class BasePoolEnv(PoolContext):
    """A batch of ``num_envs`` envs of one task, stepped by a native thread pool.

    Sync mode (``batch_size == num_envs``): ``step`` steps every env; row ``i`` is env ``i``.
    Async mode (``batch_size < num_envs``): ``send`` returns at once, ``recv`` returns the first
    ``batch_size`` envs to finish, and ``info["env_id"]`` says which.
    """

    # The class of ``self.spec`` for a native task (the EnvPool layout's pools give their own).
    _spec_class: type[EnvSpec] = EnvSpec

    def __init__(self, task_id: str | PythonEnvSource, **kwargs: Any) -> None:
        # The worker processes of a pool of Python envs (python_envs.py); None for native envs.
        self.workers: WorkerGroup | None = None
        # Seeds that seed() set for the next reset() that gives none.
        self._next_seeds: list[int] | None = None
        python = python_source(task_id, kwargs) if isinstance(task_id, str) else None
        if python is not None:  # "gymnasium:<id>", or a name register() gave one
            task_id, kwargs = python
        if isinstance(task_id, PythonEnvSource):
            self._native, self.spec, pool, self.workers = task_id.open(kwargs)
            self.task_id = task_id.task_id
            self._setup(pool)
            return
        render_mode = kwargs.pop("render_mode", None)
        if render_mode is not None and "render_mode" in tasks.task_info(task_id)["defaults"]:
            # A task that declares render_mode simulates what only a rendered episode shows
            # (LunarLander's flame particles), as Gymnasium's env does with its render_mode.
            kwargs["render_mode"] = render_mode
        base_id, pool, env_config = resolve(task_id, kwargs)
        self.task_id = task_id
        seeds = env_seeds(pool["seed"], pool["num_envs"])
        # Each env's seed, as its np_random_seed: the last one it was given (reset(seed=...) gives new ones).
        self._env_seeds = list(seeds)
        options = _native.PoolOptions(
            num_envs=pool["num_envs"],
            seeds=seeds,
            batch_size=pool["batch_size"],
            num_threads=pool["num_threads"],
            thread_affinity_offset=pool["thread_affinity_offset"],
            autoreset_mode=pool["autoreset_mode"],
            episode_stats=pool["episode_stats"],
        )
        self._native = _native.Pool(base_id, env_config, options, env_configs=pool["env_kwargs"])
        pool["num_threads"] = self._native.num_threads
        self.spec = self._spec_class(task_id, self._native.spec, pool)
        self._setup(pool)
        if render_mode not in (None, self.render_mode):
            self._native.close()
            modes = "'rgb_array' or None" if self.render_mode else "None (it does not render)"
            raise ValueError(f"render_mode of {task_id} must be {modes}, got {render_mode!r}")

    def _setup(self, pool: dict[str, Any]) -> None:
        """The attributes every front-end reads, from the native pool and its spec."""
        self.num_envs: int = pool["num_envs"]
        self.batch_size: int = pool["batch_size"]
        self.is_async = self.batch_size < self.num_envs
        self.autoreset_mode: str = pool["autoreset_mode"]
        self._render_env_id: int = pool.get("render_env_id", 0)
        self._unpacker = Unpacker(self.spec, self._native.field_names)
        self.observation_space = self.spec.observation_space
        self.action_space = self.spec.action_space
        # A Python env's Tuple, nested, carried or pickled action space: a batch of its actions (a
        # tuple of arrays, nested dicts, ...) becomes the engine's action fields. None: as it is.
        self._flatten_action: Callable[[Any], Any] | None = self.spec.action_flattener(self.num_envs)
        # render_width/render_height: the size render() shrinks the frames to (None: their own).
        try:
            self._render_size = self.spec.apply_render_size()
        except ValueError:
            BasePoolEnv.close(self)  # the pool (and a Python env's workers) was already started
            raise
        # Gymnasium's convention: "rgb_array" when the task renders (render() returns frames).
        self.render_mode: str | None = "rgb_array" if self.spec.render_shape is not None else None

    # --- the spaces, as EnvPool names them and as Gymnasium's vector envs name them ---
    # ``observation_space``/``action_space`` are the single-env spaces (EnvPool's convention), and
    # so are ``single_*`` unless assigned: CleanRL's scripts assign them
    # (``envs.single_action_space = envs.action_space``), as they assign ``is_vector_env``.
    is_vector_env: bool = True

    @property
    def single_observation_space(self) -> Any:
        return self.__dict__.get("_single_observation_space", self.observation_space)

    @single_observation_space.setter
    def single_observation_space(self, space: Any) -> None:
        self._single_observation_space = space

    @property
    def single_action_space(self) -> Any:
        return self.__dict__.get("_single_action_space", self.action_space)

    @single_action_space.setter
    def single_action_space(self, space: Any) -> None:
        self._single_action_space = space

    @property
    def P(self) -> dict[int, dict[int, list[tuple[float, int, float, bool]]]]:  # noqa: N802 (Gymnasium's name)
        """The transition table of a toy-text task, as Gymnasium's ``env.unwrapped.P``."""
        return self.spec.transition_table()

    @property
    def config(self) -> dict[str, Any]:
        """Every option of this pool and its env, with the values in use."""
        return dict(self.spec.config)

    @property
    def closed(self) -> bool:
        return self._native.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        # Gymnasium's VectorEnv.close() and its wrappers assign `closed`: True closes the pool;
        # a closed pool cannot be opened again.
        if value:
            self.close()
        elif self.closed:
            raise ValueError("a closed pool cannot be reopened; make a new one")

    # --- the raw calls, shared by the front-ends ---
    # The native pool checks env ids (shape, range, duplicates, in flight) and whether it is closed;
    # a call that has work to do before it calls in asks the native pool first whether it is open.
    def _reset_arrays(self, env_id: Any, seed: Any, options: dict[str, Any] | None, as_step: bool = False) -> tuple:
        """Resets envs and returns their rows (all envs in order; or the given ones, in order).
        ``as_step``: an EnvError's result takes the step form rather than the reset form."""
        self._native.check_open()
        if options and "reset_mask" in options:
            if env_id is not None:
                raise ValueError("pass either env_id or options['reset_mask'], not both")
            env_id = np.flatnonzero(_check_reset_mask(options["reset_mask"], self.num_envs))
        # One seed per env of the pool: the native pool picks those of the env ids it resets.
        seeds = None if seed is None else env_seeds(seed, self.num_envs)
        if seeds is None and self._next_seeds is not None:
            seeds, self._next_seeds = self._next_seeds, None
        self._pass_reset_options(options, env_id)
        if self.is_async and env_id is None:
            # EnvPool's async reset(): queue every env's reset, return the first batch to finish.
            self._native.reset(None, seeds)
            arrays, errors = self._native.recv(None)
        elif self.is_async:
            # Given envs (received, not in flight) are reset now and their rows returned in order;
            # the other envs' steps in flight are untouched and still come through recv().
            arrays, errors = self._native.reset_now(env_id, seeds)
        elif env_id is None or np.array_equal(env_id, np.arange(self.num_envs)):
            arrays, errors = self._native.reset_recv(None, seeds)
        else:
            arrays, errors = self._native.reset_now(env_id, seeds)
        if seeds is not None and self.workers is None:  # the native pool has checked the env ids
            for i in range(self.num_envs) if env_id is None else np.asarray(env_id, dtype=np.int64).ravel():
                self._env_seeds[int(i)] = seeds[int(i)]
        if errors:
            raise EnvError(errors, self._convert(arrays, reset=not as_step))
        return arrays

    def seed(self, seed: Any = None) -> list[int]:
        """Seeds every env at the next ``reset()`` that gives no seed, as gym's and SB3's ``seed``:
        an int gives env ``i`` the seed ``seed + i``, a list one per env, None fresh entropy.
        Returns the seeds. (EnvPool's ``seed()`` only warns; ``make(..., seed=...)`` seeds the first
        reset, ``reset(seed=...)`` any.)"""
        self._native.check_open()
        self._next_seeds = env_seeds(seed, self.num_envs)
        return list(self._next_seeds)

    @property
    def np_random_seed(self) -> tuple[int, ...]:
        """Each env's seed: the one it was last given (at its first reset, or by ``reset(seed=...)``),
        as ``SyncVectorEnv.np_random_seed``."""
        if self.workers is not None:
            return self.get_attr("np_random_seed")
        return tuple(self._env_seeds)

    def async_reset(self, seed: Any = None, env_id: Any = None, options: dict[str, Any] | None = None) -> None:
        """Queues a reset of every env (or of those in ``env_id``); collect the results with ``recv``.

        ``seed`` as in ``reset``: an int gives env ``i`` the seed ``seed + i``, a list one per env
        (all ``num_envs`` of them, even when ``env_id`` picks a few). ``options`` go to each Python
        env's ``reset``.
        """
        self._native.check_open()
        seeds = None if seed is None else env_seeds(seed, self.num_envs)
        self._pass_reset_options(options, env_id)
        self._native.reset(env_id, seeds)

    def _pass_reset_options(self, options: dict[str, Any] | None, env_id: Any) -> None:
        """Hands a Python env's ``reset`` the options (but ``reset_mask``, the pool's own) of the
        resets about to be queued, as Gymnasium's vector envs do: the same dict to every env reset.
        A native env takes no options but ``reset_mask``."""
        rest = {k: v for k, v in options.items() if k != "reset_mask"} if options else None
        if not rest or self.workers is None:
            return
        ids = range(self.num_envs) if env_id is None else np.atleast_1d(np.asarray(env_id)).tolist()
        self.workers.set_reset_options({int(i): rest for i in ids if 0 <= int(i) < self.num_envs})

    def set_reset_options(self, options: Sequence[dict[str, Any] | None], env_ids: Any = None) -> None:
        """Gives each env in ``env_ids`` (all if None) its own options for its next reset, one dict
        (or None) per env, as SB3's ``VecEnv.set_options`` does; a pool of Python envs only."""
        workers = self._require_workers("set_reset_options")
        ids = self._env_ids(env_ids)
        if len(options) != len(ids):
            raise ValueError(f"set_reset_options needs one options dict (or None) per env ({len(ids)}), "
                             f"got {len(options)}")
        workers.set_reset_options({i: (dict(o) if o else None) for i, o in zip(ids, options)})

    # --- the envs' own methods and attributes (Gymnasium's call/get_attr/set_attr) ---
    def call(self, name: str, *args: Any, env_ids: Any = None, **kwargs: Any) -> tuple[Any, ...]:
        """Gymnasium's ``VectorEnv.call``: each env's ``name`` (found through its wrappers, as
        ``env.get_wrapper_attr``), called with ``args`` and ``kwargs`` if callable, else its value;
        one result per env of ``env_ids`` (all if None), in that order.

        A Python env's pool calls its env objects, safely while steps are in flight (a worker runs the
        call between its envs' steps); an exception raised by an env is raised here, with the env's
        traceback; ``reset``, ``step`` and ``close`` are the pool's own (a ``ValueError``). A native
        env's attributes are its config and ``attributes.ATTRIBUTES``, its one method ``render``."""
        ids = self._env_ids(env_ids)
        self._native.check_open()
        if self.workers is None:
            return attributes.native_call(self, name, args, kwargs, ids)
        return tuple(self.workers.run("call", [(i, (name, args, kwargs)) for i in ids], f"call({name!r})"))

    def get_attr(self, name: str, env_ids: Any = None) -> tuple[Any, ...]:
        """Gymnasium's ``VectorEnv.get_attr``: ``call(name)`` (a method is called, as Gymnasium does)."""
        return self.call(name, env_ids=env_ids)

    def set_attr(self, name: str, values: Any, env_ids: Any = None) -> None:
        """Gymnasium's ``VectorEnv.set_attr``: ``env.set_wrapper_attr(name, value)`` on each env;
        ``values`` is a list or tuple of one value per env of ``env_ids`` (all if None), or any other
        object, which every env gets. A native env's config is fixed: ``AttributeError``, saying so."""
        ids = self._env_ids(env_ids)
        if not isinstance(values, (list, tuple)):
            values = [values] * len(ids)
        if len(values) != len(ids):
            # Gymnasium's message.
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {len(ids)} environments."
            )
        self._native.check_open()
        if self.workers is None:
            attributes.native_set(self, name)
        self.workers.run("set_wrapper", [(i, (name, v)) for i, v in zip(ids, values)], f"set_attr({name!r})")

    def _require_workers(self, what: str) -> WorkerGroup:
        self._native.check_open()  # a closed pool: PoolClosedError
        if self.workers is None:
            raise NotImplementedError(f"{what}() reaches the envs of a pool of Python envs; a native pool's "
                                      "envs have no Python objects")
        return self.workers

    def _env_ids(self, env_ids: Any) -> list[int]:
        """``env_ids`` as a list of valid env ids (all if None); negative ids count from the end."""
        if env_ids is None:
            return list(range(self.num_envs))
        ids = np.atleast_1d(np.asarray(env_ids))
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise TypeError(f"env_ids must be None, an int or a sequence of ints, got {env_ids!r}")
        out = []
        for i in ids.tolist():
            if not -self.num_envs <= i < self.num_envs:
                raise ValueError(f"env id {i} is out of range for a pool of {self.num_envs} envs")
            out.append(i % self.num_envs)
        return out

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queues one step for each env in ``env_id`` (all envs if None) and returns at once.

        ``action`` has one row per env id. Sending to an env whose previous result has not been
        received yet is a ``ValueError``.
        """
        if self._flatten_action is not None:
            action = self._flatten_action(action)
        self._native.send(action, env_id)

    def _recv_arrays(self, timeout: float | None) -> tuple:
        if timeout is not None and (not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be None or a non-negative number of seconds, got {timeout!r}")
        arrays, errors = self._native.recv(timeout)
        if errors:
            raise EnvError(errors, self._convert(arrays, reset=False))
        return arrays

    def _step_arrays(self, action: Any, env_id: Any) -> tuple:
        if self._flatten_action is not None:
            action = self._flatten_action(action)
        arrays, errors = self._native.step(action, env_id)
        if errors:
            raise EnvError(errors, self._convert(arrays, reset=False))
        return arrays

    def _convert(self, arrays: tuple, reset: bool) -> Any:
        """The native arrays of a batch in this front-end's return form (``EnvError.result``)."""
        return arrays

    def xla(self) -> tuple[Any, Any, Any, Any]:
        """EnvPool's XLA interface: ``handle, recv, send, step = env.xla()``, pure functions that run
        inside ``jax.jit`` and ``jax.lax`` loops on the CPU (``parallel_pool.xla`` says what each takes
        and returns). Needs jax (``pip install "parallel-pool[jax]"``) and a build with
        ``PP_WITH_XLA`` (the default); importing parallel_pool never imports jax.

        Example (``env`` a sync pool of CartPole-v1, reset first)::

            handle, recv, send, step = env.xla()

            @jax.jit
            def rollout(handle):
                def body(handle, _):
                    handle, (obs, reward, terminated, truncated, info) = step(handle, jnp.zeros(env.num_envs, int))
                    return handle, reward
                return jax.lax.scan(body, handle, None, length=100)
        """
        if not hasattr(_native, "_xla_targets"):
            raise RuntimeError(
                "xla() is not in this build of parallel_pool: it was configured with PP_WITH_XLA=OFF; "
                "reinstall with it ON (the default) to use it"
            )
        if importlib.util.find_spec("jax") is None:
            raise ImportError('xla() needs jax: pip install "parallel-pool[jax]"')
        return xla.make_xla(self)

    def _xla_result(self, arrays: tuple) -> Any:
        """The JAX arrays of one batch (xla()'s recv and step) in this front-end's return form,
        built only of what JAX traces (no key that depends on the values)."""
        raise NotImplementedError(f"{type(self).__name__} has no xla() result form")

    def render(self, env_id: Any = None, *, env_ids: Any = None) -> np.ndarray:
        """The current RGB frame of each env in ``env_id``, as a ``(n, height, width, 3)`` uint8
        array (``spec.render_shape`` per frame), as EnvPool's ``render``: None is the pool option
        ``render_env_id`` (default 0) alone, and one env id alone gives a batch of one. A Python
        env's frames keep their own dtype and shape (a list, one per env, when they are not arrays).
        ``env_ids=`` is the same argument under EnvPool's name.

        The envs must have been reset and have no step in flight: in async mode, pass env ids whose
        results were received (``info["env_id"]``). A task that does not render raises ValueError.
        With render_width/render_height, each frame is shrunk as
        ``cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)``.
        """
        if env_ids is not None:
            if env_id is not None:
                raise ValueError("pass env_id or env_ids (EnvPool's name), not both")
            env_id = env_ids
        if env_id is None:
            env_id = self._render_env_id
        if isinstance(env_id, (int, np.integer)) and not isinstance(env_id, bool):
            env_id = np.array([env_id], dtype=np.int64)
        frames = self.spec.decode_frames(self._native.render(env_id))
        if self._render_size is None:
            return frames
        return _native.resize_frames(frames, *self._render_size)

    def debug_states(self, env_id: Any = None) -> list[dict[str, Any]]:
        """Each env's internal state as named values, one dict per env in ``env_id`` (all if None),
        for tasks that give one: MiniGrid's and BabyAI's (EnvPool's debug state: the grid's and box
        contents' minigrid codes, x-major as ``Grid.encode``, the agent, what it carries, the
        mission, ``max_steps``). Other tasks raise RuntimeError. The same conditions as ``render``:
        the envs were reset and have no step in flight."""
        if isinstance(env_id, (int, np.integer)) and not isinstance(env_id, bool):
            env_id = np.array([env_id], dtype=np.int64)
        states: list[dict[str, Any]] = self._native.debug_states(env_id)
        return states

    def close(self, **kwargs: Any) -> None:
        """Stops and joins every worker thread, even with steps in flight. Idempotent.

        ``kwargs`` (Gymnasium's vector envs take some, e.g. ``terminate``) are accepted and unused.
        A pool of Python envs stops its worker processes first (so no step waits on one)."""
        if self.workers is not None:
            self.workers.close()
        self._native.close()

    def __repr__(self) -> str:
        mode = f"async, batch_size={self.batch_size}" if self.is_async else "sync"
        state = ", closed" if self.closed else ""
        return (
            f"{type(self).__name__}({self.task_id!r}, num_envs={self.num_envs}, {mode}, "
            f"num_threads={self._native.num_threads}, autoreset_mode={self.autoreset_mode!r}{state})"
        )


def _check_reset_mask(mask: Any, num_envs: int) -> np.ndarray:
    # The same checks, and messages, as Gymnasium's vector envs.
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError(
            "`options['reset_mask']` must contain a boolean array with at least one True value, "
            f"got reset_mask={mask}"
        )
    return mask
