"""The depot-set search: which depots to open, each candidate set routed by PyVRP.

:func:`search_sets` starts from the best depot set by :class:`.set_estimate.SetEstimate`,
routes it, then tries drop / swap / add moves on the set (:func:`neighbour_sets`) in increasing
order of estimate, each by a short run warm-started from the best solution (on large
instances and budgets a run on the move's region only, :mod:`.region`), and gives what is
left of the budget to the best set. :func:`.large.route_large` is the path from
:data:`.decompose.LARGE_INSTANCE` customers: one set and assignment, routed by parts. Both
take the caller's :class:`.stopping.Deadline` and route a set with the given ``route``
(:func:`.pyvrp_solver.route_on_set`, as :func:`.decompose.route_by_parts` does):
:func:`.pyvrp_solver.depot_set_search` chooses between them.
"""

from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass

from ..data import CLRPInstance, CLRPSolution
from .common import solution_cost
from .decompose import RouteOnSet
from .region import reroute_region
from .set_estimate import OutOfTime, SetEstimate
from .set_model import LearnedRanking, load_set_model
from .stopping import Budget, Deadline

logger = logging.getLogger(__name__)

#: The orders of the sets to try (:class:`SetSearchParams` ``set_ranker``).
SET_RANKERS = ("estimate", "learned")
#: The last run's seed is the search's seed plus this (candidate ``k`` runs with seed + k).
LAST_RUN_SEED = 10_007


@dataclass(frozen=True)
class SetSearchParams:
    """How :func:`search_sets` and :func:`.large.route_large` share their budget.

    Attributes:
        first_share: share of the budget (time and iterations) of the first set's run, and of
            each fallback run when it finds nothing.
        eval_share: share of the budget of each candidate set's run; at most
            ``(1 - first_share - final_share) / eval_share`` candidates run.
        final_share: share kept for the last run on the best set: candidates start only
            while ``1 - final_share`` of the time is not spent; the last run gets what is left
            of the time, and of the iterations at least this share.
        polish_share: :func:`.pyvrp_solver.route_on_set`'s trips polish in the runs that
            polish (the last one, and restricted sets below
            ``restricted_polish_customers``).
        ranking_share: largest share of a time-limited search spent ranking depot sets by
            estimate.
        restricted_polish_customers: below this many customers the search compares a set
            that the fleet restricts (:func:`fleet_restricts`) after the trips polish.
            Measured side by side (same seeds, one thread, the published test sets): clrp10
            at 0.5 s and 2 s, 2 of the first 100 instances reach the optimum 2-3% lower, none
            higher; clrp20 at 1 s -0.0004 +- 0.0010 (first 30); clrp50 at 5 s +0.0133 +-
            0.0280 (first 20, 4 higher, 1 lower) and clrp100 at 10 s +0.0561 +- 0.0884 (8
            higher, 3 lower): there the final run's polish of the best set suffices and the
            candidates' polish only takes their time.
        large_ranking_share: largest share of the budget the ranking may take from
            :data:`.decompose.LARGE_INSTANCE` customers, where its first set is the only one
            routed (no set moves follow) and the opening costs of hundreds of candidate
            depots are much of the objective.
        local_customers: from this many customers, in time-limited searches of at least
            ``local_min_seconds``, a candidate re-routes only its move's region
            (:func:`.region.reroute_region`) on ``local_share`` of the budget, and the last
            run keeps ``local_final_share`` (the routes outside the regions were routed only
            by the first run). Iteration-only and shorter searches route whole sets: there a
            region's run got too few iterations (results/schneider/set_search.md).
        large_ranking_seconds: seconds the ranking needs at :data:`.decompose.LARGE_INSTANCE`
            customers for the facility-location model to reach a good set, growing with the
            square of the customers (measured on the size rule's instances, one thread:
            about 1 s of HiGHS at 2,000 customers, 4-8 s at 5,000, 20 s at 10,000, before the
            model grouped customers above :data:`.location_model.MAX_GROUPS`; grouped, about
            5 s at 10,000).
        set_ranker: how the sets to try are ordered: ``"estimate"``
            (:class:`.set_estimate.SetEstimate`'s value) or ``"learned"``: the shipped set
            model's predicted total (:class:`.set_model.LearnedRanking`) re-orders the first
            ``learned_rerank`` of the estimate's order, of the ranked first sets and of each
            round's moves (no more than the candidates left to run).
        learned_rerank: see ``set_ranker``.
    """

    first_share: float = 0.15
    eval_share: float = 0.04
    final_share: float = 0.2
    polish_share: float = 0.1
    ranking_share: float = 0.1
    restricted_polish_customers: int = 50
    large_ranking_share: float = 0.25
    large_ranking_seconds: float = 3.0
    local_customers: int = 300
    local_share: float = 0.02
    local_final_share: float = 0.5
    local_min_seconds: float = 20.0
    set_ranker: str = "estimate"
    learned_rerank: int = 24

    def __post_init__(self) -> None:
        if self.set_ranker not in SET_RANKERS:
            raise ValueError(f"set_ranker: {self.set_ranker!r} is not one of {SET_RANKERS}")

    def by_region(self, instance: CLRPInstance, seconds: float | None) -> bool:
        """Whether a search of ``seconds`` (None: iterations only) prices by region."""
        big_enough = instance.num_customers >= self.local_customers
        return big_enough and seconds is not None and seconds >= self.local_min_seconds


