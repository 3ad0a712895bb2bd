"""Reliability probes: the same bad inputs and misuses, run against parallel_pool and EnvPool.

Each probe is a few lines run in a fresh interpreter of the library under test, with a time limit,
because the outcome may be a crash or a hang. An outcome is one of: ``error`` (a Python exception;
its type and message are shown), ``accepted`` (the call returned as if the input were fine),
``crash`` (the process died by a signal or aborted), ``hang`` (no answer within the limit).

Usage:

    python benchmarks/reliability_probes.py --ours /path/to/venv/bin/python \\
        [--envpool /path/to/envpool-venv/bin/python] [--timeout 20]

The EnvPool column needs ``pip install envpool==1.2.5`` in its interpreter's environment.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import tempfile
import textwrap

# Prologue per library: `make(task_id, **kwargs)` returns a Gymnasium-style pool of each library.
PROLOGUE = {
    "parallel_pool": "import numpy as np, parallel_pool\nmake = parallel_pool.make\n",
    "envpool": "import numpy as np, envpool\n"
    "def make(task_id, **kw):\n    return envpool.make(task_id, env_type='gymnasium', **kw)\n",
}

# name -> (what is probed, code). The code prints "ACCEPTED" if the misuse went through.
PROBES: dict[str, tuple[str, str]] = {
    "fewer_actions": ("fewer actions than env ids", """
        env = make("CartPole-v1", num_envs=4); env.reset()
        env.step(np.zeros(2, dtype=np.int64), np.arange(4))"""),
    "env_id_out_of_range": ("env id >= num_envs", """
        env = make("CartPole-v1", num_envs=4, batch_size=2); env.async_reset(); env.recv()
        env.send(np.zeros(1, dtype=np.int64), np.array([7]))"""),
    "negative_env_id": ("negative env id", """
        env = make("CartPole-v1", num_envs=4, batch_size=2); env.async_reset(); env.recv()
        env.send(np.zeros(1, dtype=np.int64), np.array([-1]))"""),
    "scalar_action": ("a 0-d action array", """
        env = make("CartPole-v1", num_envs=1); env.reset()
        env.step(np.array(1))"""),
    "discrete_out_of_range": ("discrete action out of range (CartPole: 5)", """
        env = make("CartPole-v1", num_envs=2); env.reset()
        env.step(np.array([5, 0]))"""),
    "duplicate_env_ids": ("the same env id twice in one call", """
        env = make("CartPole-v1", num_envs=4, batch_size=2); env.async_reset(); r = env.recv()
        ids = r[-1]["env_id"]
        env.send(np.zeros(2, dtype=np.int64), np.array([ids[0], ids[0]]))"""),
    "step_after_close": ("step after close()", """
        env = make("CartPole-v1", num_envs=2); env.reset(); env.close()
        env.step(np.zeros(2, dtype=np.int64))"""),
    "async_reset_twice": ("async_reset() twice, then recv() twice", """
        env = make("CartPole-v1", num_envs=4, batch_size=2)
        env.async_reset(); env.async_reset(); env.recv(); env.recv()"""),
    "recv_nothing_in_flight": ("recv() with nothing in flight", """
        env = make("CartPole-v1", num_envs=4, batch_size=2); env.async_reset(); env.recv(); env.recv()
        env.recv()"""),
    "nan_continuous_action": ("NaN in a continuous action (MountainCarContinuous)", """
        env = make("MountainCarContinuous-v0", num_envs=1); env.reset()
        env.step(np.array([[np.nan]], dtype=np.float32))"""),
    "float_discrete_action": ("float action for a discrete space (0.7)", """
        env = make("CartPole-v1", num_envs=1); env.reset()
        env.step(np.array([0.7]))"""),
    "pong_noop_max_0": ("Pong-v5 with noop_max=0", """
        env = make("Pong-v5", num_envs=1, noop_max=0); env.reset()
        env.step(np.zeros(1, dtype=np.int64))"""),
    "threads_one_pool": ("4 Python threads stepping one sync pool, 200 steps each", """
        import threading
        env = make("CartPole-v1", num_envs=4); env.reset()
        errors = []
        def run():
            for _ in range(200):
                try:
                    env.step(np.zeros(4, dtype=np.int64))
                except Exception as e:
                    errors.append(f"{type(e).__name__}: {e}")
        ts = [threading.Thread(target=run) for _ in range(4)]
        [t.start() for t in ts]; [t.join() for t in ts]
        kinds = sorted({e.split(':')[0] + ': ' + e.split(':', 1)[1].strip()[:60] for e in errors})
        print("THREADS", len(errors), json.dumps(kinds))"""),
}


def run_probe(python: str, library: str, code: str, timeout: float) -> dict[str, str]:
    script = PROLOGUE[library] + "import json\n" + textwrap.dedent(code) + "\nprint('ACCEPTED')\n"
    try:
        proc = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=timeout,
                              cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "detail": f"no answer in {timeout:.0f} s"}
    threads = [line for line in proc.stdout.splitlines() if line.startswith("THREADS")]
    if proc.returncode < 0 or proc.returncode in (134, 139):
        number = -proc.returncode if proc.returncode < 0 else proc.returncode - 128
        why = [line[line.find("Check failed"):] if "Check failed" in line else line.strip()
               for line in proc.stderr.splitlines() if "what()" in line or "Check failed" in line]
        return {"outcome": "crash", "detail": signal.Signals(number).name + (f" ({why[-1][:100]})" if why else "")}
    if threads:
        n, kinds = threads[0].split(" ", 2)[1:]
        outcome = "accepted" if n == "0" else "documented errors"
        return {"outcome": outcome, "detail": f"{n} of 800 calls: {', '.join(json.loads(kinds))}"}
    if "ACCEPTED" in proc.stdout:
        return {"outcome": "accepted", "detail": ""}
    last = [line for line in proc.stderr.strip().splitlines() if line and not line.startswith(" ")]
    return {"outcome": "error", "detail": last[-1][:160] if last else f"exit {proc.returncode}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", required=True, metavar="PYTHON", help="interpreter with parallel_pool")
    parser.add_argument("--envpool", metavar="PYTHON", help="interpreter with envpool 1.2.5")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    libraries = {"parallel_pool": args.ours, **({"envpool": args.envpool} if args.envpool else {})}
    results = {name: {lib: run_probe(py, lib, code, args.timeout) for lib, py in libraries.items()}
               for name, (_, code) in PROBES.items()}
    names = {"parallel_pool": "parallel_pool", "envpool": "EnvPool 1.2.5"}
    print("| probe | " + " | ".join(names[lib] for lib in libraries) + " |")
    print("|---|" + "---|" * len(libraries))
    for name, (what, _) in PROBES.items():
        cells = []
        for lib in libraries:
            r = results[name][lib]
            cells.append(f"**{r['outcome']}**" + (f": `{r['detail'].replace('|', '/')}`" if r["detail"] else ""))
        print(f"| {what} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
