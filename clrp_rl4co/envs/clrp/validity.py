"""Validity of CLRP instances (:func:`check_instance_validity`, the env's reset runs it) and
vectorised feasibility check of action sequences (independent of the env's step).

Also the home of the conventions every consumer of instances and action sequences shares:

- :data:`CAPACITY_TOLERANCE`, the slack of every capacity comparison;
- :data:`PADDING_ACTION` (node 0, as in RL4CO's routing envs): the only action of a finished
  instance, a free no-op; sequences of a batch are padded with it (:func:`pad_actions`);
- the *start action* of a multistart solution (:func:`split_start_action`): RL4CO's multistart
  decoding forces the first action to ``env.select_start_nodes()``; for the CLRP that is a
  customer node ``c`` at the very first step, which reads "serve ``c`` first". A multistart
  sequence is then ``c, d, c, ...``: the start action, the depot the policy picked, the
  forced customer, and the rest of the solution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from tensordict import TensorDict

from .instance import INSTANCE_KEYS

#: Tolerance on capacity comparisons (in demand units) used by the env mask and every validity
#: check, so that float round-off in remaining capacities never flips a decision.
CAPACITY_TOLERANCE = 1e-5

#: The no-op of a finished instance (its mask is one-hot on it) and the padding of sequences.
PADDING_ACTION = 0


def pad_actions(actions: torch.Tensor, length: int) -> torch.Tensor:
    """Pad [B, T] actions to [B, length] with :data:`PADDING_ACTION` (no-op if long enough)."""
    extra = length - actions.shape[-1]
    if extra <= 0:
        return actions
    return torch.cat([actions, actions.new_full((actions.shape[0], extra), PADDING_ACTION)], -1)


def check_instance_validity(td: TensorDict, names: Sequence[str] | None = None) -> None:
    """Raise ``ValueError`` if a batch of instances is malformed or provably infeasible.

    The one definition of a valid instance: the env's reset runs it on every batch, and a
    single instance is checked as a batch of one. In order:

    1. the keys of :data:`INSTANCE_KEYS` are there (``cost_locs`` and ``rounded_costs`` may be
       missing), the batch is 1-D, there are depots and customers, and the shapes agree (the
       error names the array whose shape disagrees with the numbers of depots and customers
       that the other arrays state, its shape and the expected one);
    2. every number is finite; capacities, opening and vehicle costs and demands are
       non-negative, demands and the vehicle capacity positive;
    3. no demand exceeds the vehicle capacity or every depot capacity, and the total demand
       does not exceed the total depot capacity;
    4. bin packing (a necessary condition): for every demand ``t``, the customers with demand
       ``>= t`` fit only into depots with capacity ``>= t``, so their total demand must not
       exceed those depots' total capacity.

    Capacity comparisons allow :data:`CAPACITY_TOLERANCE`. The message names the field, the
    index (batch index first) and the value; with ``names`` (one per instance) it starts with
    the name of the instance at fault.
    """

    def fail(b: int, message: str) -> ValueError:
        return ValueError(message if names is None else f"{names[b]}: {message}")

    for key in INSTANCE_KEYS[:-1]:
        if key == "cost_locs" and key not in td.keys():
            continue
        if key not in td.keys():
            raise ValueError(f"{key}: missing from the instance TensorDict")
    batch = td.batch_size
    if len(batch) != 1:
        raise ValueError(f"batch_size: CLRP instances need a 1-D batch, got {tuple(batch)}")
    num_depots = td["depot_capacity"].shape[-1]
    num_customers = td["demand"].shape[-1]
    if num_depots < 1:
        shape = list(td["depot_capacity"].shape)
        raise ValueError(f"depot_capacity: need at least one depot, got shape {shape}")
    if num_customers < 1:
        shape = list(td["demand"].shape)
        raise ValueError(f"demand: need at least one customer, got shape {shape}")
    (num_depots, num_customers), rival = _agreed_sizes(td)
    error = _shape_error(td, num_depots, num_customers)
    if error is not None:
        other = None if rival is None else _shape_error(td, *rival)
        if other is not None and other.split(":")[0] != error.split(":")[0]:
            error = f"{error}; or {other}"  # as many arrays state the other sizes
        raise ValueError(error)
    for key in ("vehicle_capacity", "vehicle_fixed_cost"):
        if td[key].numel() != batch[0]:
            raise ValueError(f"{key}: expected one value per instance, got {list(td[key].shape)}")
    checks = [
        ("locs", "finite"),
        ("depot_capacity", "finite and non-negative"),
        ("opening_cost", "finite and non-negative"),
        ("demand", "finite and non-negative"),
        ("vehicle_capacity", "finite and non-negative"),
        ("vehicle_fixed_cost", "finite and non-negative"),
        ("cost_locs", "finite"),
        ("demand", "positive"),
        ("vehicle_capacity", "positive"),
    ]
    for key, rule in checks:
        if key not in td.keys():
            continue
        value = td[key]
        if rule == "positive":
            bad = value <= 0
        else:
            bad = ~torch.isfinite(value)
            if rule != "finite":
                bad = bad | (value < 0)
        if bad.any():
            idx = bad.nonzero()[0].tolist()
            raise fail(idx[0], f"{key}{idx} must be {rule}, got {value[tuple(idx)].item()}")
    demand = td["demand"]
    capacity = td["depot_capacity"]
    limits = (  # a demand above either cannot be served
        (td["vehicle_capacity"].reshape(-1, 1), "vehicle_capacity {limit:g}"),
        (
            capacity.amax(-1, keepdim=True),
            "every depot_capacity (largest {limit:g}): instance {b} is infeasible",
        ),
    )
    for limit, exceeded in limits:
        over = demand > limit + CAPACITY_TOLERANCE
        if over.any():
            b, j = over.nonzero()[0].tolist()
            raise fail(
                b,
                f"demand[{b}, {j}] = {demand[b, j].item():g} exceeds "
                + exceeded.format(limit=limit[b, 0].item(), b=b),
            )
    total_demand = demand.sum(-1)
    total_capacity = capacity.sum(-1)
    short = total_demand > total_capacity + CAPACITY_TOLERANCE
    if short.any():
        b = int(short.nonzero()[0, 0])
        raise fail(
            b,
            f"instance {b}: total demand {total_demand[b].item():g} exceeds total "
            f"depot_capacity {total_capacity[b].item():g}",
        )
    # bin packing, for every threshold t = a demand at once (float64: exact sums); where every
    # depot holds the largest demand it is the total check above, so only other rows are sorted
    rows = (capacity.amin(-1) + CAPACITY_TOLERANCE < demand.amax(-1)).nonzero().squeeze(-1)
    if len(rows) == 0:
        return
    thresholds = demand[rows].double().sort(-1).values  # [R, N] ascending
    depots = capacity[rows].double().sort(-1).values  # [R, D] ascending

    def total_from(sorted_values: torch.Tensor, low: torch.Tensor) -> torch.Tensor:
        """Sum of the values ``>= low`` per threshold [R, N] (``sorted_values`` ascending)."""
        suffix = sorted_values.flip(-1).cumsum(-1).flip(-1)  # [R, K]: sum from index k on
        suffix = torch.cat([suffix, suffix.new_zeros(len(suffix), 1)], -1)
        return suffix.gather(-1, torch.searchsorted(sorted_values, low))

    need = total_from(thresholds, thresholds)
    room = total_from(depots, thresholds - CAPACITY_TOLERANCE)
    short = need > room + CAPACITY_TOLERANCE
    if short.any():
        r, k = _first(short)
        b = int(rows[r])
        raise fail(
            b,
            f"instance {b}: customers with demand >= {thresholds[r, k].item():g} need "
            f"{need[r, k].item():g} but the depots that can hold them (depot_capacity >= "
            f"{thresholds[r, k].item():g}) have only {room[r, k].item():g}",
        )


#: The size each array of an instance states: its length along the node axis counts the
#: depots ``D``, the customers ``N`` or both.
_SIZE_OF = {
    "depot_capacity": "depots",
    "opening_cost": "depots",
    "demand": "customers",
    "locs": "nodes",
    "cost_locs": "nodes",
}


def _agreed_sizes(td: TensorDict) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """``((D, N), rival)``: the numbers of depots and customers that most of the instance's
    arrays agree on, so that a shape error names the array that disagrees, and another pair
    that as many arrays agree on (None if there is none).

    Each array of :data:`_SIZE_OF` with the right number of dimensions ([B, k], or [B, k, 2]
    for coordinates) states ``D``, ``N`` or ``D + N``; the pair stated by the most arrays wins,
    a tie going to the pair that agrees with ``locs`` (the coordinates fix the number of
    nodes), then to the sizes of ``depot_capacity`` and ``demand``.
    """
    stated = {}
    for key, size in _SIZE_OF.items():
        if key not in td.keys():
            continue
        shape = td[key].shape
        well_formed = len(shape) == 3 and shape[-1] == 2 if size == "nodes" else len(shape) == 2
        if well_formed:
            stated[key] = int(shape[1])
    depots = {v for k, v in stated.items() if _SIZE_OF[k] == "depots"}
    customers = {v for k, v in stated.items() if _SIZE_OF[k] == "customers"}
    nodes = {v for k, v in stated.items() if _SIZE_OF[k] == "nodes"}
    fallback = (td["depot_capacity"].shape[-1], td["demand"].shape[-1])
    candidates = {fallback}
    candidates |= {(d, n) for d in depots for n in customers}
    candidates |= {(d, m - d) for d in depots for m in nodes if m > d}
    candidates |= {(m - n, n) for n in customers for m in nodes if m > n}

    def agrees(key: str, d: int, n: int) -> bool:
        return stated.get(key) == {"depots": d, "customers": n, "nodes": d + n}[_SIZE_OF[key]]

    def support(pair: tuple[int, int]) -> tuple[int, bool, bool]:
        votes = sum(agrees(key, *pair) for key in stated)
        return votes, agrees("locs", *pair), pair == fallback

    ranked = sorted(sorted(candidates), key=support, reverse=True)
    best = ranked[0]
    tied = [pair for pair in ranked[1:] if support(pair)[0] == support(best)[0]]
    return best, (tied[0] if tied else None)


def _shape_error(td: TensorDict, num_depots: int, num_customers: int) -> str | None:
    """The message for the first array whose shape does not fit ``num_depots`` depots and
    ``num_customers`` customers (its shape and the expected one); None if all fit."""
    num_nodes = num_depots + num_customers
    shapes = {
        "locs": (num_nodes, 2),
        "cost_locs": (num_nodes, 2),
        "depot_capacity": (num_depots,),
        "opening_cost": (num_depots,),
        "demand": (num_customers,),
    }
    for key, shape in shapes.items():
        if key in td.keys() and tuple(td[key].shape[1:]) != shape:
            return (
                f"{key}: expected shape [B, {', '.join(map(str, shape))}] for {num_depots} "
                f"depots and {num_customers} customers, got {list(td[key].shape)}"
            )
    return None


def split_start_action(actions: torch.Tensor, num_depots: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Separate the start actions of multistart sequences from the solutions.

    Args:
        actions: [B, T] node indices (depots ``0..D-1``, customer ``j`` is ``D + j``).
        num_depots: ``D``.

    Returns:
        ``(solutions [B, T], start_node [B])``: rows that begin with a customer node lose that
        start action and get one :data:`PADDING_ACTION` at the end;
        ``start_node`` is the start customer's node index, or -1 for rows without one.
    """
    actions = actions.long()
    has_start = actions[:, 0] >= num_depots
    shifted = pad_actions(actions[:, 1:], actions.shape[-1])
    solutions = torch.where(has_start[:, None], shifted, actions)
    return solutions, torch.where(has_start, actions[:, 0], -1)


