"""The command-line flags the examples share and the PPO sizes they give. No torch here: the JAX
example imports it too.

Each script makes its own parser and adds its own flags around these, in the order ``--help``
lists them.
"""

from __future__ import annotations

import argparse


def add_task_args(
    p: argparse.ArgumentParser, *, env_id: str, seed: int, total_timesteps: int, num_envs: int | None = None
) -> None:
    """``--env-id``, ``--seed``, ``--total-timesteps`` and (unless ``num_envs`` is None) ``--num-envs``."""
    p.add_argument("--env-id", default=env_id)
    p.add_argument("--seed", type=int, default=seed)
    p.add_argument("--total-timesteps", type=int, default=total_timesteps)
    if num_envs is not None:
        p.add_argument("--num-envs", type=int, default=num_envs)


def add_ppo_args(
    p: argparse.ArgumentParser,
    *,
    num_steps: int = 128,
    num_steps_help: str = "steps per env per rollout",
    learning_rate: float = 2.5e-4,
    anneal_lr: bool = True,
    num_minibatches: int = 4,
    update_epochs: int = 4,
    clip_coef: float = 0.1,
    ent_coef: float = 0.01,
) -> None:
    """CleanRL's PPO hyperparameters, from ``--num-steps`` to ``--max-grad-norm``; the defaults are
    its Atari ones. ``anneal_lr=False`` leaves out ``--anneal-lr`` (a script that does not anneal)."""
    p.add_argument("--num-steps", type=int, default=num_steps, help=num_steps_help)
    p.add_argument("--learning-rate", type=float, default=learning_rate)
    if anneal_lr:
        p.add_argument("--anneal-lr", type=int, default=1)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=num_minibatches)
    p.add_argument("--update-epochs", type=int, default=update_epochs)
    p.add_argument("--clip-coef", type=float, default=clip_coef)
    p.add_argument("--ent-coef", type=float, default=ent_coef)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)


def ppo_sizes(args: argparse.Namespace, num_envs: int) -> tuple[int, int, int]:
    """CleanRL's sizes: the transitions of one rollout (``num_envs * args.num_steps``), of a
    minibatch (an ``args.num_minibatches``-th of those) and the rollouts in ``args.total_timesteps``
    (at least one of each)."""
    batch_size = num_envs * args.num_steps
    return batch_size, max(1, batch_size // args.num_minibatches), max(1, args.total_timesteps // batch_size)
