"""The likelihood of a *solution* rather than of one of its action sequences, for imitation.

A CLRP solution with ``R`` routes has ``R! 2^R`` action sequences of the same cost (route order,
route direction). :func:`solution_log_likelihood` scores the solution along one rollout of the
policy in which every step ``t`` may take any action of the set ``S_t`` that keeps the partial
solution on the expert solution:

- a location step: the depot of any route not yet driven;
- the first customer of a route: either end of any route not yet driven from the chosen depot;
- inside a route: its next customer, then the return to its depot (one action).

The rollout draws its action from the policy restricted to the set, ``q(a | s_t) = p(a | s_t) /
P(S_t | s_t)``, and the score is ``X = sum_t log P(S_t | s_t)``. Since ``p(path) = q(path) exp(X)``
for every path that stays on the solution, ``E_q[exp X] = P(solution)``, the probability that the
policy's own sampling builds the solution in some order, and by Jensen ``E_q[X] <= log
P(solution)``: ``X`` is a one-sample lower bound of the solution's log-likelihood (the
importance-weighted bound with one sample). Its gradient, taken along the drawn path, raises the
probability of the whole set at each step rather than of one arbitrary member, so the policy
is taught the solution and keeps the route order it prefers (which its greedy decoding then
follows), instead of being pushed towards a uniform choice among the routes at every route
start, as training on random orders does. Along the path it follows, ``X`` is also at least that
path's own log-likelihood (each step's set holds its action).

``choose="greedy"`` follows the set's most likely action instead of drawing one (no bound then;
deterministic, for evaluation). It costs one rollout per solution: the decoder's steps of
RL4CO's ``evaluate`` plus the bookkeeping of the sets on the host.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from rl4co.envs.common.base import RL4COEnvBase
from rl4co.utils.decoding import process_logits
from tensordict import TensorDict

from clrp_rl4co.envs.clrp.validity import PADDING_ACTION, routes_from_actions


@dataclass
class _OnSolution:
    """Where one rollout stands on its expert solution.

    Attributes:
        num_depots: ``D`` (customer ``c`` is node ``D + c``).
        remaining: routes not yet started, as ``(depot, customers)``.
        depot: the depot of the route being driven (None: a location step is next).
        route: the customers of the route being driven in the chosen direction (None: the
            depot is chosen, the route's first customer not yet).
        position: customers of ``route`` already served.
    """

    num_depots: int
    remaining: list[tuple[int, tuple[int, ...]]]
    depot: int | None = None
    route: tuple[int, ...] | None = None
    position: int = 0

    def allowed(self) -> list[int]:
        """The node indices that keep the rollout on the solution."""
        if self.depot is None:
            if not self.remaining:
                return [PADDING_ACTION]
            return sorted({depot for depot, _ in self.remaining})
        if self.route is None:
            ends = set()
            for depot, customers in self.remaining:
                if depot == self.depot:
                    ends.update((customers[0], customers[-1]))
            return sorted(self.num_depots + c for c in ends)
        if self.position < len(self.route):
            return [self.num_depots + self.route[self.position]]
        return [self.depot]

    def take(self, action: int) -> None:
        """Move on by ``action`` (one of :meth:`allowed`)."""
        if self.depot is None:
            if self.remaining:
                self.depot = action
            return
        if self.route is None:
            customer = action - self.num_depots
            for k, (depot, customers) in enumerate(self.remaining):
                if depot != self.depot or customer not in (customers[0], customers[-1]):
                    continue
                self.route = customers if customers[0] == customer else customers[::-1]
                self.position = 1
                del self.remaining[k]
                return
            raise ValueError(f"action {action}: no route of depot {self.depot} ends there")
        if self.position < len(self.route):
            self.position += 1
            return
        self.depot, self.route, self.position = None, None, 0


def solution_log_likelihood(
    policy: torch.nn.Module,
    env: RL4COEnvBase,
    instances: TensorDict,
    actions: torch.Tensor,
    choose: str = "sample",
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-likelihood of each expert *solution* under ``policy`` (module docstring).

    Args:
        policy: an RL4CO constructive policy (``encoder``, ``decoder`` with
            ``pre_decoder_hook``, ``temperature``, ``tanh_clipping``, ``mask_logits``).
        env: the CLRP env.
        instances: batch [B] of instances.
        actions: [B, T] expert sequences (any order and direction of each solution's routes),
            padded with ``PADDING_ACTION``.
        choose: ``"sample"`` (draw from the policy restricted to the set) or ``"greedy"``.
        generator: random source of ``"sample"`` (None: torch's global one).

    Returns:
        ``(X [B], path [B, T'])``: ``X`` the sum over the rollout's steps of ``log P(S_t | s_t)``,
        ``path`` the actions the rollout took (an equivalent sequence of each solution, padded).

    Raises:
        ValueError: the env masks every action of a step's set (the row is not a feasible
            solution of its instance), naming the row and the step.
    """
    if choose not in ("sample", "greedy"):
        raise ValueError(f"choose: {choose!r} is neither 'sample' nor 'greedy'")
    num_depots = int(instances["depot_capacity"].shape[-1])
    rows = [
        _OnSolution(num_depots, [(d, tuple(c)) for d, c in routes_from_actions(row, num_depots)])
        for row in actions.tolist()
    ]
    td = env.reset(instances)
    hidden, _ = policy.encoder(td)
    td, env, hidden = policy.decoder.pre_decoder_hook(td, env, hidden, 0)
    total = torch.zeros(len(rows), device=td.device)
    path = []
    step = 0
    while not td["done"].all():
        logits, mask = policy.decoder(td, hidden, 0)
        logp = process_logits(
            logits,
            mask,
            temperature=policy.temperature,
            tanh_clipping=policy.tanh_clipping,
            mask_logits=policy.mask_logits,
        )
        allowed = torch.zeros_like(mask)
        for b, row in enumerate(rows):
            allowed[b, row.allowed()] = True
        allowed &= mask
        empty = ~allowed.any(-1)
        if bool(empty.any()):
            b = int(empty.nonzero()[0, 0])
            raise ValueError(
                f"actions: row {b} leaves its solution at step {step} (the env masks "
                f"{rows[b].allowed()})"
            )
        on_set = logp.masked_fill(~allowed, float("-inf"))
        total = total + torch.logsumexp(on_set, dim=-1).masked_fill(td["done"].reshape(-1), 0.0)
        if choose == "greedy":
            action = on_set.argmax(-1)
        else:
            weights = on_set.detach().exp()
            action = torch.multinomial(weights, 1, generator=generator).squeeze(-1)
        path.append(action)
        for b, a in enumerate(action.tolist()):
            rows[b].take(a)
        td.set("action", action)
        td = env.step(td)["next"]
        step += 1
    return total, torch.stack(path, dim=-1)
