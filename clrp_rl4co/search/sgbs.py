"""Simulation-guided beam search (SGBS, Choo et al., NeurIPS 2022) for RL4CO policies.

Works with any RL4CO autoregressive policy whose decoder follows RL4CO's
``AttentionModelDecoder`` interface (``pre_decoder_hook`` -> cache, ``decoder(td, cache, 0)`` ->
logits, mask), on any env whose states can be indexed and stepped in a batch: DRLHQ, POMO* and
MTA* on the CLRP, and RL4CO's ``AttentionModelPolicy`` on CVRP, TSP, ...

Algorithm (per instance, all instances and beam nodes batched together):

1. One greedy multistart (POMO) rollout; the ``beta`` best starts seed the beam. A beam node is
   the state after the start prefix (CLRP: the start action, the greedy first depot and the
   forced start customer; other envs: the forced start node).
2. Until every beam node is finished: expand each node into its ``gamma`` most probable
   children (ranked per parent); simulate each child with one greedy rollout to the end (the
   greedy child reproduces its parent's rollout, so its score is reused unless
   ``reuse_greedy=False``); keep the ``beta`` children with the best rollouts.
3. The best complete solution seen is the result, so it is never worse than the greedy
   multistart result. With augmentation, the best over the augmented copies is returned.

With ``stop`` (a predicate such as "the deadline has passed") the search is *anytime*: it is
asked before each expansion and, once true, returns the best solutions found so far (the greedy
multistart result at least), so a budget is overrun by at most one expansion.

Every simulation step is one batched decoder call over all children of all instances (no
per-node Python loop); the encoder runs once per (augmented) instance and its cache is
gathered per node.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.utils.ops import unbatchify
from tensordict import TensorDict
from torch import Tensor

from ..envs.clrp.validity import pad_actions  # node 0: the CLRP's and RL4CO's no-op


@dataclass
class SGBSResult:
    """Best solutions found: ``reward`` [B] (the env's reward, higher is better), ``actions``
    [B, T] (padded with node 0, the env's no-op), ``greedy_reward`` [B] (the greedy
    multistart result over the same augmented copies) and counters in ``stats``."""

    reward: Tensor
    actions: Tensor
    greedy_reward: Tensor
    stats: dict = field(default_factory=dict)


class _Search:
    """State shared by the steps of one SGBS run over a batch of B (augmented) instances.

    Every node batch uses RL4CO's multistart layout: ``K`` nodes per instance, row
    ``k * B + b``. The decoder then sees the nodes as ``[B, K]`` against the per-instance
    cache (keys and values computed once per instance, never copied per node), exactly as in
    POMO's multistart decoding.
    """

    def __init__(self, env, policy, td: TensorDict, stats: dict):
        self.env, self.policy, self.stats = env, policy, stats
        self.batch = td.batch_size[0]
        hidden, _ = policy.encoder(td)
        _, _, self.cache = policy.decoder.pre_decoder_hook(td, env, hidden, 0)
        self.best_reward = torch.full((self.batch,), -torch.inf, device=td.device)
        self.best_actions = torch.zeros(self.batch, 1, dtype=torch.long, device=td.device)

    def logits(self, states: TensorDict) -> Tensor:
        """Masked logits [K * B, D+N] (``-inf`` where infeasible): one batched decoder call."""
        self.stats["decoder_calls"] += 1
        per_instance = states.batch_size[0] // self.batch
        num_starts = per_instance if per_instance > 1 else 0
        logits, mask = self.policy.decoder(states, self.cache, num_starts)
        return logits.masked_fill(~mask, -torch.inf)

    def offer(self, reward: Tensor, actions: Tensor) -> None:
        """Update each instance's incumbent with the best of the offered solutions [K * B]."""
        per_instance = reward.shape[0] // self.batch
        best, k = reward.reshape(per_instance, self.batch).max(0)  # ties: the first k
        improved = best > self.best_reward
        if not bool(improved.any()):
            return
        rows = k * self.batch + torch.arange(self.batch, device=reward.device)
        length = max(self.best_actions.shape[-1], actions.shape[-1])
        winners = pad_actions(actions[rows], length)
        self.best_actions = pad_actions(self.best_actions, length)
        self.best_actions = torch.where(improved[:, None], winners, self.best_actions)
        self.best_reward = torch.where(improved, best, self.best_reward)

    def simulate(self, states: TensorDict, history: Tensor) -> Tensor:
        """Greedy rollouts to the end from ``states`` [K * B]; offers and returns the rewards.

        Finished rows take the env's no-op (the only feasible action) until all are done.
        """
        self.stats["simulated_children"] += states.batch_size[0]
        actions = [history]
        while not bool(states["done"].all()):
            self.stats["simulation_steps"] += 1
            action = self.logits(states).argmax(-1)
            states.set("action", action)
            states = self.env.step(states)["next"]
            actions.append(action[:, None])
        actions = torch.cat(actions, dim=-1)
        reward = self.env.get_reward(states, actions)
        self.offer(reward, actions)
        return reward


@torch.no_grad()
def sgbs(
    env,
    policy,
    td: TensorDict,
    beta: int = 4,
    gamma: int = 4,
    augment: int = 8,
    augment_fn: str | callable = "dihedral8",
    reuse_greedy: bool = True,
    prefix_steps: int | None = None,
    max_batch: int = 4096,
    stop: Callable[[], bool] | None = None,
) -> SGBSResult:
    """Simulation-guided beam search.

    Args:
        env: an RL4CO env (``CLRPEnv``, ``CVRPEnv``, ...).
        policy: an RL4CO autoregressive policy (``DRLHQPolicy``, ``AttentionModelPolicy``...).
        td: instance TensorDict [B] (unreset, as from the generator or a dataset).
        beta: beam width; gamma: children per beam node (the greedy child included).
        augment: number of augmented copies (1 = none); ``augment_fn`` as in RL4CO's
            ``StateAugmentation`` (``"dihedral8"`` or ``"symmetric"``, or a callable).
        reuse_greedy: reuse the parent's score for its greedy child instead of simulating it.
        prefix_steps: steps fixed by a multistart start (default ``env.num_start_steps``, 1 for
            RL4CO's envs whose start is one forced node; 3 for the CLRP).
        max_batch: most children simulated in one batch; instances are split into chunks so
            that ``instances x beta x gamma <= max_batch`` (bounds memory).
        stop: asked before each expansion; once it returns True the search ends with the best
            solutions found so far (``stats["stopped"]``; every chunk still gets its greedy
            multistart rollout). None: run to the end.

    Returns:
        :class:`SGBSResult` with the best reward and actions per input instance.
    """
    if beta < 1 or gamma < 1:
        raise ValueError(f"beta and gamma must be >= 1, got beta={beta}, gamma={gamma}")
    if prefix_steps is None:
        prefix_steps = getattr(env, "num_start_steps", 1)
    was_training = policy.training
    policy.eval()
    start = time.perf_counter()
    stats = {
        "decoder_calls": 0,
        "simulation_steps": 0,
        "expansions": 0,
        "multistart_steps": 0,
        "simulated_children": 0,
        "stopped": False,
    }
    batch = td.batch_size[0]
    base = env.reset(td.clone())
    if augment > 1:
        base = StateAugmentation(num_augment=augment, augment_fn=augment_fn)(base)
    chunk = max(1, max_batch // (beta * gamma))
    rewards, actions, greedy = [], [], []
    for lo in range(0, base.batch_size[0], chunk):
        part = base[lo : lo + chunk].clone()
        r, a, g = _run(env, policy, part, beta, gamma, reuse_greedy, prefix_steps, stats, stop)
        rewards.append(r)
        actions.append(a)
        greedy.append(g)
    length = max(a.shape[-1] for a in actions)
    reward = torch.cat(rewards)
    action = torch.cat([pad_actions(a, length) for a in actions])
    greedy_reward = torch.cat(greedy)
    copies = base.batch_size[0] // batch
    # augmented copies are laid out copy-major (row a * B + b): best over copies
    best_copy = unbatchify(reward, copies).argmax(-1)  # [B]
    rows = best_copy * batch + torch.arange(batch, device=reward.device)
    stats["seconds"] = time.perf_counter() - start
    policy.train(was_training)
    return SGBSResult(
        reward=reward[rows],
        actions=action[rows],
        greedy_reward=unbatchify(greedy_reward, copies).amax(-1),
        stats=stats,
    )


def _rows(blocks: Tensor, batch: int) -> Tensor:
    """Row indices of node blocks: ``blocks`` [K, B] (block index per instance) -> [K * B]."""
    return (blocks * batch + torch.arange(batch, device=blocks.device)).reshape(-1)


def _run(env, policy, td, beta, gamma, reuse_greedy, prefix_steps, stats, stop=None):
    """SGBS on the reset states ``td`` [B]; returns (reward [B], actions [B, T], greedy [B]).
    ``stop`` (asked before each expansion) ends the search with the incumbents."""
    batch = td.batch_size[0]
    device = td.device
    search = _Search(env, policy, td, stats)

    # 1. greedy multistart (rows s * B + b); the beta best starts seed the beam
    out = policy(td.clone(), env, decode_type="multistart_greedy", return_actions=True)
    starts_reward, starts_actions = out["reward"], out["actions"]
    stats["multistart_steps"] += starts_actions.shape[-1] - 1  # the start action is forced
    num_starts = starts_reward.shape[0] // batch
    search.offer(starts_reward, starts_actions)
    greedy_reward = search.best_reward.clone()
    width = min(beta, num_starts)
    top = starts_reward.reshape(num_starts, batch).topk(width, dim=0).indices  # [width, B]
    rows = _rows(top, batch)
    score = starts_reward[rows]
    history = starts_actions[rows, :prefix_steps]
    states = td[rows % batch]
    for t in range(prefix_steps):
        states.set("action", history[:, t])
        states = env.step(states)["next"]

    # 2. expand, simulate, select until every beam node is finished (or a stop is asked)
    while not bool(states["done"].all()):
        if stop is not None and stop():
            stats["stopped"] = True
            return search.best_reward, search.best_actions, greedy_reward
        stats["expansions"] += 1
        logits = search.logits(states)  # [width * B, D+N]
        k = min(gamma, logits.shape[-1])
        top_logits, top_actions = logits.topk(k, dim=-1)  # column 0: the greedy child
        valid = torch.isfinite(top_logits)
        top_actions = torch.where(valid, top_actions, top_actions[:, :1])
        # child c = j * width + p of parent p (rows c * B + b): block j holds the j-th children
        parent = torch.arange(width * batch, device=device).repeat(k)
        child_action = top_actions.T.reshape(-1)
        child_valid = valid.T.reshape(-1)
        children = states[parent]
        children.set("action", child_action)
        children = env.step(children)["next"]
        child_history = torch.cat([history[parent], child_action[:, None]], dim=-1)
        child_score = torch.full(child_action.shape, -torch.inf, device=device)
        greedy_rows = slice(0, width * batch)  # block j = 0
        sim_from = 0
        if reuse_greedy:
            child_score[greedy_rows] = score
            sim_from = width * batch
        if sim_from < child_action.shape[0]:
            sim_reward = search.simulate(children[sim_from:], child_history[sim_from:])
            child_score[sim_from:] = sim_reward.to(child_score.dtype)
        child_score = child_score.masked_fill(~child_valid, -torch.inf)
        # keep the beta best children of each instance
        width = min(beta, width * k)
        keep = child_score.reshape(-1, batch).topk(width, dim=0).indices  # [width, B]
        rows = _rows(keep, batch)
        states, score, history = children[rows], child_score[rows], child_history[rows]

    # finished beam nodes are complete solutions: offer them too
    search.offer(env.get_reward(states, history), history)
    return search.best_reward, search.best_actions, greedy_reward
