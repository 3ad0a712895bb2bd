"""Benchmarks of parallel_pool against the vector envs users replace: the machinery behind
``parallel-pool bench`` and the scripts in ``benchmarks/``.

Installed with parallel_pool as a separate top-level package, so that the engine's package holds
no benchmark code. Its modules, one idea each:

- ``runners``: the methods compared (``METHODS``: our sync and async modes, Gymnasium's
  ``SyncVectorEnv``/``AsyncVectorEnv``, SB3's ``SubprocVecEnv``, EnvPool's modes), pre-drawn
  actions, and ``make_runner``, which builds one method's batched env as a ``Runner``.
  A task whose Gymnasium counterpart is not ``gymnasium.make(task_id)`` is given as
  ``gymnasium_equivalents={task_id: make_env}``.
- ``timing``: ``time_calls`` (a timed batch of calls under a watchdog that reports a stuck pool as
  ``Hung``) and ``warm_up``.
- ``throughput``: ``run_benchmarks``, every method timed in interleaved segments, as a
  ``BenchResult`` of ``Measurement``s.
- ``latency``: ``single_env_latency``, one env's ``step`` against ``gymnasium.make``'s.
- ``report``: markdown tables (``format_table``, ``format_latency``, ``format_ratios``), the ratio
  targets' checks (``check_ratios``), ``plot`` and ``write_json``.
- ``machine``: ``machine_info``, what the numbers were measured on.
- ``progress``: ``Progress``, the bar on stderr.
- ``scratch``: ``work_in_scratch_dir``, a benchmark's working directory, removed at exit.
- ``script``: what every ``benchmarks/bench_*.py`` does around its measurements (common options,
  the report's header, the throughput section, the targets and the JSON record), and what the
  scripts that time runners of their own share (options, skipped methods, interleaved medians,
  rate tables).

Example:
    >>> from parallel_pool_bench import format_table, run_benchmarks
    >>> result = run_benchmarks(["CartPole-v1"], [1, 4], ["pp-sync", "gym-sync"], seconds=0.1, repeats=1,
    ...                         progress=False)
    >>> print(format_table(result))  # doctest: +SKIP
"""

from parallel_pool_bench.latency import single_env_latency
from parallel_pool_bench.machine import machine_info
from parallel_pool_bench.progress import Progress
from parallel_pool_bench.report import (
    check_ratios,
    format_latency,
    format_ratios,
    format_table,
    plot,
    rates_by_cell,
    write_json,
)
from parallel_pool_bench.runners import (
    ACTION_BATCHES,
    DEFAULT_METHODS,
    GYMNASIUM_METHODS,
    MAX_SUBPROCESSES,
    METHODS,
    PUFFER_METHODS,
    PYTHON_BACKEND_METHODS,
    SUBPROCESS_METHODS,
    AsyncRunner,
    GymnasiumEquivalents,
    Runner,
    Skipped,
    SyncRunner,
    async_batch_size,
    check_available,
    draw_actions,
    make_runner,
)
from parallel_pool_bench.scratch import work_in_scratch_dir
from parallel_pool_bench.script import (
    Check,
    add_common_args,
    add_limit_args,
    add_pixel_args,
    add_runner_args,
    available_methods,
    finish_report,
    interleaved_medians,
    interleaved_methods,
    limit_configs,
    print_rates,
    ratio_benchmark,
    start_report,
    throughput_section,
)
from parallel_pool_bench.throughput import BenchResult, Measurement, run_benchmarks
from parallel_pool_bench.timing import HANG_SECONDS, WARMUP_SECONDS, Hung, time_calls, warm_up

__all__ = [
    "ACTION_BATCHES",
    "DEFAULT_METHODS",
    "GYMNASIUM_METHODS",
    "HANG_SECONDS",
    "MAX_SUBPROCESSES",
    "METHODS",
    "PUFFER_METHODS",
    "PYTHON_BACKEND_METHODS",
    "SUBPROCESS_METHODS",
    "WARMUP_SECONDS",
    "AsyncRunner",
    "Check",
    "BenchResult",
    "GymnasiumEquivalents",
    "Hung",
    "Measurement",
    "Progress",
    "Runner",
    "Skipped",
    "SyncRunner",
    "add_common_args",
    "add_limit_args",
    "add_pixel_args",
    "add_runner_args",
    "async_batch_size",
    "available_methods",
    "check_available",
    "check_ratios",
    "draw_actions",
    "format_latency",
    "finish_report",
    "format_ratios",
    "format_table",
    "interleaved_medians",
    "interleaved_methods",
    "machine_info",
    "limit_configs",
    "make_runner",
    "plot",
    "print_rates",
    "ratio_benchmark",
    "rates_by_cell",
    "run_benchmarks",
    "single_env_latency",
    "start_report",
    "throughput_section",
    "time_calls",
    "warm_up",
    "work_in_scratch_dir",
    "write_json",
]
