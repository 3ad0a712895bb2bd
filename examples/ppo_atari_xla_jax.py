"""PPO on Atari (Pong-v5) with the env steps inside jitted JAX code (xla()), CleanRL style: one file.

    pip install "parallel-pool[jax]"
    python examples/ppo_atari_xla_jax.py --env-id Pong-v5 --total-timesteps 10000000

Follows CleanRL's ppo_atari_envpool_xla_jax.py. ``envs.xla()`` gives ``handle, recv, send, step_env``:
pure functions over a ``handle`` (a small array naming the pool), so that a whole rollout (policy,
``step_env``, episode statistics) is one ``jax.lax.scan`` in one jitted function, the handle riding
in the scan's carry. The pool is gym-style (``env_type="gym"``): ``step_env(handle, action)`` returns
``(handle, (obs, reward, terminated, truncated, info))`` with ``info["TimeLimit.truncated"]``, as JAX
arrays. ``episodic_life`` ends an episode at each lost life (``info["terminated"]`` is the real game
over) and ``reward_clip`` clips rewards to their sign (``info["reward"]`` is the raw one), so game
returns are summed from raw rewards up to a game over or a time limit. Autoreset is next-step (the
default, as EnvPool's): the step after a done starts the next episode, reward 0.

``--max-episode-steps`` (the time limit, in agent steps) shortens episodes, which is how the smoke
test (tests/core/test_xla.py) sees returns logged after a few iterations.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax.training.train_state import TrainState
from ppo_args import add_ppo_args, add_task_args, ppo_sizes

import parallel_pool


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_task_args(p, env_id="Pong-v5", seed=1, total_timesteps=10_000_000, num_envs=8)
    p.add_argument("--num-threads", type=int, default=0, help="native threads stepping the envs (0: one per CPU)")
    p.add_argument("--max-episode-steps", type=int, default=None, help="time limit in agent steps (task default)")
    add_ppo_args(p)
    return p.parse_args()


class Agent(nn.Module):
    """The Nature CNN over (batch, 4, 84, 84) uint8 frame stacks, with a policy and a value head."""

    num_actions: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = jnp.transpose(obs, (0, 2, 3, 1)).astype(jnp.float32) / 255.0  # flax convolves NHWC
        relu_init = nn.initializers.orthogonal(np.sqrt(2))
        zeros = nn.initializers.constant(0.0)
        for features, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = nn.Conv(features, (kernel, kernel), (stride, stride), padding="VALID", kernel_init=relu_init,
                        bias_init=zeros)(x)
            x = nn.relu(x)
        x = nn.relu(nn.Dense(512, kernel_init=relu_init, bias_init=zeros)(x.reshape((x.shape[0], -1))))
        logits = nn.Dense(self.num_actions, kernel_init=nn.initializers.orthogonal(0.01), bias_init=zeros)(x)
        value = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0), bias_init=zeros)(x)
        return logits, value[:, 0]


@flax.struct.dataclass
class Rollout:
    """One rollout, (num_steps, num_envs) each."""

    obs: jax.Array
    dones: jax.Array  # whether obs starts a new episode (the previous step ended one)
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    rewards: jax.Array


@flax.struct.dataclass
class GameStats:
    """Per env: the running game's raw return and length, and those of its last finished game."""

    running_return: jax.Array
    running_length: jax.Array
    last_return: jax.Array
    last_length: jax.Array
    games: jax.Array