def routes_from_actions(
    actions: Sequence[int], num_depots: int
) -> list[tuple[int, tuple[int, ...]]]:
    """Routes ``(depot, customers)`` of one action sequence (customers 0-based, in order).

    The sequence is ``d, c, c, ..., d, d', c, ..., d', ...``: a depot opens a route, customers
    follow, the same depot closes it; a leading start action (:func:`split_start_action`) is
    dropped. Depot indices after the last closed route (padding) are ignored. Raises
    ``ValueError`` on a malformed sequence (customer outside a route, route closed at another
    depot, empty route, unfinished route).
    """
    actions = [int(a) for a in np.asarray(actions).reshape(-1)]
    if actions and actions[0] >= num_depots:
        start, actions = actions[0], actions[1:]
        if len(actions) < 2 or actions[1] != start:
            raise ValueError(f"start action {start} is not the first customer served")
    routes: list[tuple[int, tuple[int, ...]]] = []
    depot = None
    customers: list[int] = []
    for pos, a in enumerate(actions):
        if a < 0:
            raise ValueError(f"actions[{pos}] = {a} is negative")
        if a >= num_depots:
            if depot is None:
                raise ValueError(f"actions[{pos}] = {a}: customer {a - num_depots} outside a route")
            customers.append(a - num_depots)
        elif depot is None:
            depot, customers = a, []
        elif a != depot:
            raise ValueError(
                f"actions[{pos}] = {a}: route from depot {depot} must return to depot {depot}"
            )
        elif customers:
            routes.append((depot, tuple(customers)))
            depot = None
        elif any(b >= num_depots for b in actions[pos:]):
            # a depot picked and immediately "closed" is only allowed as trailing padding
            raise ValueError(f"actions[{pos}] = {a}: empty route at depot {a}")
        else:
            return routes
    if depot is not None and customers:
        raise ValueError(f"route from depot {depot} is not closed at the end of actions")
    return routes


