"""The depot-set search's path from :data:`.decompose.LARGE_INSTANCE` customers: one depot set
and assignment (the facility-location ranking's, :func:`large_assignment`), routed by parts
(:func:`.decompose.route_by_parts`) in the time left (:func:`route_large`). Its shares are
:class:`.set_search.SetSearchParams`' ``large_*`` fields.
"""

from __future__ import annotations

import logging

import numpy as np

from ..data import CLRPInstance, CLRPSolution
from .common import solution_cost
from .decompose import LARGE_INSTANCE, RouteOnSet, route_by_parts
from .set_estimate import SetEstimate
from .set_search import SetSearchParams
from .stopping import Deadline

logger = logging.getLogger(__name__)


def large_ranking_seconds(
    instance: CLRPInstance, seconds: float, params: SetSearchParams = SetSearchParams()
) -> float:
    """The depot-set ranking's time on a large instance within ``seconds``: what the model
    needs (``large_ranking_seconds`` x (N / :data:`.decompose.LARGE_INSTANCE`)^2), at least
    ``ranking_share`` and at most ``large_ranking_share`` of ``seconds``."""
    need = params.large_ranking_seconds * (instance.num_customers / LARGE_INSTANCE) ** 2
    return max(params.ranking_share * seconds, min(params.large_ranking_share * seconds, need))


def large_assignment(
    instance: CLRPInstance, deadline: Deadline, params: SetSearchParams
) -> np.ndarray | None:
    """[N] the depot of each customer for the large path: of the first ranked set whose
    estimate's assignment fits the capacities and the best ranked set made to fit
    (:meth:`.set_estimate.SetEstimate.fitting`), the cheaper one, else every depot; None when
    none fits. The ranking gets :func:`large_ranking_seconds` of the time left."""
    est = SetEstimate(instance)
    left, ranking = deadline.left(), None
    if left is not None:
        ranking = Deadline(large_ranking_seconds(instance, left, params), deadline.clock)
    ranked = est.best_sets(deadline=ranking)
    # the best ranked sets often overload the estimate's greedy assignment (the model and
    # the descents fill depots to their capacities)
    first_fit = next((s for s in ranked if est.fits(s)), None)
    made_to_fit = est.fitting(ranked[0]) if ranked else None
    fitting = [s for s in (first_fit, made_to_fit) if s is not None]
    tries = [*sorted(fitting, key=est), tuple(range(instance.num_depots))]
    return next((a for a in map(est.assignment, tries) if a is not None), None)


def route_large(
    instance: CLRPInstance,
    deadline: Deadline,
    max_iterations: int | None,
    seed: int,
    initial: CLRPSolution | None,
    route: RouteOnSet,
    params: SetSearchParams = SetSearchParams(),
) -> CLRPSolution | None:
    """The search from :data:`.decompose.LARGE_INSTANCE` customers: one depot set and
    assignment (``initial``'s, else :func:`large_assignment`), routed by parts
    (:func:`.decompose.route_by_parts` with ``route``) in the time left; ``initial`` when the
    parts cost as much or more. Without a fitting assignment, ``route`` on every depot."""
    if initial is not None and initial.routes:
        assignment = np.empty(instance.num_customers, np.int64)
        for r in initial.routes:
            assignment[list(r.customers)] = r.depot
    else:
        assignment = large_assignment(instance, deadline, params)
        if assignment is None:
            logger.info("%s: no depot set whose assignment fits; PyVRP on every depot",
                        instance.name)  # fmt: skip
            return route(instance, range(instance.num_depots), deadline.left(), max_iterations,
                         seed, clock=deadline.clock)  # fmt: skip
    found = route_by_parts(instance, assignment, deadline.left(), route, max_iterations, seed,
                           initial, clock=deadline.clock)  # fmt: skip
    if initial is not None and solution_cost(instance, initial) <= solution_cost(instance, found):
        return initial
    return found
