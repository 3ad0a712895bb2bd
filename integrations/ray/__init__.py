"""Ray: one native pool per node of a Ray cluster, with the pool's API and global env ids.

``make_distributed("CartPole-v1", num_envs_per_node=64)`` places exactly one ``PoolActor`` on each
alive node (node-affinity scheduling) and returns a ``DistributedPool``: ``reset``/``step`` over
every env (rows in global env id order), ``async_reset``/``send``/``recv`` (the first node batch
ready), rollouts on the nodes (``set_policy``, ``set_weights``, ``rollout(K)``: a ``K``-step
trajectory segment of every env per round trip), ``close``, ``.nodes``. Batches travel over one TCP
stream per node (``wire``), not Ray calls. A dead node's actor, or a node removed from the cluster,
raises ``NodeFailedError`` (or, with ``restart=True``, a dead actor is recreated and its envs
reset). ``docs/ray.md``: cluster setup, what crosses the network, a scaling model.
"""

from parallel_pool.integrations.ray.actor import PoolActor
from parallel_pool.integrations.ray.distributed import DistributedPool, NodeFailedError, make_distributed

__all__ = ["DistributedPool", "NodeFailedError", "PoolActor", "make_distributed"]
