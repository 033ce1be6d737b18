"""Heuristic CLRP solver: PyVRP 0.14 on CLRP encodings (:mod:`.pyvrp_encoding`).

An outer depot-set search is used by default: alone, the one-model run on all candidate depots
(the exact *trips* encoding, whose vehicle fixed costs are the opening costs) tends to keep far
too many of them open (15-16 of 20 on clrp100, where 2-3 suffice). The search starts from the
best depot set by a cheap estimate (:class:`SetEstimate`: opening costs, ``F`` per route and the
radial part of the route lengths under a capacity-aware nearest-depot assignment), routes it,
then tries drop / swap / add moves on the set in increasing order of estimate, each by a short
PyVRP run warm-started from the best solution, and gives what is left of the budget to the best
set. Routing on a set runs in the *fleet* encoding (a multi-depot VRP whose fleet keeps each
depot within its capacity; PyVRP searches it far better than one vehicle's trips) and, at the
end, in the exact trips encoding warm-started from the fleet's result (:func:`route_on_set`),
which reaches the solutions the fleet cannot represent. When depots are nearly free
(:func:`nearly_free_depots`) the set barely matters: PyVRP routes on every depot that is some
customer's nearest (:func:`nearest_depots`) in one run.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
import warnings
from collections.abc import Callable

import numpy as np
import pyvrp
from pyvrp.exceptions import PenaltyBoundWarning
from pyvrp.IteratedLocalSearch import IteratedLocalSearchParams
from pyvrp.solve import SolveParams
from pyvrp.stop import MaxIterations, MaxRuntime, MultipleCriteria, StoppingCriterion

from .. import interrupt
from ..data import CLRPInstance, CLRPSolution
from .common import SolverResult, check_instance, check_solution, make_result
from .decompose import LARGE_INSTANCE, route_by_parts
from .location_model import facility_location_set
from .pyvrp_encoding import Encoding, decode, encode, encode_fleet, to_pyvrp

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

#: Largest share of a time-limited depot-set search spent ranking depot sets by estimate.
RANKING_SHARE = 0.1
#: Largest share of the budget the ranking may take from :data:`.decompose.LARGE_INSTANCE`
#: customers, where its first set is the only one routed (no set moves follow) and the
#: opening costs of hundreds of candidate depots are much of the objective.
LARGE_RANKING_SHARE = 0.25
#: Seconds the ranking needs at :data:`.decompose.LARGE_INSTANCE` customers for the
#: facility-location model to reach a good set, growing with the square of the customers
#: (measured on the size rule's instances, one thread: about 1 s of HiGHS at 2,000 customers,
#: 4-8 s at 5,000, 20 s at 10,000, before the model grouped customers above
#: :data:`.location_model.MAX_GROUPS`; grouped, about 5 s at 10,000).
LARGE_RANKING_SECONDS = 3.0
#: Share of the depot-set ranking's time given to the facility-location model
#: (:mod:`.location_model`); the descents on the estimate get the rest.
MODEL_SHARE = 0.7
#: Candidate depots from which the depot-set ranking solves the facility-location model
#: before its greedy drop (on 60 depots a drop from all of them takes seconds, on 600 minutes).
MODEL_FIRST_DEPOTS = 50
#: Share of :func:`route_on_set`'s budget spent in the trips encoding after the fleet one.
POLISH_SHARE = 0.1
#: Below this many customers the depot-set search compares a set that the fleet restricts
#: (:func:`fleet_restricts`) after the trips polish. Measured side by side (same seeds, one
#: thread, the published test sets): clrp10 at 0.5 s and 2 s, 2 of the first 100 instances
#: reach the optimum 2-3% lower, none higher; clrp20 at 1 s -0.0004 +- 0.0010 (first 30);
#: clrp50 at 5 s +0.0133 +- 0.0280 (first 20, 4 higher, 1 lower) and clrp100 at 10 s +0.0561
#: +- 0.0884 (8 higher, 3 lower): there the final run's polish of the best set suffices and
#: the candidates' polish only takes their time.
RESTRICTED_POLISH_CUSTOMERS = 50
#: PyVRP's iterated local search accepts a candidate that beats the current solution or the one
#: of ``history_length`` iterations ago (late-acceptance hill climbing; PyVRP's default history
#: is :data:`MAX_HISTORY`). A long history keeps the search wide for many iterations, which a
#: short run never recovers: on 600 customers, 20 s of PyVRP (about 14,000 iterations) on one
#: depot set ended 2.5% lower with a history of 10-100 than with 300, while at 60 s the three
#: were within 0.3%; on every depot of nearly free depots at 60 s, one run with it ended 1.0%,
#: 1.6% and 0.0% lower than with 300 (three instances of 400-600 customers).
#: :func:`history_length` gives a run one entry of history per this many iterations it is
#: expected to make, between :data:`MIN_HISTORY` and :data:`MAX_HISTORY`. Only the one-run
#: routing of nearly free depots uses it: in the depot-set search's many short runs it bought
#: nothing (``solve --time 60`` on 16 instances of 300-600 customers: mean change +0.04%).
ITERATIONS_PER_HISTORY = 200
MIN_HISTORY = 10
MAX_HISTORY = 300
#: Depots are *nearly free* (:func:`nearly_free_depots`) when opening every candidate depot
#: costs at most this share of a cheap estimate of a solution that may use them all. Then the
#: depot set barely changes the cost and the depot-set search is all routing noise: on 600
#: customers with opening costs 0.1-0.3 of a vehicle's cost, every one of its short candidate
#: runs "improved" (the routes were still converging). One run on every depot instead: on the
#: eight such instances of 300-600 customers of ``benchmarks.hard``, ``solve --time 60`` ended
#: 0.2-2.0% lower on every one (mean 0.7%); on the depots that are some customer's nearest
#: (:func:`nearest_depots`; half of them where customers are clustered) 0.2-1.5% lower again on
#: three of the four clustered instances. Measured shares (:func:`opening_share`): 1.1-1.7%
#: on such instances; 37-95% on the Prins instances, 58-91% on the generator's presets (preset
#: ``mixed``: 3 of 1,000 below 5%).
NEARLY_FREE_SHARE = 0.05
#: PyVRP iterations per second times the number of clients, one thread (measured 2.8e5 at
#: 100 customers, 4.2e5 at 300 and 600; more with few, uncrowded depots): the prior of a
#: time-limited run's iterations in :func:`history_length`.
CLIENT_ITERATIONS_PER_SECOND = 4e5


class _StopRequested:
    """PyVRP stopping criterion: a stop was requested (:mod:`clrp_rl4co.interrupt`, Ctrl-C);
    PyVRP then returns its best solution so far."""

    def __call__(self, best_cost: float) -> bool:  # noqa: ARG002 (PyVRP's signature)
        return interrupt.requested()


#: PyVRP prices an infeasible solution at a very large number (``CostEvaluator.cost``); a
#: best cost at least this large means no feasible solution was found yet.
INFEASIBLE_COST = 2**62


class _NoFeasibleBy:
    """PyVRP stopping criterion: ``seconds`` of wall time have passed (from its first call)
    and the best solution is still infeasible."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.start: float | None = None

    def __call__(self, best_cost: float) -> bool:
        now = time.perf_counter()
        if self.start is None:
            self.start = now
        return best_cost >= INFEASIBLE_COST and now - self.start >= self.seconds


