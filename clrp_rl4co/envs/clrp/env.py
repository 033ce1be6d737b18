"""The CLRP environment: DRLHQ's location/routing MDP on RL4CO's ``RL4COEnvBase``."""

from __future__ import annotations

import torch
from rl4co.envs.common.base import RL4COEnvBase
from tensordict import TensorDict
from torchrl.data import Bounded, Composite, Unbounded

from .costs import cost_parts, round_cost
from .dataset import load_dataset
from .generator import CLRPGenerator
from .instance import INSTANCE_KEYS
from .render import finished_cost_parts, plotted_solution, render
from .validity import (
    CAPACITY_TOLERANCE,
    PADDING_ACTION,
    check_instance_validity,
    check_solution_validity,
    pad_actions,
)

INF = float("inf")


def _mask(pending_demand, remaining, location_step, route_depot, current_node, vehicle_load, start):
    """Action mask of rules 1-5 and the start rules, with the padding action, plus the
    finished flags.

    Shapes: pending_demand [B, N] (demand of unserved customers, ``inf`` once served),
    remaining [B, D], the rest [B, 1] (``start``: node index of the start customer while it is
    still to be served, -1 otherwise; ``None``: no row has one). Returns the mask [B, D+N],
    ``finished`` [B] (done or dead end) and ``all_served`` [B].

    While a start customer is set, a location step allows only the depots whose remaining
    capacity holds its demand, and a routing step only that customer.

    Only a location step can be a dead end: after a depot is picked, its vehicle load
    ``min(q, remaining)`` covers the smallest unserved demand, and during a route the departure
    depot is always allowed. A location step with every customer served has
    ``smallest = inf``, so "no depot holds the smallest unserved demand" covers both the
    finished and the dead-ended case.
    """
    num_depots = remaining.shape[-1]
    smallest = pending_demand.amin(-1, keepdim=True)  # [B, 1]
    route_remaining = remaining.gather(-1, route_depot)
    limit = torch.minimum(vehicle_load, route_remaining) + CAPACITY_TOLERANCE
    limit = limit.masked_fill(location_step, -1.0)  # rule 5: no customer at a location step
    customer_ok = pending_demand <= limit  # rules 1 (served: inf) and 3
    depot_ids = torch.arange(num_depots, device=remaining.device)
    needed = smallest
    in_route = (depot_ids == route_depot) & (current_node != route_depot)  # rules 2, 4
    if start is not None:  # a multistart rollout (the first two steps)
        forced = start >= num_depots  # [B, 1]: a start customer still to be served first
        start_index = (start - num_depots).clamp(min=0)
        customer_ids = torch.arange(pending_demand.shape[-1], device=remaining.device)
        customer_ok = customer_ok & (~forced | (customer_ids == start_index))
        needed = torch.where(forced, pending_demand.gather(-1, start_index), smallest)
        in_route = in_route & ~forced
    depot_ok = torch.where(location_step, remaining >= needed - CAPACITY_TOLERANCE, in_route)
    mask = torch.cat([depot_ok, customer_ok], dim=-1)  # a new tensor: updated in place below
    finished = location_step & (remaining.amax(-1, keepdim=True) + CAPACITY_TOLERANCE < smallest)
    # a finished row has no feasible action left: allow only the padding no-op
    mask[:, PADDING_ACTION] |= finished.squeeze(-1)
    return mask, finished.squeeze(-1), torch.isinf(smallest).squeeze(-1)


def _replace(td: TensorDict, values: dict) -> TensorDict:
    """A new TensorDict with ``td``'s entries, some replaced by ``values`` (no copies).

    Uses tensordict's unchecked constructor when available: the values come from the env's
    own vectorised updates and have the right batch shape, and the checked path costs more
    than the step's arithmetic.
    """
    fields = dict(td.items())
    fields.update(values)
    new_unsafe = getattr(TensorDict, "_new_unsafe", None)
    if new_unsafe is not None:
        return new_unsafe(fields, batch_size=td.batch_size, device=td.device)
    return TensorDict(fields, batch_size=td.batch_size, device=td.device)


