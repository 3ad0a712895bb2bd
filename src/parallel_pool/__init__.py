"""parallel_pool: batched reinforcement-learning environments in C++ with a zero-copy NumPy API.

Example:
    >>> import numpy as np, parallel_pool
    >>> env = parallel_pool.make("CartPole-v1", num_envs=4, seed=0)
    >>> obs, info = env.reset()
    >>> obs, reward, terminated, truncated, info = env.step(np.zeros(4, dtype=np.int64))
    >>> env.close()

Importing the package loads every env family (``families/*.so``) and registers each task with
Gymnasium as ``parallel_pool/<task id>`` (``factory.register_with_gymnasium``). The installed
Gymnasium plug-in (``_parallel_pool_gymnasium``, from a .pth file) registers the same ids when
Gymnasium is imported, from the build-time task manifest, so that
``gymnasium.make_vec("parallel_pool/CartPole-v1", num_envs=4)`` needs no ``import parallel_pool``;
the ids it registered are skipped here.
"""

from __future__ import annotations

import os

from parallel_pool import _native
from parallel_pool.base import BasePoolEnv
from parallel_pool.dm_env import DmEnv
from parallel_pool.envpool_ids import add_envpool_aliases as _add_envpool_aliases
from parallel_pool.envpool_ids import add_envpool_vizdoom_maps as _add_envpool_vizdoom_maps
from parallel_pool.envpool_layout import as_envpool
from parallel_pool.errors import EnvError, PoolClosedError, PoolForkedError
from parallel_pool.factory import (
    make,
    make_dm,
    make_gym,
    make_gymnasium,
    make_pettingzoo,
    make_pettingzoo_env,
    make_python,
    make_spec,
    register,
)
from parallel_pool.factory import register_with_gymnasium as _register_with_gymnasium
from parallel_pool.families import load_installed_families as _load_installed_families
from parallel_pool.gymnasium_env import GymEnv, GymnasiumEnv
from parallel_pool.pettingzoo_api import PettingZooPool
from parallel_pool.spec import EnvSpec
from parallel_pool.tasks import UnavailableTaskError, list_all_envs, unavailable_envs
from parallel_pool.vector import ParallelPoolVectorEnv

__version__ = "0.1.0"

__all__ = [
    "as_envpool",
    "BasePoolEnv",
    "DmEnv",
    "EnvError",
    "EnvSpec",
    "GymEnv",
    "GymnasiumEnv",
    "ParallelPoolVectorEnv",
    "PettingZooPool",
    "PoolClosedError",
    "PoolForkedError",
    "UnavailableTaskError",
    "get_cmake_dir",
    "get_include",
    "list_all_envs",
    "make",
    "make_dm",
    "make_gym",
    "make_gymnasium",
    "make_pettingzoo",
    "make_pettingzoo_env",
    "make_python",
    "make_spec",
    "register",
    "unavailable_envs",
]


def get_include() -> str:
    """The directory holding the env-author headers, for building an env library outside this
    repository: ``#include "core/env.h"`` and ``#include "core/registry.h"``."""
    installed = os.path.join(os.path.dirname(__file__), "include")
    if os.path.exists(os.path.join(installed, "core", "env.h")):
        return installed
    # An editable install runs from the source tree (src/parallel_pool/), where the headers live
    # under native/.
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "native")


def get_cmake_dir() -> str:
    """The directory holding the engine's CMake package config, for C++ programs that use the engine
    without Python and for env libraries built outside this repository::

        cmake -Dparallel_pool_DIR="$(python -c 'import parallel_pool; print(parallel_pool.get_cmake_dir())')" ...

    then ``find_package(parallel_pool CONFIG REQUIRED)`` gives the targets ``parallel_pool::engine``
    and ``parallel_pool::headers`` and the function ``parallel_pool_add_env_library`` (README, "C++").
    """
    return os.path.join(os.path.dirname(os.path.abspath(_native.__file__)), "cmake")


# Every env family, classic control included, is an env library under families/ (families.py);
# then EnvPool's old ids of those tasks are added (envpool_ids.py), and every task is listed with
# Gymnasium.
_load_installed_families()
_add_envpool_aliases()
_add_envpool_vizdoom_maps()
_register_with_gymnasium(list_all_envs())