#: The shares of every search that is not given its own (read at each call).
PARAMS = SetSearchParams()


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


def neighbour_sets(
    instance: CLRPInstance,
    current: tuple[int, ...],
    estimate: SetEstimate | None = None,
) -> list[tuple[int, ...]]:
    """Drop, swap and add moves on an open-depot set that keep enough total capacity.

    Swaps try the closed depots nearest to the dropped one first. With ``estimate`` the moves
    are sorted by estimated cost, most promising first, and moves whose estimate is infinite
    are left out (estimating them may raise :class:`.set_estimate.OutOfTime`).
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


class Round(enum.Enum):
    """How one round of candidates (:meth:`SetSearch.run_round`) ended."""

    IMPROVED = "a candidate beat the best solution"
    DONE = "no candidate improved, or the last one allowed has run"
    OUT_OF_TIME = "the candidates' time was spent"


class SetSearch:
    """One depot-set search (:func:`search_sets`): its budget, the sets tried, the best so far.

    Args:
        instance: the instance.
        deadline: the search's deadline (made where the call started).
        max_iterations: the search's PyVRP iterations (None: time only).
        seed: the first run's seed.
        route: routes one set (:func:`.pyvrp_solver.route_on_set`'s signature).
        params: the shares.
    """

    def __init__(
        self,
        instance: CLRPInstance,
        deadline: Deadline,
        max_iterations: int | None,
        seed: int,
        route: RouteOnSet,
        params: SetSearchParams,
    ) -> None:
        self.instance, self.route, self.params, self.seed = instance, route, params, seed
        self.deadline = deadline
        self.budget = Budget(deadline.seconds, max_iterations)
        self.by_region = params.by_region(instance, deadline.seconds)
        if self.by_region:
            self.candidate_share, self.final_share = params.local_share, params.local_final_share
        else:
            self.candidate_share, self.final_share = params.eval_share, params.final_share
        left = 1.0 - params.first_share - self.final_share  # the most candidates:
        self.max_candidates = int(left / self.candidate_share + 1e-9)
        self.candidates_end = deadline.share(1.0 - self.final_share)
        self.estimate = SetEstimate(instance)
        self.learned = None
        if params.set_ranker == "learned":
            self.learned = LearnedRanking(instance, load_set_model(), self.estimate)
        self.best: CLRPSolution | None = None
        self.tried: set[tuple[int, ...]] = set()
        self.runs = 0  # candidate runs so far

    def order(self, sets: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """``sets`` (in the estimate's order) re-ordered by the learned ranking
        (:attr:`SetSearchParams.set_ranker`); unchanged without it."""
        if self.learned is None:
            return sets
        count = min(self.params.learned_rerank, max(self.max_candidates - self.runs, 1))
        return self.learned.rerank(sets, count)

    def seconds(self, budget: Budget) -> float | None:
        """``budget``'s seconds, cut to the time left before the search's deadline."""
        seconds, left = budget.seconds, self.deadline.left()
        return seconds if seconds is None or left is None else min(seconds, left)

    def run_set(
        self, depots, budget: Budget, seed: int, warm: CLRPSolution | None, polish: bool = False
    ) -> CLRPSolution | None:
        """``route`` on ``depots`` within ``budget``, from ``warm``; with the trips polish when
        ``polish``, and for a set the fleet restricts (:func:`fleet_restricts`) below
        ``restricted_polish_customers`` customers."""
        if not polish:  # compare a set the fleet restricts on the set's best
            small = self.instance.num_customers < self.params.restricted_polish_customers
            polish = small and fleet_restricts(self.instance, depots)
        polish_share = self.params.polish_share if polish else 0.0
        return self.route(self.instance, depots, self.seconds(budget), budget.iterations, seed,
                          warm, polish_share, clock=self.deadline.clock)  # fmt: skip

    def start(self, ranked: list[tuple[int, ...]], initial: CLRPSolution | None) -> list:
        """Route the first set (``initial``'s open depots, else the best ranked one), then,
        while nothing is found, the next two ranked sets and every depot, each on
        ``first_share`` from ``initial``; sets :attr:`best` (``initial`` when cheaper). Returns
        the sets to try before the first set's moves (the best ranked set when ``initial``
        gave the first)."""
        every = tuple(range(self.instance.num_depots))
        best_ranked = ranked[0] if ranked else every
        queue, first = [], best_ranked
        if initial is not None and initial.routes:
            queue, first = [best_ranked], tuple(initial.open_depots)
        tries = [first, *(s for s in ranked[1:3] if s != first), every]
        part = self.budget.part(self.params.first_share)
        for depots in tries:  # a set too tight for PyVRP: the next one
            self.best = self.run_set(depots, part, self.seed, initial)
            if self.best is not None:
                break
        if solution_cost(self.instance, initial) < solution_cost(self.instance, self.best):
            self.best = initial
        if self.best is not None:  # the last set tried, and the one the best solution opens
            self.tried = {depots, tuple(self.best.open_depots)}
        return queue

    def try_set(self, depots: tuple[int, ...]) -> bool:
        """Route candidate ``depots`` from the best solution (seed: the search's + the
        candidate's number), its whole set or its move's region (:attr:`by_region`); whether
        it beat the best by more than 1e-9."""
        self.tried.add(depots)
        self.runs += 1
        part = self.budget.part(self.candidate_share)
        seed = self.seed + self.runs
        if self.by_region:
            seconds, clock = self.seconds(part), self.deadline.clock
            found = reroute_region(self.instance, self.best, depots, seconds, part.iterations,
                                   seed, self.route, clock=clock)  # fmt: skip
        else:
            found = self.run_set(depots, part, seed, self.best)
        if solution_cost(self.instance, found) < solution_cost(self.instance, self.best) - 1e-9:
            self.best = found
            self.tried.add(tuple(found.open_depots))
            return True
        return False

    def improve(self, queue: list[tuple[int, ...]]) -> bool:
        """First-improvement search: the untried sets of ``queue`` and the best set's moves in
        increasing order of estimate, again from each new best set, until no move improves,
        :attr:`max_candidates` have run, the moves' estimates run out of time, or the
        candidates' time is spent. Returns True only in the last case."""
        while self.runs < self.max_candidates:
            try:
                moves = neighbour_sets(self.instance, tuple(self.best.open_depots), self.estimate)
                moves = self.order(moves)
            except OutOfTime:
                return False
            outcome = self.run_round([*queue, *moves])
            queue = []
            if outcome is not Round.IMPROVED:
                return outcome is Round.OUT_OF_TIME
        return False

    def run_round(self, candidates: list[tuple[int, ...]]) -> Round:
        """Try the untried ``candidates`` in order until one improves, the candidates' time is
        spent before one starts, or the last candidate allowed has run."""
        for depots in candidates:
            if depots in self.tried:
                continue
            if self.candidates_end.expired():
                return Round.OUT_OF_TIME
            if self.try_set(depots):
                return Round.IMPROVED
            if self.runs >= self.max_candidates:
                return Round.DONE
        return Round.DONE

    def finish(self, out_of_time: bool) -> CLRPSolution:
        """The last run on the best set (seed + :data:`LAST_RUN_SEED`, with the trips polish):
        the time left, and at least ``final_share`` of the iterations, with those of the
        candidates not run (all counted as run when the candidates' time was spent)."""
        iterations = self.budget.part(self.final_share).iterations
        if iterations is not None:
            runs = self.max_candidates if out_of_time else self.runs
            used = self.budget.part(self.params.first_share).iterations
            used += runs * self.budget.part(self.candidate_share).iterations
            iterations = max(iterations, self.budget.iterations - used)
        last = Budget(self.budget.seconds, iterations)  # cut to the time left (run_set)
        found = self.run_set(self.best.open_depots, last, self.seed + LAST_RUN_SEED, self.best,
                             polish=True)  # fmt: skip
        if solution_cost(self.instance, found) < solution_cost(self.instance, self.best):
            return found
        return self.best


def search_sets(
    instance: CLRPInstance,
    deadline: Deadline,
    max_iterations: int | None,
    seed: int,
    initial: CLRPSolution | None,
    route: RouteOnSet,
    params: SetSearchParams = SetSearchParams(),
) -> CLRPSolution | None:
    """PyVRP on a well-chosen depot set, then first-improvement drop/swap/add set search.

    The sets are ranked by :class:`.set_estimate.SetEstimate` within ``ranking_share`` of the
    time. The first set is the best ranked one (or ``initial``'s open depots, with the best
    ranked set tried first in the search); its run gets ``first_share`` of the budget (time
    and iterations), each candidate set, in increasing order of estimate and warm-started from
    the best solution, ``eval_share`` (:class:`SetSearch`; from ``local_customers`` customers
    and ``local_min_seconds`` each candidate re-routes only its move's region, on
    ``local_share``, and ``local_final_share`` replaces ``final_share``). The search stops when
    no move improves, after :attr:`SetSearch.max_candidates` candidates, or once
    ``1 - final_share`` of the time is spent; a last run on the best set gets the rest
    (:meth:`SetSearch.finish`). ``initial`` (a valid solution) warm-starts the first run and is
    kept if nothing beats it. None when no set gets a feasible solution.
    """
    search = SetSearch(instance, deadline, max_iterations, seed, route, params)
    ranked = search.order(search.estimate.best_sets(deadline=deadline.share(params.ranking_share)))
    queue = search.start(ranked, initial)
    if search.best is None:
        return None
    search.estimate.stop_at(search.candidates_end)  # ranking the moves stops with the search
    out_of_time = search.improve(queue)
    search.estimate.stop_at(None)
    return search.finish(out_of_time)
