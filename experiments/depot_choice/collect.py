"""``collect``: route a few depot sets per instance and record each as a labelled example.

Per instance: :meth:`~clrp_rl4co.solvers.set_estimate.SetEstimate.best_sets` ranks sets within
``rank_seconds`` (the depot-set search's ranking at a 10 s budget gets 1 s), and the pool is
(:func:`candidate_sets`) the three best ranked sets, the two best moves of the best one
(:func:`~clrp_rl4co.solvers.set_search.neighbour_sets`, by estimate), two of its other moves
drawn at random and the nearest depots (:func:`~clrp_rl4co.solvers.pyvrp_solver.nearest_depots`,
the set nearly free depots get), distinct, at most ``sets`` of them. Each set is routed from
scratch by :func:`~clrp_rl4co.solvers.pyvrp_solver.route_on_set` on ``iterations`` PyVRP
iterations (no time limit, no trips polish, the instance's seed for every set: the same budget
and random numbers for each), and on instances of at most ``replicate_customers`` customers a
second time with the next seed (the label noise). A set PyVRP finds nothing feasible for is
recorded with a NaN cost. With ``located_seconds`` (``--located-seconds``) a rerun adds to each
instance already collected the facility-location model's set (:func:`located_rows`, origin
``located``) when it is not among its sets yet.

One ``.npz`` per source (``dev.npz``: the 44 files; ``generated.npz``), rewritten after each
instance; a rerun skips the instances already there. Arrays, ``E`` examples (:data:`FIELDS`):
per example the instance, its source and kind, the set as a mask over depots ``[E, MAX_DEPOTS]``,
:func:`~clrp_rl4co.solvers.set_features.depot_features` under the estimate's assignment padded
to ``[E, MAX_DEPOTS, P]`` (row ``d``: depot ``d``), the set vector ``[E, V]``, the estimates,
the routed solution's cost, opening costs paid and routes, and the CPU seconds of the run.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers.location_model import facility_location_set
from clrp_rl4co.solvers.pyvrp_solver import nearest_depots, route_on_set
from clrp_rl4co.solvers.set_estimate import SetEstimate
from clrp_rl4co.solvers.set_features import (
    DEPOT_NAMES,
    SET_FEATURES,
    SetFeaturizer,
    column,
)
from clrp_rl4co.solvers.set_search import neighbour_sets
from clrp_rl4co.solvers.stopping import Deadline

#: Depots of the largest instance (the mask and the per-depot rows are padded to it).
MAX_DEPOTS = 30
#: Per-example arrays of a data file, with their shapes.
FIELDS = {
    "instance": "[E] str", "source": "[E] str: dev / generated", "kind": "[E] str",
    "origin": "[E] str: ranked<k> / move_best / move_random / nearest",
    "num_customers": "[E] int", "num_depots": "[E] int", "set_mask": "[E, 30] bool",
    "per_depot": "[E, 30, P] float", "vector": "[E, V] float",
    "estimate": "[E] SetEstimate's value (its ranking key)", "estimate_fits": "[E] bool",
    "cost": "[E] routed solution's total cost (NaN: none found)", "opening_paid": "[E]",
    "routes": "[E] int", "cost_replicate": "[E] total cost with the next seed (NaN: not run)",
    "opening_paid_replicate": "[E]", "cpu_seconds": "[E] the routing's CPU seconds",
}  # fmt: skip
#: Scalars stored with the examples.
META = ("iterations", "seed", "rank_seconds", "sets", "replicate_customers", "depot_names",
        "set_names", "commit", "command")  # fmt: skip


@dataclass(frozen=True)
class CollectParams:
    """How :func:`collect_instance` routes an instance's sets.

    Attributes:
        iterations: PyVRP iterations of each routing.
        seed: PyVRP's seed of every set's routing (the replicate: ``seed + 1``).
        rank_seconds: the ranking's time.
        sets: the most sets per instance.
        replicate_customers: route every set twice up to this many customers.
    """

    iterations: int = 150
    seed: int = 0
    rank_seconds: float = 1.0
    sets: int = 6
    replicate_customers: int = 200


def candidate_sets(
    instance: CLRPInstance,
    estimate: SetEstimate,
    count: int,
    rank_seconds: float,
    rng: np.random.Generator,
) -> list[tuple[tuple[int, ...], str]]:
    """The pool of sets routed on ``instance`` (module docstring), each with where it came from
    (``ranked0`` ... ``ranked2``, ``move_best``, ``move_random``, ``nearest``)."""
    ranked = estimate.best_sets(deadline=Deadline(rank_seconds))
    pool: list[tuple[tuple[int, ...], str]] = [(s, f"ranked{k}") for k, s in enumerate(ranked[:3])]
    if ranked:
        moves = neighbour_sets(instance, ranked[0], estimate)
        pool += [(s, "move_best") for s in moves[:2]]
        rest = moves[2:]
        picks = rng.choice(len(rest), size=min(2, len(rest)), replace=False) if rest else []
        pool += [(rest[int(k)], "move_random") for k in sorted(picks)]
    pool.append((tuple(nearest_depots(instance)), "nearest"))
    out, seen = [], set()
    for depots, origin in pool:
        key = tuple(sorted(int(d) for d in depots))
        cap = instance.depot_capacity[list(key)].sum()
        if key in seen or cap < instance.total_demand() - 1e-9:
            continue
        seen.add(key)
        out.append((key, origin))
    return out[:count]


def collect_instance(
    instance: CLRPInstance,
    source: str,
    kind: str,
    params: CollectParams,
    sets: list[tuple[tuple[int, ...], str]] | None = None,
) -> dict[str, np.ndarray]:
    """The examples of one instance (arrays of :data:`FIELDS`, one row per routed set): of
    ``sets`` (``(depots, origin)`` pairs), else of :func:`candidate_sets`."""
    if instance.num_depots > MAX_DEPOTS:
        raise ValueError(f"{instance.name}: more than {MAX_DEPOTS} depots")
    rng = np.random.default_rng([params.seed, instance.num_customers, instance.num_depots])
    estimate = SetEstimate(instance)
    featurizer = SetFeaturizer(instance, estimate)
    if sets is None:
        sets = candidate_sets(instance, estimate, params.sets, params.rank_seconds, rng)
    rows: list[dict] = []
    replicate = instance.num_customers <= params.replicate_customers
    for depots, origin in sets:
        per_depot = featurizer.per_depot(depots)
        padded = np.zeros((MAX_DEPOTS, len(DEPOT_NAMES)))
        padded[list(depots)] = per_depot
        mask = np.zeros(MAX_DEPOTS, bool)
        mask[list(depots)] = True
        start = time.process_time()
        cost, opening, routes = _route(instance, depots, params.iterations, params.seed)
        cpu = time.process_time() - start
        cost2, opening2 = math.nan, math.nan
        if replicate:
            cost2, opening2, _ = _route(instance, depots, params.iterations, params.seed + 1)
        rows.append({
            "instance": instance.name, "source": source, "kind": kind, "origin": origin,
            "num_customers": instance.num_customers, "num_depots": instance.num_depots,
            "set_mask": mask, "per_depot": padded, "vector": featurizer.vector(per_depot),
            "estimate": estimate(depots), "estimate_fits": estimate.fits(depots),
            "cost": cost, "opening_paid": opening, "routes": routes,
            "cost_replicate": cost2, "opening_paid_replicate": opening2, "cpu_seconds": cpu,
        })  # fmt: skip
    return {key: np.array([r[key] for r in rows]) for key in FIELDS}


def located_rows(
    instance: CLRPInstance,
    source: str,
    kind: str,
    params: CollectParams,
    seconds: float,
    known: np.ndarray,
) -> dict[str, np.ndarray] | None:
    """The example of the facility-location model's set
    (:func:`~clrp_rl4co.solvers.location_model.facility_location_set` within ``seconds``,
    origin ``located``), or None when the model found none or its set is among the masks
    ``known`` ``[k, MAX_DEPOTS]`` (the instance's sets already routed)."""
    located = facility_location_set(instance, seconds)
    if not located:
        return None
    mask = np.zeros(MAX_DEPOTS, bool)
    mask[list(located)] = True
    if (known == mask).all(axis=1).any():
        return None
    return collect_instance(instance, source, kind, params, [(tuple(located), "located")])


def _route(
    instance: CLRPInstance, depots: tuple[int, ...], iterations: int, seed: int
) -> tuple[float, float, int]:
    """``route_on_set`` from scratch: the total cost, the opening costs paid and the routes
    (NaN, NaN, -1 when nothing feasible was found)."""
    sol = route_on_set(instance, depots, None, iterations, seed, None, polish_share=0.0)
    if sol is None:
        return math.nan, math.nan, -1
    parts = sol.cost(instance)
    return float(parts.total), float(parts.opening), sol.num_routes


def load(path: Path) -> dict[str, np.ndarray]:
    """A data file's arrays (empty dict when it does not exist)."""
    if not Path(path).is_file():
        return {}
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def save(path: Path, data: dict[str, np.ndarray]) -> None:
    """Write ``data`` to ``path`` (compressed; through a temporary file, so a stopped run never
    leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **data)
    os.replace(tmp, path)


def append(data: dict[str, np.ndarray], rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``data``'s example arrays with ``rows`` after them (meta entries kept)."""
    out = dict(data)
    for key in FIELDS:
        out[key] = np.concatenate([data[key], rows[key]]) if key in data else rows[key]
    return out


def collect(
    jobs: Iterable[tuple[str, str, str, Callable[[], CLRPInstance]]],
    out: Path,
    params: CollectParams,
    max_seconds: float | None,
    meta: dict[str, str],
    log: Callable[[str], None] = print,
    located_seconds: float | None = None,
) -> dict[str, int]:
    """Collect ``jobs`` (``(source, name, kind, make_instance)``, in order) into
    ``<out>/<source>.npz``, skipping instances already there; no new instance starts after
    ``max_seconds`` of wall time. With ``located_seconds``, an instance already there without
    a ``located`` example gets that of :func:`located_rows` instead (when its set is new).
    Returns the examples added per source."""
    start = time.perf_counter()
    added: dict[str, int] = {}
    cache: dict[str, dict[str, np.ndarray]] = {}
    for source, name, kind, make in jobs:
        path = Path(out) / f"{source}.npz"
        data = cache.setdefault(source, load(path))
        present = "instance" in data and name in set(data["instance"].tolist())
        if present and located_seconds is None:
            continue
        if present and "located" in set(data["origin"][data["instance"] == name].tolist()):
            continue
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            log(f"stopped: {max_seconds:.0f} s of wall time spent")
            break
        t0, c0 = time.perf_counter(), time.process_time()
        if present:
            known = data["set_mask"][data["instance"] == name]
            rows = located_rows(make(), source, kind, params, located_seconds, known)
            if rows is None:
                log(f"{source} {name}: the located set was routed already (or none)")
                continue
        else:
            rows = collect_instance(make(), source, kind, params)
        data = cache[source] = append(data, rows)
        data.update(_meta(params, meta, data))
        save(path, data)
        added[source] = added.get(source, 0) + len(rows["cost"])
        log(f"{source} {name}: {len(rows['cost'])} sets, wall {time.perf_counter() - t0:.1f} s, "
            f"cpu {time.process_time() - c0:.1f} s")  # fmt: skip
    return added


def _meta(
    params: CollectParams, meta: dict[str, str], data: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The scalars of :data:`META` for ``data`` (the commands of every run that added to it,
    joined by `` ; ``).

    Raises:
        ValueError: ``data`` was collected with other routing parameters.
    """
    for key in ("iterations", "seed", "replicate_customers"):
        if key in data and int(data[key]) != getattr(params, key):
            ours = getattr(params, key)
            raise ValueError(f"{key}: the data has {int(data[key])}, this run {ours}")
    commands = [c for c in str(data.get("command", "")).split(" ; ") if c]
    if meta.get("command") and meta["command"] not in commands:
        commands.append(meta["command"])
    return {
        "iterations": np.array(params.iterations), "seed": np.array(params.seed),
        "rank_seconds": np.array(params.rank_seconds), "sets": np.array(params.sets),
        "replicate_customers": np.array(params.replicate_customers),
        "depot_names": np.array(DEPOT_NAMES), "set_names": np.array(SET_FEATURES),
        "commit": np.array(meta.get("commit", "")), "command": np.array(" ; ".join(commands)),
    }  # fmt: skip


def routed(data: dict[str, np.ndarray], replicate: bool = False) -> np.ndarray:
    """``[E]`` the routed cost of each example: its total cost minus the opening costs paid
    (the replicate's with ``replicate``)."""
    if replicate:
        return data["cost_replicate"] - data["opening_paid_replicate"]
    return data["cost"] - data["opening_paid"]


def estimate_routed(data: dict[str, np.ndarray]) -> np.ndarray:
    """``[E]`` SetEstimate's routed part: ``F`` per route and the radial part (its value minus
    the opening costs of the set's depots)."""
    per_depot = data["per_depot"]
    fixed = data["vector"][:, SET_FEATURES.index("vehicle_fixed_cost")]
    routes = per_depot[..., column("routes")].sum(axis=1)
    return fixed * routes + per_depot[..., column("radial")].sum(axis=1)
