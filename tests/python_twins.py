"""Python twins of the tutorial family's tasks, for the conformance tests' Python backend.

``GuessingGame-v0`` and ``Faulty-v0`` (``native/envs/tutorial/``) are what the engine's tests drive;
these ``gymnasium.Env`` classes reproduce them: the same spaces, dynamics, config keys (fault
injection included) and messages, and the same random stream for the same seed (the core's
xoshiro256** seeded through SplitMix64, ``native/core/rng.h``, reproduced below), so the tests'
assertions hold over both backends. The Python backend runs them by id: importing this module
registers them with Gymnasium, and ``gymnasium.make("python_twins:Faulty-v0")`` imports it, in the
test process and in the pool's spawned workers alike (they inherit ``sys.path``, which pytest
points at ``tests/``); ``conftest.python_task_id`` gives ``parallel_pool.make`` that id.

Where a twin cannot be the native env, it says so:

- A Python env does not know its pool env id, which ``Faulty-v0``'s ``fault_env_id`` and
  ``GuessingGame-v0``'s sleep (``step_sleep_us * (1 + env_id % 4)``) use: the twins take it as the
  kwarg ``env_id``, which ``conftest.python_task_kwargs`` hands each env through ``env_kwargs``.
- The time limit is Gymnasium's ``TimeLimit`` wrapper (``max_episode_steps``, registered as the
  native default 100): on a step that both terminates and reaches the limit it reports both
  flags, where the native envs report only ``terminated``. No test reaches that step.
- ``GuessingGame-v0``'s per-player rows need the engine's player rows, which a Python env does
  not have: its twin has one player (``max_num_players=1``; another value is a ValueError).
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

_U64 = (1 << 64) - 1


class CoreRng:
    """``pp::Rng`` (native/core/rng.h) in Python: xoshiro256** seeded through SplitMix64."""

    def __init__(self, seed: int = 0) -> None:
        self.seed(seed)

    def seed(self, seed: int) -> None:
        x = seed & _U64
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & _U64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _U64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _U64
            self.s.append(z ^ (z >> 31))

    @staticmethod
    def _rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & _U64

    def next_u64(self) -> int:
        s0, s1, s2, s3 = self.s
        result = (self._rotl((s1 * 5) & _U64, 7) * 9) & _U64
        t = (s1 << 17) & _U64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = self._rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result

    def uniform_int(self, low: int, high: int) -> int:
        """Uniform in [low, high] without modulo bias, as ``Rng::UniformInt`` (ranges below 2**63)."""
        span = high - low + 1
        limit = _U64 - _U64 % span
        while True:
            x = self.next_u64()
            if x < limit:
                return low + x % span


class GuessingGame(gymnasium.Env):
    """``GuessingGame-v0`` with one player: each step draws a secret digit in [0, num_actions); a
    correct guess earns 1; the episode terminates after ``episode_length`` steps.

    Observation ``[player index, last secret (-1 before the first step)]``; info ``num_players``.
    ``raise_on_step=k`` raises on the episode's k-th step; ``step_sleep_us=t`` sleeps
    ``t * (1 + env_id % 4)`` microseconds per step.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
    FRAME_SIZE = 8  # GuessingGame::kFrameSize

    def __init__(self, max_num_players: int = 1, num_actions: int = 4, episode_length: int = 10,
                 raise_on_step: int = -1, step_sleep_us: int = 0, env_id: int = 0,
                 render_mode: str | None = None) -> None:
        if max_num_players != 1:
            raise ValueError("the Python twin of GuessingGame-v0 has one player (per-player rows are the "
                             "native engine's); max_num_players must be 1")
        if num_actions < 2:
            raise ValueError("num_actions must be >= 2")
        high = float(max(max_num_players, num_actions))
        self.observation_space = spaces.Box(-1.0, high, (2,), np.float32)
        self.action_space = spaces.Discrete(num_actions)
        self.render_mode = render_mode
        self.num_actions, self.episode_length = num_actions, episode_length
        self.raise_on_step, self.step_sleep_us, self.env_id = raise_on_step, step_sleep_us, env_id
        self.rng = CoreRng(0)
        self.num_players, self.secret, self.elapsed = 1, -1, 0

    def _obs(self) -> np.ndarray:
        return np.array([0.0, self.secret], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.rng.seed(seed)
        self.num_players = self.rng.uniform_int(1, 1)
        self.secret, self.elapsed = -1, 0
        return self._obs(), {"num_players": np.int32(self.num_players)}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.elapsed += 1
        if self.elapsed == self.raise_on_step:
            raise RuntimeError(f"tutorial env raised on step {self.raise_on_step}")
        if self.step_sleep_us > 0:
            time.sleep(self.step_sleep_us * (1 + self.env_id % 4) / 1e6)
        self.secret = self.rng.uniform_int(0, self.num_actions - 1)
        reward = 1.0 if int(action) == self.secret else 0.0
        terminated = self.elapsed >= self.episode_length
        return self._obs(), reward, terminated, False, {"num_players": np.int32(self.num_players)}

    def render(self) -> np.ndarray:
        """A flat colour: red = last secret + 1, green = players, blue = steps taken (mod 256)."""
        frame = np.empty((self.FRAME_SIZE, self.FRAME_SIZE, 3), dtype=np.uint8)
        frame[...] = [(self.secret + 1) % 256, self.num_players, self.elapsed % 256]
        return frame


class Faulty(gymnasium.Env):
    """``Faulty-v0`` (native/envs/tutorial/faulty.h): reward 1 per step, terminated after
    ``episode_length`` steps, observation ``[episode number, elapsed step, last action]``, info
    ``steps`` (this env's steps so far); faults at the env's k-th step or reset over its whole life,
    on env ``fault_env_id`` (-1: every env): ``raise_on_step``, ``raise_on_reset``, ``nan_on_step``
    (in ``nan_in``: "obs", "reward" or "both"), ``step_sleep_us``."""

    def __init__(self, episode_length: int = 10, num_actions: int = 2, fault_env_id: int = -1,
                 raise_on_step: int = -1, raise_on_reset: int = -1, nan_on_step: int = -1,
                 nan_in: str = "both", step_sleep_us: int = 0, env_id: int = 0) -> None:
        if episode_length < 1:
            raise ValueError("episode_length must be >= 1")
        if num_actions < 2:
            raise ValueError("num_actions must be >= 2")
        if nan_in not in ("obs", "reward", "both"):
            raise ValueError(f"nan_in must be 'obs', 'reward' or 'both', got '{nan_in}'")
        if step_sleep_us < 0:
            raise ValueError("step_sleep_us must be >= 0")
        self.observation_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.action_space = spaces.Discrete(num_actions)
        self.episode_length = episode_length
        self.faulty = fault_env_id < 0 or fault_env_id == env_id
        self.raise_on_step, self.raise_on_reset, self.nan_on_step = raise_on_step, raise_on_reset, nan_on_step
        self.nan_obs, self.nan_reward = nan_in != "reward", nan_in != "obs"
        self.step_sleep_us = step_sleep_us
        self.resets = self.steps = self.elapsed = 0
        self.last_action = -1

    def _obs(self, nan: bool) -> np.ndarray:
        if nan:
            return np.full(3, np.nan, dtype=np.float32)
        return np.array([self.resets, self.elapsed, self.last_action], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.resets += 1
        self.elapsed = 0
        if self.faulty and self.resets == self.raise_on_reset:
            raise RuntimeError(f"Faulty-v0: Reset() raised on this env's reset {self.resets} (raise_on_reset)")
        self.last_action = -1
        return self._obs(False), {"steps": np.int64(self.steps)}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.steps += 1
        self.elapsed += 1
        if self.faulty and self.steps == self.raise_on_step:
            raise RuntimeError(f"Faulty-v0: Step() raised on this env's step {self.steps} (raise_on_step)")
        if self.faulty and self.step_sleep_us > 0:
            time.sleep(self.step_sleep_us / 1e6)
        self.last_action = int(action)
        nan = self.faulty and self.steps == self.nan_on_step
        reward = float("nan") if nan and self.nan_reward else 1.0
        terminated = self.elapsed >= self.episode_length
        return self._obs(nan and self.nan_obs), reward, terminated, False, {"steps": np.int64(self.steps)}


# The native defaults' time limit (register.cc: max_episode_steps 100 for both tasks).
for _name, _cls in (("GuessingGame-v0", GuessingGame), ("Faulty-v0", Faulty)):
    if _name not in gymnasium.registry:
        gymnasium.register(_name, entry_point=f"{__name__}:{_cls.__name__}", max_episode_steps=100)
