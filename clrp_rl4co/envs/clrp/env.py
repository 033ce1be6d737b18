"""The CLRP environment: DRLHQ's location/routing MDP on RL4CO's ``RL4COEnvBase``."""

from __future__ import annotations

import torch
from rl4co.envs.common.base import RL4COEnvBase
from tensordict import TensorDict
from torchrl.data import Bounded, Composite, Unbounded

from clrp_rl4co.data.instance import CAPACITY_TOLERANCE

from .generator import INSTANCE_KEYS, CLRPGenerator, load_dataset
from .render import render
from .validity import check_solution_validity


def _arc_cost(cost_locs: torch.Tensor, rounded: torch.Tensor, src, dst) -> torch.Tensor:
    """Arc costs [B] (float64, instance units) between nodes ``src`` and ``dst`` ([B, 1])."""
    idx_src = src[..., None].expand(-1, 1, 2)
    idx_dst = dst[..., None].expand(-1, 1, 2)
    diff = cost_locs.gather(1, idx_src) - cost_locs.gather(1, idx_dst)
    dist = diff.norm(dim=-1).squeeze(-1)
    return torch.where(rounded, torch.ceil(100.0 * dist - 1e-9), dist)


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
          ``is_location_step`` [B, 1] (the stage indicator), ``depot_used`` [B, D],
          ``current_route`` [B, N] and ``last_route`` [B, N] (customers of the route in
          progress and of the most recently completed route), ``num_routes`` [B, 1], ``i``.
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

    Finish condition:
        every customer served and the vehicle back at its depot (``done``). A finished state's
        mask is one-hot on the current depot, whose step changes nothing and costs 0 (padding).
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
        self._validate_instances(td)
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
        span = torch.where(rounded, torch.ceil(100.0 * span), span)
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
            },
            batch_size=batch,
            device=device,
        )
        feasible = self._feasible_actions(state)
        stuck = ~feasible.any(-1)  # unreachable after validation; kept as a safety net
        state.update({"done": stuck, "infeasible": stuck,
                      "action_mask": self._pad_mask(state, feasible, stuck)})
        return state

    @staticmethod
    def _validate_instances(td: TensorDict) -> None:
        """Clear ``ValueError`` for malformed instance batches (field, batch index, value)."""
        for key in INSTANCE_KEYS[:-1]:
            if key == "cost_locs" and key not in td.keys():
                continue
            if key not in td.keys():
                raise ValueError(f"{key}: missing from the instance TensorDict")
        batch = td.batch_size
        if len(batch) != 1:
            raise ValueError(f"batch_size: CLRPEnv needs a 1-D batch, got {tuple(batch)}")
        num_depots = td["depot_capacity"].shape[-1]
        num_customers = td["demand"].shape[-1]
        num_nodes = num_depots + num_customers
        shapes = {
            "locs": (num_nodes, 2),
            "cost_locs": (num_nodes, 2),
            "opening_cost": (num_depots,),
            "demand": (num_customers,),
        }
        for key, shape in shapes.items():
            if key in td.keys() and tuple(td[key].shape[1:]) != shape:
                raise ValueError(
                    f"{key}: expected shape [B, {', '.join(map(str, shape))}] for {num_depots} "
                    f"depots and {num_customers} customers, got {list(td[key].shape)}"
                )
        for key in ("vehicle_capacity", "vehicle_fixed_cost"):
            if td[key].numel() != batch[0]:
                raise ValueError(f"{key}: expected one value per instance, got {list(td[key].shape)}")
        checks = [("locs", False), ("depot_capacity", True), ("opening_cost", True),
                  ("demand", True), ("vehicle_capacity", True), ("vehicle_fixed_cost", True)]
        if "cost_locs" in td.keys():
            checks.append(("cost_locs", False))
        for key, non_negative in checks:
            value = td[key]
            bad = ~torch.isfinite(value)
            if non_negative:
                bad = bad | (value < 0)
            if bad.any():
                idx = bad.nonzero()[0].tolist()
                rule = "finite and non-negative" if non_negative else "finite"
                raise ValueError(f"{key}{idx} must be {rule}, got {value[tuple(idx)].item()}")
        demand = td["demand"]
        q = td["vehicle_capacity"].reshape(-1, 1)
        if (demand <= 0).any():
            idx = (demand <= 0).nonzero()[0].tolist()
            raise ValueError(f"demand{idx} must be positive, got {demand[tuple(idx)].item()}")
        too_big = demand > q + CAPACITY_TOLERANCE
        if too_big.any():
            b, j = too_big.nonzero()[0].tolist()
            raise ValueError(
                f"demand[{b}, {j}] = {demand[b, j].item():g} exceeds vehicle_capacity "
                f"{q[b, 0].item():g}"
            )
        largest_depot = td["depot_capacity"].amax(-1, keepdim=True)
        homeless = demand > largest_depot + CAPACITY_TOLERANCE
        if homeless.any():
            b, j = homeless.nonzero()[0].tolist()
            raise ValueError(
                f"demand[{b}, {j}] = {demand[b, j].item():g} exceeds every depot_capacity "
                f"(largest {largest_depot[b, 0].item():g}): instance {b} is infeasible"
            )
        total_demand = demand.sum(-1)
        total_capacity = td["depot_capacity"].sum(-1)
        short = total_demand > total_capacity + CAPACITY_TOLERANCE
        if short.any():
            b = int(short.nonzero()[0, 0])
            raise ValueError(
                f"instance {b}: total demand {total_demand[b].item():g} exceeds total "
                f"depot_capacity {total_capacity[b].item():g}"
            )

    # ------------------------------------------------------------------ step
    def _step(self, td: TensorDict) -> TensorDict:
        action = td["action"].reshape(-1, 1)  # [B, 1]
        if self.check_actions:
            ok = td["action_mask"].gather(-1, action)
            if not bool(ok.all()):
                b = int((~ok).nonzero()[0, 0])
                stage = "location" if bool(td["is_location_step"][b]) else "routing"
                raise ValueError(
                    f"action {int(action[b])} is infeasible for batch index {b} "
                    f"({stage} step, current node {int(td['current_node'][b])})"
                )
        num_depots = td["depot_capacity"].shape[-1]
        num_customers = td["demand"].shape[-1]
        device = action.device
        done_before = td["done"].reshape(-1)  # torchrl's reset stores done as [B, 1]
        active = ~done_before[:, None]  # [B, 1]
        location_step = td["is_location_step"]
        is_depot = action < num_depots
        start_route = active & location_step
        serve = active & ~location_step & ~is_depot
        close = active & ~location_step & is_depot

        arc = _arc_cost(td["cost_locs"], td["rounded_costs"], td["current_node"], action)
        arc = torch.where((serve | close).squeeze(-1), arc, 0.0)

        customer = (action - num_depots).clamp(min=0)
        served_demand = td["demand"].gather(-1, customer) * serve  # [B, 1]
        customer_onehot = (torch.arange(num_customers, device=device) == customer) & serve

        depot_ids = torch.arange(num_depots, device=device)
        opened = (depot_ids == action) & start_route  # [B, D]
        newly_opened = opened & ~td["depot_used"]
        route_depot = torch.where(start_route, action, td["route_depot"])
        remaining = td["remaining_depot_capacity"] - (depot_ids == route_depot) * served_demand
        depot_left = remaining.gather(-1, route_depot)
        vehicle_load = torch.where(
            start_route,
            torch.minimum(td["vehicle_capacity"], depot_left),
            td["vehicle_load"] - served_demand,
        )
        route_customers = td["current_route"] | customer_onehot
        current_route = torch.where(close, False, route_customers)
        served = td["served"] | customer_onehot
        location_next = torch.where(active, close, location_step)
        done = done_before | (served.all(-1) & location_next.squeeze(-1))

        start = start_route.squeeze(-1)
        out = td.copy()
        out.update(
            {
                "current_node": torch.where(active, action, td["current_node"]),
                "route_depot": route_depot,
                "vehicle_load": vehicle_load,
                "remaining_depot_capacity": remaining,
                "served": served,
                "current_route": current_route,
                "last_route": torch.where(close, route_customers, td["last_route"]),
                "is_location_step": location_next,
                "depot_used": td["depot_used"] | opened,
                "num_routes": td["num_routes"] + start_route,
                "cost_opening": td["cost_opening"]
                + (newly_opened * td["opening_cost"]).sum(-1, dtype=torch.float64),
                "cost_vehicles": td["cost_vehicles"]
                + start * td["vehicle_fixed_cost"].squeeze(-1).double(),
                "cost_routing": td["cost_routing"] + arc,
                "done": done,
                "i": td["i"] + 1,
            }
        )
        feasible = self._feasible_actions(out)
        stuck = ~done & ~feasible.any(-1)
        done = done | stuck
        out.update(
            {
                "done": done,
                "infeasible": td["infeasible"].reshape(-1) | stuck,
                "action_mask": self._pad_mask(out, feasible, done),
            }
        )
        return out

    # ------------------------------------------------------------------ masks
    @staticmethod
    def _feasible_actions(td: TensorDict) -> torch.Tensor:
        """[B, D+N] actions allowed by rules 1-5 (may be all False: finished or dead end)."""
        demand = td["demand"]
        served = td["served"]
        remaining = td["remaining_depot_capacity"]
        location_step = td["is_location_step"]
        route_depot = td["route_depot"]
        num_depots = remaining.shape[-1]
        limit = torch.minimum(td["vehicle_load"], remaining.gather(-1, route_depot))
        customer_ok = ~served & (demand <= limit + CAPACITY_TOLERANCE) & ~location_step
        smallest = demand.masked_fill(served, float("inf")).amin(-1, keepdim=True)
        depot_ids = torch.arange(num_depots, device=demand.device)
        depot_ok = torch.where(
            location_step,
            remaining + CAPACITY_TOLERANCE >= smallest,
            (depot_ids == route_depot) & (td["current_node"] != route_depot),
        )
        return torch.cat([depot_ok, customer_ok], dim=-1)

    @staticmethod
    def _pad_mask(td: TensorDict, feasible: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
        nodes = torch.arange(feasible.shape[-1], device=feasible.device)
        padding = nodes == td["current_node"]
        return torch.where(done[:, None], padding, feasible)

    @classmethod
    def get_action_mask(cls, td: TensorDict) -> torch.Tensor:
        """[B, D+N] bool mask (True = feasible); one-hot on the current depot when finished."""
        feasible = cls._feasible_actions(td)
        done = td["done"].reshape(-1) | ~feasible.any(-1)
        return cls._pad_mask(td, feasible, done)

    # ------------------------------------------------------------------ reward
    @staticmethod
    def cost_parts(td: TensorDict) -> dict[str, torch.Tensor]:
        """Objective parts of a (final) state, float64 [B], in the instance's units.

        ``penalty`` is the dead-end penalty (0 for feasible instances); ``total`` sums all.
        """
        unserved = (~td["served"]).sum(-1).double()
        penalty = torch.where(td["infeasible"].reshape(-1), unserved * td["infeasible_penalty"], 0.0)
        parts = {
            "opening": td["cost_opening"],
            "vehicles": td["cost_vehicles"],
            "routing": td["cost_routing"],
            "penalty": penalty,
        }
        parts["total"] = parts["opening"] + parts["vehicles"] + parts["routing"] + penalty
        return parts

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
        """Customer node indices, start-major (index ``s * B + b`` holds customer ``s``)."""
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
        sequences are padded by repeating their last action (the env's padding)."""
        length = max(cur_actions.shape[-1], new_actions.shape[-1])
        cur_actions = _pad_actions(cur_actions, length)
        new_actions = _pad_actions(new_actions, length)
        return torch.where(selection_mask[:, None], new_actions, cur_actions)

    # ------------------------------------------------------------------ solvers, rendering
    def solve(self, instances: TensorDict, max_runtime: float, num_procs: int = 1,
              solver: str = "pyvrp", **kwargs):
        """Reference solutions: ``(actions [B, T], costs [B])`` with *positive* costs in the
        instance's units (RL4CO's MTVRP returns negated costs; we do not). See
        :mod:`clrp_rl4co.solvers`."""
        from clrp_rl4co.solvers import solve_td

        return solve_td(instances, max_runtime, num_procs=num_procs, solver=solver, **kwargs)

    @staticmethod
    def local_search(td: TensorDict, actions: torch.Tensor, **kwargs) -> torch.Tensor:
        """Improve the solutions ``actions`` [B, T] with PyVRP (never worse); see
        :func:`clrp_rl4co.solvers.local_search_td`."""
        from clrp_rl4co.solvers import local_search_td

        return local_search_td(td, actions, **kwargs)

    @staticmethod
    def render(td: TensorDict, actions: torch.Tensor | None = None, ax=None, **kwargs):
        return render(td, actions, ax=ax, **kwargs)

    def _make_spec(self, generator: CLRPGenerator) -> None:
        num_depots, num_customers = generator.num_depots, generator.num_loc
        num_nodes = num_depots + num_customers
        self.observation_spec = Composite(
            locs=Bounded(low=generator.min_loc, high=generator.max_loc, shape=(num_nodes, 2),
                         dtype=torch.float32),
            depot_capacity=Unbounded(shape=(num_depots,), dtype=torch.float32),
            remaining_depot_capacity=Unbounded(shape=(num_depots,), dtype=torch.float32),
            opening_cost=Unbounded(shape=(num_depots,), dtype=torch.float32),
            demand=Bounded(low=generator.min_demand, high=generator.max_demand,
                           shape=(num_customers,), dtype=torch.float32),
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
            action_mask=Unbounded(shape=(num_nodes,), dtype=torch.bool),
            shape=(),
        )
        self.action_spec = Bounded(low=0, high=num_nodes - 1, shape=(1,), dtype=torch.int64)
        self.reward_spec = Unbounded(shape=(1,))
        self.done_spec = Unbounded(shape=(1,), dtype=torch.bool)


def _pad_actions(actions: torch.Tensor, length: int) -> torch.Tensor:
    extra = length - actions.shape[-1]
    if extra <= 0:
        return actions
    return torch.cat([actions, actions[:, -1:].expand(-1, extra)], dim=-1)
