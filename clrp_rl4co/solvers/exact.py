"""Exact CLRP solver: a compact two-index vehicle-flow MIP with load flows, solved by HiGHS.

Nodes: depots ``0..D-1``, customers ``D..D+N-1`` (``j`` below is a customer index ``0..N-1``).

Variables:
    y_i in {0,1}: depot i open;  z_ij in {0,1}: customer j served from depot i;
    x_a in {0,1} for arcs a = (i, j) depot->customer, (j, i) customer->depot and
    (j, k) customer->customer (only if d_j + d_k <= q);
    f_a >= 0 for arcs into a customer: the load the vehicle carries on that arc.

Objective: sum_i O_i y_i + sum_a c_a x_a + F * sum_{depot->customer arcs} x_a.

Constraints:
    sum_i z_ij = 1;  z_ij <= y_i;  in-degree(j) = out-degree(j) = 1;
    x_(i,j) <= z_ij and x_(j,i) <= z_ij (a route leaves and returns to its customers' depot);
    x_jk + x_kj + z_ij - z_ik <= 1 and x_jk + x_kj - z_ij + z_ik <= 1 (same depot along a route);
    flow: sum_in f - sum_out f = d_j;  d_v x_a <= f_a <= (q - d_u) x_a  (q for u a depot);
    this removes customer-only cycles and enforces the route capacity;
    depot capacity sum_j d_j z_ij <= Q_i y_i;  flow out of depot i = sum_j d_j z_ij;
    route count  q * sum_j x_(i,j) >= sum_j d_j z_ij;  depot in-degree = out-degree;
    global: routes >= ceil(sum d / q), sum_i Q_i y_i >= sum d, x_jk + x_kj <= 1.

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
from dataclasses import dataclass

import highspy
import numpy as np

from ..data import CLRPInstance, CLRPSolution, Route
from .common import SolverResult, check_instance, check_solution, make_result
from .highs import INF, load_mip, new_highs, run_highs, start_from

log = logging.getLogger(__name__)

#: Relative gap between the bound and the objective below which a run counts as proven optimal
#: (HiGHS runs with ``mip_rel_gap = 0``; this only absorbs floating-point noise).
OPTIMALITY_TOLERANCE = 1e-6


@dataclass
class _Model:
    """Column layout of the MIP (all index arrays refer to HiGHS columns)."""

    num_depots: int
    num_customers: int
    y: np.ndarray  # [D]
    z: np.ndarray  # [D, N]
    arcs: list[tuple[int, int]]  # node pairs (u, v)
    x: np.ndarray  # [A]
    f: dict[int, int]  # arc position -> flow column (arcs into customers)
    cost: np.ndarray  # column objective coefficients
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray  # bool per column
    rows: list[tuple[list[int], list[float], float, float]]


def _build(instance: CLRPInstance) -> _Model:
    nd, nc = instance.num_depots, instance.num_customers
    d = instance.demand
    q = instance.vehicle_capacity
    cap = instance.depot_capacity
    c = instance.cost_matrix()
    fixed = instance.vehicle_fixed_cost
    ncol = 0
    costs: list[float] = []

    def new(n: int, coef) -> np.ndarray:
        nonlocal ncol
        idx = np.arange(ncol, ncol + n)
        ncol += n
        costs.extend(np.broadcast_to(np.asarray(coef, float), (n,)).tolist())
        return idx

    y = new(nd, instance.opening_cost)
    z = new(nd * nc, 0.0).reshape(nd, nc)
    arcs: list[tuple[int, int]] = []
    arc_cost: list[float] = []
    for i in range(nd):
        for j in range(nc):
            arcs.append((i, nd + j))
            arc_cost.append(c[i, nd + j] + fixed)
            arcs.append((nd + j, i))
            arc_cost.append(c[nd + j, i])
    for j in range(nc):
        for k in range(nc):
            if j != k and d[j] + d[k] <= q + 1e-9:
                arcs.append((nd + j, nd + k))
                arc_cost.append(c[nd + j, nd + k])
    x = new(len(arcs), arc_cost)
    into_customer = [a for a, (_, v) in enumerate(arcs) if v >= nd]
    fcols = new(len(into_customer), 0.0)
    f = dict(zip(into_customer, fcols.tolist()))
    integer = np.zeros(ncol, bool)
    integer[: x[-1] + 1] = True
    lower = np.zeros(ncol)
    upper = np.ones(ncol)
    upper[fcols] = q

    rows: list[tuple[list[int], list[float], float, float]] = []

    def row(idx, val, lo=-INF, hi=INF):
        rows.append((list(map(int, idx)), list(map(float, val)), lo, hi))

    arc_in: list[list[int]] = [[] for _ in range(nd + nc)]
    arc_out: list[list[int]] = [[] for _ in range(nd + nc)]
    for a, (u, v) in enumerate(arcs):
        arc_out[u].append(a)
        arc_in[v].append(a)
    pos = {uv: a for a, uv in enumerate(arcs)}

    for j in range(nc):
        row(z[:, j], np.ones(nd), 1, 1)
        row(x[arc_in[nd + j]], np.ones(len(arc_in[nd + j])), 1, 1)
        row(x[arc_out[nd + j]], np.ones(len(arc_out[nd + j])), 1, 1)
        fin = [f[a] for a in arc_in[nd + j]]
        fout = [f[a] for a in arc_out[nd + j] if a in f]
        row(fin + fout, [1.0] * len(fin) + [-1.0] * len(fout), d[j], d[j])
    for i in range(nd):
        for j in range(nc):
            row([z[i, j], y[i]], [1, -1], hi=0)
            row([x[pos[(i, nd + j)]], z[i, j]], [1, -1], hi=0)
            row([x[pos[(nd + j, i)]], z[i, j]], [1, -1], hi=0)
        out_i = [pos[(i, nd + j)] for j in range(nc)]
        in_i = [pos[(nd + j, i)] for j in range(nc)]
        row(list(z[i]) + [y[i]], list(d) + [-cap[i]], hi=0)
        row([f[a] for a in out_i] + list(z[i]), [1.0] * nc + list(-d), 0, 0)
        row(list(x[out_i]) + list(z[i]), [q] * nc + list(-d), lo=0)
        row(list(x[out_i]) + list(x[in_i]), [1.0] * nc + [-1.0] * nc, 0, 0)
    for a, (u, v) in enumerate(arcs):
        if a not in f:
            continue
        hi = q if u < nd else q - d[u - nd]
        row([f[a], x[a]], [1, -hi], hi=0)
        row([f[a], x[a]], [1, -d[v - nd]], lo=0)
    for j in range(nc):
        for k in range(j + 1, nc):
            pair = [x[pos[p]] for p in ((nd + j, nd + k), (nd + k, nd + j)) if p in pos]
            if not pair:
                continue
            row(pair, [1.0] * len(pair), hi=1)
            for i in range(nd):
                row(pair + [z[i, j], z[i, k]], [1.0] * len(pair) + [1, -1], hi=1)
                row(pair + [z[i, j], z[i, k]], [1.0] * len(pair) + [-1, 1], hi=1)
    all_out = [pos[(i, nd + j)] for i in range(nd) for j in range(nc)]
    row(x[all_out], np.ones(len(all_out)), lo=instance.min_routes())
    row(y, cap, lo=float(d.sum()))
    return _Model(nd, nc, y, z, arcs, x, f, np.array(costs), lower, upper, integer, rows)


def _highs(model: _Model, threads: int, verbose: bool) -> highspy.Highs:
    h = new_highs(threads, verbose)
    load_mip(h, model.cost, model.lower, model.upper, model.integer, model.rows)
    return h


def _values(model: _Model, instance: CLRPInstance, sol: CLRPSolution) -> np.ndarray:
    """Column vector of a CLRP solution (for warm starts); raises KeyError on a pruned arc."""
    nd = model.num_depots
    val = np.zeros(len(model.cost))
    pos = {uv: a for a, uv in enumerate(model.arcs)}
    for i in sol.open_depots:
        val[model.y[i]] = 1
    for r in sol.routes:
        nodes = [r.depot] + [nd + c for c in r.customers] + [r.depot]
        load = float(instance.demand[list(r.customers)].sum())
        for u, v in zip(nodes[:-1], nodes[1:]):
            a = pos[(u, v)]
            val[model.x[a]] = 1
            if a in model.f:
                val[model.f[a]] = load
                load -= instance.demand[v - nd]
        for cst in r.customers:
            val[model.z[r.depot, cst]] = 1
    return val


def _extract(model: _Model, col: np.ndarray) -> CLRPSolution:
    nd = model.num_depots
    succ: dict[int, list[int]] = {}
    for a, (u, v) in enumerate(model.arcs):
        if col[model.x[a]] > 0.5:
            succ.setdefault(u, []).append(v)
    routes = []
    for i in range(nd):
        for first in succ.get(i, []):
            seq, node = [], first
            while node >= nd and len(seq) <= model.num_customers:
                seq.append(node - nd)
                node = succ[node][0]
            routes.append(Route(i, tuple(seq)))
    return CLRPSolution(routes)


def _run(h: highspy.Highs, seconds: float) -> tuple[str, float, float, np.ndarray | None]:
    """Run HiGHS; returns (model status string, objective, bound, column values or None)."""
    return run_highs(h, seconds)


def solve_exact(
    instance: CLRPInstance,
    seconds: float = 60.0,
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
        seconds: wall-clock budget (warm start included).
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
        ValueError: an obviously infeasible instance, an invalid ``warm_start`` solution, an
            unknown ``strategy``, or a MIP solution that decodes to an invalid CLRP solution
            (a bug in the model).
    """
    check_instance(instance)
    start = time.perf_counter()
    incumbent: CLRPSolution | None = None
    if isinstance(warm_start, CLRPSolution):
        incumbent = warm_start
    elif warm_start:
        from .pyvrp_solver import solve_pyvrp

        ws = warm_start_seconds
        if ws is None:
            ws = min(0.05 * seconds, 0.1 + 0.05 * instance.num_customers)
        incumbent = solve_pyvrp(instance, seconds=ws, seed=seed).solution
    if incumbent is not None:
        check_solution(instance, incumbent, "the warm-start solution is invalid")
    if strategy == "auto":
        strategy = "monolithic" if instance.num_customers <= 12 else "subsets"
    model = _build(instance)
    h = _highs(model, threads, verbose)
    warm = None
    if incumbent is not None:
        try:
            warm = _values(model, instance, incumbent)
        except KeyError as exc:  # an arc the model prunes
            _warn_pruned_warm_start(instance, exc.args[0])
    remaining = lambda: seconds - (time.perf_counter() - start)
    if strategy == "monolithic":
        sol, bound, proven = _monolithic(h, model, incumbent, warm, remaining)
    elif strategy == "subsets":
        sol, bound, proven = _subsets(h, model, instance, incumbent, warm, remaining)
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
    sol = _extract(model, col) if col is not None else incumbent
    return sol, bound, status == "Optimal"


def _subsets(h, model: _Model, instance: CLRPInstance, incumbent, warm, remaining):
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
    ycols = np.asarray(model.y, np.int32)
    integrality = np.where(
        model.integer, highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
    )
    allc = np.arange(len(model.cost), dtype=np.int32)

    def fix(s):
        lo = np.array([1.0 if i in s else 0.0 for i in range(nd)])
        h.changeColsBounds(nd, ycols, lo, lo)

    # LP bounds of every set (the relaxation with y fixed).
    h.changeColsIntegrality(len(allc), allc, [highspy.HighsVarType.kContinuous] * len(allc))
    bounds = []
    for s in sets:
        if remaining() <= 0:
            bounds.append(-math.inf)
            continue
        fix(s)
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
        fix(s)
        h.clearSolver()
        h.setOptionValue("objective_bound", best_cost if math.isfinite(best_cost) else INF)
        if best is not None and set(best.open_depots) == set(s) and warm is not None:
            start_from(h, warm)
        status, obj, bound, col = _run(h, remaining())
        if col is not None:
            sol = _extract(model, col)
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