def _first(violation: torch.Tensor):
    """(batch index, position) of the first True entry of a [B, K] tensor, or None."""
    rows = violation.any(-1).nonzero()
    if rows.numel() == 0:
        return None
    b = int(rows[0, 0])
    k = int(violation[b].nonzero()[0, 0])
    return b, k


def check_solution_validity(td: TensorDict, actions: torch.Tensor) -> None:
    """Raise ``ValueError`` if any instance's action sequence violates a CLRP constraint.

    Checks, for every instance of the batch at once: action range; routes open at a depot, serve
    at least one customer and close at the same depot; every customer served exactly once;
    vehicle capacity per route; depot capacity per depot; the last route is closed; a start
    action (multistart, :func:`split_start_action`) names the first customer served. Depot
    indices after the last closed route are padding and ignored. The message names the
    instance (batch index) and the customer, route, depot or position at fault.

    Args:
        td: any TensorDict of the batch holding ``depot_capacity`` [B, D], ``demand`` [B, N]
            and ``vehicle_capacity`` [B, 1] (an initial or final state).
        actions: [B, T] node indices (depots ``0..D-1``, customer ``j`` is ``D + j``).
    """
    demand = td["demand"]
    depot_capacity = td["depot_capacity"]
    batch, num_customers = demand.shape
    num_depots = depot_capacity.shape[-1]
    actions = actions.to(demand.device).long().reshape(batch, -1)
    horizon = actions.shape[-1]

    bad = _first((actions < 0) | (actions >= num_depots + num_customers))
    if bad is not None:
        b, t = bad
        raise ValueError(f"instance {b}: actions[{t}] = {int(actions[b, t])} is not a node index")
    actions, start_node = split_start_action(actions, num_depots)
    if horizon > 1:
        first_customer = actions[:, 1]
        wrong = (start_node >= 0) & (first_customer != start_node)
        if wrong.any():
            b = int(wrong.nonzero()[0, 0])
            raise ValueError(
                f"instance {b}: start action {int(start_node[b])} but the first customer "
                f"served is node {int(first_customer[b])}"
            )

    pos = torch.arange(horizon, device=actions.device).expand(batch, horizon)
    is_depot = actions < num_depots
    is_customer = ~is_depot
    customer = (actions - num_depots).clamp(min=0)
    occurrence = is_depot.long().cumsum(-1)  # depots seen up to and including t

    # every customer exactly once
    counts = torch.zeros(batch, num_customers, dtype=torch.long, device=actions.device)
    counts.scatter_add_(-1, customer, is_customer.long())
    bad = _first(counts == 0)
    if bad is not None:
        raise ValueError(
            f"instance {bad[0]}: customer {bad[1]} (node {bad[1] + num_depots}) "
            "is not served (unfinished or dead-ended solution)"
        )
    bad = _first(counts > 1)
    if bad is not None:
        b, j = bad
        raise ValueError(
            f"instance {b}: customer {j} (node {j + num_depots}) is served "
            f"{int(counts[b, j])} times"
        )

    # customers only inside a route (odd number of depots seen so far)
    bad = _first(is_customer & (occurrence % 2 == 0))
    if bad is not None:
        b, t = bad
        raise ValueError(
            f"instance {b}: actions[{t}] = customer node {int(actions[b, t])} "
            "is outside a route (no depot opened it)"
        )

    # the route of the last customer must be closed; what follows is padding
    last_customer = torch.where(is_customer, pos, -1).amax(-1)
    occ_last = occurrence.gather(-1, last_customer.clamp(min=0)[:, None]).squeeze(-1)
    unclosed = occurrence[:, -1] < occ_last + 1
    if unclosed.any():
        b = int(unclosed.nonzero()[0, 0])
        raise ValueError(f"instance {b}: the last route is not closed at its depot")
    in_solution = occurrence <= (occ_last + 1)[:, None]

    # a closing depot equals the opening depot and the route is not empty
    last_depot_pos = torch.where(is_depot, pos, -1).cummax(-1).values  # inclusive
    prev_depot_pos = torch.cat([torch.full_like(pos[:, :1], -1), last_depot_pos[:, :-1]], -1)
    prev_depot = actions.gather(-1, prev_depot_pos.clamp(min=0))
    closing = is_depot & (occurrence % 2 == 0) & in_solution
    bad = _first(closing & (actions != prev_depot))
    if bad is not None:
        b, t = bad
        raise ValueError(
            f"instance {b}: route from depot {int(prev_depot[b, t])} returns to "
            f"depot {int(actions[b, t])} (actions[{t}])"
        )
    bad = _first(closing & (prev_depot_pos == pos - 1))
    if bad is not None:
        b, t = bad
        raise ValueError(f"instance {b}: empty route at depot {int(actions[b, t])} (actions[{t}])")

    # vehicle capacity per route and depot capacity per depot
    served_demand = demand.gather(-1, customer) * is_customer
    route_id = torch.where(is_customer, (occurrence - 1) // 2, 0)
    route_load = torch.zeros(batch, horizon // 2 + 1, dtype=demand.dtype, device=demand.device)
    route_load.scatter_add_(-1, route_id, served_demand)
    over = route_load > td["vehicle_capacity"].reshape(batch, 1) + CAPACITY_TOLERANCE
    bad = _first(over)
    if bad is not None:
        b, r = bad
        raise ValueError(
            f"instance {b}: route {r} carries {float(route_load[b, r]):g} > vehicle "
            f"capacity {float(td['vehicle_capacity'].reshape(batch)[b]):g}"
        )
    route_depot = actions.gather(-1, last_depot_pos.clamp(min=0))
    depot_load = torch.zeros_like(depot_capacity)
    depot_load.scatter_add_(-1, torch.where(is_customer, route_depot, 0), served_demand)
    bad = _first(depot_load > depot_capacity + CAPACITY_TOLERANCE)
    if bad is not None:
        b, i = bad
        raise ValueError(
            f"instance {b}: depot {i} serves {float(depot_load[b, i]):g} > its "
            f"capacity {float(depot_capacity[b, i]):g}"
        )

    if "infeasible" in td.keys() and bool(td["infeasible"].any()):
        b = int(td["infeasible"].reshape(batch).nonzero()[0, 0])
        raise ValueError(f"instance {b}: the final state is flagged infeasible (dead end)")
