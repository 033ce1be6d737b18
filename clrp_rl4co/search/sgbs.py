"""Simulation-guided beam search (SGBS, Choo et al., NeurIPS 2022) for RL4CO policies.

Works with any RL4CO autoregressive policy whose decoder follows RL4CO's
``AttentionModelDecoder`` interface (``pre_decoder_hook`` -> cache, ``decoder(td, cache, 0)`` ->
logits, mask), on any env whose states can be indexed and stepped in a batch: DRLHQ, POMO* and
MTA* on the CLRP, and RL4CO's ``AttentionModelPolicy`` on CVRP, TSP, ...

Algorithm (per instance, all instances and beam nodes batched together):

1. One greedy multistart (POMO) rollout; the ``beta`` best starts seed the beam. A beam node is
   the state after the start prefix (CLRP: the greedy first depot and the forced start
   customer; other envs: the forced start node).
2. Until every beam node is finished: expand each node into its ``gamma`` most probable
   children (ranked per parent); simulate each child with one greedy rollout to the end (the
   greedy child reproduces its parent's rollout, so its score is reused unless
   ``reuse_greedy=False``); keep the ``beta`` children with the best rollouts.
3. The best complete solution seen is the result, so it is never worse than the greedy
   multistart result. With augmentation, the best over the augmented copies is returned.

Every simulation step is one batched decoder call over all children of all instances (no
per-node Python loop); the encoder runs once per (augmented) instance and its cache is
gathered per node.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import torch
from rl4co.data.transforms import StateAugmentation
from rl4co.utils.ops import unbatchify
from tensordict import TensorDict
from torch import Tensor


@dataclass
class SGBSResult:
    """Best solutions found: ``reward`` [B] (the env's reward, higher is better), ``actions``
    [B, T] (padded by repeating the last action), ``greedy_reward`` [B] (the greedy
    multistart result over the same augmented copies) and counters in ``stats``."""

    reward: Tensor
    actions: Tensor
    greedy_reward: Tensor
    stats: dict = field(default_factory=dict)


def _index_cache(cache, index: Tensor, batch: int):
    """The decoder cache (a ``PrecomputedCache`` dataclass) with every per-instance field
    gathered along the batch dimension by ``index``.

    Per-instance entries are tensors of at least two dimensions whose first is the batch
    ``batch``; anything else (learned placeholders [E], scalars) is shared and kept."""

    def take(value):
        if isinstance(value, TensorDict) or (
            isinstance(value, Tensor) and value.dim() >= 2 and value.shape[0] == batch
        ):
            return value[index]
        if isinstance(value, dict):
            return {k: take(v) for k, v in value.items()}
        return value

    return dataclasses.replace(
        cache, **{f.name: take(getattr(cache, f.name)) for f in dataclasses.fields(cache)}
    )


def _pad_to(actions: Tensor, length: int, repeat_last: bool) -> Tensor:
    """Pad [M, T] actions to ``length`` with the env's no-op: the last action repeated
    (CLRP: the final depot) or node 0 (RL4CO's routing envs: the depot)."""
    extra = length - actions.shape[-1]
    if extra <= 0:
        return actions
    pad = actions[:, -1:] if repeat_last else torch.zeros_like(actions[:, :1])
    return torch.cat([actions, pad.expand(-1, extra)], dim=-1)


class _Search:
    """State shared by the steps of one SGBS run over a batch of (augmented) instances."""

    def __init__(self, env, policy, td: TensorDict, prefix_steps: int, stats: dict):
        self.env, self.policy, self.stats = env, policy, stats
        self.td = td  # reset states [B]
        hidden, _ = policy.encoder(td)
        _, _, self.cache = policy.decoder.pre_decoder_hook(td, env, hidden, 0)
        self.prefix_steps = prefix_steps
        self.repeat_last = env.name == "clrp"
        batch = td.batch_size[0]
        self.best_reward = torch.full((batch,), -torch.inf, device=td.device)
        self.best_actions = torch.zeros(batch, 1, dtype=torch.long, device=td.device)

    def node_cache(self, inst: Tensor):
        """The decoder cache gathered for nodes of instances ``inst``."""
        return _index_cache(self.cache, inst, self.td.batch_size[0])

    def logits(self, states: TensorDict, cache) -> Tensor:
        """Masked logits [M, D+N] (``-inf`` where infeasible): one batched decoder call."""
        self.stats["decoder_calls"] += 1
        logits, mask = self.policy.decoder(states, cache, 0)
        return logits.masked_fill(~mask, -torch.inf)

    def offer(self, inst: Tensor, reward: Tensor, actions: Tensor) -> None:
        """Update each instance's incumbent with the best of the offered solutions."""
        batch = self.best_reward.shape[0]
        best = torch.full((batch,), -torch.inf, device=reward.device)
        best = best.scatter_reduce(0, inst, reward, reduce="amax")
        improved = best > self.best_reward
        if not bool(improved.any()):
            return
        # one winning row per improved instance
        is_best = (reward == best[inst]) & improved[inst]
        rows = torch.nonzero(is_best).squeeze(-1)
        # ties: the first offered row wins (as argmax would)
        winners = torch.full((batch,), reward.shape[0], dtype=torch.long, device=reward.device)
        winners = winners.scatter_reduce(0, inst[rows], rows, reduce="amin")
        targets = torch.nonzero(improved).squeeze(-1)
        length = max(self.best_actions.shape[-1], actions.shape[-1])
        self.best_actions = _pad_to(self.best_actions, length, self.repeat_last)
        self.best_actions[targets] = _pad_to(actions, length, self.repeat_last)[winners[targets]]
        self.best_reward = torch.where(improved, best, self.best_reward)

    def simulate(self, states: TensorDict, inst: Tensor, history: Tensor) -> Tensor:
        """Greedy rollouts to the end from ``states`` [C]; offers and returns their rewards.

        Rows that finish are dropped from the batch once at least half of it has finished,
        so late steps cost only what is still running.
        """
        num = states.batch_size[0]
        self.stats["simulated_children"] += num
        final = states.clone()
        actions = history
        rows = torch.arange(num, device=history.device)  # full-batch index of each live row
        padding = torch.zeros(num, dtype=torch.long, device=history.device)
        cache = self.node_cache(inst)
        while True:
            done = states["done"].reshape(-1)
            if bool(done.all()):
                final[rows] = states
                break
            if 2 * int(done.sum()) >= done.numel():
                keep = torch.nonzero(~done).squeeze(-1)
                final[rows[done]] = states[done]
                # a finished row's only feasible action is the env's no-op
                padding[rows[done]] = states["action_mask"][done].float().argmax(-1)
                states, rows = states[keep], rows[keep]
                cache = _index_cache(cache, keep, done.numel())
            self.stats["simulation_steps"] += 1
            action = self.logits(states, cache).argmax(-1)
            states.set("action", action)
            states = self.env.step(states)["next"]
            column = padding[:, None].clone()
            column[rows] = action[:, None]
            actions = torch.cat([actions, column], dim=-1)
        reward = self.env.get_reward(final, actions)
        self.offer(inst, reward, actions)
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
) -> SGBSResult:
    """Simulation-guided beam search.

    Args:
        env: an RL4CO env (``CLRPEnv``, ``CVRPEnv``, ...).
        policy: an RL4CO autoregressive policy (``DRLHQPolicy``, ``AttentionModelPolicy``...).
        td: instance TensorDict [B] (unreset, as from the generator or a dataset).
        beta: beam width; gamma: children per beam node (the greedy child included).
        augment: number of augmented copies (1 = none); ``augment_fn`` as in RL4CO's
            ``StateAugmentation`` (``"dihedral8"`` or ``"symmetric"``).
        reuse_greedy: reuse the parent's score for its greedy child instead of simulating it.
        prefix_steps: steps fixed by a multistart start (default 2 for ``"clrp"``, else 1).
        max_batch: most children simulated in one batch; instances are split into chunks so
            that ``instances x beta x gamma <= max_batch`` (bounds memory).

    Returns:
        :class:`SGBSResult` with the best reward and actions per input instance.
    """
    if beta < 1 or gamma < 1:
        raise ValueError(f"beta and gamma must be >= 1, got beta={beta}, gamma={gamma}")
    if prefix_steps is None:
        prefix_steps = 2 if env.name == "clrp" else 1
    was_training = policy.training
    policy.eval()
    start = time.perf_counter()
    stats = {
        "decoder_calls": 0,
        "simulation_steps": 0,
        "expansions": 0,
        "multistart_steps": 0,
        "simulated_children": 0,
    }
    batch = td.batch_size[0]
    base = env.reset(td.clone())
    if augment > 1:
        base = StateAugmentation(num_augment=augment, augment_fn=augment_fn)(base)
    chunk = max(1, max_batch // (beta * gamma))
    rewards, actions, greedy = [], [], []
    for lo in range(0, base.batch_size[0], chunk):
        r, a, g = _run(
            env,
            policy,
            base[lo : lo + chunk].clone(),
            beta,
            gamma,
            reuse_greedy,
            prefix_steps,
            stats,
        )
        rewards.append(r)
        actions.append(a)
        greedy.append(g)
    length = max(a.shape[-1] for a in actions)
    reward = torch.cat(rewards)
    action = torch.cat([_pad_to(a, length, env.name == "clrp") for a in actions])
    greedy_reward = torch.cat(greedy)
    copies = base.batch_size[0] // batch
    # augmented copies are laid out copy-major (row a * B + b): best over copies
    reward_ab = unbatchify(reward, copies)  # [B, A]
    best_copy = reward_ab.argmax(-1)
    rows = best_copy * batch + torch.arange(batch, device=reward.device)
    stats["seconds"] = time.perf_counter() - start
    policy.train(was_training)
    return SGBSResult(
        reward=reward[rows],
        actions=action[rows],
        greedy_reward=unbatchify(greedy_reward, copies).amax(-1),
        stats=stats,
    )


def _run(env, policy, td, beta, gamma, reuse_greedy, prefix_steps, stats):
    """SGBS on the reset states ``td`` [B]; returns (reward [B], actions [B, T], greedy [B])."""
    batch = td.batch_size[0]
    device = td.device
    search = _Search(env, policy, td, prefix_steps, stats)

    # 1. greedy multistart; the beta best starts seed the beam
    out = policy(td.clone(), env, decode_type="multistart_greedy", return_actions=True)
    starts_reward, starts_actions = out["reward"], out["actions"]
    stats["multistart_steps"] += starts_actions.shape[-1]
    num_starts = starts_reward.shape[0] // batch
    inst_all = torch.arange(batch, device=device).repeat(num_starts)  # row s * B + b
    search.offer(inst_all, starts_reward, starts_actions)
    greedy_reward = search.best_reward.clone()
    width = min(beta, num_starts)
    top = unbatchify(starts_reward, num_starts).topk(width, dim=-1).indices  # [B, width]
    rows = (top * batch + torch.arange(batch, device=device)[:, None]).reshape(-1)
    inst = rows % batch
    score = starts_reward[rows]
    history = starts_actions[rows, :prefix_steps]
    states = td[inst]
    for t in range(prefix_steps):
        states.set("action", history[:, t])
        states = env.step(states)["next"]

    # 2. expand, simulate, select until every beam node is finished
    while not bool(states["done"].all()):
        stats["expansions"] += 1
        logits = search.logits(states, search.node_cache(inst))
        num_nodes = states.batch_size[0]
        k = min(gamma, logits.shape[-1])
        top_logits, top_actions = logits.topk(k, dim=-1)  # [M, k]; column 0 = greedy child
        valid = torch.isfinite(top_logits)
        child_parent = torch.arange(num_nodes, device=device).repeat_interleave(k)
        child_action = torch.where(valid, top_actions, top_actions[:, :1]).reshape(-1)
        child_valid = valid.reshape(-1)
        child_inst = inst[child_parent]
        children = states[child_parent]
        children.set("action", child_action)
        children = env.step(children)["next"]
        child_history = torch.cat([history[child_parent], child_action[:, None]], dim=-1)
        child_score = torch.full_like(child_action, -torch.inf, dtype=score.dtype)
        is_greedy = torch.zeros(num_nodes, k, dtype=torch.bool, device=device)
        is_greedy[:, 0] = True
        is_greedy = is_greedy.reshape(-1)
        if reuse_greedy:
            child_score = torch.where(is_greedy, score[child_parent], child_score)
            simulate = child_valid & ~is_greedy
        else:
            simulate = child_valid
        sim_rows = torch.nonzero(simulate).squeeze(-1)
        if sim_rows.numel() > 0:
            sim_reward = search.simulate(
                children[sim_rows], child_inst[sim_rows], child_history[sim_rows]
            )
            child_score[sim_rows] = sim_reward.to(child_score.dtype)
        # keep the beta best children of each instance (children are grouped by instance)
        per_inst = child_score.reshape(batch, -1)  # nodes are instance-major: [B, width * k]
        keep = min(beta, per_inst.shape[-1])
        chosen = per_inst.topk(keep, dim=-1).indices
        chosen = chosen + torch.arange(batch, device=device)[:, None] * per_inst.shape[-1]
        chosen = chosen.reshape(-1)
        states = children[chosen]
        inst = child_inst[chosen]
        score = child_score[chosen]
        history = child_history[chosen]

    # finished beam nodes are complete solutions: offer them too
    search.offer(inst, env.get_reward(states, history), history)
    return search.best_reward, search.best_actions, greedy_reward
