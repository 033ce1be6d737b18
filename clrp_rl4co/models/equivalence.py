"""Equivalent forms of one CLRP solution, for imitation: the same routes in another order and
direction (:func:`equivalent_actions`), the same instance under a dihedral transform of its
network coordinates (:func:`dihedral_locs`), and both drawn at random for a batch
(:func:`augment_expert_batch`).

Why these keep the solution and its cost:

- *route order*: a depot's remaining capacity at the start of any of its routes is at least the
  demand of that route plus its later routes, so every order is feasible (rules 3 and 5 of
  :class:`~clrp_rl4co.envs.CLRPEnv`); opening, vehicle and routing costs are sums over routes;
- *route direction*: arc costs are symmetric (Euclidean, rounded or not), and a route's load does
  not depend on the order of its customers;
- *dihedral transforms*: they move ``locs`` (what the policy sees, the coordinates RL4CO's
  ``dihedral8`` augmentation moves) and leave ``cost_locs`` (what the env prices) untouched; the
  node indices, hence the action sequence, stay the same. They are isometries of the unit
  square, so the transformed instance is the same instance to the policy's min-max
  normalisation up to a rotation or reflection.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from rl4co.data.transforms import dihedral_8_augmentation
from tensordict import TensorDict

from clrp_rl4co.data.solution import CLRPSolution, Route
from clrp_rl4co.envs.clrp.validity import PADDING_ACTION

#: Members of the dihedral group of the unit square, in RL4CO's ``dihedral_8_augmentation``
#: order (0 is the identity).
NUM_DIHEDRAL = 8


def equivalent_actions(
    actions: Sequence[int], num_depots: int, order: Sequence[int], reverse: Sequence[bool]
) -> list[int]:
    """The same solution as ``actions`` with its routes in another order and direction.

    Args:
        actions: one env action sequence (node indices; trailing padding allowed, no multistart
            start action needed).
        num_depots: ``D``.
        order: a permutation of ``range(R)``, ``R`` the number of routes: new route ``k`` is old
            route ``order[k]``.
        reverse: ``R`` flags, one per *old* route: serve its customers backwards.

    Returns:
        The unpadded sequence ``d, c, ..., d, d', ...`` (same length as the unpadded input).

    Raises:
        ValueError: ``order`` is no permutation of the routes, or ``reverse`` has the wrong
            length (naming the route count), or ``actions`` is malformed.
    """
    routes = CLRPSolution.from_actions(actions, num_depots).routes
    if sorted(int(k) for k in order) != list(range(len(routes))):
        raise ValueError(f"order: {list(order)} is no permutation of the {len(routes)} routes")
    if len(reverse) != len(routes):
        raise ValueError(f"reverse: {len(reverse)} flags for {len(routes)} routes")
    new = []
    for k in order:
        route = routes[int(k)]
        customers = route.customers[::-1] if reverse[int(k)] else route.customers
        new.append(Route(route.depot, customers))
    return CLRPSolution(new).to_actions(num_depots)


def random_equivalent_actions(
    actions: Sequence[int], num_depots: int, generator: torch.Generator | None = None
) -> list[int]:
    """:func:`equivalent_actions` with a uniformly random route order and independent fair coin
    flips for each route's direction."""
    num_routes = len(CLRPSolution.from_actions(actions, num_depots).routes)
    order = torch.randperm(num_routes, generator=generator).tolist()
    reverse = (torch.rand(num_routes, generator=generator) < 0.5).tolist()
    return equivalent_actions(actions, num_depots, order, reverse)


def dihedral_locs(locs: torch.Tensor, member: torch.Tensor) -> torch.Tensor:
    """Coordinates ``locs`` [B, M, 2] with row ``b`` moved by dihedral member ``member[b]``
    (``0..7``, RL4CO's ``dihedral_8_augmentation`` order, 0 the identity)."""
    batch = locs.shape[0]
    member = torch.as_tensor(member, device=locs.device).long().reshape(-1)
    if member.numel() != batch or bool(((member < 0) | (member >= NUM_DIHEDRAL)).any()):
        raise ValueError(
            f"member: need {batch} values in 0..{NUM_DIHEDRAL - 1}, got {member.tolist()}"
        )
    moved = dihedral_8_augmentation(locs).reshape(NUM_DIHEDRAL, batch, *locs.shape[1:])
    return moved[member, torch.arange(batch, device=locs.device)]


def augment_expert_batch(
    instances: TensorDict,
    actions: torch.Tensor,
    routes: bool = True,
    dihedral: bool = True,
    generator: torch.Generator | None = None,
) -> tuple[TensorDict, torch.Tensor]:
    """A random equivalent form of each (instance, expert sequence) pair of a batch.

    Args:
        instances: batch [B] of instances (``locs`` [B, D+N, 2], ``depot_capacity`` [B, D], ...).
        actions: [B, T] expert sequences, padded with ``PADDING_ACTION``.
        routes: draw each row's route order and directions (:func:`random_equivalent_actions`).
        dihedral: move each row's ``locs`` by a uniformly drawn dihedral member
            (:func:`dihedral_locs`); ``cost_locs`` is set to the untouched coordinates first
            when absent, so the cost stays the original's.
        generator: random source (None: torch's global one, seeded by ``seed``).

    Returns:
        ``(instances, actions [B, T])``, new objects; the inputs are not modified.
    """
    num_depots = instances["depot_capacity"].shape[-1]
    out = instances.clone(recurse=False)
    if routes:
        rows = [random_equivalent_actions(row, num_depots, generator) for row in actions.tolist()]
        new = torch.full_like(actions, PADDING_ACTION)
        for b, row in enumerate(rows):
            new[b, : len(row)] = torch.as_tensor(row, dtype=actions.dtype)
        actions = new
    if dihedral:
        if "cost_locs" not in out.keys():
            out.set("cost_locs", instances["locs"].double())
        member = torch.randint(NUM_DIHEDRAL, (instances.batch_size[0],), generator=generator)
        out.set("locs", dihedral_locs(instances["locs"], member))
    return out, actions
