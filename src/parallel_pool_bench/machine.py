"""What a benchmark's numbers were measured on: CPUs, library versions, platform and date."""

from __future__ import annotations

import datetime
import os
import platform
from typing import Any

import gymnasium
import numpy as np

import parallel_pool


def machine_info() -> dict[str, Any]:
    """The machine and software a measurement ran on, for its table header and JSON record.

    ``nproc`` is the CPUs this process may run on (its affinity), not the machine's count: that is
    what a pool with ``num_threads=0`` and every subprocess-based vector env share.

    Example:
        >>> from parallel_pool_bench import machine_info
        >>> info = machine_info()
        >>> sorted(info)
        ['cpu', 'date', 'gymnasium', 'nproc', 'numpy', 'parallel_pool', 'platform', 'python']
    """
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        nproc = os.cpu_count() or 0
    return {
        "nproc": nproc,
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": gymnasium.__version__,
        "parallel_pool": parallel_pool.__version__,
        "platform": platform.platform(),
        "date": datetime.date.today().isoformat(),
    }
