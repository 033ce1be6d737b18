"""Hybrid solver: learned starts from a policy, then PyVRP refinement, within one time budget.

:func:`solve_hybrid` makes one :class:`.stopping.Deadline` where it starts and shares it out:

1. :func:`clrp_rl4co.search.learned_starts.learned_starts` decodes the policy for at most
   ``start_share`` of the budget (its first unit up to :attr:`HybridParams.first_unit_share`)
   and keeps ``starts`` diverse solutions (distinct open-depot sets first; the decode plan, the
   rollout pool and the choice of starts live in :mod:`clrp_rl4co.search`); with
   ``recombine_share``, :func:`.recombine.recombine` then combines the routes of the best
   rollouts for at most that share of the budget; when that beats the best start it becomes
   the first start (replacing a start with its depot set, else the last one);
2. each start is refined (:func:`.refine.refine_solution`, location and routing) for an equal
   part of ``explore_share`` of the time left; with ``classical`` one more part goes to PyVRP
   alone (:func:`.pyvrp_solver.solve_pyvrp`, from the cost estimate's best depot set), so a
   poor learned depot set cannot hold the search (only when there are several candidates);
   from :data:`.decompose.LARGE_INSTANCE` customers (routed by parts, a start's depots and
   assignment stay fixed) the decoding, its first unit included, gets at most
   :attr:`HybridParams.large_start_share` of the budget and PyVRP alone all of
   ``explore_share``;
3. the best solution so far (:class:`.incumbent.Incumbent`) is refined for the rest of the
   budget; from :attr:`HybridParams.final_routing_customers` customers (below
   :data:`.decompose.LARGE_INSTANCE`) it is routed on its own depot set instead
   (:func:`.pyvrp_solver.route_on_set`, with the late-acceptance history of that budget).

The result is never worse than the best learned start. With no policy, or when not even one
greedy rollout fits in the decode budget, it is PyVRP alone over the whole budget.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from ..data import CLRPInstance, CLRPSolution
from ..search.learned_starts import LearnedStarts, learned_starts
from .common import SolverResult, make_result
from .decompose import LARGE_INSTANCE
from .incumbent import Incumbent
from .progress import ProgressBar
from .pyvrp_solver import route_on_set, solve_pyvrp
from .recombine import recombine
from .refine import refine_solution
from .stopping import Deadline

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HybridParams:
    """How :func:`solve_hybrid` shares its budget.

    Attributes:
        first_unit_share: largest share of the budget the first decode unit (x8, or one
            greedy rollout on large instances) may take: on 1,000 customers one greedy rollout
            is far better than what PyVRP finds in the seconds it costs.
        large_start_share: largest decode share from :data:`.decompose.LARGE_INSTANCE`
            customers, where PyVRP by parts beats the learned starts at 2,000 and 5,000
            customers (results/budgets/).
        final_routing_customers: from this many customers (below
            :data:`.decompose.LARGE_INSTANCE`) the last phase routes the best solution's own
            depot set (one :func:`.pyvrp_solver.route_on_set` with the history of its budget)
            instead of searching depot sets again: the explore phase has searched them, and on
            600 customers the last search's candidate runs (0.8 s, about 500 PyVRP iterations)
            were all worse than the set they left. On the eight ``hetero`` instances of 300-600
            customers of ``benchmarks.hard`` at 60 s it ended lower on seven (mean -0.44%, side
            by side with the set search).
        end_margin: seconds kept free at the end of the budget for pricing and returning the
            result.
        end_share: share of the budget first assumed as a refinement's overrun (PyVRP's set-up
            and the decoding of its result come on top of its own time limit); then the
            largest overrun seen.
    """

    first_unit_share: float = 0.5
    large_start_share: float = 0.1
    final_routing_customers: int = 300
    end_margin: float = 0.05
    end_share: float = 0.02


#: The hybrid's parameters.
PARAMS = HybridParams()


def solver_budget(seconds: float) -> float:
    """The time limit to give a classical solver so that it returns within ``seconds`` of wall
    time: less :attr:`HybridParams.end_share` and :attr:`HybridParams.end_margin` (at least
    1 ms)."""
    return max(seconds * (1.0 - PARAMS.end_share) - PARAMS.end_margin, 1e-3)


def solver_deadline(deadline: Deadline) -> Deadline:
    """The share of ``deadline`` to give a classical solver so that it returns by it: a
    deadline :func:`solver_budget` of the time left from now, on the same clock."""
    return Deadline(solver_budget(deadline.left()), deadline.clock)


@dataclass
class HybridResult(SolverResult):
    """A :class:`.common.SolverResult` of :func:`solve_hybrid` with its learned part.

    Attributes:
        start_objective: the best learned start's cost (None when no decode fitted the budget).
        starts: how many learned starts were refined.
        decode: what was decoded (see
            :attr:`clrp_rl4co.search.learned_starts.LearnedStarts.decode`).
        decode_seconds: wall time of the decoding.
    """

    start_objective: float | None = None
    starts: int = 0
    decode: str = "none"
    decode_seconds: float = 0.0


def _refine(instance: CLRPInstance, solution: CLRPSolution, seed: int, seconds: float):
    return refine_solution(instance, solution, seconds=seconds, seed=seed)


def _pyvrp_alone(instance: CLRPInstance, seed: int, seconds: float) -> CLRPSolution | None:
    return solve_pyvrp(instance, seconds=seconds, seed=seed).solution


def _route_best(best: Incumbent, seed: int, seconds: float) -> CLRPSolution | None:
    """The incumbent's depot set routed anew, warm-started from it."""
    return route_on_set(best.instance, best.solution.open_depots, seconds, seed=seed,
                        initial=best.solution, scaled_history=True)  # fmt: skip


