"""Running one method on one instance for ``clrp-rl4co solve``: what ``auto`` picks, loading
the policy, and the budgeted run (:func:`solve_instance`)."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..data import CLRPInstance, CLRPSolution
from ..solvers.hybrid import solver_budget

logger = logging.getLogger(__name__)

#: Largest instance on which ``auto`` tries the exact MIP (its monolithic model proves
#: optimality of such instances within seconds).
EXACT_MAX_CUSTOMERS = 12
#: Customers (both ends included) and largest budget (seconds) at which ``auto`` runs PyVRP
#: alone instead of the hybrid. Measured with the hybrid benchmark on the size rule's instances
#: (the generalist's starts, one thread): at 400 and 500 customers and 10 or 30 s the hybrid's
#: mean was above PyVRP alone's in every paired run (by 0.1-0.9%): its learned starts, 17-22%
#: above PyVRP's result, cost more time than they buy; at 200 customers (10 s) and at 1,000
#: (10 s: PyVRP alone 63% higher) the hybrid is better.
PYVRP_CUSTOMERS = (400, 500)
PYVRP_MAX_SECONDS = 30.0
#: The generalist models, preferred first: ``auto``'s choice outside the paper's distribution
#: is the first of them that is shipped (``drlhqcf_mixed`` is shipped by the generalist run).
GENERALIST_MODELS = ("drlhqcf_mixed", "drlhqcf_mixed50_cpu")
#: The paper's models by training size (customers).
PAPER_MODELS = {10: "drlhq_clrp10", 20: "drlhq_clrp20", 50: "drlhq_clrp50", 100: "drlhq_clrp100"}
#: Methods that decode a policy.
POLICY_METHODS = ("x8", "sgbs", "hybrid")


@dataclass
class Outcome:
    """What one run produced.

    Attributes:
        solution: the best valid solution (None when the method found none).
        method: the method that ran (``auto`` resolved).
        model: the policy's name (None for the classical methods).
        seconds: wall time of the run.
        status: ``optimal`` (exact, proven), ``feasible`` or ``no solution``.
        details: method-specific numbers (``start_objective``, ``decode``, ``bound``).
    """

    solution: CLRPSolution | None
    method: str
    model: str | None
    seconds: float
    status: str
    details: dict = field(default_factory=dict)


def looks_like_paper(instance: CLRPInstance) -> bool:
    """Whether ``instance`` could come from the paper's generator: coordinates in the unit
    square, real (unrounded) arc costs, integer demands 10..19, vehicle capacity 70, vehicle
    cost 1, and the number of depots, capacities and opening costs of the size rule
    (:func:`clrp_rl4co.envs.clrp.size_rule`) at its number of customers."""
    from ..envs.clrp import size_rule

    rule = size_rule(instance.num_customers)
    locs = instance.locs
    demand = instance.demand
    cap_low, cap_high = rule["depot_capacity"]
    open_low, open_high = rule["opening_cost"]
    return bool(
        not instance.rounded_costs
        and locs.min() >= 0.0
        and locs.max() <= 1.0
        and np.all(demand == np.round(demand))
        and demand.min() >= 10
        and demand.max() <= 19
        and instance.vehicle_capacity == 70
        and instance.vehicle_fixed_cost == 1
        and instance.num_depots == rule["num_depots"]
        and instance.depot_capacity.min() >= cap_low
        and instance.depot_capacity.max() <= cap_high
        and instance.opening_cost.min() >= open_low
        and instance.opening_cost.max() <= open_high
    )


def auto_model(instance: CLRPInstance) -> str:
    """The model ``auto`` decodes with: the paper's model of the nearest training size (in
    ratio, within a factor 2) on instances like its training data, else the generalist."""
    if looks_like_paper(instance):
        size = min(PAPER_MODELS, key=lambda s: abs(math.log(instance.num_customers / s)))
        if 0.5 <= instance.num_customers / size <= 2.0:
            return PAPER_MODELS[size]
    return generalist_model()


def generalist_model() -> str:
    """The first shipped model of :data:`GENERALIST_MODELS`."""
    from ..policies.pretrained import shipped_models

    shipped = set(shipped_models())
    for name in GENERALIST_MODELS:
        if name in shipped:
            return name
    raise FileNotFoundError(f"none of the generalist models {list(GENERALIST_MODELS)} is shipped")


def auto_method(instance: CLRPInstance, seconds: float | None = None) -> str:
    """The method ``auto`` runs on ``instance`` within ``seconds`` (None: budget unknown).

    ``exact`` where a proof is in reach (at most :data:`EXACT_MAX_CUSTOMERS` customers);
    ``pyvrp`` on :data:`PYVRP_CUSTOMERS` customers within :data:`PYVRP_MAX_SECONDS`; else
    ``hybrid``.
    """
    customers = instance.num_customers
    if customers <= EXACT_MAX_CUSTOMERS:
        return "exact"
    low, high = PYVRP_CUSTOMERS
    if low <= customers <= high and seconds is not None and seconds <= PYVRP_MAX_SECONDS:
        return "pyvrp"
    return "hybrid"


_POLICIES: dict[str, object] = {}


def policy_for(name: str):
    """The policy ``name`` (a shipped model or a path), loaded once per process, on CPU."""
    if name not in _POLICIES:
        from ..policies import load_policy

        _POLICIES[name] = load_policy(name).eval()
    return _POLICIES[name]


def solve_instance(
    instance: CLRPInstance,
    method: str,
    seconds: float,
    seed: int = 0,
    model: str | None = None,
    progress: bool = False,
) -> Outcome:
    """Run ``method`` on ``instance`` within ``seconds`` of wall time (model loading included).

    Args:
        instance: the CLRP instance.
        method: one of :data:`clrp_rl4co.cli.args.METHODS`.
        seconds: the wall-time budget.
        seed: the random seed.
        model: the policy of ``x8`` / ``sgbs`` / ``hybrid`` (default :func:`auto_model`).
        progress: a progress bar within the instance (hybrid).
    """
    begin = time.perf_counter()
    if method == "auto":
        method = auto_method(instance, seconds)
    name = None
    policy = None
    if method in POLICY_METHODS:
        name = model or auto_model(instance)
        policy = policy_for(name)
    left = max(seconds - (time.perf_counter() - begin), 1e-3)
    if method == "exact":
        from ..solvers import solve_exact

        res = solve_exact(instance, seconds=solver_budget(left), seed=seed)
        details = {} if res.bound is None else {"bound": res.bound}
        return Outcome(
            res.solution, "exact", None, time.perf_counter() - begin, res.status, details
        )
    if method == "pyvrp":
        from ..solvers import solve_pyvrp

        res = solve_pyvrp(instance, seconds=solver_budget(left), seed=seed)
        return Outcome(res.solution, "pyvrp", None, time.perf_counter() - begin, res.status)
    if method == "hybrid":
        from ..solvers.hybrid import solve_hybrid

        res = solve_hybrid(instance, policy, left, seed=seed, progress=progress)
        details = {"decode": res.decode, "start_objective": res.start_objective}
        return Outcome(
            res.solution, "hybrid", name, time.perf_counter() - begin, res.status, details
        )
    if method in ("x8", "sgbs"):
        from ..solvers.hybrid import learned_starts

        found = learned_starts(instance, policy, left, seed, count=1, sgbs=method == "sgbs")
        solution = found.solutions[0] if found.solutions else None
        details = {"decode": found.decode}
        if method == "sgbs" and "sgbs" not in found.decode:
            details["note"] = "SGBS does not fit in --time; best of the x8 starts that fit"
        if solution is None:
            details["note"] = "not even one greedy rollout fits in --time"
        status = "feasible" if solution is not None else "no solution"
        return Outcome(solution, method, name, time.perf_counter() - begin, status, details)
    raise ValueError(f"method: unknown {method!r}")
