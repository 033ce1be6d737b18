"""The compact two-index vehicle-flow MIP of the exact solver (:mod:`.exact`): its columns,
rows, and the conversion of CLRP solutions to and from its column values.

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import CLRPInstance, CLRPSolution, Route
from .highs import INF


@dataclass
class MipModel:
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


class _Columns:
    """HiGHS columns handed out in order, with their objective coefficients."""

    def __init__(self) -> None:
        self.count = 0
        self.costs: list[float] = []

    def new(self, n: int, coef) -> np.ndarray:
        """The indices of ``n`` new columns of objective coefficient(s) ``coef``."""
        idx = np.arange(self.count, self.count + n)
        self.count += n
        self.costs.extend(np.broadcast_to(np.asarray(coef, float), (n,)).tolist())
        return idx


def _arcs(instance: CLRPInstance) -> tuple[list[tuple[int, int]], list[float]]:
    """The model's arcs (node pairs) and their costs: depot -> customer (with ``F``) and back
    for every pair, then customer -> customer when the two demands fit one vehicle."""
    nd, nc = instance.num_depots, instance.num_customers
    d, q, c = instance.demand, instance.vehicle_capacity, instance.cost_matrix()
    arcs: list[tuple[int, int]] = []
    arc_cost: list[float] = []
    for i in range(nd):
        for j in range(nc):
            arcs.append((i, nd + j))
            arc_cost.append(c[i, nd + j] + instance.vehicle_fixed_cost)
            arcs.append((nd + j, i))
            arc_cost.append(c[nd + j, i])
    for j in range(nc):
        for k in range(nc):
            if j != k and d[j] + d[k] <= q + 1e-9:
                arcs.append((nd + j, nd + k))
                arc_cost.append(c[nd + j, nd + k])
    return arcs, arc_cost


def build_model(instance: CLRPInstance) -> MipModel:
    """The MIP of ``instance``: columns ``y``, ``z``, ``x`` and ``f`` in that order (the
    binaries first), then the rows of :func:`_node_rows` and :func:`_arc_rows`."""
    nd, nc = instance.num_depots, instance.num_customers
    cols = _Columns()
    y = cols.new(nd, instance.opening_cost)
    z = cols.new(nd * nc, 0.0).reshape(nd, nc)
    arcs, arc_cost = _arcs(instance)
    x = cols.new(len(arcs), arc_cost)
    into_customer = [a for a, (_, v) in enumerate(arcs) if v >= nd]
    fcols = cols.new(len(into_customer), 0.0)
    f = dict(zip(into_customer, fcols.tolist()))
    integer = np.zeros(cols.count, bool)
    integer[: x[-1] + 1] = True
    lower = np.zeros(cols.count)
    upper = np.ones(cols.count)
    upper[fcols] = instance.vehicle_capacity
    model = MipModel(nd, nc, y, z, arcs, x, f, np.array(cols.costs), lower, upper, integer, [])
    _node_rows(model, instance)
    _arc_rows(model, instance)
    return model


def _row(model: MipModel, idx, val, lo: float = -INF, hi: float = INF) -> None:
    model.rows.append((list(map(int, idx)), list(map(float, val)), lo, hi))


def _node_rows(model: MipModel, instance: CLRPInstance) -> None:
    """Per customer: served once, in- and out-degree 1, flow conservation; per depot and
    customer: ``z <= y`` and the depot's arcs only to its customers; per depot: capacity,
    flow out, route count and degree balance."""
    nd, nc, x, y, z, f = model.num_depots, model.num_customers, model.x, model.y, model.z, model.f
    d, q, cap = instance.demand, instance.vehicle_capacity, instance.depot_capacity
    arc_in: list[list[int]] = [[] for _ in range(nd + nc)]
    arc_out: list[list[int]] = [[] for _ in range(nd + nc)]
    for a, (u, v) in enumerate(model.arcs):
        arc_out[u].append(a)
        arc_in[v].append(a)
    pos = {uv: a for a, uv in enumerate(model.arcs)}
    for j in range(nc):
        _row(model, z[:, j], np.ones(nd), 1, 1)
        _row(model, x[arc_in[nd + j]], np.ones(len(arc_in[nd + j])), 1, 1)
        _row(model, x[arc_out[nd + j]], np.ones(len(arc_out[nd + j])), 1, 1)
        fin = [f[a] for a in arc_in[nd + j]]
        fout = [f[a] for a in arc_out[nd + j] if a in f]
        _row(model, fin + fout, [1.0] * len(fin) + [-1.0] * len(fout), d[j], d[j])
    for i in range(nd):
        for j in range(nc):
            _row(model, [z[i, j], y[i]], [1, -1], hi=0)
            _row(model, [x[pos[(i, nd + j)]], z[i, j]], [1, -1], hi=0)
            _row(model, [x[pos[(nd + j, i)]], z[i, j]], [1, -1], hi=0)
        out_i = [pos[(i, nd + j)] for j in range(nc)]
        in_i = [pos[(nd + j, i)] for j in range(nc)]
        _row(model, list(z[i]) + [y[i]], list(d) + [-cap[i]], hi=0)
        _row(model, [f[a] for a in out_i] + list(z[i]), [1.0] * nc + list(-d), 0, 0)
        _row(model, list(x[out_i]) + list(z[i]), [q] * nc + list(-d), lo=0)
        _row(model, list(x[out_i]) + list(x[in_i]), [1.0] * nc + [-1.0] * nc, 0, 0)


def _arc_rows(model: MipModel, instance: CLRPInstance) -> None:
    """The load bounds of each flow, the customer pairs (one direction at most, same depot
    along a route) and the global rows (fewest routes, enough open capacity)."""
    nd, nc, x, z, f = model.num_depots, model.num_customers, model.x, model.z, model.f
    d, q = instance.demand, instance.vehicle_capacity
    for a, (u, v) in enumerate(model.arcs):
        if a not in f:
            continue
        hi = q if u < nd else q - d[u - nd]
        _row(model, [f[a], x[a]], [1, -hi], hi=0)
        _row(model, [f[a], x[a]], [1, -d[v - nd]], lo=0)
    pos = {uv: a for a, uv in enumerate(model.arcs)}
    for j in range(nc):
        for k in range(j + 1, nc):
            pair = [x[pos[p]] for p in ((nd + j, nd + k), (nd + k, nd + j)) if p in pos]
            if not pair:
                continue
            _row(model, pair, [1.0] * len(pair), hi=1)
            for i in range(nd):
                _row(model, pair + [z[i, j], z[i, k]], [1.0] * len(pair) + [1, -1], hi=1)
                _row(model, pair + [z[i, j], z[i, k]], [1.0] * len(pair) + [-1, 1], hi=1)
    all_out = [pos[(i, nd + j)] for i in range(nd) for j in range(nc)]
    _row(model, x[all_out], np.ones(len(all_out)), lo=instance.min_routes())
    _row(model, model.y, instance.depot_capacity, lo=float(d.sum()))


def solution_values(model: MipModel, instance: CLRPInstance, sol: CLRPSolution) -> np.ndarray:
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


def extract_solution(model: MipModel, col: np.ndarray) -> CLRPSolution:
    """The CLRP solution of column values ``col``: each depot's routes along its arcs."""
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
