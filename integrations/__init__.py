"""Adapters for RL libraries (Stable-Baselines3, Tianshou, rl_games, Acme, RLlib, Ray).

Installed as ``parallel_pool.integrations``. None is implemented yet: see the README.
"""
