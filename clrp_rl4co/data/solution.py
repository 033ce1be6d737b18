"""The CLRP solution object shared by every module: open depots, routes, cost parts, I/O.

Indices in a :class:`CLRPSolution` are 0-based *depot* indices (``0..D-1``) and 0-based
*customer* indices (``0..N-1``). Env action sequences use node indices, where customer ``j`` is
node ``D + j``; :meth:`CLRPSolution.from_actions` and :meth:`CLRPSolution.to_actions` convert.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clrp_rl4co.envs.clrp.validity import routes_from_actions

from .instance import CAPACITY_TOLERANCE, CLRPInstance


@dataclass(frozen=True)
class Route:
    """One vehicle route: leaves ``depot``, serves ``customers`` in order, returns to ``depot``."""

    depot: int
    customers: tuple[int, ...]


def route_length(instance: CLRPInstance, route: Route) -> float:
    """Length of ``route`` (its depot, its customers in order, back to the depot) in the
    instance's units: the sum of :meth:`CLRPInstance.cost_matrix` over its arcs, in order
    (:meth:`CLRPInstance.arc_costs`)."""
    nodes = [route.depot, *(instance.num_depots + c for c in route.customers), route.depot]
    return float(sum(instance.arc_costs(nodes[:-1], nodes[1:]).tolist()))


@dataclass(frozen=True)
class CostBreakdown:
    """Objective parts in the instance's units; ``total = opening + vehicles + routing``."""

    opening: float
    vehicles: float
    routing: float

    @property
    def total(self) -> float:
        return self.opening + self.vehicles + self.routing


