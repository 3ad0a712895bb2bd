"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any


def _avx512() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= set(flags)


# The oracles' np.dot and np.linalg.norm (dm_control's randomizers and observations) are OpenBLAS's,
# whose kernels round differently: SkylakeX's ddot ends in a fused multiply-add loop, Haswell's (and
# Zen's) does not, so dm_control's own first states differ in the last bit between them. The
# dm_control envs reproduce SkylakeX's roundings (native/envs/dm_control, "BLAS's fused multiply-adds"):
# on a CPU with AVX-512 the oracles take that kernel, whatever OPENBLAS_CORETYPE the machine sets
# (some set Haswell). Set before NumPy's first import, which loads OpenBLAS; child interpreters inherit it.
if _avx512() and "numpy" not in sys.modules:
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from async_batches import AsyncBatch  # noqa: E402
from async_batches import async_rows as _async_rows  # noqa: E402

# Importing rl_games' torch_runner (tests/integrations/test_integration_rl_games.py, at collection) makes
# torch's inductor cache folder, /tmp/torchinductor_<user> by default, even though nothing is
# compiled: TORCHINDUCTOR_CACHE_DIR puts it in a folder of this run's, removed at its end (set
# before collection, which imports the test modules; subprocesses inherit it).
_TORCHINDUCTOR_DIR: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _TORCHINDUCTOR_DIR
    # Ray's nodes (the Ray, RLlib and Ctrl-C tests, and their subprocesses) bind to loopback, not to
    # the machine's network address: Ray reads this when it is first imported (at collection).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        _TORCHINDUCTOR_DIR = tempfile.mkdtemp(prefix="pp_tests_torchinductor_")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = _TORCHINDUCTOR_DIR


def pytest_unconfigure(config: pytest.Config) -> None:
    if _TORCHINDUCTOR_DIR is not None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        shutil.rmtree(_TORCHINDUCTOR_DIR, ignore_errors=True)


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's learn() makes a log folder (tempdir/SB3-<date>) even when it writes nothing, in this
    process and in the examples' subprocesses: SB3_LOGDIR puts them in pytest's temporary directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
        yield


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def _valid_actions(env: Any, n: int, seed: int) -> Any:
    """Actions for ``n`` envs of any pool: each action field's single-env space sampled per env. A
    per-player field (``(n, max_num_players, ...)``) takes its lower bound: its space is the union of
    the players' own ranges (MPE's speaker acts in [0, 3), its listener in [0, 5)), which sampling it
    could leave."""
    spec = env.spec
    out = {}
    for field in spec.action_fields:
        if field.per_player:
            low = field.bounds()[0]
            out[field.key] = np.broadcast_to(low, (n, spec.max_num_players, *low.shape)).copy()
        else:
            space = field.gymnasium_space()
            space.seed(seed)
            out[field.key] = np.stack([space.sample() for _ in range(n)])
    return out["action"] if list(out) == ["action"] else out


@pytest.fixture
def valid_actions() -> Callable[[Any, int, int], Any]:
    """``valid_actions(env, n, seed)``: actions for ``n`` envs of any task (``_valid_actions``)."""
    return _valid_actions


def _async_round_trips(task_id: str, num_envs: int, batch_size: int, sends: int) -> None:
    """``task_id``'s async pool (seed 0): after ``async_reset``, ``sends`` batches of ``batch_size``
    envs received, each sent valid actions, and one batch more received; then closed."""
    import parallel_pool

    env = parallel_pool.make(task_id, num_envs=num_envs, batch_size=batch_size, seed=0)
    try:
        env.async_reset()
        for i in range(sends):
            _, _, _, _, info = env.recv()
            assert len(info["env_id"]) == batch_size
            env.send(_valid_actions(env, batch_size, i), info["env_id"])
        env.recv()
    finally:
        env.close()


@pytest.fixture
def async_round_trips() -> Callable[[str, int, int, int], None]:
    """``async_round_trips(task_id, num_envs, batch_size, sends)`` (``_async_round_trips``)."""
    return _async_round_trips


def _step_alike(ours: Any, theirs: Any, action: Any, obs: bool = True) -> tuple[Any, Any]:
    """Steps two vector envs with the same ``action`` and checks that they return the same
    observations (unless ``obs`` is False: the caller compares them), rewards, terminations and
    truncations, array for array. Returns both step results."""
    got, want = ours.step(action), theirs.step(action)
    for k in range(0 if obs else 1, 4):
        np.testing.assert_array_equal(got[k], want[k])
    return got, want


@pytest.fixture
def step_alike() -> Callable[..., tuple[Any, Any]]:
    """``step_alike(ours, theirs, action, obs=True)``: both stepped and compared (``_step_alike``)."""
    return _step_alike


AsyncRows = Callable[..., Iterator[AsyncBatch]]


@pytest.fixture
def async_rows() -> AsyncRows:
    """Drives an async pool for the oracle tests (``async_batches.async_rows``)."""
    return _async_rows


# The API conformance tests that hold for any env run over both backends: the native envs and
# the Python-env backend (the same task as Gymnasium's env, in worker processes).
BACKENDS = ("native", "python")
# The tutorial family's tasks, which Gymnasium lacks, run on the Python backend as their Python
# twins (python_twins.py: the same spaces, dynamics, seeds and faults).
TWIN_TASKS = ("GuessingGame-v0", "Faulty-v0")


def python_task_id(task_id: str) -> str:
    """The id that makes ``task_id``'s pool on the Python backend."""
    if task_id in TWIN_TASKS:
        return f"gymnasium:python_twins:{task_id}"
    return "gymnasium:" + task_id


def python_task_kwargs(task_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` for the Python backend: one worker process (what the tests check is the API, not
    the speed) unless given; a twin also gets its pool env id (``env_kwargs``: a Python env does not
    know it, and Faulty-v0's ``fault_env_id`` needs it) and renders, as the native task does."""
    kwargs = dict(kwargs)
    kwargs.setdefault("num_workers", 1)
    if task_id in TWIN_TASKS:
        num_envs = kwargs.get("num_envs", 1)
        given = kwargs.get("env_kwargs") or [{}] * num_envs
        kwargs["env_kwargs"] = [{**kw, "env_id": i} for i, kw in enumerate(given)]
        if task_id == "GuessingGame-v0":
            kwargs.setdefault("render_mode", "rgb_array")
    return kwargs


class PoolMaker:
    """``make_pool(task_id, **kwargs)``: ``parallel_pool.make`` on the backend under test; pools it
    makes are closed after the test (closing twice is fine). ``make_pool.args(task_id, **kwargs)``
    gives the ``(task_id, kwargs)`` to hand an integration or front-end for the same pool."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.pools: list[Any] = []

    def args(self, task_id: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        if self.backend == "python":
            return python_task_id(task_id), python_task_kwargs(task_id, kwargs)
        return task_id, kwargs

    def __call__(self, task_id: str, **kwargs: Any) -> Any:
        import parallel_pool

        task_id, kwargs = self.args(task_id, **kwargs)
        pool = parallel_pool.make(task_id, **kwargs)
        self.pools.append(pool)
        return pool


@pytest.fixture(params=BACKENDS)
def make_pool(request: pytest.FixtureRequest) -> Iterator[PoolMaker]:
    maker = PoolMaker(request.param)
    yield maker
    for pool in maker.pools:
        pool.close()
