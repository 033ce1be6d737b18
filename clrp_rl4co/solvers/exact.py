"""Exact CLRP solver: a compact two-index vehicle-flow MIP with load flows, solved by HiGHS.

The model (:mod:`.exact_model`): binary depots, assignments and arcs, load flows on the arcs
into customers.

Two strategies: ``"monolithic"`` (one MIP) and ``"subsets"`` (enumerate depot sets in order
of their LP bound, solving the MIP with ``y`` fixed and the incumbent as cutoff; a set is
skipped when its LP bound reaches the incumbent). ``"auto"`` uses the monolithic model up to
12 customers. The incumbent starts from a short PyVRP run unless ``warm_start=False``.
"""

from __future__ import annotations

import itertools
import logging
import math
import time

import highspy
import numpy as np

from ..data import CLRPInstance, CLRPSolution
from .common import SolverResult, check_solution, make_result
from .exact_model import MipModel, build_model, extract_solution, solution_values
from .highs import INF, load_mip, new_highs, run_highs, start_from
from .stopping import Deadline, as_deadline

log = logging.getLogger(__name__)

#: Relative gap between the bound and the objective below which a run counts as proven optimal
#: (HiGHS runs with ``mip_rel_gap = 0``; this only absorbs floating-point noise).
OPTIMALITY_TOLERANCE = 1e-6


def _highs(model: MipModel, threads: int, verbose: bool) -> highspy.Highs:
    h = new_highs(threads, verbose)
    load_mip(h, model.cost, model.lower, model.upper, model.integer, model.rows)
    return h


def _run(h: highspy.Highs, seconds: float) -> tuple[str, float, float, np.ndarray | None]:
    """Run HiGHS; returns (model status string, objective, bound, column values or None)."""
    return run_highs(h, seconds)


def solve_exact(
    instance: CLRPInstance,
    seconds: float | Deadline = 60.0,
    threads: int = 1,
    strategy: str = "auto",
    warm_start: bool | CLRPSolution = True,
    warm_start_seconds: float | None = None,
    seed: int = 0,
    verbose: bool = False,
) -> SolverResult:
    """Solve one instance with the MIP; ``proven_optimal`` only for a closed gap.

    Args:
        instance: the CLRP instance.
        seconds: wall-clock budget in seconds from the call (warm start included), or the
            caller's :class:`.stopping.Deadline`.
        threads: HiGHS threads.
        strategy: ``"monolithic"``, ``"subsets"`` or ``"auto"``.
        warm_start: True runs PyVRP briefly for an incumbent, a CLRPSolution is used as is,
            False starts without one.
        warm_start_seconds: PyVRP's budget (default ``min(0.05 * seconds, 0.1 + 0.05 N)``).
        seed: PyVRP seed of the warm start (HiGHS runs are deterministic for fixed threads).
        verbose: print the HiGHS log.

    Returns:
        The result: ``bound`` is HiGHS's lower bound when it has a finite one (else None);
        ``proven_optimal`` and status ``"optimal"`` only when HiGHS proved optimality (gap
        closed with ``mip_rel_gap = 0``) and the bound equals the solution's own cost within
        :data:`OPTIMALITY_TOLERANCE`; status ``"no solution"`` when neither HiGHS nor the
        warm start gave one within the time limit.

    Raises:
        ValueError: an invalid ``warm_start`` solution, an unknown ``strategy``, or a MIP
            solution that decodes to an invalid CLRP solution (a bug in the model).
    """
    start = time.perf_counter()
    deadline = as_deadline(seconds)
    incumbent: CLRPSolution | None = None
    if isinstance(warm_start, CLRPSolution):
        incumbent = warm_start
    elif warm_start:
        from .pyvrp_solver import solve_pyvrp

        ws = warm_start_seconds
        if ws is None:
            ws = min(0.05 * deadline.seconds, 0.1 + 0.05 * instance.num_customers)
        incumbent = solve_pyvrp(instance, seconds=ws, seed=seed).solution
    if incumbent is not None:
        check_solution(instance, incumbent, "the warm-start solution is invalid")
    if strategy == "auto":
        strategy = "monolithic" if instance.num_customers <= 12 else "subsets"
    model = build_model(instance)
    h = _highs(model, threads, verbose)
    warm = None
    if incumbent is not None:
        try:
            warm = solution_values(model, instance, incumbent)
        except KeyError as exc:  # an arc the model prunes
            _warn_pruned_warm_start(instance, exc.args[0])
    if strategy == "monolithic":
        sol, bound, proven = _monolithic(h, model, incumbent, warm, deadline.left)
    elif strategy == "subsets":
        sol, bound, proven = _subsets(h, model, instance, incumbent, warm, deadline.left)
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    runtime = time.perf_counter() - start
    if bound is not None and not math.isfinite(bound):
        bound = None  # HiGHS stopped before it had a finite bound (e.g. -inf at a time limit)
    optimal = False
    if proven and sol is not None and bound is not None:
        objective = sol.cost(instance).total
        optimal = abs(objective - bound) <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective))
    return make_result(
        instance, sol, solver="exact", runtime=runtime, bound=bound, proven_optimal=optimal
    )


