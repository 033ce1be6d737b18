"""A cheap estimate of the CLRP cost of a depot set, and the ranking of depot sets by it.

:class:`SetEstimate` prices a set (opening costs, ``F`` per route and the radial part of the
route lengths under a capacity-aware nearest-depot assignment) and ranks sets
(:meth:`SetEstimate.best_sets`: enumeration of the small sets, a greedy drop, descents and the
facility-location model of :mod:`.location_model`) within a :class:`.stopping.Deadline`. The
depot-set search (:mod:`.set_search`) routes the sets it ranks first.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass

import numpy as np

from ..data import CLRPInstance
from .location_model import facility_location_set
from .stopping import Deadline

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RankingParams:
    """How :meth:`SetEstimate.best_sets` ranks depot sets.

    Attributes:
        max_sets: at most this many sets are enumerated (every set of the sizes ``1..k``
            that fit into it together).
        starts: descents start from this many of the best sets estimated after the greedy
            drop (besides the drop's own end).
        model_share: share of the ranking's time left given to the facility-location model
            (:mod:`.location_model`); the descents on the estimate get the rest.
        model_first_depots: from this many candidate depots the facility-location model is
            solved before the greedy drop (on 60 depots a drop from all of them takes
            seconds, on 600 minutes), below it after the descents, in the time left. 15, not
            50: on 25-30 heterogeneous depots (Schneider & Löffler's kind e, 500-600
            customers) the drop ran out of the ranking's time at 10 s before the model ran,
            and every set kept 19-23 depots open; side by side on the 44 development files at
            10 s (``benchmarks/schneider.py --model-first-depots 15``) kind e at 300-600
            customers went from 7.06% to 2.98% above the best-known values (lower on 11 of
            14), kind c unchanged; on the presets at 10 s, paired (``benchmarks/
            set_ranking.py``), clrp100 +0.057 +- 0.136 (2 lower, 9 equal, 4 higher of 15),
            clrp500 -0.19 +- 2.98 (4 / 1 / 3 of 8): within noise (results/schneider/).
    """

    max_sets: int = 1100
    starts: int = 3
    model_share: float = 0.7
    model_first_depots: int = 15


#: The ranking's parameters (a benchmark may replace them, e.g. ``benchmarks/schneider.py
#: --model-first-depots``).
PARAMS = RankingParams()


class OutOfTime(Exception):
    """The depot-set ranking ran out of its time (:meth:`SetEstimate.stop_at`)."""


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
    cached once it has passed raises :class:`OutOfTime`.
    """

    def __init__(self, instance: CLRPInstance, params: RankingParams | None = None) -> None:
        self.dist = instance.depot_customer_costs()
        self.demand = np.asarray(instance.demand, np.float64)
        self.q = float(instance.vehicle_capacity)
        self.fixed = float(instance.vehicle_fixed_cost)
        self.opening = np.asarray(instance.opening_cost, np.float64)
        self.capacity = np.asarray(instance.depot_capacity, np.float64)
        self.need = float(self.demand.sum())
        self.num_depots = instance.num_depots
        self.instance = instance
        self.params = PARAMS if params is None else params
        self._cache: dict[tuple[int, ...], float] = {}
        self._fits: dict[tuple[int, ...], bool] = {}
        self._deadline: Deadline | None = None

    def stop_at(self, deadline: Deadline | None) -> None:
        """Estimate no new set once ``deadline`` has passed (None: no deadline)."""
        self._deadline = deadline

    def __call__(self, depots) -> float:
        key = tuple(sorted(int(d) for d in depots))
        val = self._cache.get(key)
        if val is None:
            if self._deadline is not None and self._deadline.expired():
                raise OutOfTime
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

    def greedy_assignment(self, depots) -> tuple[np.ndarray, bool]:
        """The estimate's assignment to ``depots`` even when it overloads a depot: ``[N]`` the
        depot of each customer (depot indices of the instance) and whether every depot of the
        set stays within its capacity (what :meth:`assignment` returns None for)."""
        idx = sorted(int(d) for d in depots)
        if not idx:
            raise ValueError("depots: need at least one depot")
        near, load = self._near(self.dist[idx], self.capacity[idx])
        fits = not (load > self.capacity[idx] + 1e-9).any()
        return np.asarray(idx, np.int64)[near], fits

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
        :attr:`RankingParams.model_share` of the time left to the deadline (node-limited
        without one; not solved, None, when no time is left)."""
        left = None if self._deadline is None else self._deadline.left()
        seconds = None if left is None else self.params.model_share * left
        if seconds is not None and seconds <= 0:
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
        self,
        max_sets: int | None = None,
        starts: int | None = None,
        deadline: Deadline | None = None,
    ) -> list[tuple[int, ...]]:
        """Depot sets by increasing estimate (infinite estimates left out).

        Every non-empty set when there are at most ``max_sets`` of them; else every set of
        the sizes ``1..k`` that fit into ``max_sets`` sets, plus the descents
        (best-improvement drop / swap / add) from a greedy drop started on all depots and from
        the best ``starts`` sets estimated by then, then from the facility-location model's
        set (:meth:`located_set`, in the time left; first from
        :attr:`RankingParams.model_first_depots` depots). ``max_sets`` and ``starts`` default
        to :attr:`params`'. With ``deadline`` the ranking stops when it passes (on large
        instances, e.g. 60 depots and 1,000 customers, the full ranking takes tens of
        seconds) and holds the sets estimated so far.
        """
        max_sets = self.params.max_sets if max_sets is None else max_sets
        starts = self.params.starts if starts is None else starts
        self.stop_at(deadline)
        try:
            self._rank(max_sets, starts)
        except OutOfTime:
            logger.debug("depot-set ranking stopped after %s s", deadline.seconds)
        finally:
            self.stop_at(None)
        sets = [s for s in self._cache if math.isfinite(self._cache[s])]
        return sorted(sets, key=lambda s: (self(s), s))

    def _rank(self, max_sets: int, starts: int) -> None:
        num_depots = self.num_depots
        if (1 << num_depots) - 1 <= max_sets:
            for mask in range(1, 1 << num_depots):
                self(tuple(d for d in range(num_depots) if mask >> d & 1))
            return
        count, size = 0, 1
        while size <= num_depots and count + math.comb(num_depots, size) <= max_sets:
            for s in itertools.combinations(range(num_depots), size):
                self(s)
            count += math.comb(num_depots, size)
            size += 1
        model_first = num_depots >= self.params.model_first_depots
        if model_first:  # the drop alone would take longer
            self._descend_from_model()
        current = self._greedy_drop()
        starts_at = sorted(self._cache, key=lambda s: (self(s), s))[:starts]
        for seed_set in [current, *starts_at]:
            self._descend(seed_set)
        if not model_first:  # after the cheap descents: what time is left
            self._descend_from_model()

    def _greedy_drop(self) -> tuple[int, ...]:
        """From all depots, drop the depot whose drop is cheapest while that improves the
        estimate; returns the set it ends at."""
        current = tuple(range(self.num_depots))
        while len(current) > 1:
            cand = min((tuple(x for x in current if x != d) for d in current), key=self)
            if self(cand) >= self(current) - 1e-12:
                break
            current = cand
        return current

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
