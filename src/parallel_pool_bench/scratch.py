"""A benchmark's scratch working directory."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def work_in_scratch_dir(prefix: str) -> str:
    """Changes the working directory to a new temporary one, removed with its contents when the
    process exits; returns it. MuJoCo's MUJOCO_LOG.TXT, if a run writes one, goes there."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    os.chdir(path)
    return path
