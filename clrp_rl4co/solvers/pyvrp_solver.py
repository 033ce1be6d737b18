"""Heuristic CLRP solver: PyVRP 0.14 on CLRP encodings (:mod:`.pyvrp_encoding`).

:func:`solve_pyvrp` is the entry point. An outer depot-set search is used by default
(:func:`depot_set_search`, :mod:`.set_search`): alone, the one-model run on all candidate depots
(the exact *trips* encoding, whose vehicle fixed costs are the opening costs) tends to keep far
too many of them open (15-16 of 20 on clrp100, where 2-3 suffice). Routing on a set runs in the
*fleet* encoding (a multi-depot VRP whose fleet keeps each depot within its capacity; PyVRP
searches it far better than one vehicle's trips) and, at the end, in the exact trips encoding
warm-started from the fleet's result (:func:`route_on_set`), which reaches the solutions the
fleet cannot represent. When depots are nearly free (:func:`nearly_free_depots`) the set barely
matters: PyVRP routes on every depot that is some customer's nearest (:func:`nearest_depots`) in
one run. Each call keeps one :class:`.stopping.Deadline`; each PyVRP run stops at its own
(:meth:`.stopping.Deadline.criterion`).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyvrp
from pyvrp.exceptions import PenaltyBoundWarning
from pyvrp.IteratedLocalSearch import IteratedLocalSearchParams
from pyvrp.solve import SolveParams

from ..data import CLRPInstance, CLRPSolution
from . import set_search
from .common import SolverResult, check_solution, make_result, solution_cost
from .decompose import LARGE_INSTANCE
from .large import route_large
from .pyvrp_encoding import Encoding, decode, encode, encode_fleet, to_pyvrp
from .set_estimate import SetEstimate
from .set_search import SetSearchParams, search_sets
from .stopping import Budget, Deadline, as_deadline

logger = logging.getLogger(__name__)

#: What PyVRP's ``PenaltyBoundWarning`` means here (logged at DEBUG, never shown raw). PyVRP
#: raises the penalty of a violated constraint (vehicle capacity, or the shift duration that
#: encodes a depot's capacity) while few of its recent solutions are feasible, and warns when
#: the penalty reaches its upper bound. Depot capacities in the encoding are tight by design (a
#: depot set is searched near its capacity), so this happens on feasible instances; the search
#: goes on, and only feasible results are returned and then checked.
PENALTY_BOUND_NOTE = (
    "PyVRP's penalty for a violated capacity reached its bound (it searched among infeasible "
    "solutions for a while; depot capacities are tight in this encoding); feasible result: %s"
)


@dataclass(frozen=True)
class HistoryParams:
    """The late-acceptance history of a PyVRP run (:func:`history_length`).

    PyVRP's iterated local search accepts a candidate that beats the current solution or the
    one of ``history_length`` iterations ago (late-acceptance hill climbing; PyVRP's default
    history is ``max_length``). A long history keeps the search wide for many iterations,
    which a short run never recovers: on 600 customers, 20 s of PyVRP (about 14,000
    iterations) on one depot set ended 2.5% lower with a history of 10-100 than with 300, while
    at 60 s the three were within 0.3%; on every depot of nearly free depots at 60 s, one run
    with it ended 1.0%, 1.6% and 0.0% lower than with 300 (three instances of 400-600
    customers). Only the one-run routing of nearly free depots uses it: in the depot-set
    search's many short runs it bought nothing (``solve --time 60`` on 16 instances of 300-600
    customers: mean change +0.04%).

    Attributes:
        iterations_per_entry: one entry of history per this many iterations a run is expected
            to make.
        min_length: the shortest history.
        max_length: the longest history (PyVRP's default).
        client_iterations_per_second: PyVRP iterations per second times the number of
            clients, one thread (measured 2.8e5 at 100 customers, 4.2e5 at 300 and 600; more
            with few, uncrowded depots): the prior of a time-limited run's iterations.
    """

    iterations_per_entry: int = 200
    min_length: int = 10
    max_length: int = 300
    client_iterations_per_second: float = 4e5


@dataclass(frozen=True)
class PyVRPParams:
    """How the PyVRP runs are set up.

    Attributes:
        polish_share: share of :func:`route_on_set`'s budget spent in the trips encoding after
            the fleet one (its default).
        give_up_share: :func:`route_on_set`'s fleet run gives up after this share of its time
            without a feasible solution (e.g. a depot set too tight for its fleet).
        nearly_free_share: depots are *nearly free* (:func:`nearly_free_depots`) when opening
            every candidate depot costs at most this share of a cheap estimate of a solution
            that may use them all. Then the depot set barely changes the cost and the
            depot-set search is all routing noise: on 600 customers with opening costs 0.1-0.3
            of a vehicle's cost, every one of its short candidate runs "improved" (the routes
            were still converging). One run on every depot instead: on the eight such
            instances of 300-600 customers of ``benchmarks.hard``, ``solve --time 60`` ended
            0.2-2.0% lower on every one (mean 0.7%); on the depots that are some customer's
            nearest (:func:`nearest_depots`; half of them where customers are clustered)
            0.2-1.5% lower again on three of the four clustered instances. Measured shares
            (:func:`opening_share`): 1.1-1.7% on such instances; 37-95% on the Prins
            instances, 58-91% on the generator's presets (preset ``mixed``: 3 of 1,000 below
            5%).
        history: the late-acceptance history of the runs that scale it.
    """

    polish_share: float = 0.1
    give_up_share: float = 0.5
    nearly_free_share: float = 0.05
    history: HistoryParams = HistoryParams()


#: The PyVRP runs' parameters.
PARAMS = PyVRPParams()


def history_length(
    num_clients: int,
    seconds: float | None,
    max_iterations: int | None,
    params: HistoryParams = PARAMS.history,
) -> int:
    """The late-acceptance history of a PyVRP run on ``num_clients`` clients with a budget of
    ``seconds`` and / or ``max_iterations`` (whichever is expected to end it first): one entry
    per ``params.iterations_per_entry`` expected iterations, between ``params.min_length`` and
    ``params.max_length`` (see :class:`HistoryParams`)."""
    expected = math.inf if max_iterations is None else float(max_iterations)
    if seconds is not None:
        per_second = params.client_iterations_per_second / max(num_clients, 1)
        expected = min(expected, seconds * per_second)
    entries = expected / params.iterations_per_entry
    return int(min(params.max_length, max(params.min_length, entries)))


def opening_share(instance: CLRPInstance) -> float:
    """The opening costs of every candidate depot over a cheap estimate of a solution that may
    use them all: those opening costs, ``F`` per ``ceil(T / q)`` routes (``T`` the total
    demand) and the radial part ``2 sum_j D_j min_i c_ij / q`` of the route lengths (a lower
    bound on it, capacities ignored). 0 when nothing costs anything."""
    opening = float(np.sum(instance.opening_cost))
    demand = np.asarray(instance.demand, np.float64)
    radial = 2.0 * float(demand @ instance.depot_customer_costs().min(axis=0))
    radial /= float(instance.vehicle_capacity)
    total = opening + float(instance.vehicle_fixed_cost) * instance.min_routes() + radial
    return opening / total if total > 0 else 0.0


def nearly_free_depots(instance: CLRPInstance) -> bool:
    """Whether opening every candidate depot costs at most
    :attr:`PyVRPParams.nearly_free_share` of a solution (:func:`opening_share`): then PyVRP
    routes on the nearest depots (:func:`nearest_depots`) at once, in one run
    (:func:`depot_set_search`), and ``auto`` runs PyVRP alone (:mod:`clrp_rl4co.auto`)."""
    return opening_share(instance) <= PARAMS.nearly_free_share


def nearest_depots(instance: CLRPInstance) -> tuple[int, ...]:
    """The depots that are some customer's nearest (by arc cost), with depots added by
    :meth:`.set_estimate.SetEstimate.fitting` until the estimate's assignment keeps every depot
    within its capacity; every depot when even that does not fit."""
    est = SetEstimate(instance)
    fitted = est.fitting(np.unique(est.dist.argmin(axis=0)))
    return tuple(range(instance.num_depots)) if fitted is None else fitted


def run_pyvrp(
    enc: Encoding,
    seconds: float | Deadline | None,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    give_up: float | None = None,
    scaled_history: bool = False,
) -> CLRPSolution | None:
    """One PyVRP run on ``enc`` until ``seconds`` (a deadline, or seconds from now on the wall
    clock) and / or ``max_iterations`` (with ``give_up``: stopped after that many seconds
    without a feasible solution; with ``scaled_history``, a late-acceptance history of
    :func:`history_length`, else PyVRP's default); returns the best feasible solution decoded,
    or None."""
    deadline = as_deadline(seconds)
    init = to_pyvrp(enc, initial) if initial is not None else None
    params = SolveParams()
    if scaled_history:
        history = history_length(enc.data.num_clients, deadline.left(), max_iterations)
        params = SolveParams(ils=IteratedLocalSearchParams(history_length=history))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PenaltyBoundWarning)
        res = pyvrp.solve(
            enc.data,
            deadline.criterion(max_iterations, give_up),
            seed=seed,
            collect_stats=False,
            display=False,
            params=params,
            initial_solution=init,
        )
    for warning in caught:
        if issubclass(warning.category, PenaltyBoundWarning):
            logger.debug(PENALTY_BOUND_NOTE, res.is_feasible())
        else:  # anything else PyVRP warns about is shown as it is
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    if not res.is_feasible():
        return None
    return decode(enc, res.best)


def route_on_set(
    instance: CLRPInstance,
    depots: list[int] | tuple[int, ...],
    seconds: float | Deadline | None,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    polish_share: float = PARAMS.polish_share,
    clock: Callable[[], float] = time.perf_counter,
    scaled_history: bool = False,
) -> CLRPSolution | None:
    """The best routes PyVRP finds on one depot set, or None if it finds no feasible ones.

    PyVRP runs in the fleet encoding for ``1 - polish_share`` of the budget (time and/or
    iterations), then in the exact trips encoding warm-started from that result for the rest
    (the time left on ``clock``). When the fleet has found nothing feasible in
    :attr:`PyVRPParams.give_up_share` of its time (e.g. a depot set too tight for its fleet)
    it gives up, and the trips encoding runs instead for the same share, within what is left
    of ``seconds``. ``initial`` warm-starts the first run; it is not returned by itself.
    ``seconds``: a deadline (``clock`` is then its own), or seconds from now on ``clock``.
    ``scaled_history``: see :func:`run_pyvrp`.
    """
    deadline = as_deadline(seconds, clock)
    depots = sorted(int(d) for d in depots)
    budget = Budget(deadline.left(), max_iterations)
    fleet = budget.part(1.0 - polish_share if polish_share > 0 else 1.0)
    give_up = None if fleet.seconds is None else fleet.seconds * PARAMS.give_up_share
    best = run_pyvrp(encode_fleet(instance, depots), fleet.seconds, fleet.iterations, seed,
                     initial, give_up, scaled_history=scaled_history)  # fmt: skip
    if best is None:
        left = deadline.left()
        trips_seconds = None if left is None else min(fleet.seconds, left)
        return run_pyvrp(encode(instance, depots), trips_seconds, fleet.iterations, seed,
                         initial, scaled_history=scaled_history)  # fmt: skip
    if polish_share <= 0 or deadline.expired():
        return best
    polish = budget.part(polish_share)
    polished = run_pyvrp(encode(instance, depots), deadline, polish.iterations, seed + 1,
                         best, scaled_history=scaled_history)  # fmt: skip
    return polished if solution_cost(instance, polished) < solution_cost(instance, best) else best


def depot_set_search(
    instance: CLRPInstance,
    seconds: float | Deadline | None,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    clock: Callable[[], float] = time.perf_counter,
    params: SetSearchParams | None = None,
) -> CLRPSolution | None:
    """The depots to open and their routes, within ``seconds`` on ``clock`` and / or
    ``max_iterations`` PyVRP iterations; None when nothing feasible was found.

    From :data:`.decompose.LARGE_INSTANCE` customers one depot set is routed by parts
    (:func:`.large.route_large`). When depots are nearly free
    (:func:`nearly_free_depots`) there is no set search: one :func:`route_on_set` on the depots
    that are some customer's nearest (:func:`nearest_depots`) and those of ``initial`` gets the
    whole budget (PyVRP leaves unused depots closed, and the trips encoding it ends with prices
    their opening costs). Else the depot-set search (:func:`.set_search.search_sets`, shares
    in ``params``, None: :data:`.set_search.PARAMS` at the call). Every set is routed by
    :func:`route_on_set`; ``initial`` (a valid solution) warm-starts the first run and is kept
    if nothing beats it. ``seconds``: a deadline
    (``clock`` is then its own), or seconds from now on ``clock``.
    """
    deadline = as_deadline(seconds, clock)
    if params is None:
        params = set_search.PARAMS
    if instance.num_customers >= LARGE_INSTANCE:
        return route_large(instance, deadline, max_iterations, seed, initial, route_on_set,
                           params)  # fmt: skip
    if nearly_free_depots(instance):
        return _route_nearly_free(instance, deadline, max_iterations, seed, initial)
    return search_sets(instance, deadline, max_iterations, seed, initial, route_on_set, params)


def _route_nearly_free(
    instance: CLRPInstance,
    deadline: Deadline,
    max_iterations: int | None,
    seed: int,
    initial: CLRPSolution | None,
) -> CLRPSolution | None:
    """:func:`depot_set_search` on nearly free depots: one :func:`route_on_set` (with the
    history of its budget) on the nearest depots and ``initial``'s; ``initial`` unless the run
    found a cheaper solution."""
    depots = set(nearest_depots(instance))
    if initial is not None:
        depots |= set(initial.open_depots)
    found = route_on_set(instance, sorted(depots), deadline, max_iterations, seed, initial,
                         PARAMS.polish_share, scaled_history=True)  # fmt: skip
    if initial is not None and solution_cost(instance, initial) <= solution_cost(instance, found):
        return initial
    return found


def solve_pyvrp(
    instance: CLRPInstance,
    seconds: float | Deadline | None = 1.0,
    max_iterations: int | None = None,
    seed: int = 0,
    depot_search: bool | None = None,
    initial: CLRPSolution | None = None,
) -> SolverResult:
    """Solve one instance with PyVRP.

    Args:
        instance: the CLRP instance.
        seconds: wall-clock budget in seconds from the call, or the caller's
            :class:`.stopping.Deadline` (None: iterations only).
        max_iterations: PyVRP iteration budget (None: time only). With a seed and no time
            limit the run is deterministic.
        seed: PyVRP's random seed.
        depot_search: use the outer depot-set search (:func:`depot_set_search`); None =
            whenever there are 2+ depots (the plain one-model run on all depots often stays
            with a poor depot set: see the benchmarks).
        initial: optional valid warm-start solution; returned when PyVRP finds nothing
            better.

    Returns:
        The result; status ``"no solution"`` when PyVRP found no feasible solution within the
        budget (and there is no ``initial``).

    Raises:
        ValueError: ``initial`` is not a valid solution of ``instance``, or PyVRP's result
            decodes to an invalid solution (a bug in the encoding).
    """
    if initial is not None:
        check_solution(instance, initial, "the initial solution is invalid")
    start = time.perf_counter()
    deadline = as_deadline(seconds)
    if depot_search is None:
        depot_search = instance.num_depots > 1
    if depot_search:
        sol = depot_set_search(instance, deadline, max_iterations, seed, initial=initial)
    else:
        sol = run_pyvrp(encode(instance), deadline, max_iterations, seed, initial)
    if initial is not None and solution_cost(instance, initial) <= solution_cost(instance, sol):
        sol = initial  # nothing better was found (a tie keeps the caller's solution)
    return make_result(instance, sol, solver="pyvrp", runtime=time.perf_counter() - start)