def _stop(
    seconds: float | None, max_iterations: int | None, give_up: float | None = None
) -> StoppingCriterion:
    """The iteration and / or time budget, and a requested stop (whichever comes first); with
    ``give_up``, also :class:`_NoFeasibleBy` after that many seconds."""
    crits: list[StoppingCriterion] = []
    if give_up is not None:
        crits.append(_NoFeasibleBy(give_up))
    if max_iterations is not None:
        crits.append(MaxIterations(max(int(max_iterations), 0)))
    if seconds is not None:  # PyVRP's own name for the time budget
        crits.append(MaxRuntime(max(float(seconds), 0.0)))
    if not crits:
        raise ValueError("give seconds or max_iterations")
    return MultipleCriteria([*crits, _StopRequested()])


def history_length(num_clients: int, seconds: float | None, max_iterations: int | None) -> int:
    """The late-acceptance history of a PyVRP run on ``num_clients`` clients with a budget of
    ``seconds`` and / or ``max_iterations`` (whichever is expected to end it first): one entry
    per :data:`ITERATIONS_PER_HISTORY` expected iterations, between :data:`MIN_HISTORY` and
    :data:`MAX_HISTORY` (see there)."""
    expected = math.inf if max_iterations is None else float(max_iterations)
    if seconds is not None:
        expected = min(expected, seconds * CLIENT_ITERATIONS_PER_SECOND / max(num_clients, 1))
    return int(min(MAX_HISTORY, max(MIN_HISTORY, expected / ITERATIONS_PER_HISTORY)))


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
    """Whether opening every candidate depot costs at most :data:`NEARLY_FREE_SHARE` of a
    solution (:func:`opening_share`): then PyVRP routes on the nearest depots
    (:func:`nearest_depots`) at once, in one run
    (:func:`depot_set_search`), and ``auto`` runs PyVRP alone (:mod:`clrp_rl4co.solving`)."""
    return opening_share(instance) <= NEARLY_FREE_SHARE