def _recombine_starts(instance: CLRPInstance, found: LearnedStarts, seconds: float) -> None:
    """Recombine the routes of ``found.rollouts`` (:func:`.recombine.recombine`, HiGHS for at
    most ``seconds``); a better solution becomes the first start of ``found`` (in place): it
    replaces the start with its open-depot set, else the last one, and ``+recombined`` is
    added to ``found.decode``."""
    combined = recombine(instance, found.rollouts, seconds=seconds)
    if combined.cost(instance).total >= found.objectives[0]:
        return
    same = [s for s in found.solutions if s.open_depots == combined.open_depots]
    others = [s for s in found.solutions if s.open_depots != combined.open_depots]
    kept = others + same[1:]  # one start with the combination's depot set gives way
    kept.sort(key=lambda s: s.cost(instance).total)
    found.solutions = [combined, *kept[: len(found.solutions) - 1]]
    found.objectives = [s.cost(instance).total for s in found.solutions]
    found.decode += "+recombined"


def _decode(instance: CLRPInstance, policy: torch.nn.Module | None, seconds: float, seed: int,
            starts: int, start_share: float, sgbs: bool | None, bar: ProgressBar,
            clock: Callable[[], float]) -> LearnedStarts:  # fmt: skip
    """Step 1: the learned starts (none without a policy or a decode share)."""
    first_share = max(start_share, PARAMS.first_unit_share)
    if instance.num_customers >= LARGE_INSTANCE:
        # the first unit too: one greedy rollout of 5,000 customers took about 20 s and 4.5 GB
        start_share = first_share = min(start_share, PARAMS.large_start_share)
    if policy is None or start_share <= 0:
        return LearnedStarts()
    return learned_starts(instance, policy, seconds * start_share, seed, starts, sgbs,
                          on_unit=bar.update, first_seconds=seconds * first_share,
                          clock=clock)  # fmt: skip


def _explore(best: Incumbent, found: LearnedStarts, seed: int, explore_share: float,
             classical: bool, bar: ProgressBar) -> int:  # fmt: skip
    """Step 2: every start refined and PyVRP alone, on equal parts of ``explore_share`` of the
    time left. Returns the number of candidates (the last run's seed offset)."""
    instance, left = best.instance, best.deadline.left()
    candidates = len(found.solutions) + (1 if classical else 0)
    alone = partial(_pyvrp_alone, instance, seed + len(found.solutions))
    if instance.num_customers >= LARGE_INSTANCE and classical and left > 0:
        # refining a start by parts keeps its depots and assignment: PyVRP alone (the
        # estimate's set) first, then the better of it and the best start goes on
        best.attempt(alone, left * explore_share)
        bar.update("pyvrp alone")
    elif candidates > 1 and left > 0:
        each = left * explore_share / candidates
        for k, solution in enumerate(found.solutions):
            best.attempt(partial(_refine, instance, solution, seed + k), each)
            bar.update(f"refine start {k + 1}")
        if classical:
            best.attempt(alone, each)
            bar.update("pyvrp alone")
    return candidates