def _arc_cost(cost_locs: torch.Tensor, rounded: torch.Tensor, src, dst) -> torch.Tensor:
    """Arc costs [B] (float64, instance units) between nodes ``src`` and ``dst`` ([B, 1])."""
    idx_src = src[..., None].expand(-1, 1, 2)
    idx_dst = dst[..., None].expand(-1, 1, 2)
    diff = cost_locs.gather(1, idx_src) - cost_locs.gather(1, idx_dst)
    dist = diff.norm(dim=-1).squeeze(-1)
    return torch.where(rounded, round_cost(dist), dist)


class CLRPEnv(RL4COEnvBase):
    """Capacitated Location-Routing Problem (CLRP) with DRLHQ's two-stage MDP.

    A solution is built as a sequence of routes. At a *location step* the agent picks the
    depot of the next route (depot-to-depot moves cost 0); at *routing steps* it picks a
    customer or returns to that depot, which closes the route and makes the next step a
    location step. Node layout: depots ``0..D-1``, customers ``D..D+N-1``.

    Observations (all in the TensorDict; every step returns new tensors):
        - ``locs`` [B, D+N, 2]: network coordinates (augmentable; never used for the cost).
        - ``cost_locs`` [B, D+N, 2] float64 and ``rounded_costs`` [B]: the untouched
          coordinates and cost convention (``ceil(100 d)`` when rounded) the cost comes from.
        - ``depot_capacity`` [B, D] (initial ``Q_i``), ``remaining_depot_capacity`` [B, D],
          ``opening_cost`` [B, D] (``O_i``), ``demand`` [B, N] (``D_j``),
          ``vehicle_capacity`` [B, 1] (``q``), ``vehicle_fixed_cost`` [B, 1] (``F``).
        - ``current_node`` [B, 1], ``route_depot`` [B, 1] (departure depot of the route),
          ``vehicle_load`` [B, 1] (remaining load of the vehicle), ``served`` [B, N],
          ``pending_demand`` [B, N] (demand of unserved customers, ``inf`` once served),
          ``is_location_step`` [B, 1] (the stage indicator), ``depot_used`` [B, D],
          ``current_route`` [B, N] and ``last_route`` [B, N] (customers of the route in
          progress and of the most recently completed route), ``num_routes`` [B, 1], ``i``,
          ``start_customer`` [B, 1] (node index of the multistart start customer until it is
          served, -1 otherwise).
        - ``cost_opening``, ``cost_vehicles``, ``cost_routing`` [B] float64: the objective
          so far, split into depot, vehicle and routing parts.

    Constraints (``action_mask``, True = feasible):
        1. served customers are masked;
        2. during a route every depot but the departure depot is masked;
        3. a customer whose demand exceeds the vehicle load or the departure depot's remaining
           capacity is masked;
        4. right after picking a depot, that depot is masked (no empty routes);
        5. at a location step customers are masked, and so is every depot whose remaining
           capacity is below the smallest unserved demand.
        Leaving depot ``i`` the vehicle load becomes ``min(q, remaining capacity of i)``.

    Multistart (DRLHQ's start scheme, in the env so that RL4CO's stock multistart decoding,
    beam search, POMO, SymNCO, PolyNet and EAS use it unchanged):
        :meth:`select_start_nodes` returns *start actions*: customer nodes, start ``s`` owning
        customer ``s mod N``. At the reset state (``i == 0``) the env accepts a customer
        action (outside the mask, as RL4CO forces it) and reads it as "serve this customer
        first": it is stored in ``start_customer`` and nothing else changes. The next
        location step allows only the depots that can hold that customer (the policy
        chooses among them), and the first routing step only that customer. A multistart
        action sequence is therefore ``c, d, c, ...`` (:func:`split_start_action`).

    Finish condition:
        every customer served and the vehicle back at its depot (``done``). A finished state's
        mask is one-hot on node 0 (``PADDING_ACTION``, as in RL4CO's routing envs), a step
        that changes nothing and costs 0; RL4CO decodes until the whole batch is done, so
        sequences carry such trailing padding. Any action on a finished instance is a no-op
        and is not checked (sequences padded otherwise replay too).
        *Dead end*: rule 5 cannot foresee bin-packing failures (a depot with 5 units left and
        unserved demands 3 and 4). When no depot can serve any unserved customer at a location
        step, the state is finished with ``infeasible = True`` and the same padding mask.

    Reward:
        ``-(cost_opening + cost_vehicles + cost_routing)`` in the instance's units, read from
        the final state. A dead-ended instance additionally pays ``infeasible_penalty`` [B] per
        unserved customer: ``F + max_i O_i + 2 x`` (the diagonal of the instance's bounding
        box, in arc-cost units), more than any single extra route could cost. Use
        :meth:`cost_parts` for the three parts.

    Args:
        generator: a :class:`CLRPGenerator`; or ``generator_params`` to build one.
        check_actions: raise ``ValueError`` (naming batch index and action) when a masked
            action is stepped. One gather per step; switch off for speed.
        check_solution: validate solutions in :meth:`get_reward` (RL4CO's flag; default False
            because training calls the reward every batch).
    """

    name = "clrp"
    #: Steps a multistart start fixes: the start action, the first depot (the policy's
    #: choice among those that can hold the start customer) and the forced start customer.
    num_start_steps = 3

    def __init__(
        self,
        generator: CLRPGenerator | None = None,
        generator_params: dict | None = None,
        check_actions: bool = True,
        check_solution: bool = False,
        **kwargs,
    ):
        super().__init__(check_solution=check_solution, **kwargs)
        if generator is None:
            generator = CLRPGenerator(**(generator_params or {}))
        self.generator = generator
        self.check_actions = check_actions
        self._make_spec(self.generator)

    # ------------------------------------------------------------------ reset
    def _reset(self, td: TensorDict | None = None, batch_size=None) -> TensorDict:
        td = td.select(*[k for k in INSTANCE_KEYS if k in td.keys()])
        check_instance_validity(td)
        device = td.device
        batch = list(td.batch_size)
        demand = td["demand"].float()
        depot_capacity = td["depot_capacity"].float()
        num_depots, num_customers = depot_capacity.shape[-1], demand.shape[-1]
        cost_locs = td.get("cost_locs", None)
        if cost_locs is None:
            cost_locs = td["locs"].double()
        rounded = td.get("rounded_costs", None)
        if rounded is None:
            rounded = torch.zeros(*batch, dtype=torch.bool, device=device)
        span = (cost_locs.amax(-2) - cost_locs.amin(-2)).norm(dim=-1)
        span = torch.where(rounded, round_cost(span), span)
        penalty = (
            td["vehicle_fixed_cost"].reshape(batch).double()
            + td["opening_cost"].amax(-1).double()
            + 2.0 * span
        )

        def zeros(*shape, dtype=torch.float32):
            return torch.zeros(*batch, *shape, dtype=dtype, device=device)

        state = TensorDict(
            {
                "locs": td["locs"].float(),
                "cost_locs": cost_locs.double(),
                "rounded_costs": rounded.bool(),
                "depot_capacity": depot_capacity,
                "remaining_depot_capacity": depot_capacity.clone(),
                "opening_cost": td["opening_cost"].float(),
                "demand": demand,
                "vehicle_capacity": td["vehicle_capacity"].float().reshape(*batch, 1),
                "vehicle_fixed_cost": td["vehicle_fixed_cost"].float().reshape(*batch, 1),
                "infeasible_penalty": penalty,
                "current_node": zeros(1, dtype=torch.long),
                "route_depot": zeros(1, dtype=torch.long),
                "vehicle_load": zeros(1),
                "served": zeros(num_customers, dtype=torch.bool),
                "pending_demand": demand.clone(),
                "is_location_step": torch.ones(*batch, 1, dtype=torch.bool, device=device),
                "depot_used": zeros(num_depots, dtype=torch.bool),
                "current_route": zeros(num_customers, dtype=torch.bool),
                "last_route": zeros(num_customers, dtype=torch.bool),
                "num_routes": zeros(1, dtype=torch.long),
                "cost_opening": zeros(dtype=torch.float64),
                "cost_vehicles": zeros(dtype=torch.float64),
                "cost_routing": zeros(dtype=torch.float64),
                "infeasible": zeros(dtype=torch.bool),
                "done": zeros(dtype=torch.bool),
                "reward": zeros(),
                "i": zeros(1, dtype=torch.long),
                "start_customer": torch.full((*batch, 1), -1, dtype=torch.long, device=device),
            },
            batch_size=batch,
            device=device,
        )
        mask, finished, _ = _mask(
            state["pending_demand"],
            state["remaining_depot_capacity"],
            state["is_location_step"],
            state["route_depot"],
            state["current_node"],
            state["vehicle_load"],
            state["start_customer"],
        )
        # after validation some depot holds the smallest demand, so no reset state is finished
        state.update({"done": finished, "infeasible": finished, "action_mask": mask})
        return state

    # ------------------------------------------------------------------ step
    def _step(self, td: TensorDict) -> TensorDict:
        action = td["action"].reshape(-1, 1)  # [B, 1]
        num_depots = td["remaining_depot_capacity"].shape[-1]
        active = ~td["done"].reshape(-1, 1)  # torchrl's reset stores done as [B, 1]
        start_customer = td["start_customer"]
        # a customer at the reset state is a multistart start action (see the class docstring):
        # it only sets start_customer; such rows do not move (moving = False)
        moving = active
        # one host sync per step: is some row at its first step, does some row hold a start?
        first_step, had_start = torch.stack(
            [(td["i"] == 0).any(), (start_customer >= 0).any()]
        ).tolist()
        has_start = first_step or had_start
        if first_step:
            start_action = (td["i"].reshape(-1, 1) == 0) & (action >= num_depots)
            start_customer = torch.where(start_action, action, start_customer)
            moving = active & ~start_action
        if self.check_actions:
            ok = td["action_mask"].gather(-1, action) | ~moving  # done rows take any action
            if not bool(ok.all()):
                b = int((~ok).nonzero()[0, 0])
                stage = "location" if bool(td["is_location_step"][b]) else "routing"
                raise ValueError(
                    f"action {int(action[b])} is infeasible for batch index {b} "
                    f"({stage} step, current node {int(td['current_node'][b])})"
                )
        demand = td["demand"]
        served = td["served"]
        remaining = td["remaining_depot_capacity"]
        location_step = td["is_location_step"]
        is_depot = action < num_depots
        start_route = moving & location_step
        on_route = moving & ~location_step
        serve = on_route & ~is_depot
        close = on_route & is_depot

        arc = _arc_cost(td["cost_locs"], td["rounded_costs"], td["current_node"], action)
        arc = arc * (serve | close).squeeze(-1)

        customer = (action - num_depots).clamp(min=0)
        served_demand = demand.gather(-1, customer) * serve  # [B, 1]
        pending = td["pending_demand"]
        pending = pending.scatter(
            -1, customer, pending.gather(-1, customer).masked_fill(serve, INF)
        )
        served = served.scatter(-1, customer, served.gather(-1, customer) | serve)
        if had_start:  # kept until served (the mask forces it)
            start_customer = start_customer.masked_fill(serve & (action == start_customer), -1)
        route = td["current_route"]
        route_customers = route.scatter(-1, customer, route.gather(-1, customer) | serve)

        route_depot = torch.where(start_route, action, td["route_depot"])
        depot_used = td["depot_used"]
        was_used = depot_used.gather(-1, route_depot)
        opening = td["opening_cost"].gather(-1, route_depot) * (start_route & ~was_used)
        depot_used = depot_used.scatter(-1, route_depot, was_used | start_route)
        remaining = remaining.scatter_add(-1, route_depot, -served_demand)
        vehicle_capacity = td["vehicle_capacity"]
        vehicle_load = torch.where(
            start_route,
            torch.minimum(vehicle_capacity, remaining.gather(-1, route_depot)),
            td["vehicle_load"] - served_demand,
        )
        location_next = torch.where(moving, close, location_step)
        current_node = torch.where(moving, action, td["current_node"])
        mask, finished, all_served = _mask(
            pending,
            remaining,
            location_next,
            route_depot,
            current_node,
            vehicle_load,
            start_customer if has_start else None,
        )
        new = {
            "current_node": current_node,
            "route_depot": route_depot,
            "vehicle_load": vehicle_load,
            "remaining_depot_capacity": remaining,
            "served": served,
            "pending_demand": pending,
            "current_route": route_customers & ~close,
            "last_route": torch.where(close, route_customers, td["last_route"]),
            "is_location_step": location_next,
            "depot_used": depot_used,
            "num_routes": td["num_routes"] + start_route,
            "cost_opening": td["cost_opening"] + opening.squeeze(-1).double(),
            "cost_vehicles": td["cost_vehicles"]
            + start_route.squeeze(-1) * td["vehicle_fixed_cost"].squeeze(-1).double(),
            "cost_routing": td["cost_routing"] + arc,
            "done": finished,
            "infeasible": finished & ~all_served,
            "action_mask": mask,
            "i": td["i"] + 1,
            "start_customer": start_customer,
        }
        return _replace(td, new)

    # ------------------------------------------------------------------ masks
    @staticmethod
    def get_action_mask(td: TensorDict) -> torch.Tensor:
        """[B, D+N] bool mask (True = feasible) of rules 1-5 and the start rules; one-hot on
        ``PADDING_ACTION`` when the instance is finished or dead-ended."""
        mask, _, _ = _mask(
            td["pending_demand"],
            td["remaining_depot_capacity"],
            td["is_location_step"],
            td["route_depot"],
            td["current_node"],
            td["vehicle_load"],
            td["start_customer"],
        )
        return mask

    # ------------------------------------------------------------------ reward
    @staticmethod
    def cost_parts(td: TensorDict) -> dict[str, torch.Tensor]:
        """Objective parts of a (final) state, float64 [B], in the instance's units.

        ``penalty`` is the dead-end penalty (0 for feasible instances); ``total`` sums all
        (:func:`~.costs.cost_parts`).
        """
        return cost_parts(td)

    def _get_reward(self, td: TensorDict, actions: torch.Tensor | None = None) -> torch.Tensor:
        """Negative total cost (float32 [B]) of the final state ``td``.

        If ``td`` is not a finished state (e.g. a freshly reset batch) and ``actions`` are
        given, the actions are replayed from ``td``'s instances first.
        """
        if not bool(td["done"].all()):
            if actions is None:
                raise ValueError("get_reward: state is not finished and no actions were given")
            td = self.rollout_actions(td, actions)
        return -self.cost_parts(td)["total"].float()

    def rollout_actions(self, td: TensorDict, actions: torch.Tensor) -> TensorDict:
        """Reset ``td``'s instances and step the [B, T] ``actions``; returns the final state.

        Raises ``ValueError`` when an action is infeasible or the sequence ends unfinished.
        """
        state = self.reset(td.select(*[k for k in INSTANCE_KEYS if k in td.keys()]))
        actions = actions.to(state.device).long().reshape(state.batch_size[0], -1)
        check = self.check_actions
        self.check_actions = True
        try:
            for t in range(actions.shape[-1]):
                state.set("action", actions[:, t])
                state = self._step(state)
        finally:
            self.check_actions = check
        if not bool(state["done"].all()):
            b = int((~state["done"].reshape(-1)).nonzero()[0, 0])
            raise ValueError(f"instance {b}: actions end before the solution is finished")
        return state

    def check_solution_validity(self, td: TensorDict, actions: torch.Tensor) -> None:
        check_solution_validity(td, actions)

    # ------------------------------------------------------------------ multistart
    def get_num_starts(self, td: TensorDict) -> int:
        """POMO starts: one per customer."""
        return td["demand"].shape[-1]

    def select_start_nodes(self, td: TensorDict, num_starts: int) -> torch.Tensor:
        """Start actions [S * B]: customer node indices, start-major (index ``s * B + b``
        holds customer ``s mod N``). Stepped at the reset state, a start action makes that
        customer the first one served, from a depot the policy picks (class docstring)."""
        num_depots = td["depot_capacity"].shape[-1]
        num_customers = td["demand"].shape[-1]
        starts = torch.arange(num_starts, device=td.device) % num_customers + num_depots
        return starts.repeat_interleave(td.shape[0])

    # ------------------------------------------------------------------ data
    @staticmethod
    def load_data(fpath, batch_size=None) -> TensorDict:
        """Load an ``.npz`` dataset written by :func:`save_dataset` (checksum verified)."""
        return load_dataset(fpath)

    def replace_selected_actions(self, cur_actions, new_actions, selection_mask):
        """Replace rows of ``cur_actions`` [B, T] with ``new_actions`` where selected; shorter
        sequences are padded with the env's no-op (:func:`pad_actions`)."""
        length = max(cur_actions.shape[-1], new_actions.shape[-1])
        cur_actions = pad_actions(cur_actions, length)
        new_actions = pad_actions(new_actions, length)
        return torch.where(selection_mask[:, None], new_actions, cur_actions)

    # ------------------------------------------------------------------ solvers
    #: What :meth:`solve` and :meth:`local_search` say: the env carries no classical solver.
    NO_SOLVER = (
        "CLRPEnv.{name}: the CLRP env has no built-in classical solver; the reference solvers "
        "(PyVRP, HiGHS MIP) and PyVRP refinement of policy solutions are solve_td(td, "
        "seconds) and local_search_td(td, actions) in clrp_rl4co.solvers (package "
        "clrp-rl4co)"
    )

    @staticmethod  # RL4CO's signature (its name for the time budget)
    def solve(instances: TensorDict, max_runtime: float, num_procs: int = 1, **kwargs):
        """Not provided by the env: raises ``NotImplementedError`` naming the solver functions
        to use instead (:data:`NO_SOLVER`)."""
        raise NotImplementedError(CLRPEnv.NO_SOLVER.format(name="solve"))

    def local_search(self, td: TensorDict, actions: torch.Tensor, **kwargs) -> torch.Tensor:
        """Not provided by the env: raises ``NotImplementedError`` naming the solver functions
        to use instead (:data:`NO_SOLVER`)."""
        raise NotImplementedError(self.NO_SOLVER.format(name="local_search"))

    # ------------------------------------------------------------------ rendering
    def render(
        self,
        td: TensorDict,
        actions: torch.Tensor | None = None,
        ax=None,
        index: int = 0,
        **kwargs,
    ):
        """Draw instance ``index`` of ``td`` and the solution ``actions`` (:func:`render`).

        With ``actions``, the title shows the solution's cost parts: read from ``td`` when it
        is the finished state the actions led to, else priced by replaying the actions of that
        instance (:meth:`rollout_actions`); ``costs=`` or ``title=`` given explicitly wins.
        Returns the axes.
        """
        if actions is not None and kwargs.get("costs") is None and kwargs.get("title") is None:
            instance, row = plotted_solution(td, actions, index)
            if finished_cost_parts(instance) is None:
                final = self.rollout_actions(instance, row.reshape(1, -1))
                kwargs["costs"] = cost_parts(final)
        return render(td, actions, ax=ax, index=index, **kwargs)

    def _make_spec(self, generator: CLRPGenerator) -> None:
        num_depots, num_customers = generator.num_depots, generator.num_loc
        num_nodes = num_depots + num_customers
        self.observation_spec = Composite(
            locs=Bounded(
                low=generator.min_loc,
                high=generator.max_loc,
                shape=(num_nodes, 2),
                dtype=torch.float32,
            ),
            depot_capacity=Unbounded(shape=(num_depots,), dtype=torch.float32),
            remaining_depot_capacity=Unbounded(shape=(num_depots,), dtype=torch.float32),
            opening_cost=Unbounded(shape=(num_depots,), dtype=torch.float32),
            demand=Bounded(
                low=generator.min_demand,
                high=generator.max_demand,
                shape=(num_customers,),
                dtype=torch.float32,
            ),
            vehicle_capacity=Unbounded(shape=(1,), dtype=torch.float32),
            vehicle_fixed_cost=Unbounded(shape=(1,), dtype=torch.float32),
            current_node=Bounded(low=0, high=num_nodes - 1, shape=(1,), dtype=torch.int64),
            route_depot=Bounded(low=0, high=num_depots - 1, shape=(1,), dtype=torch.int64),
            vehicle_load=Unbounded(shape=(1,), dtype=torch.float32),
            served=Unbounded(shape=(num_customers,), dtype=torch.bool),
            is_location_step=Unbounded(shape=(1,), dtype=torch.bool),
            depot_used=Unbounded(shape=(num_depots,), dtype=torch.bool),
            current_route=Unbounded(shape=(num_customers,), dtype=torch.bool),
            last_route=Unbounded(shape=(num_customers,), dtype=torch.bool),
            start_customer=Bounded(low=-1, high=num_nodes - 1, shape=(1,), dtype=torch.int64),
            action_mask=Unbounded(shape=(num_nodes,), dtype=torch.bool),
            shape=(),
        )
        self.action_spec = Bounded(low=0, high=num_nodes - 1, shape=(1,), dtype=torch.int64)
        self.reward_spec = Unbounded(shape=(1,))
        self.done_spec = Unbounded(shape=(1,), dtype=torch.bool)
