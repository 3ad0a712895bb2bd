"""The package's layout: the clone's root does not shadow the installed package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = str(Path(__file__).resolve().parents[2])


def test_import_in_the_clone_root_gets_the_installed_package() -> None:
    # `python -c` puts the working directory first on sys.path: a package directory at the clone's
    # root would shadow the installed one (which alone has the compiled modules).
    code = (
        "import parallel_pool, os; print(os.path.dirname(parallel_pool.__file__)); "
        "print(parallel_pool.make_spec('CartPole-v1').task_id)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    package_dir, task_id = out.stdout.split()
    assert task_id == "CartPole-v1"
    assert os.path.realpath(package_dir) != os.path.join(os.path.realpath(REPO_ROOT), "parallel_pool")
