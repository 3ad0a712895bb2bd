"""An env built outside this repository, against parallel_pool.get_include(), registered at run time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import parallel_pool

SOURCE = r'''
// A counter: obs is the step count; terminates after `length` steps. Built out of tree.
#include "core/env.h"
#include "core/family.h"

class Counter final : public pp::Env {
 public:
  Counter(const pp::EnvSpec& spec, int env_id)
      : pp::Env(spec, env_id), obs_(spec.StateIndex("obs")),
        length_(static_cast<int>(spec.config.GetInt("length"))) {}
  void Reset() override { count_ = static_cast<int>(rng().UniformInt(0, 0)); Write(); }
  pp::StepResult Step(const pp::Action& action) override {
    count_ += static_cast<int>(action.Get<int64_t>(0)[0]);
    Write();
    return {1.0, elapsed_step() >= length_, false};
  }
 private:
  void Write() { *Allocate().Get<float>(obs_) = static_cast<float>(count_); }
  int obs_, length_, count_ = 0;
};

PP_REGISTER_FAMILY(registry) {
  pp::TaskEntry e;
  e.task_id = "OutOfTreeCounter-v0";
  e.family = "out_of_tree";
  e.defaults = pp::Config{{"max_episode_steps", int64_t{100}}, {"length", int64_t{3}}};
  e.make_spec = [](const std::string&, const pp::Config&) {
    pp::EnvSpec s;
    s.state.push_back(pp::Box("obs", pp::Dtype::kFloat32, {}, {0.0}, {1e6}));
    s.action.push_back(pp::Discrete("action", 3));
    return s;
  };
  e.make_env = [](const pp::EnvSpec& s, int id) -> std::unique_ptr<pp::Env> {
    return std::make_unique<Counter>(s, id);
  };
  registry->Add(std::move(e));
}
'''


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
def test_out_of_tree_env_library(tmp_path) -> None:
    src = tmp_path / "counter.cc"
    src.write_text(SOURCE)
    lib = tmp_path / "libcounter.so"
    include = parallel_pool.get_include()
    assert os.path.exists(os.path.join(include, "core", "env.h"))
    subprocess.run(
        ["g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-I", include, str(src), "-o", str(lib)],
        check=True,
    )
    # In a fresh interpreter, so the registry of this one stays as it was.
    code = f"""
import numpy as np, parallel_pool
assert parallel_pool.register("", library={str(lib)!r}) == ["OutOfTreeCounter-v0"]
env = parallel_pool.make("OutOfTreeCounter-v0", num_envs=2, length=2)
obs, _ = env.reset()
obs, rew, term, trunc, info = env.step(np.array([1, 2]))
assert obs.tolist() == [1.0, 2.0], obs
obs, rew, term, trunc, info = env.step(np.array([1, 2]))
assert obs.tolist() == [2.0, 4.0] and term.all(), (obs, term)
import gymnasium
envs = gymnasium.make_vec("parallel_pool/OutOfTreeCounter-v0", num_envs=2)
envs.reset()
print("ok")
"""
    # From a directory outside the source tree, so the installed package is the one imported.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "ok" in out.stdout


def test_missing_library_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        parallel_pool.register("", library=str(tmp_path / "nope.so"))
    bad = tmp_path / "bad.so"
    bad.write_text("not a library")
    with pytest.raises(ValueError, match="cannot load env library"):
        parallel_pool.register("", library=str(bad))
