"""parallel_pool: batched reinforcement-learning environments in C++ with a zero-copy NumPy API.

Example:
    >>> import numpy as np, parallel_pool
    >>> env = parallel_pool.make("CartPole-v1", num_envs=4, seed=0)
    >>> obs, info = env.reset()
    >>> obs, reward, terminated, truncated, info = env.step(np.zeros(4, dtype=np.int64))
    >>> env.close()
"""

from __future__ import annotations

import os

from parallel_pool.base import BasePoolEnv
from parallel_pool.dm_env import DmEnv
from parallel_pool.errors import EnvError, PoolClosedError
from parallel_pool.gymnasium_env import GymEnv, GymnasiumEnv
from parallel_pool.pool import list_all_envs
from parallel_pool.registry import make, make_dm, make_gym, make_gymnasium, make_spec, register
from parallel_pool.registry import register_all_with_gymnasium as _register_all_with_gymnasium
from parallel_pool.spec import EnvSpec
from parallel_pool.vector import ParallelPoolVectorEnv

__version__ = "0.1.0"

__all__ = [
    "BasePoolEnv",
    "DmEnv",
    "EnvError",
    "EnvSpec",
    "GymEnv",
    "GymnasiumEnv",
    "ParallelPoolVectorEnv",
    "PoolClosedError",
    "get_include",
    "list_all_envs",
    "make",
    "make_dm",
    "make_gym",
    "make_gymnasium",
    "make_spec",
    "register",
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


# --- MuJoCo family: parallel_pool/_mujoco_envs.so, an env library next to _native (see the MuJoCo
# block of CMakeLists.txt). A build without it simply has no MuJoCo tasks; one that fails to load
# is an ImportError that says why.
def _load_mujoco_envs() -> None:
    import ctypes

    import gymnasium

    from parallel_pool import _native

    path = os.path.join(os.path.dirname(_native.__file__), "_mujoco_envs.so")
    if not os.path.exists(path):
        return
    # Bare xml_file names (Gymnasium's defaults) are Gymnasium's own model files.
    assets_dir = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
    try:
        library = ctypes.CDLL(path)  # the same handle _native.load_library opens next
        library.parallel_pool_mujoco_set_assets_dir.argtypes = [ctypes.c_char_p]
        library.parallel_pool_mujoco_set_assets_dir.restype = None
        library.parallel_pool_mujoco_set_assets_dir(os.fsencode(assets_dir))
        _native.load_library(path)
    except (OSError, ValueError, AttributeError) as e:
        raise ImportError(f"cannot load parallel_pool's MuJoCo envs ({path}): {e}") from e


_load_mujoco_envs()
# --- end of the MuJoCo family


# --- Atari family: parallel_pool/_atari_envs.so (GPL-2.0, it links ALE; see the Atari block of
# CMakeLists.txt). Its tasks are the ROMs of the installed ale-py wheel, found without importing
# ale_py (find_spec locates the package only). Without ale-py, or without the library, there are
# no Atari tasks and everything else works.
def _load_atari_envs() -> None:
    import ctypes
    import importlib.util

    from parallel_pool import _native

    path = os.path.join(os.path.dirname(_native.__file__), "_atari_envs.so")
    if not os.path.exists(path):
        return
    spec = importlib.util.find_spec("ale_py")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    rom_dirs = [os.path.join(d, "roms") for d in locations if os.path.isdir(os.path.join(d, "roms"))]
    if not rom_dirs:
        return
    try:
        library = ctypes.CDLL(path)  # the same handle _native.load_library opens next
        library.parallel_pool_atari_set_rom_dir.argtypes = [ctypes.c_char_p]
        library.parallel_pool_atari_set_rom_dir.restype = None
        library.parallel_pool_atari_set_rom_dir(os.fsencode(rom_dirs[0]))
        _native.load_library(path)
    except (OSError, ValueError, AttributeError) as e:
        raise ImportError(f"cannot load parallel_pool's Atari envs ({path}): {e}") from e


_load_atari_envs()
# --- end of the Atari family

_register_all_with_gymnasium()
