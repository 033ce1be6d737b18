"""What ``method="auto"`` of :func:`clrp_rl4co.solve` picks: the method for the instance's size,
cost structure and budget (:func:`auto_method`), and the model for the methods that decode a
policy (:func:`auto_model`); :func:`resolve` gives both for a call.

Importing this module is light (no torch, no NumPy): the command's options name
:data:`METHODS` before anything heavy is imported.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: ``import clrp_rl4co`` stays light (no torch)
    from .data.instance import CLRPInstance

#: The methods of :func:`clrp_rl4co.solve`.
METHODS = ("auto", "x8", "sgbs", "hybrid", "pyvrp", "exact")
#: Methods that decode a policy.
POLICY_METHODS = ("x8", "sgbs", "hybrid")
#: Methods with a repeatable mode (``iterations``): the same solution for the same instance and
#: seed on any machine load. ``pyvrp`` runs PyVRP for that many iterations (the depot-set
#: search shares them out), ``exact`` proves with HiGHS from such a PyVRP start without a time
#: limit, ``x8`` decodes all of x8 (or all its units on large instances).
REPEATABLE_METHODS = ("auto", "pyvrp", "exact", "x8")
#: Largest instance on which ``auto`` tries the exact MIP (its monolithic model proves
#: optimality of such instances within seconds).
EXACT_MAX_CUSTOMERS = 12
#: Fewest customers and largest budget (seconds) at which ``auto`` runs PyVRP alone instead of
#: the hybrid. Measured on the size rule's instances, one thread: at 400 and 500 customers and
#: 10 or 30 s the hybrid's mean was above PyVRP alone's in every paired run (by 0.1-0.9%,
#: results/hybrid/); at 700, 1,000 and 1,500 customers and 10 s PyVRP alone was lower on 7 of
#: 9 instances and equal on 2 (hybrid +0.3% to +3.3%), at 1,000 and 30 s lower on both
#: (results/auto-rule/); at 200 customers (10 s) and 1,000 (60 s) the hybrid was lower. Since
#: the hybrid's last phase routes its own depot set, it is lower at 30 s on the presets' 400
#: and 500 customers (by about 0.5%), but on the heterogeneous hard families at 400-600
#: customers and 30 s it was +1.2% on average and up to +12% (results/hard/), so the rule stays.
PYVRP_MIN_CUSTOMERS = 400
PYVRP_MAX_SECONDS = 30.0
#: Fewest customers and smallest depot capacity spread (largest over smallest capacity) at
#: which ``auto`` runs PyVRP alone at any budget: heterogeneous depots. On the 14 files of kind
#: ``e`` (spread 7.5-12) of 300-600 customers of Schneider & Löffler's set at 60 s, one thread,
#: side by side, PyVRP alone was 0.83% above the published best-known values on average, the
#: hybrid 1.82%, lower on 12 of the 14 (the hybrid's refined learned starts kept too few
#: depots: 400-25-2e +3.74% against +0.21%; results/schneider/set_search.md). The presets'
#: spread is at most 1.8, Prins' 1.
HETEROGENEOUS_MIN_CUSTOMERS = 300
HETEROGENEOUS_SPREAD = 4.0
#: The generalist models, preferred first: ``auto``'s choice outside the paper's distribution
#: is the first of them that is shipped.
GENERALIST_MODELS = ("drlhqcf_mixed", "drlhqcf_mixed50_cpu")
#: The paper's models by training size (customers).
PAPER_MODELS = {10: "drlhq_clrp10", 20: "drlhq_clrp20", 50: "drlhq_clrp50", 100: "drlhq_clrp100"}


def looks_like_paper(instance: CLRPInstance) -> bool:
    """Whether ``instance`` could come from the paper's generator: coordinates in the unit
    square, real (unrounded) arc costs, integer demands 10..19, vehicle capacity 70, vehicle
    cost 1, and the number of depots, capacities and opening costs of the size rule
    (:func:`clrp_rl4co.envs.clrp.size_rule`) at its number of customers."""
    import numpy as np

    from .envs.clrp.presets import size_rule

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


def generalist_model() -> str:
    """The first shipped model of :data:`GENERALIST_MODELS`."""
    from .pretrained import shipped_models

    shipped = set(shipped_models())
    for name in GENERALIST_MODELS:
        if name in shipped:
            return name
    raise FileNotFoundError(f"none of the generalist models {list(GENERALIST_MODELS)} is shipped")


def auto_model(instance: CLRPInstance) -> str:
    """The model ``auto`` decodes with: the paper's model of the nearest training size (in
    ratio, within a factor 2) on instances like its training data, else the generalist."""
    if looks_like_paper(instance):
        size = min(PAPER_MODELS, key=lambda s: abs(math.log(instance.num_customers / s)))
        if 0.5 <= instance.num_customers / size <= 2.0:
            return PAPER_MODELS[size]
    return generalist_model()


def auto_method(
    instance: CLRPInstance, seconds: float | None = None, repeatable: bool = False
) -> str:
    """The method ``auto`` runs on ``instance`` within ``seconds`` (None: budget unknown), or
    in the repeatable mode (``repeatable``: ``exact`` where a proof is in reach, else
    ``pyvrp``, the methods whose runs do not depend on the wall clock there).

    ``exact`` where a proof is in reach (at most :data:`EXACT_MAX_CUSTOMERS` customers);
    ``pyvrp`` when depots are nearly free (:func:`.solvers.pyvrp_solver.nearly_free_depots`:
    there the policy's depot choices matter little and its starts were far from PyVRP's, 66%
    above on 600 customers, so decoding and refining them only took PyVRP's time) and from
    :data:`PYVRP_MIN_CUSTOMERS` customers within :data:`PYVRP_MAX_SECONDS`, or from
    :data:`HETEROGENEOUS_MIN_CUSTOMERS` on heterogeneous depots (:func:`heterogeneous_depots`);
    else ``hybrid``.
    """
    from .solvers.pyvrp_solver import nearly_free_depots

    customers = instance.num_customers
    if customers <= EXACT_MAX_CUSTOMERS:
        return "exact"
    if repeatable or nearly_free_depots(instance):
        return "pyvrp"
    if customers >= PYVRP_MIN_CUSTOMERS and seconds is not None and seconds <= PYVRP_MAX_SECONDS:
        return "pyvrp"
    if customers >= HETEROGENEOUS_MIN_CUSTOMERS and heterogeneous_depots(instance):
        return "pyvrp"
    return "hybrid"


def heterogeneous_depots(instance: CLRPInstance) -> bool:
    """Whether the largest depot capacity is at least :data:`HETEROGENEOUS_SPREAD` times the
    smallest."""
    capacity = instance.depot_capacity
    return float(capacity.max()) >= HETEROGENEOUS_SPREAD * float(capacity.min())


def resolve(
    instance: CLRPInstance,
    method: str,
    seconds: float,
    model: str | None,
    iterations: int | None = None,
):
    """``(method, model)`` that :func:`clrp_rl4co.solve` runs: ``auto`` resolved (for the
    repeatable mode when ``iterations`` is given), and the policy's name for the methods that
    decode one (None otherwise).

    Raises:
        ValueError: ``method`` is unknown, or has no repeatable mode and ``iterations`` is
            given.
    """
    if method not in METHODS:
        raise ValueError(f"method: must be one of {list(METHODS)}, got {method!r}")
    if method == "auto":
        method = auto_method(instance, seconds, repeatable=iterations is not None)
    if iterations is not None and method not in REPEATABLE_METHODS:
        raise ValueError(
            f"iterations: method {method!r} depends on the wall clock and has no repeatable "
            f"mode; give seconds instead, or one of {list(REPEATABLE_METHODS)}"
        )
    if method in POLICY_METHODS:
        return method, model or auto_model(instance)
    return method, None


__all__ = [
    "EXACT_MAX_CUSTOMERS",
    "GENERALIST_MODELS",
    "METHODS",
    "PAPER_MODELS",
    "POLICY_METHODS",
    "PYVRP_MAX_SECONDS",
    "PYVRP_MIN_CUSTOMERS",
    "REPEATABLE_METHODS",
    "auto_method",
    "auto_model",
    "generalist_model",
    "looks_like_paper",
    "resolve",
]
