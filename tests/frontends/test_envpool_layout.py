"""EnvPool's module layout (``parallel_pool.as_envpool()``): EnvPool's import paths, family tables,
Atari spec classes and raw pool, and EnvPool's default seed. Each test runs in a child interpreter,
since the layout takes the name ``envpool`` for the whole process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> str:
    prelude = "import parallel_pool\nparallel_pool.as_envpool()\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_envpools_import_paths_and_family_tables() -> None:
    _run("""
        import envpool
        import envpool.atari.registration as atari
        import envpool.mujoco.dmc.registration as dmc
        import envpool.mujoco.gym.registration as gym_mujoco
        import envpool.vizdoom.registration as vizdoom
        from envpool.python.glfw_context import preload_windows_gl_dlls
        from envpool.python.protocol import DMEnvPool, GymnasiumEnvPool
        from envpool.registration import list_all_envs, make_gymnasium, registry

        assert envpool.make_gym is envpool.registration.make_gym
        assert "pong" in atari.atari_game_list and "tic_tac_toe_3d" in atari.atari_game_list
        assert len(atari.atari_game_list) == len(set(atari.atari_game_list))
        assert ("HalfCheetah", ("v3", "v4", "v5"), 1000) in gym_mujoco.gym_mujoco_envs
        assert ("cheetah", "run", 1000) in dmc.dmc_mujoco_envs
        assert ("ball_in_cup", "catch", 1000) in dmc.dmc_mujoco_envs
        assert "basic" in vizdoom._vizdoom_game_list()
        assert registry.specs["Pong-v5"][:2] == ("envpool.atari", "AtariEnvSpec")
        assert registry.specs["CheetahRun-v1"][0] == "envpool.mujoco.dmc"
        assert set(registry.specs) <= set(list_all_envs())
        assert preload_windows_gl_dlls() is None
        env = make_gymnasium("CartPole-v1", num_envs=2)
        assert isinstance(env, GymnasiumEnvPool) and not isinstance(env, DMEnvPool)
        env.close()
    """)


def test_a_name_outside_the_layout_is_module_not_found() -> None:
    out = _run("""
        import envpool
        try:
            import envpool.procgen
        except ModuleNotFoundError as e:
            print("refused", e.name)
    """)
    assert out.strip() == "refused envpool.procgen"


def test_the_layouts_pools_have_envpools_dtypes_seed_warning_and_specs() -> None:
    _run("""
        import warnings
        import dm_env
        import numpy as np
        import envpool
        from typing import get_type_hints

        assert {"make", "EnvSpec", "EnvPool", "DMEnvPool", "GymnasiumEnvPool"} <= set(envpool.__all__)
        assert get_type_hints(envpool.make_gym)["return"] is envpool.GymnasiumEnvPool
        assert get_type_hints(envpool.make_dm)["return"] is envpool.DMEnvPool
        try:
            envpool.make("CartPole-v1")
        except TypeError:
            pass
        else:
            raise AssertionError("make() without env_type accepted")
        gym, dm = envpool.make("Pendulum-v1", "gym", num_envs=2), envpool.make_dm("Pendulum-v1", num_envs=2)
        assert isinstance(gym, envpool.GymnasiumEnvPool) and isinstance(dm, dm_env.Environment)
        gym.reset()
        dm.reset()
        action = np.full((2, 1), 0.5, dtype=np.float32)
        reward = gym.step(action)[1]
        ts = dm.step(action)
        assert reward.dtype == np.float32 and ts.reward.dtype == np.float32
        assert dm.reward_spec().dtype == np.float32
        np.testing.assert_array_equal(gym.step(action)[4]["players"]["env_id"], [0, 1])
        np.testing.assert_array_equal(dm.step(action).observation.players.env_id, [0, 1])
        assert dm.observation_spec().players.env_id.dtype == np.int32
        np.testing.assert_array_equal(reward, ts.reward)  # the same seed (42), the same float32 values
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert gym.seed(3) == [3, 4]
        assert [w.category for w in caught] == [UserWarning]
        spec = envpool.make_spec("Pong-v5")
        state = spec.observation_spec()
        assert state.obs.maximum == 255 and state.obs.shape == (4, 84, 84)
        assert state.env_id.dtype == np.int32 and "lives" in state._fields
        assert isinstance(spec.action_spec(), dm_env.specs.DiscreteArray)
        gym.close()
        dm.close()
    """)


def test_the_layouts_pools_take_envpools_action_forms() -> None:
    _run("""
        import numpy as np
        import envpool

        def raw(dtype, n=4, ids=None):
            ids = np.arange(n, dtype=dtype) if ids is None else ids
            return {"env_id": ids, "players.env_id": ids, "action": np.ones(n, dtype)}

        gym, dm = envpool.make_gym("Pong-v5", num_envs=4), envpool.make_dm("Pong-v5", num_envs=4)
        assert gym.spec.action_array_spec["action"].dtype == np.int32
        obs, info = gym.reset()
        dm.reset()
        # EnvPool's info: no gym TimeLimit.truncated; Atari's RAM.
        info = gym.step(np.zeros(4, np.int32))[4]
        assert set(info) == {"env_id", "players", "elapsed_step", "lives", "reward", "terminated", "ram"}
        assert info["ram"].shape == (4, 128) and info["ram"].dtype == np.uint8
        for env in (gym, dm):
            try:
                env.step(raw(np.int64))
            except RuntimeError as e:
                assert "int32" in str(e), e
            else:
                raise AssertionError("int64 arrays in EnvPool's dict form accepted")
        # A dict of int32 arrays (EnvPool's own dtypes) steps those envs; a float action is cast, as
        # EnvPool's Python side casts it.
        a = gym.step(raw(np.int32, 2, np.array([2, 0], np.int32)))
        np.testing.assert_array_equal(a[4]["env_id"], [2, 0])
        dm.send(raw(np.int32))
        assert dm.recv().mid().all()
        assert gym.step(np.ones(4))[0].shape == (4, 4, 84, 84)
        mismatched = raw(np.int32)
        mismatched["players.env_id"] = np.array([1, 0, 2, 3], np.int32)
        for bad in (mismatched, {"env_id": np.arange(4, dtype=np.int32), "action": np.ones(4, np.int32)}):
            try:
                gym.step(bad)
            except ValueError:
                pass
            else:
                raise AssertionError(f"accepted {bad}")
        gym.close()
        dm.close()
    """)


def test_minigrid_in_the_layout_has_envpools_mission_bytes_and_debug_states() -> None:
    _run("""
        import numpy as np
        import envpool
        from envpool.minigrid import decode_mission

        env = envpool.make_gymnasium("BabyAI-GoToRedBall-v0", num_envs=2)
        assert env.observation_space["mission"].shape == (512,) and env.spec.config.highlight is False
        obs, info = env.reset()
        assert obs["mission"].shape == (2, 512) and obs["mission"].dtype == np.uint8
        missions = decode_mission(obs["mission"])
        assert list(missions) == [s["mission"] for s in env.debug_states()]
        assert decode_mission(obs["mission"][1]) == missions[1]
        state = env._debug_states(np.array([1], np.int32))[0]
        assert state.agent_pos == tuple(info["agent_pos"][1]) and state.grid.dtype == np.uint8
        assert state.grid.shape == (state.width * state.height * 3,)
        corridor = envpool.make_gym("MiniGrid-KeyCorridorS3R1-v0", num_envs=1)
        corridor.reset()
        state = corridor._debug_states()[0]
        assert state.env_name == "key_corridor" and state.target_type == 6  # the ball to pick up
        grid = state.grid.reshape(state.width, state.height, 3)
        assert tuple(grid[state.target_pos]) == (6, state.target_color, 0)
        corridor.close()
        dm = envpool.make_dm("MiniGrid-Empty-5x5-v0", num_envs=1)
        mission = dm.reset().observation.mission
        assert dm.observation_spec().mission.shape == mission.shape[1:] == (128,)
        assert decode_mission(mission[0]) == "get to the green goal square"
        env.close()
        dm.close()
    """)


def test_the_layouts_observations_take_envpools_forms() -> None:
    _run("""
        import numpy as np
        import parallel_pool
        import envpool

        # Blackjack: one int32 Box of the three values, and EnvPool's sab=True.
        env = envpool.make_gymnasium("Blackjack-v1", num_envs=3, seed=1)
        ours = parallel_pool.make("Blackjack-v1", num_envs=3, seed=1, sab=True)
        assert env.observation_space == envpool.make_spec("Blackjack-v1").observation_space
        assert env.observation_space.shape == (3,) and env.observation_space.dtype == np.int32
        assert env.spec.config.sab is True
        obs, _ = env.reset()
        np.testing.assert_array_equal(obs, np.stack(ours.reset()[0], axis=1))
        assert obs.dtype == np.int32
        dm = envpool.make_dm("Blackjack-v1", num_envs=3, seed=1)
        np.testing.assert_array_equal(dm.reset().observation.obs, obs)
        assert dm.observation_spec().obs.shape == (3,)
        # MuJoCo and dm_control pixels: channels first, each frame 3 planes, the newest last.
        kwargs = dict(from_pixels=True, frame_stack=2, render_width=32, render_height=24)
        for task_id, key in (("Hopper-v4", None), ("CheetahRun-v1", "pixels")):
            spec = envpool.make_spec(task_id, **kwargs)
            assert spec.observation_space.shape == (6, 24, 32), spec.observation_space
            assert spec.observation_spec().pixels.shape == (6, 24, 32)
            pool = envpool.make_gymnasium(task_id, num_envs=2, **kwargs)
            ours = parallel_pool.make(task_id, num_envs=2, seed=42, **kwargs)
            obs, theirs = pool.reset()[0], ours.reset()[0]
            theirs = theirs if key is None else theirs[key]  # (2, 2, 24, 32, 3)
            assert obs.shape == (2, 6, 24, 32) and obs.flags.c_contiguous
            for k in range(2):
                np.testing.assert_array_equal(obs[:, 3 * k : 3 * k + 3], theirs[:, k].transpose(0, 3, 1, 2))
            np.testing.assert_array_equal(obs[:, 3:], pool.render(env_ids=[0, 1]).transpose(0, 3, 1, 2))
            dm = envpool.make_dm(task_id, num_envs=2, **kwargs)
            np.testing.assert_array_equal(dm.reset().observation.pixels, obs)
            for env in (pool, ours, dm):
                env.close()
    """)


def test_minigrid_env_spec_makes_our_task_of_that_env() -> None:
    _run("""
        import numpy as np
        import parallel_pool
        from envpool.minigrid import MiniGridEnvSpec, MiniGridGymnasiumEnvPool

        config = MiniGridEnvSpec.gen_config(env_name="crossing", size=11, num_crossings=5, obstacle_type="wall",
                                            num_envs=2, seed=3, max_episode_steps=300)
        spec = MiniGridEnvSpec(config)
        assert spec.task_id == "MiniGrid-LavaCrossingS9N1-v0" and spec.config.size == 11
        pool = MiniGridGymnasiumEnvPool(spec)
        ours = parallel_pool.make("MiniGrid-SimpleCrossingS11N5-v0", num_envs=2, seed=3, max_episode_steps=300)
        np.testing.assert_array_equal(pool.reset()[0]["image"], ours.reset()[0]["image"])
        for _ in range(20):
            action = np.array([2, 1])
            np.testing.assert_array_equal(pool.step(action)[0]["image"], ours.step(action)[0]["image"])
        # EnvPool's defaults: env_name "empty" of size 8; (-1, -1) is a random start.
        assert MiniGridEnvSpec(MiniGridEnvSpec.gen_config()).config.size == 8
        random = MiniGridEnvSpec(MiniGridEnvSpec.gen_config(agent_start_pos=(-1, -1)))
        assert list(random.config.agent_start_pos) == []
        for bad in ({"env_name": "doorkey", "num_crossings": 2}, {"env_name": "wfc"}):
            try:
                MiniGridEnvSpec(MiniGridEnvSpec.gen_config(**bad))
            except ValueError:
                pass
            else:
                raise AssertionError(bad)
        pool.close()
        ours.close()
    """)


def test_the_layout_defaults_to_envpools_seed() -> None:
    _run("""
        import numpy as np
        import envpool

        assert envpool.make_spec("Pong-v5").config.seed == 42
        a, b = envpool.make_gym("Pong-v5", num_envs=2), envpool.make_dm("Pong-v5", num_envs=2)
        np.testing.assert_array_equal(a.reset()[0], b.reset().observation.obs)
        for _ in range(20):
            action = np.array([2, 3])
            np.testing.assert_array_equal(a.step(action)[0], b.step(action).observation.obs)
        assert envpool.make_spec("Pong-v5", seed=7).config.seed == 7
    """)


def test_atari_env_spec_from_gen_config() -> None:
    _run("""
        import numpy as np
        from envpool.atari import AtariEnvSpec, AtariGymnasiumEnvPool

        config = AtariEnvSpec.gen_config(task="breakout", num_envs=2, frame_skip=2)
        assert config.task == "breakout" and config.num_envs == 2 and config.stack_num == 4
        spec = AtariEnvSpec(config)
        assert spec.task_id == "Breakout-v5" and spec.config.frame_skip == 2
        assert spec.action_space.n == 4
        env = AtariGymnasiumEnvPool(spec)
        obs, info = env.reset()
        assert obs.shape == (2, 4, 84, 84) and list(info["env_id"]) == [0, 1]
        env.close()
        for bad, match in (({"task": "pong", "num_envs": 4, "batch_size": 5}, "batch_size"),
                           ({"task": "no_such_game"}, "unknown task")):
            try:
                AtariEnvSpec(AtariEnvSpec.gen_config(**bad))
            except ValueError as e:
                assert match in str(e), e
            else:
                raise AssertionError(bad)
        try:
            AtariEnvSpec.gen_config(colour=True)
        except ValueError as e:
            assert "colour" in str(e)
        else:
            raise AssertionError("unknown key accepted")
    """)


def test_raw_atari_pool_round_trip() -> None:
    _run("""
        import numpy as np
        from envpool.atari.atari_envpool import _AtariEnvPool, _AtariEnvSpec

        conf = dict(zip(_AtariEnvSpec._config_keys, _AtariEnvSpec._default_config_values))
        conf.update(task=b"pong", num_envs=3, batch_size=3, num_threads=1)
        env = _AtariEnvPool(_AtariEnvSpec(tuple(conf.values())))
        env._reset(np.arange(3, dtype=np.int32))
        for _ in range(5):
            state = dict(zip(env._state_keys, env._recv()))
            assert state["obs"].shape == (3, 4, 84, 84)
            assert sorted(state["info:env_id"]) == [0, 1, 2]
            np.testing.assert_array_equal(state["info:players.env_id"], state["info:env_id"])
            env._send((state["info:env_id"], state["info:players.env_id"], np.zeros(3, dtype=np.int32)))
        env.close()
    """)


def test_as_envpool_after_a_real_import_is_refused() -> None:
    code = """
        import sys, types
        import parallel_pool
        sys.modules["envpool"] = types.ModuleType("envpool")
        try:
            parallel_pool.as_envpool()
        except RuntimeError as e:
            print("refused:", e)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "before the first `import envpool`" in done.stdout, done.stderr


@pytest.mark.parametrize(
    ("kwargs", "ok"),
    [
        ({"use_inter_area_resize": True}, True),
        ({"use_inter_area_resize": False, "img_height": 210, "img_width": 160}, True),
        ({"use_inter_area_resize": False}, False),
    ],
)
def test_atari_takes_envpools_use_inter_area_resize(kwargs: dict, ok: bool) -> None:
    import parallel_pool

    if ok:
        parallel_pool.make_spec("Pong-v5", **kwargs)
    else:
        with pytest.raises(ValueError, match="bilinear"):
            parallel_pool.make_spec("Pong-v5", **kwargs)


def test_envpools_tic_tac_toe_spelling() -> None:
    import parallel_pool

    assert parallel_pool.make_spec("TicTacToe3d-v5").observation_space.shape == (4, 84, 84)