def _warn_pruned_warm_start(instance: CLRPInstance, arc: tuple[int, int]) -> None:
    """Log why HiGHS gets no warm start: the solution uses the customer-customer ``arc``, which
    the model leaves out because the two demands exceed the vehicle capacity (the solution
    checker accepted the route within its capacity tolerance)."""
    nd = instance.num_depots
    j, k = arc[0] - nd, arc[1] - nd
    dj, dk = float(instance.demand[j]), float(instance.demand[k])
    log.warning(
        "%s: the warm start is not given to HiGHS: its route goes from customer %d to customer "
        "%d (node %d -> %d), demands %g + %g = %g above the vehicle capacity %g; the model "
        "has no arc between customers whose demands exceed the capacity (the solution checker "
        "accepted the route within its capacity tolerance); HiGHS starts without it",
        instance.name or "CLRPInstance",
        j,
        k,
        arc[0],
        arc[1],
        dj,
        dk,
        dj + dk,
        float(instance.vehicle_capacity),
    )


def _monolithic(h, model, incumbent, warm, remaining):
    if warm is not None:
        start_from(h, warm)
    status, obj, bound, col = _run(h, remaining())
    sol = extract_solution(model, col) if col is not None else incumbent
    return sol, bound, status == "Optimal"


def _fix_depots(h: highspy.Highs, model: MipModel, depots) -> None:
    """Fix ``y`` to the depot set ``depots`` (open exactly those)."""
    nd = model.num_depots
    lo = np.array([1.0 if i in depots else 0.0 for i in range(nd)])
    h.changeColsBounds(nd, np.asarray(model.y, np.int32), lo, lo)


def _lp_bounds(h: highspy.Highs, model: MipModel, sets, remaining) -> list[float]:
    """The LP bound of every set (the relaxation with ``y`` fixed): ``inf`` when infeasible,
    ``-inf`` when not solved (no time left); the integrality is restored after."""
    integrality = np.where(
        model.integer, highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
    )
    allc = np.arange(len(model.cost), dtype=np.int32)
    h.changeColsIntegrality(len(allc), allc, [highspy.HighsVarType.kContinuous] * len(allc))
    bounds = []
    for s in sets:
        if remaining() <= 0:
            bounds.append(-math.inf)
            continue
        _fix_depots(h, model, s)
        h.setOptionValue("time_limit", max(remaining(), 0.01))
        h.run()
        st = h.modelStatusToString(h.getModelStatus())
        if st == "Infeasible":
            bounds.append(math.inf)
        elif st == "Optimal":
            bounds.append(h.getInfo().objective_function_value)
        else:
            bounds.append(-math.inf)
    h.changeColsIntegrality(len(allc), allc, integrality)
    return bounds


def _subsets(h, model: MipModel, instance: CLRPInstance, incumbent, warm, remaining):
    """Depot-set enumeration in LP-bound order with the incumbent as cutoff."""
    nd = model.num_depots
    cap = instance.depot_capacity
    need = instance.total_demand()
    best = incumbent
    best_cost = incumbent.cost(instance).total if incumbent is not None else math.inf
    sets = [
        s
        for r in range(1, nd + 1)
        for s in itertools.combinations(range(nd), r)
        if cap[list(s)].sum() >= need - 1e-9
    ]
    bounds = _lp_bounds(h, model, sets, remaining)
    order = np.argsort(bounds, kind="stable")
    open_bounds: list[float] = []  # lower bounds of the sets not closed
    proven = True
    for rank, k in enumerate(order):
        s, lb = sets[k], bounds[k]
        if lb >= best_cost - 1e-9 * max(1.0, abs(best_cost)):
            break  # this set and every later one cannot improve
        if remaining() <= 0:
            proven = False
            open_bounds.extend(bounds[j] for j in order[rank:] if bounds[j] < best_cost)
            break
        _fix_depots(h, model, s)
        h.clearSolver()
        h.setOptionValue("objective_bound", best_cost if math.isfinite(best_cost) else INF)
        if best is not None and set(best.open_depots) == set(s) and warm is not None:
            start_from(h, warm)
        status, obj, bound, col = _run(h, remaining())
        if col is not None:
            sol = extract_solution(model, col)
            c = sol.cost(instance).total
            if c < best_cost - 1e-9:
                best, best_cost = sol, c
                warm = col
        if status in ("Optimal", "Infeasible", "Objective bound"):
            continue
        proven = False
        open_bounds.append(max(lb, bound if math.isfinite(bound) else lb))
    if best is None:
        return None, None, False
    bound = min([best_cost] + open_bounds)
    return best, (bound if math.isfinite(bound) else None), proven
