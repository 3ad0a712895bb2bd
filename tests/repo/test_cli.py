"""The ``parallel-pool`` command, run both as ``python -m parallel_pool.cli`` and through ``main()``."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile

import gymnasium
import pytest

import parallel_pool
import parallel_pool_bench as bench
from parallel_pool.cli import main

BENCH_ARGS = ["bench", "CartPole-v1", "--num-envs", "1", "2", "--steps", "200", "--no-gymnasium-async"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    # From outside the source tree: `python -m` puts the working directory first on sys.path, and
    # the source tree's parallel_pool/ has no compiled module (only the installed one has).
    return subprocess.run(
        [sys.executable, "-m", "parallel_pool.cli", *args], capture_output=True, text=True, timeout=120,
        cwd=tempfile.gettempdir(),
    )


def run_main(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def check_list(out: str) -> None:
    lines = out.splitlines()
    # A "note" column ("alias of ...") appears when an earlier test of the session registered an alias.
    assert lines[0].split() in (["task", "id", "family"], ["task", "id", "family", "note"])
    rows = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert rows["CartPole-v1"] == "classic_control"
    assert "Pendulum-v1" in rows


def check_info(out: str) -> None:
    assert "observation_space" in out and "Box(" in out and "(4,), float32)" in out
    assert "action_space" in out and "Discrete(2)" in out
    assert any(line.split() == ["max_episode_steps", "500"] for line in out.splitlines())
    assert "reward_threshold" in out and "475.0" in out
    for key in ("num_envs", "batch_size", "num_threads", "seed", "thread_affinity_offset", "autoreset_mode",
                "episode_stats", "sutton_barto_reward"):
        assert key in out, key


def check_bench_table(out: str) -> None:
    rows = [line for line in out.splitlines() if line.startswith("| CartPole-v1")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    measured = {(c[1], c[2]) for c in cells if c[4] != "-"}
    for n in ("1", "2"):
        for label in ("parallel_pool sync", "parallel_pool async", "gymnasium SyncVectorEnv"):
            assert (n, label) in measured, (n, label, out)
    # Gymnasium's SyncVectorEnv is the best (only) Gymnasium env measured: ratio 1.00x.
    assert all(c[5] == "1.00x" for c in cells if c[2] == "gymnasium SyncVectorEnv")
    assert any("gymnasium AsyncVectorEnv" in r and "--no-gymnasium-async" in r for r in rows)
    assert "vs best Gymnasium" in out


def test_list_subprocess() -> None:
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    check_list(proc.stdout)


def test_list_main(capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_main(capsys, "list")
    assert code == 0
    check_list(out)


def test_info_subprocess() -> None:
    proc = run_cli("info", "CartPole-v1")
    assert proc.returncode == 0, proc.stderr
    check_info(proc.stdout)


def test_info_main(capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_main(capsys, "info", "CartPole-v1")
    assert code == 0
    check_info(out)


def test_bench_subprocess() -> None:
    proc = run_cli(*BENCH_ARGS)
    assert proc.returncode == 0, proc.stderr
    check_bench_table(proc.stdout)
    assert "Traceback" not in proc.stderr


def test_bench_main_writes_json(capsys: pytest.CaptureFixture, tmp_path) -> None:
    path = tmp_path / "bench.json"
    code, out, _ = run_main(capsys, *BENCH_ARGS, "--repeats", "1", "--no-progress", "--json", str(path))
    assert code == 0
    check_bench_table(out)
    record = json.loads(path.read_text())
    assert record["machine"]["nproc"] >= 1
    rates = {(r["method"], r["num_envs"]): r["steps_per_s"] for r in record["throughput"]}
    assert rates[("pp-sync", 2)] > 0 and rates[("gym-sync", 1)] > 0


@pytest.mark.parametrize("command", ["info", "bench"])
def test_unknown_task_subprocess(command: str) -> None:
    proc = run_cli(command, "CartPole-v9")
    assert proc.returncode != 0
    assert "unknown task id 'CartPole-v9'" in proc.stderr
    assert "CartPole-v1" in proc.stderr  # the close match is suggested
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["info", "bench"])
def test_unknown_task_main(capsys: pytest.CaptureFixture, command: str) -> None:
    code, out, err = run_main(capsys, command, "NoSuchTask-v0")
    assert code != 0
    assert "unknown task id 'NoSuchTask-v0'" in err
    assert out == ""


def test_usage_errors(capsys: pytest.CaptureFixture) -> None:
    assert run_main(capsys)[0] == 2
    assert run_main(capsys, "bench", "CartPole-v1", "--steps", "10", "--seconds", "1")[0] == 2
    code, _, err = run_main(capsys, "bench", "CartPole-v1", "--num-envs", "0")
    assert code == 2 and "--num-envs" in err


def test_plot(capsys: pytest.CaptureFixture, tmp_path) -> None:
    path = tmp_path / "bench.png"
    code, _, err = run_main(capsys, "bench", "CartPole-v1", "--num-envs", "1", "--steps", "50", "--repeats", "1",
                            "--methods", "pp-sync", "--no-progress", "--plot", str(path))
    assert code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # matplotlib: the plot extra


def test_plot_without_matplotlib_says_what_to_install(capsys: pytest.CaptureFixture, tmp_path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    path = tmp_path / "bench.png"
    code, _, err = run_main(capsys, "bench", "CartPole-v1", "--num-envs", "1", "--steps", "50", "--repeats", "1",
                            "--methods", "pp-sync", "--no-progress", "--plot", str(path))
    assert code == 2 and "parallel-pool[plot]" in err and not path.exists()


def test_progress_is_a_tqdm_bar_on_stderr(capsys: pytest.CaptureFixture) -> None:
    bar = bench.Progress(2)
    bar.describe("first")
    bar.advance()
    bar.close()
    err = capsys.readouterr().err
    assert "first" in err and "0/2" in err  # tqdm redraws at most every 0.1 s: the first draw
    quiet = bench.Progress(2, enabled=False)
    quiet.describe("nothing")
    quiet.advance()
    quiet.close()
    assert capsys.readouterr().err == ""


def test_watchdog_reports_a_hung_pool() -> None:
    import threading

    class Stuck(bench.Runner):
        """A runner whose run() blocks until it is closed, as a pool whose recv() never returns."""

        steps_per_call = 1
        abortable = True

        def __init__(self) -> None:
            self.closed = threading.Event()

        def run(self, calls: int) -> None:
            self.closed.wait(10)
            raise RuntimeError("the pool is closed")

        def close(self) -> None:
            self.closed.set()

    runner = Stuck()
    with pytest.raises(bench.Hung, match="no result for 0.2 s"):
        bench.time_calls(runner, 1, limit=0.2)
    assert runner.aborted and runner.closed.is_set()


def test_gymnasium_equivalents_are_an_argument_not_a_global() -> None:
    # A task id Gymnasium does not know: its Gymnasium methods run only with an equivalent given,
    # and only in the call that is given it.
    task_id = "NotInGymnasium-v0"
    equivalents = {task_id: lambda: gymnasium.make("CartPole-v1")}
    assert bench.check_available("gym-sync", task_id) == f"Gymnasium has no env {task_id!r}"
    assert bench.check_available("gym-sync", task_id, equivalents) is None
    result = bench.run_benchmarks([task_id], [2], ["gym-sync"], seconds=None, steps=20, repeats=1, progress=False,
                                  gymnasium_equivalents=equivalents)
    assert not result.skipped
    (m,) = result.measurements
    assert (m.method, m.num_envs) == ("gym-sync", 2) and m.steps_per_s
    again = bench.run_benchmarks([task_id], [2], ["gym-sync"], seconds=None, steps=20, repeats=1, progress=False)
    assert again.skipped == {(task_id, "gym-sync"): f"Gymnasium has no env {task_id!r}"}
    assert not again.measurements


def test_ale_pys_vector_env_is_compared_on_atari_tasks(capsys: pytest.CaptureFixture, tmp_path) -> None:
    """`bench Pong-v5 --plot` has ale_py's AtariVectorEnv rows (sync and async), configured as our
    pool: the same observation shape and action space; a non-Atari task skips them with the reason."""
    path = tmp_path / "pong.png"
    code, out, _ = run_main(capsys, "bench", "Pong-v5", "--num-envs", "2", "--steps", "20", "--repeats", "1",
                            "--methods", "pp-sync", "ale-sync", "ale-async", "--no-progress", "--plot", str(path))
    assert code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [line for line in out.splitlines() if "ale_py AtariVectorEnv" in line]
    assert len(rows) == 2 and all("skipped" not in r for r in rows)
    runner = bench.make_runner("ale-sync", "Pong-v5", 2)
    ale_env = runner._step.__self__  # the AtariVectorEnv it steps
    ours = parallel_pool.make_spec("Pong-v5")
    assert ale_env.single_observation_space.shape == ours.observation_space.shape
    assert ale_env.single_action_space == ours.action_space
    runner.run(5)
    runner.close()
    code, out, _ = run_main(capsys, "bench", "CartPole-v1", "--num-envs", "1", "--steps", "20", "--repeats", "1",
                            "--methods", "pp-sync", "ale-sync", "--no-progress")
    assert code == 0 and "skipped: not an Atari task" in out
