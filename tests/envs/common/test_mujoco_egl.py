"""MuJoCo-based families (Gymnasium's MuJoCo tasks, dm_control's suite) without a working EGL:
render() and from_pixels raise Python exceptions that say why; stepping without frames still works."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


@pytest.mark.parametrize(("make", "task_id", "action"), [
    ("make", "HalfCheetah-v5", "np.zeros((1, 6), np.float32)"),
    ("make_dm", "CheetahRun-v1", "np.zeros((1, 6))"),
])
def test_no_gl_is_a_python_exception(make: str, task_id: str, action: str) -> None:
    # glvnd finds no vendor library: EGL cannot start in the child process.
    script = textwrap.dedent(f"""
        import numpy as np, parallel_pool
        env = parallel_pool.{make}({task_id!r}, num_envs=1, width=8, height=8)
        env.reset()
        try:
            env.render()
        except RuntimeError as e:
            print("render:", e)
        env.step({action})
        print("step: ok")
        pixels = parallel_pool.{make}({task_id!r}, num_envs=1, width=8, height=8, from_pixels=True)
        try:
            pixels.reset()
        except Exception as e:
            print("from_pixels:", type(e).__name__, e)
    """)
    env = dict(os.environ, __EGL_VENDOR_LIBRARY_FILENAMES="/nonexistent/egl_vendor.json",
               __EGL_VENDOR_LIBRARY_DIRS="/nonexistent")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("render: MuJoCo rendering needs EGL: no EGL display"), out.stdout
    assert lines[1] == "step: ok"
    assert lines[2].startswith("from_pixels:") and "MuJoCo rendering needs EGL" in lines[2], out.stdout