@dataclass
class CLRPSolution:
    """A CLRP solution: a list of routes plus the set of open depots.

    ``open_depots`` defaults to the depots that carry at least one route; a solution read from a
    file may declare more (their opening cost is then paid too).
    """

    routes: list[Route]
    open_depots: tuple[int, ...] = field(default=())

    def __post_init__(self):
        self.routes = [Route(int(r.depot), tuple(int(c) for c in r.customers)) for r in self.routes]
        used = {r.depot for r in self.routes}
        self.open_depots = tuple(sorted(used | {int(d) for d in self.open_depots}))

    # ------------------------------------------------------------------ conversions
    @classmethod
    def from_actions(cls, actions: Sequence[int], num_depots: int) -> CLRPSolution:
        """Parse an env action sequence (node indices, trailing padding and a multistart start
        action allowed); see :func:`clrp_rl4co.envs.clrp.validity.routes_from_actions`."""
        return cls([Route(d, c) for d, c in routes_from_actions(actions, num_depots)])

    def to_actions(self, num_depots: int) -> list[int]:
        """Env node-index action sequence (no padding)."""
        out: list[int] = []
        for r in self.routes:
            out.append(r.depot)
            out.extend(num_depots + c for c in r.customers)
            out.append(r.depot)
        return out

    @property
    def num_routes(self) -> int:
        return len(self.routes)

    # ------------------------------------------------------------------ evaluation
    def cost(self, instance: CLRPInstance) -> CostBreakdown:
        """Objective parts in the instance's units (float64; integers for rounded instances)."""
        routing = 0.0
        for r in self.routes:
            routing += route_length(instance, r)
        opening = float(sum(instance.opening_cost[d] for d in self.open_depots))
        vehicles = instance.vehicle_fixed_cost * len(self.routes)
        return CostBreakdown(opening=opening, vehicles=vehicles, routing=routing)

    def check_structure(self, instance: CLRPInstance) -> None:
        """Raise ``ValueError`` unless every route is a non-empty list of distinct existing
        customers at an existing depot and every open depot exists (capacities and unserved
        customers are :meth:`check`'s)."""
        num_depots, num_customers = instance.num_depots, instance.num_customers
        seen = np.zeros(num_customers, dtype=int)
        for k, r in enumerate(self.routes):
            if not 0 <= r.depot < num_depots:
                raise ValueError(f"route {k}: depot {r.depot} is not in 0..{num_depots - 1}")
            if not r.customers:
                raise ValueError(f"route {k}: empty route at depot {r.depot}")
            for c in r.customers:
                if not 0 <= c < num_customers:
                    raise ValueError(f"route {k}: customer {c} is not in 0..{num_customers - 1}")
                seen[c] += 1
        for d in self.open_depots:
            if not 0 <= d < num_depots:
                raise ValueError(f"open depot {d} is not in 0..{num_depots - 1}")
        if (seen > 1).any():
            c = int(np.argmax(seen > 1))
            raise ValueError(f"customer {c} is served more than once: served {seen[c]} times")

    def check(self, instance: CLRPInstance) -> None:
        """Raise ``ValueError`` naming the first violated CLRP constraint."""
        self.check_structure(instance)
        served = np.zeros(instance.num_customers, dtype=bool)
        depot_load = np.zeros(instance.num_depots)
        for k, r in enumerate(self.routes):
            served[list(r.customers)] = True
            load = float(instance.demand[list(r.customers)].sum())
            if load > instance.vehicle_capacity + CAPACITY_TOLERANCE:
                raise ValueError(
                    f"route {k} (depot {r.depot}) carries {load:g} > vehicle capacity "
                    f"{instance.vehicle_capacity:g}"
                )
            depot_load[r.depot] += load
        over = depot_load > instance.depot_capacity + CAPACITY_TOLERANCE
        if over.any():
            d = int(np.argmax(over))
            raise ValueError(
                f"depot {d} serves {depot_load[d]:g} > its capacity {instance.depot_capacity[d]:g}"
            )
        if not served.all():
            raise ValueError(f"customer {int(np.argmax(~served))} is not served")

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        return {
            "open_depots": list(self.open_depots),
            "routes": [{"depot": r.depot, "customers": list(r.customers)} for r in self.routes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> CLRPSolution:
        try:
            routes = [Route(r["depot"], tuple(r["customers"])) for r in data["routes"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"solution JSON: malformed routes ({exc!r})") from exc
        return cls(routes, tuple(data.get("open_depots", ())))

    def to_json(self, path: str | Path, instance: CLRPInstance | None = None) -> None:
        data = self.to_dict()
        if instance is not None:
            c = self.cost(instance)
            data["cost"] = {
                "opening": c.opening,
                "vehicles": c.vehicles,
                "routing": c.routing,
                "total": c.total,
            }
            data["instance"] = instance.name
        Path(path).write_text(json.dumps(data, indent=2))

    @classmethod
    def from_json(cls, path: str | Path) -> CLRPSolution:
        return cls.from_dict(json.loads(Path(path).read_text()))

    # ------------------------------------------------------------------ Prodhon .sol
    def write_sol(self, path: str | Path, num_customers: int) -> None:
        """Write the ``.sol`` format of the public Prins solutions (1-based indices)."""
        lines = [f"M Yd{d + 1}_OmastV 1.0" for d in self.open_depots]
        for r in self.routes:
            body = " ".join(str(c + 1) for c in r.customers)
            lines.append(f"V {r.depot + 1} 0 {body} {num_customers + 1}")
        Path(path).write_text("\n".join(lines) + "\n")

    @classmethod
    def read_sol(cls, path: str | Path, num_customers: int) -> CLRPSolution:
        """Read a ``.sol`` file: ``M Yd<j>_OmastV 1.0`` opens depot j, ``V j 0 c1 .. ck n+1``
        is a route of depot j (all 1-based)."""
        open_depots: list[int] = []
        routes: list[Route] = []
        for lineno, raw in enumerate(Path(path).read_text().splitlines(), start=1):
            tokens = raw.split()
            if not tokens:
                continue
            kind = tokens[0]
            if kind == "M":
                name = tokens[1] if len(tokens) > 1 else ""
                if not (name.startswith("Yd") and "_" in name):
                    raise ValueError(f"{path}:{lineno}: malformed depot line {raw!r}")
                try:
                    value = float(tokens[2]) if len(tokens) > 2 else 1.0
                    depot = int(name[2 : name.index("_")]) - 1
                except ValueError as exc:
                    raise ValueError(f"{path}:{lineno}: malformed depot line {raw!r}") from exc
                if value > 0.5:
                    open_depots.append(depot)
            elif kind == "V":
                try:
                    numbers = [int(t) for t in tokens[1:]]
                except ValueError as exc:
                    raise ValueError(f"{path}:{lineno}: malformed route line {raw!r}") from exc
                if len(numbers) < 3 or numbers[1] != 0 or numbers[-1] != num_customers + 1:
                    raise ValueError(
                        f"{path}:{lineno}: route line must read 'V depot 0 c1 .. ck "
                        f"{num_customers + 1}', got {raw!r}"
                    )
                routes.append(Route(numbers[0] - 1, tuple(c - 1 for c in numbers[2:-1])))
            else:
                raise ValueError(f"{path}:{lineno}: unknown line type {kind!r}")
        undeclared = {r.depot for r in routes} - set(open_depots)
        if undeclared:
            raise ValueError(f"{path}: routes use depots {sorted(undeclared)} not declared open")
        return cls(routes, tuple(open_depots))