def _finish(best: Incumbent, seed: int) -> None:
    """Step 3: the incumbent refined (or routed on its own depot set) for the time left."""
    if PARAMS.final_routing_customers <= best.instance.num_customers < LARGE_INSTANCE:
        best.attempt(partial(_route_best, best, seed), math.inf)
    else:
        best.attempt(partial(_refine, best.instance, best.solution, seed), math.inf)


def _check_arguments(seconds: float, starts: int, **shares) -> None:
    if not seconds > 0:
        raise ValueError(f"seconds: must be positive, got {seconds}")
    if starts < 1:
        raise ValueError(f"starts: must be >= 1, got {starts}")
    for name, share in shares.items():
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name}: must be in [0, 1], got {share}")


def solve_hybrid(
    instance: CLRPInstance,
    policy: torch.nn.Module | None,
    seconds: float | Deadline = 10.0,
    seed: int = 0,
    starts: int = 3,
    start_share: float = 0.3,
    explore_share: float = 0.5,
    sgbs: bool | None = None,
    progress: bool = False,
    classical: bool = True,
    recombine_share: float = 0.0,
    clock: Callable[[], float] = time.perf_counter,
) -> HybridResult:
    """Solve one instance: learned starts, then PyVRP refinement, in ``seconds`` of wall time
    (the steps and their shares: :mod:`clrp_rl4co.solvers.hybrid`).

    The result is never worse than the best learned start. With no policy, or when not even
    one greedy rollout fits in the decode budget, it is PyVRP alone
    (:func:`.pyvrp_solver.solve_pyvrp`) over the whole budget (``decode == "none"``).

    Args:
        instance: the CLRP instance.
        policy: a CLRP policy in eval mode, or None.
        seconds: the wall-time budget in seconds from the call (decoding included), or the
            caller's :class:`.stopping.Deadline` (then ``clock`` is its own; at least 1 ms is
            used when it has passed).
        seed: PyVRP's seed (start ``i`` is refined with ``seed + i``) and the order of the
            start customers of large instances; a run is reproducible up to timing.
        starts: learned starts to refine.
        start_share: largest share of the budget spent decoding.
        explore_share: share of the time left after decoding spent refining every start.
        sgbs: see :func:`clrp_rl4co.search.learned_starts.learned_starts`.
        progress: show a tqdm bar over the budget.
        classical: add PyVRP alone as one more candidate of step 2 (its seed: ``seed +
            starts``).
        recombine_share: largest share of the budget spent recombining the rollouts' routes
            (0: none).
        clock: the wall clock (seconds) the budget is measured on.

    Returns:
        A :class:`HybridResult` (solver ``"hybrid"``); its ``objective`` is in the instance's
        units and ``start_objective`` is the best learned start's.

    Raises:
        ValueError: a non-positive ``seconds`` / ``starts`` or a share outside [0, 1].
    """
    given = seconds if isinstance(seconds, Deadline) else None
    if given is not None:
        seconds, clock = max(given.left(), 1e-3), given.clock
    _check_arguments(seconds, starts, start_share=start_share, explore_share=explore_share,
                     recombine_share=recombine_share)  # fmt: skip
    begin = clock()
    given = given or Deadline(seconds, clock, start=begin)
    deadline = given.before(PARAMS.end_margin)  # every run returns by then
    bar = ProgressBar(progress, seconds, instance.name, clock)
    try:
        found = _decode(instance, policy, seconds, seed, starts, start_share, sgbs, bar, clock)
        if not found.solutions:
            logger.info("%s: no learned start fits in the budget; PyVRP alone", instance.name)
            budget = solver_budget(deadline.left() + PARAMS.end_margin)
            res = solve_pyvrp(instance, seconds=budget, seed=seed)
            bar.update("pyvrp")
            return HybridResult(**{**res.__dict__, "solver": "hybrid", "runtime": clock() - begin})
        if recombine_share > 0 and len(found.rollouts) > 1:
            recombine_seconds = min(recombine_share * seconds, deadline.left())
            if recombine_seconds > 0:
                _recombine_starts(instance, found, recombine_seconds)
                bar.update("recombine")
        best = Incumbent(instance, found.solutions[0], found.objectives[0], deadline,
                         PARAMS.end_share * seconds)  # fmt: skip
        _finish(best, seed + _explore(best, found, seed, explore_share, classical, bar))
        bar.update("done")
        res = make_result(instance, best.solution, solver="hybrid", runtime=clock() - begin)
        return HybridResult(**res.__dict__, start_objective=found.objectives[0],
                            starts=len(found.solutions), decode=found.decode,
                            decode_seconds=found.seconds)  # fmt: skip
    finally:
        bar.close()