def main() -> None:
    args = parse_args()
    batch_size, minibatch_size, num_iterations = ppo_sizes(args, args.num_envs)
    key = jax.random.PRNGKey(args.seed)
    key, init_key = jax.random.split(key)

    # The envs: one native pool, gym-style as CleanRL's script makes EnvPool's.
    limit = {} if args.max_episode_steps is None else {"max_episode_steps": args.max_episode_steps}
    envs = parallel_pool.make(args.env_id, env_type="gym", num_envs=args.num_envs, episodic_life=True,
                              reward_clip=True, seed=args.seed, num_threads=args.num_threads, **limit)
    handle, recv, send, step_env = envs.xla()
    obs_shape = envs.single_observation_space.shape

    agent = Agent(envs.single_action_space.n)
    params = agent.init(init_key, jnp.zeros((1, *obs_shape), jnp.uint8))

    def learning_rate(count: jax.Array) -> jax.Array:
        # Annealed linearly to 0 over the run; `count` counts gradient steps.
        done_fraction = (count // (args.num_minibatches * args.update_epochs)) / num_iterations
        return args.learning_rate * (1.0 - done_fraction) if args.anneal_lr else jnp.asarray(args.learning_rate)

    state = TrainState.create(
        apply_fn=agent.apply,
        params=params,
        tx=optax.chain(
            optax.clip_by_global_norm(args.max_grad_norm),
            optax.inject_hyperparams(optax.adam)(learning_rate=learning_rate, eps=1e-5),
        ),
    )

    @jax.jit
    def rollout(state: TrainState, stats: GameStats, obs: jax.Array, done: jax.Array, key: jax.Array,
                handle: jax.Array) -> tuple[Any, ...]:
        def one_step(carry: tuple[Any, ...], _: None) -> tuple[tuple[Any, ...], Rollout]:
            stats, obs, done, key, handle = carry
            logits, value = agent.apply(state.params, obs)
            key, sample_key = jax.random.split(key)
            action = jax.random.categorical(sample_key, logits)
            logprob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
            # The env step, inside the jitted scan: the handle threads the calls in order.
            handle, (next_obs, reward, terminated, truncated, info) = step_env(handle, action)
            running_return = stats.running_return + info["reward"]
            # The autoreset step (elapsed_step 0: the action is ignored, reward 0) is no game step.
            running_length = stats.running_length + (info["elapsed_step"] > 0)
            game_over = info["terminated"] | info["TimeLimit.truncated"]
            stats = GameStats(
                running_return=jnp.where(game_over, 0.0, running_return),
                running_length=jnp.where(game_over, 0, running_length),
                last_return=jnp.where(game_over, running_return, stats.last_return),
                last_length=jnp.where(game_over, running_length, stats.last_length),
                games=stats.games + game_over,
            )
            step = Rollout(obs=obs, dones=done, actions=action, logprobs=logprob, values=value, rewards=reward)
            return (stats, next_obs, terminated | truncated, key, handle), step

        carry, steps = jax.lax.scan(one_step, (stats, obs, done, key, handle), None, length=args.num_steps)
        return carry, steps

    @jax.jit
    def advantages_and_returns(state: TrainState, steps: Rollout, next_obs: jax.Array,
                               next_done: jax.Array) -> tuple[jax.Array, jax.Array]:
        _, next_value = agent.apply(state.params, next_obs)

        def backwards(carry: tuple[jax.Array, jax.Array, jax.Array], t: tuple[jax.Array, ...]) -> tuple[Any, jax.Array]:
            gae, value_after, done_after = carry
            reward, value, done = t
            nonterminal = 1.0 - done_after
            delta = reward + args.gamma * value_after * nonterminal - value
            gae = delta + args.gamma * args.gae_lambda * nonterminal * gae
            return (gae, value, done.astype(jnp.float32)), gae

        init = (jnp.zeros_like(next_value), next_value, next_done.astype(jnp.float32))
        _, advantages = jax.lax.scan(backwards, init, (steps.rewards, steps.values, steps.dones), reverse=True)
        return advantages, advantages + steps.values

    def ppo_loss(params: Any, obs: jax.Array, actions: jax.Array, old_logprobs: jax.Array, advantages: jax.Array,
                 returns: jax.Array) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        logits, value = agent.apply(params, obs)
        log_probs = jax.nn.log_softmax(logits)
        logprob = jnp.take_along_axis(log_probs, actions[:, None], axis=1)[:, 0]
        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
        log_ratio = logprob - old_logprobs
        ratio = jnp.exp(log_ratio)
        approx_kl = ((ratio - 1) - log_ratio).mean()
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        clipped = jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
        pg_loss = jnp.maximum(-advantages * ratio, -advantages * clipped).mean()
        v_loss = 0.5 * ((value - returns) ** 2).mean()
        loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
        return loss, (pg_loss, v_loss, entropy, jax.lax.stop_gradient(approx_kl))

    @jax.jit
    def update(state: TrainState, steps: Rollout, advantages: jax.Array, returns: jax.Array,
               key: jax.Array) -> tuple[TrainState, tuple[jax.Array, ...], jax.Array]:
        flat = (
            steps.obs.reshape((-1, *obs_shape)),
            steps.actions.reshape(-1),
            steps.logprobs.reshape(-1),
            advantages.reshape(-1),
            returns.reshape(-1),
        )
        grad_fn = jax.value_and_grad(ppo_loss, has_aux=True)

        def epoch(carry: tuple[TrainState, jax.Array], _: None) -> tuple[Any, tuple[jax.Array, ...]]:
            state, key = carry
            key, perm_key = jax.random.split(key)
            order = jax.random.permutation(perm_key, batch_size)[: args.num_minibatches * minibatch_size]
            minibatches = jax.tree_util.tree_map(
                lambda x: x[order].reshape((args.num_minibatches, minibatch_size, *x.shape[1:])), flat
            )

            def minibatch(state: TrainState, mb: tuple[jax.Array, ...]) -> tuple[TrainState, tuple[jax.Array, ...]]:
                (loss, aux), grads = grad_fn(state.params, *mb)
                return state.apply_gradients(grads=grads), (loss, *aux)

            state, losses = jax.lax.scan(minibatch, state, minibatches)
            return (state, key), losses

        (state, key), losses = jax.lax.scan(epoch, (state, key), None, length=args.update_epochs)
        return state, jax.tree_util.tree_map(lambda x: x[-1, -1], losses), key

    zeros = jnp.zeros(args.num_envs)
    stats = GameStats(zeros, zeros.astype(jnp.int32), zeros, zeros.astype(jnp.int32), zeros.astype(jnp.int32))
    next_obs, _ = envs.reset()
    next_done = jnp.zeros(args.num_envs, dtype=bool)
    global_step, start = 0, time.time()
    for _ in range(num_iterations):
        (stats, next_obs, next_done, key, handle), steps = rollout(state, stats, next_obs, next_done, key, handle)
        global_step += batch_size
        advantages, returns = advantages_and_returns(state, steps, next_obs, next_done)
        state, (loss, pg_loss, v_loss, entropy, approx_kl), key = update(state, steps, advantages, returns, key)

        finished = np.asarray(stats.games) > 0
        avg_return = float(np.mean(np.asarray(stats.last_return)[finished])) if finished.any() else float("nan")
        avg_length = float(np.mean(np.asarray(stats.last_length)[finished])) if finished.any() else float("nan")
        sps = int(global_step / (time.time() - start))
        print(f"global_step={global_step}, avg_episodic_return={avg_return:.2f}, avg_episodic_length={avg_length:.1f}, "
              f"loss={float(loss):.4f}, value_loss={float(v_loss):.4f}, entropy={float(entropy):.3f}, SPS={sps}")

    envs.close()


if __name__ == "__main__":
    main()
