"""Adapters for RL libraries, installed as ``parallel_pool.integrations``.

Each lives in its own subpackage and imports its library only when that subpackage is imported,
so ``import parallel_pool.integrations`` needs nothing heavy:

- ``sb3``: ``ParallelPoolVecEnv``, a Stable-Baselines3 ``VecEnv`` (replaces ``SubprocVecEnv``).
- ``tianshou``: ``TianshouVectorEnv`` for Tianshou 2.x collectors (sync and async), and
  ``ParallelPoolEnvFactory`` for its high-level API.
- ``rl_games``: ``register()`` adds the ``PARALLEL_POOL`` vecenv type and the
  ``parallel_pool/<task>`` env configurations.
- ``acme``: ``Environment`` (one env) and ``BatchedEnvironment``, ``dm_env.Environment`` adapters.
- ``rllib`` and ``ray``: the RLlib env-runner plug-in and the one-pool-per-node Ray layer.

``common`` holds what they share (per-env rows and attributes, seeds, checks on kwargs and pools);
it needs only NumPy.
"""