def nearest_depots(instance: CLRPInstance) -> tuple[int, ...]:
    """The depots that are some customer's nearest (by arc cost), with depots added by
    :meth:`SetEstimate.fitting` until the estimate's assignment keeps every depot within its
    capacity; every depot when even that does not fit."""
    est = SetEstimate(instance)
    fitted = est.fitting(np.unique(est.dist.argmin(axis=0)))
    return tuple(range(instance.num_depots)) if fitted is None else fitted


def run_pyvrp(
    enc: Encoding,
    seconds: float | None,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    give_up: float | None = None,
    scaled_history: bool = False,
) -> CLRPSolution | None:
    """One PyVRP run on ``enc`` for ``seconds`` and / or ``max_iterations`` (with ``give_up``:
    stopped after that many seconds without a feasible solution; with ``scaled_history``, a
    late-acceptance history of :func:`history_length`, else PyVRP's default); returns the best
    feasible solution decoded, or None."""
    init = to_pyvrp(enc, initial) if initial is not None else None
    params = SolveParams()
    if scaled_history:
        history = history_length(enc.data.num_clients, seconds, max_iterations)
        params = SolveParams(ils=IteratedLocalSearchParams(history_length=history))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PenaltyBoundWarning)
        res = pyvrp.solve(
            enc.data,
            _stop(seconds, max_iterations, give_up),
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


def budget_part(
    seconds: float | None, max_iterations: int | None, share: float
) -> tuple[float | None, int | None]:
    """``share`` of a time and / or iteration budget (at least one iteration; None stays None)."""
    part_seconds = None if seconds is None else seconds * share
    iterations = None if max_iterations is None else max(1, int(max_iterations * share))
    return part_seconds, iterations


def route_on_set(
    instance: CLRPInstance,
    depots: list[int] | tuple[int, ...],
    seconds: float | None,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    polish_share: float = POLISH_SHARE,
    clock: Callable[[], float] = time.perf_counter,
    scaled_history: bool = False,
) -> CLRPSolution | None:
    """The best routes PyVRP finds on one depot set, or None if it finds no feasible ones.

    PyVRP runs in the fleet encoding for ``1 - polish_share`` of the budget (time and/or
    iterations), then in the exact trips encoding warm-started from that result for the rest
    (the time left on ``clock``). When the fleet has found nothing feasible in half its time
    (e.g. a depot set too tight for its fleet) it gives up, and the trips encoding runs
    instead for the same share, within what is left of ``seconds``. ``initial`` warm-starts
    the first run; it is not returned by itself. ``scaled_history``: see :func:`run_pyvrp`.
    """
    depots = sorted(int(d) for d in depots)

    def part(share: float) -> tuple[float | None, int | None]:
        return budget_part(seconds, max_iterations, share)

    start = clock()
    share = 1.0 - polish_share if polish_share > 0 else 1.0
    part_seconds, iterations = part(share)
    give_up = None if part_seconds is None else part_seconds / 2
    best = run_pyvrp(encode_fleet(instance, depots), part_seconds, iterations, seed, initial,
                     give_up, scaled_history=scaled_history)  # fmt: skip
    if best is None:
        if seconds is not None:
            part_seconds = max(0.0, min(part_seconds, seconds - (clock() - start)))
        return run_pyvrp(encode(instance, depots), part_seconds, iterations, seed, initial,
                         scaled_history=scaled_history)  # fmt: skip
    if polish_share <= 0:
        return best
    part_seconds, iterations = part(polish_share)
    if seconds is not None:
        part_seconds = max(0.0, seconds - (clock() - start))
    polished = run_pyvrp(encode(instance, depots), part_seconds, iterations, seed + 1, best,
                         scaled_history=scaled_history)  # fmt: skip
    return polished if _cost(instance, polished) < _cost(instance, best) else best


def fleet_restricts(instance: CLRPInstance, depots) -> bool:
    """Whether the fleet encoding on ``depots`` holds fewer vehicles of full capacity than the
    fewest routes the demand needs: ``sum_k floor(Q_k / q) < ceil(sum_j D_j / q)``.

    Then every solution of the fleet uses a depot's remainder vehicle
    (:func:`.pyvrp_encoding.fleet_sizes`), which fixes how the routes share the load, and the
    fleet's best can be well above the set's: on a tight one-depot set of ten customers (its
    capacity 170 for a demand of 155, ``q`` 70) the fleet ends at 9.29 and the trips encoding
    warm-started from it at 8.75, the optimum. The depot-set search compares such sets after
    that polish.
    """
    idx = [int(d) for d in depots]
    q = float(instance.vehicle_capacity)
    full = sum(math.floor(float(c) / q + 1e-9) for c in instance.depot_capacity[idx])
    return full < math.ceil(instance.total_demand() / q - 1e-9)


def _cost(instance: CLRPInstance, sol: CLRPSolution | None) -> float:
    return math.inf if sol is None else sol.cost(instance).total


class _OutOfTime(Exception):
    """The depot-set ranking ran out of its time."""


class SetEstimate:
    """Cheap estimate of the CLRP cost when exactly the depots of a set may be used.

    Used only to rank depot sets. Customers go to the nearest depot of the set (when that
    overloads a depot: in decreasing order of regret, to the nearest depot with room left). A
    depot serving load ``L`` with customers ``C`` adds its opening cost, ``F * ceil(L / q)``
    for its routes and ``2 * sum_{j in C} d(depot, j) * D_j / q``, the radial part of their
    length (a lower bound on it; the travel between customers barely depends on the set).
    Sets without enough total capacity cost ``inf``; a set whose greedy assignment overloads a
    depot is still priced (tight sets are often the best ones and PyVRP can often pack them).
    Values are cached per set. With a deadline (:meth:`stop_at`), estimating a set not yet
    cached after that time on ``clock`` raises :class:`_OutOfTime`.
    """

    def __init__(self, instance: CLRPInstance, clock: Callable[[], float] = time.perf_counter):
        num_depots = instance.num_depots
        self.dist = instance.depot_customer_costs()
        self.demand = np.asarray(instance.demand, np.float64)
        self.q = float(instance.vehicle_capacity)
        self.fixed = float(instance.vehicle_fixed_cost)
        self.opening = np.asarray(instance.opening_cost, np.float64)
        self.capacity = np.asarray(instance.depot_capacity, np.float64)
        self.need = float(self.demand.sum())
        self.num_depots = num_depots
        self.instance = instance
        self._cache: dict[tuple[int, ...], float] = {}
        self._fits: dict[tuple[int, ...], bool] = {}
        self._clock = clock
        self._deadline: float | None = None

    def stop_at(self, deadline: float | None) -> None:
        """Estimate no new set once ``clock()`` passes ``deadline`` (None: no deadline)."""
        self._deadline = deadline

    def __call__(self, depots) -> float:
        key = tuple(sorted(int(d) for d in depots))
        val = self._cache.get(key)
        if val is None:
            if self._deadline is not None and self._clock() > self._deadline:
                raise _OutOfTime
            val = self._cache[key] = self._evaluate(key)
        return val

    def _assign(self, dist: np.ndarray, cap: np.ndarray) -> np.ndarray:
        """Greedy by decreasing regret: nearest depot with room, else the roomiest one."""
        order = np.argsort(dist, axis=0, kind="stable")  # [K, N] depots by distance
        num_k, num_c = dist.shape
        cols = np.arange(num_c)
        if num_k > 1:
            regret = dist[order[1], cols] - dist[order[0], cols]
        else:
            regret = np.zeros(num_c)
        room = cap.copy()
        out = np.empty(num_c, dtype=np.int64)
        for j in np.argsort(-regret, kind="stable"):
            for k in order[:, j]:
                if room[k] >= self.demand[j] - 1e-9:
                    break
            else:  # a tight set: the greedy packing failed, PyVRP may still find one
                k = int(np.argmax(room))
            room[k] -= self.demand[j]
            out[j] = k
        return out

    def _near(self, dist: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each customer's depot among the rows of ``dist`` ([K, N] costs of a set's depots,
        ``cap`` [K] their capacities): the nearest, or by :meth:`_assign` when that overloads
        a depot; and the depots' loads [K]."""
        near = dist.argmin(axis=0)
        load = np.bincount(near, weights=self.demand, minlength=len(cap))
        if (load > cap + 1e-9).any():
            near = self._assign(dist, cap)
            load = np.bincount(near, weights=self.demand, minlength=len(cap))
        return near, load

    def assignment(self, depots) -> np.ndarray | None:
        """[N] the depot of each customer as the estimate assigns them to ``depots``, or None
        when that overloads a depot."""
        idx = sorted(int(d) for d in depots)
        if not idx:
            return None
        near, load = self._near(self.dist[idx], self.capacity[idx])
        if (load > self.capacity[idx] + 1e-9).any():
            return None
        return np.asarray(idx, np.int64)[near]

    def fitting(self, depots) -> tuple[int, ...] | None:
        """``depots``, with closed depots added one at a time until the estimate's assignment
        fits (:meth:`fits`): each time the one nearest (summed arc costs) to the customers
        assigned to overloaded depots. None when no depot is left to add."""
        current = sorted(int(d) for d in depots)
        while True:
            near, load = self._near(self.dist[current], self.capacity[current])
            overloaded = np.flatnonzero(load > self.capacity[current] + 1e-9)
            if not len(overloaded):
                return tuple(current)
            closed = np.setdiff1d(np.arange(self.num_depots), current)
            if not len(closed):
                return None
            stranded = np.flatnonzero(np.isin(near, overloaded))
            nearest = closed[self.dist[np.ix_(closed, stranded)].sum(axis=1).argmin()]
            current = sorted([*current, int(nearest)])

    def _evaluate(self, key: tuple[int, ...]) -> float:
        idx = list(key)
        cap = self.capacity[idx]
        self._fits[key] = False
        if not idx or cap.sum() < self.need - 1e-9:
            return math.inf
        dist = self.dist[idx]
        near, load = self._near(dist, cap)
        self._fits[key] = not (load > cap + 1e-9).any()
        cols = np.arange(dist.shape[1])
        radial = 2.0 * float((dist[near, cols] * self.demand).sum()) / self.q
        routes = float(np.ceil(load / self.q - 1e-9).sum())
        return float(self.opening[idx].sum()) + self.fixed * routes + radial

    def fits(self, depots) -> bool:
        """Whether the estimate's assignment to ``depots`` keeps every depot within its
        capacity (:meth:`assignment` is not None), known from the set's estimate."""
        key = tuple(sorted(int(d) for d in depots))
        if key not in self._fits:
            self._cache[key] = self._evaluate(key)
        return self._fits[key]

    def located_set(self) -> tuple[int, ...] | None:
        """The set of the facility-location model (:mod:`.location_model`), solved within
        ``MODEL_SHARE`` of what is left to the deadline (node-limited without one)."""
        seconds = None
        if self._deadline is not None:
            seconds = MODEL_SHARE * (self._deadline - self._clock())
            if seconds <= 0:
                return None
        return facility_location_set(self.instance, seconds)

    def moves(self, current: tuple[int, ...]) -> list[tuple[int, ...]]:
        """All drop / swap / add neighbours of ``current`` (sorted tuples)."""
        closed = [d for d in range(self.num_depots) if d not in current]
        out = [tuple(x for x in current if x != d) for d in current if len(current) > 1]
        for d in current:
            rest = [x for x in current if x != d]
            out.extend(tuple(sorted(rest + [c])) for c in closed)
        out.extend(tuple(sorted(list(current) + [c])) for c in closed)
        return out

    def best_sets(
        self, max_sets: int = 1100, starts: int = 3, max_seconds: float | None = None
    ) -> list[tuple[int, ...]]:
        """Depot sets by increasing estimate (infinite estimates left out).

        Every non-empty set when there are at most ``max_sets`` of them; else every set of
        the sizes ``1..k`` that fit into ``max_sets`` sets, plus the descents
        (best-improvement drop / swap / add) from a greedy drop started on all depots and from
        the best ``starts`` sets estimated by then, then from the facility-location model's
        set (:meth:`located_set`, in the time left; first from :data:`MODEL_FIRST_DEPOTS`
        depots). With ``max_seconds`` the ranking stops when that time is spent (on large
        instances, e.g. 60 depots and 1,000 customers, the full ranking takes tens of seconds)
        and holds the sets estimated so far.
        """
        self.stop_at(None if max_seconds is None else self._clock() + max_seconds)
        try:
            self._rank(max_sets, starts)
        except _OutOfTime:
            logger.debug("depot-set ranking stopped after %s s", max_seconds)
        finally:
            self.stop_at(None)
        sets = [s for s in self._cache if math.isfinite(self._cache[s])]
        return sorted(sets, key=lambda s: (self(s), s))

    def _rank(self, max_sets: int, starts: int) -> None:
        num_depots = self.num_depots
        if (1 << num_depots) - 1 <= max_sets:
            sets = [
                tuple(d for d in range(num_depots) if mask >> d & 1)
                for mask in range(1, 1 << num_depots)
            ]
            for s in sets:
                self(s)
        else:
            count, size = 0, 1
            while size <= num_depots and count + math.comb(num_depots, size) <= max_sets:
                for s in itertools.combinations(range(num_depots), size):
                    self(s)
                count += math.comb(num_depots, size)
                size += 1
            if num_depots >= MODEL_FIRST_DEPOTS:  # the drop alone would take longer
                self._descend_from_model()
            current = tuple(range(num_depots))
            while len(current) > 1:  # greedy drop
                cand = min((tuple(x for x in current if x != d) for d in current), key=self)
                if self(cand) >= self(current) - 1e-12:
                    break
                current = cand
            starts_at = sorted(self._cache, key=lambda s: (self(s), s))[:starts]
            for seed_set in [current, *starts_at]:
                self._descend(seed_set)
            if num_depots < MODEL_FIRST_DEPOTS:  # after the cheap descents: what time is left
                self._descend_from_model()

    def _descend_from_model(self) -> None:
        """The descent from the facility-location model's set (none when it has none)."""
        located = self.located_set()
        if located:
            if located not in self._cache:  # ranked even when the model took the time left
                self._cache[located] = self._evaluate(located)
            self._descend(located)

    def _descend(self, current: tuple[int, ...]) -> None:
        """Best-improvement descent on all moves from ``current`` (none from a set whose
        estimate is infinite)."""
        while math.isfinite(self(current)):
            cand = min(self.moves(current), key=lambda s: (self(s), s))
            if self(cand) >= self(current) - 1e-12:
                break
            current = cand


def _neighbour_sets(
    instance: CLRPInstance,
    current: tuple[int, ...],
    estimate: SetEstimate | None = None,
) -> list[tuple[int, ...]]:
    """Drop, swap and add moves on an open-depot set that keep enough total capacity.

    With ``estimate`` the moves are sorted by estimated cost, most promising first, and moves
    whose estimate is infinite are left out.
    """
    cap = instance.depot_capacity
    need = instance.total_demand()
    closed = [d for d in range(instance.num_depots) if d not in current]
    xy = instance.depot_locs
    out: list[tuple[int, ...]] = []
    for d in current:
        rest = tuple(x for x in current if x != d)
        if rest and cap[list(rest)].sum() >= need:
            out.append(rest)
    for d in current:
        rest = [x for x in current if x != d]
        for c in sorted(closed, key=lambda c, d=d: float(((xy[c] - xy[d]) ** 2).sum())):
            cand = tuple(sorted(rest + [c]))
            if cap[list(cand)].sum() >= need:
                out.append(cand)
    for c in closed:
        out.append(tuple(sorted(list(current) + [c])))
    if estimate is not None:
        out = [s for s in out if math.isfinite(estimate(s))]
        out.sort(key=estimate)  # stable: ties keep the drop / swap / add order
    return out


def depot_set_search(
    instance: CLRPInstance,
    seconds: float | None,
    max_iterations: int | None = None,
    seed: int = 0,
    first_share: float = 0.15,
    eval_share: float = 0.04,
    final_share: float = 0.2,
    initial: CLRPSolution | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> CLRPSolution | None:
    """PyVRP on a well-chosen depot set, then first-improvement drop/swap/add set search.

    The first set is the best one by :class:`SetEstimate` (or ``initial``'s open depots, with
    the estimate's best set tried first in the search). Its run gets ``first_share`` of the
    budget (time and/or iterations), each candidate set, in increasing order of estimate and
    warm-started from the best solution, ``eval_share``. The search stops when no move
    improves, after ``(1 - first_share - final_share) / eval_share`` candidates, or once
    ``1 - final_share`` of the time is spent (on ``clock``); a last run on the best set gets the
    rest: what is left of the time, and of the iterations at least ``final_share`` (the
    iterations of the candidates not run included). ``initial`` (a valid solution)
    warm-starts the first run and is kept if nothing beats it.

    When depots are nearly free (:func:`nearly_free_depots`) there is no set search: one
    :func:`route_on_set` on the depots that are some customer's nearest
    (:func:`nearest_depots`) and those of ``initial`` gets the whole budget (PyVRP leaves unused
    depots closed, and the trips encoding it ends with prices their opening costs).
    """

    if instance.num_customers >= LARGE_INSTANCE:
        return _search_large(instance, seconds, max_iterations, seed, initial, clock)
    if nearly_free_depots(instance):
        depots = set(nearest_depots(instance))
        if initial is not None:
            depots |= set(initial.open_depots)
        found = route_on_set(instance, sorted(depots), seconds, max_iterations, seed, initial,
                             POLISH_SHARE, clock=clock, scaled_history=True)  # fmt: skip
        return initial if _cost(instance, initial) <= _cost(instance, found) else found

    def part(share: float) -> tuple[float | None, int | None]:
        return budget_part(seconds, max_iterations, share)

    def route(depots, part_seconds, iterations, seed_k, warm, polish_share=0.0):
        if (
            not polish_share
            and instance.num_customers < RESTRICTED_POLISH_CUSTOMERS
            and fleet_restricts(instance, depots)
        ):  # compare on the set's best
            polish_share = POLISH_SHARE
        return route_on_set(instance, depots, part_seconds, iterations, seed_k, warm,
                            polish_share, clock=clock)  # fmt: skip

    start = clock()
    search_end = None if seconds is None else start + seconds * (1.0 - final_share)
    est = SetEstimate(instance, clock=clock)
    ranked = est.best_sets(max_seconds=None if seconds is None else RANKING_SHARE * seconds)
    queue: list[tuple[int, ...]] = []
    first = ranked[0] if ranked else tuple(range(instance.num_depots))
    if initial is not None and initial.routes:
        queue.append(first)
        first = tuple(initial.open_depots)
    part_seconds, iterations = part(first_share)
    best = route(first, part_seconds, iterations, seed, initial)
    for cand in [s for s in ranked[1:3] if s != first] if best is None else []:
        first = cand  # too tight for PyVRP: try the next sets, then all depots
        best = route(first, part_seconds, iterations, seed, initial)
        if best is not None:
            break
    if best is None:
        first = tuple(range(instance.num_depots))
        best = route(first, part_seconds, iterations, seed, initial)
    if initial is not None and _cost(instance, initial) < _cost(instance, best):
        best = initial
    best_cost = _cost(instance, best)
    if best is None:
        return None
    max_evals = int((1.0 - first_share - final_share) / eval_share + 1e-9)
    evals = 0
    tried: set[tuple[int, ...]] = {first, tuple(best.open_depots)}
    improved = True
    est.stop_at(search_end)  # ranking the neighbours stops with the search's time
    while improved and evals < max_evals:
        improved = False
        try:
            cands = queue + _neighbour_sets(instance, tuple(best.open_depots), est)
        except _OutOfTime:
            break
        queue = []
        for cand in cands:
            if cand in tried:
                continue
            if search_end is not None and clock() > search_end:
                evals = max_evals
                break
            tried.add(cand)
            evals += 1
            part_seconds, iterations = part(eval_share)
            sol = route(cand, part_seconds, iterations, seed + evals, best)
            c = _cost(instance, sol)
            if c < best_cost - 1e-9:
                best, best_cost, improved = sol, c, True
                tried.add(tuple(best.open_depots))
                break
            if evals >= max_evals:
                break
    est.stop_at(None)
    part_seconds, iterations = part(final_share)
    if seconds is not None:
        part_seconds = max(0.0, seconds - (clock() - start))
    if iterations is not None:  # the iterations the search left unused go to the last run too
        used = part(first_share)[1] + evals * part(eval_share)[1]
        iterations = max(iterations, max_iterations - used)
    sol = route(best.open_depots, part_seconds, iterations, seed + 10_007, best, POLISH_SHARE)
    if _cost(instance, sol) < best_cost:
        best = sol
    return best


def large_ranking_seconds(instance: CLRPInstance, seconds: float) -> float:
    """The depot-set ranking's time on a large instance within ``seconds``: what the model
    needs (:data:`LARGE_RANKING_SECONDS` x (N / :data:`.decompose.LARGE_INSTANCE`)^2), at least
    :data:`RANKING_SHARE` and at most :data:`LARGE_RANKING_SHARE` of ``seconds``."""
    need = LARGE_RANKING_SECONDS * (instance.num_customers / LARGE_INSTANCE) ** 2
    return max(RANKING_SHARE * seconds, min(LARGE_RANKING_SHARE * seconds, need))


def _search_large(
    instance: CLRPInstance,
    seconds: float | None,
    max_iterations: int | None,
    seed: int,
    initial: CLRPSolution | None,
    clock: Callable[[], float],
) -> CLRPSolution | None:
    """:func:`depot_set_search` from :data:`.decompose.LARGE_INSTANCE` customers: one depot
    set and assignment (``initial``'s, else the first ranked set whose estimate's assignment
    fits the capacities), routed by parts (:func:`.decompose.route_by_parts`)."""
    start = clock()
    est = SetEstimate(instance, clock=clock)
    if initial is not None and initial.routes:
        assignment = np.empty(instance.num_customers, np.int64)
        for r in initial.routes:
            assignment[list(r.customers)] = r.depot
    else:
        ranked = est.best_sets(
            max_seconds=None if seconds is None else large_ranking_seconds(instance, seconds)
        )
        # the best ranked sets often overload the estimate's greedy assignment (the model and
        # the descents fill depots to their capacities): the cheaper of the first ranked set
        # that fits and the best one made to fit, else every depot
        first_fit = next((s for s in ranked if est.fits(s)), None)
        made_to_fit = est.fitting(ranked[0]) if ranked else None
        fitting = [s for s in (first_fit, made_to_fit) if s is not None]
        tries = [*sorted(fitting, key=est), tuple(range(instance.num_depots))]
        assignment = next((a for a in map(est.assignment, tries) if a is not None), None)
        if assignment is None:
            logger.info("%s: no depot set whose assignment fits; PyVRP on every depot",
                        instance.name)  # fmt: skip
            left = _left(seconds, start, clock)
            return route_on_set(instance, range(instance.num_depots), left, max_iterations, seed,
                                clock=clock)  # fmt: skip
    found = route_by_parts(instance, assignment, _left(seconds, start, clock), route_on_set,
                           max_iterations, seed, initial, clock=clock)  # fmt: skip
    if initial is not None and _cost(instance, initial) <= _cost(instance, found):
        return initial
    return found


def _left(seconds: float | None, start: float, clock: Callable[[], float]) -> float | None:
    return None if seconds is None else max(0.0, seconds - (clock() - start))


def solve_pyvrp(
    instance: CLRPInstance,
    seconds: float | None = 1.0,
    max_iterations: int | None = None,
    seed: int = 0,
    depot_search: bool | None = None,
    initial: CLRPSolution | None = None,
) -> SolverResult:
    """Solve one instance with PyVRP.

    Args:
        instance: the CLRP instance.
        seconds: wall-clock budget (None: iterations only).
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
        ValueError: ``instance`` is obviously infeasible (:func:`.common.check_instance`),
            ``initial`` is not a valid solution of it, or PyVRP's result decodes to an invalid
            solution (a bug in the encoding).
    """
    check_instance(instance)
    if initial is not None:
        check_solution(instance, initial, "the initial solution is invalid")
    start = time.perf_counter()
    if depot_search is None:
        depot_search = instance.num_depots > 1
    if depot_search:
        sol = depot_set_search(instance, seconds, max_iterations, seed, initial=initial)
    else:
        sol = run_pyvrp(encode(instance), seconds, max_iterations, seed, initial)
    if initial is not None and _cost(instance, initial) < _cost(instance, sol):
        sol = initial
    return make_result(instance, sol, solver="pyvrp", runtime=time.perf_counter() - start)
