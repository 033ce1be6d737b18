"""The rollouts kept from decoding and the starts chosen among them.

:class:`RolloutPool` keeps the best distinct rollouts (by the env's cost) as actions on the
instance's own customers; :func:`valid_solutions` turns them into checked solutions, cheapest
first by their exact cost; :func:`diverse_starts` picks a few of those, a new open-depot set
(each a proposal of where to locate) before a better solution on a set already chosen.
"""

from __future__ import annotations

import logging

import numpy as np

from ..data import CLRPInstance, CLRPSolution

logger = logging.getLogger(__name__)


class RolloutPool:
    """The best rollouts seen so far (by env cost), as actions on the original customers.

    Args:
        num_depots: the instance's depots (node indices below it are depots).
        keep: how many distinct rollouts to keep.
    """

    def __init__(self, num_depots: int, keep: int) -> None:
        self.num_depots = num_depots
        self.keep = keep
        self.items: list[tuple[float, tuple[int, ...]]] = []

    def add(self, actions: np.ndarray, costs: np.ndarray, order: np.ndarray | None) -> None:
        """Add the rollouts ``actions`` ``[R, T]`` of env costs ``costs`` ``[R]``, decoded on
        the instance with its customers listed in ``order`` (customer ``k`` of the decoded copy
        is ``order[k]``; None: the instance itself). Equal costs keep their decoding order; a
        rollout seen before is kept once."""
        num_depots = self.num_depots
        added: set[tuple[int, ...]] = set()
        for r in np.argsort(costs, kind="stable"):
            if len(added) == self.keep:  # the batch's best distinct rollouts are in
                break
            row = actions[r].astype(np.int64)
            if order is not None:  # customers only (depot indices may exceed the customers')
                customers = row >= num_depots
                row[customers] = num_depots + order[row[customers] - num_depots]
            rollout = tuple(int(a) for a in row)
            if rollout not in added:
                added.add(rollout)
                self.items.append((float(costs[r]), rollout))
        self.items.sort(key=lambda item: item[0])
        seen, kept = set(), []
        for item in self.items:
            if item[1] not in seen:
                seen.add(item[1])
                kept.append(item)
        self.items = kept[: self.keep]


def valid_solutions(instance: CLRPInstance, pool: RolloutPool) -> list[CLRPSolution]:
    """The valid solutions of ``pool``, cheapest first by their exact cost (the pool ranks by
    the env's reward); an invalid one is logged and skipped."""
    valid = []
    for _, actions in pool.items:
        solution = CLRPSolution.from_actions(actions, instance.num_depots)
        try:
            solution.check(instance)
        except ValueError as exc:  # the env's mask makes every rollout valid: a bug if not
            logger.warning("%s: a decoded solution is invalid (%s); skipped", instance.name, exc)
            continue
        valid.append((solution.cost(instance).total, len(valid), solution))
    valid.sort(key=lambda item: item[:2])
    return [solution for _, _, solution in valid]


def diverse_starts(
    instance: CLRPInstance, valid: list[CLRPSolution], count: int
) -> list[CLRPSolution]:
    """Up to ``count`` of the solutions ``valid`` (cheapest first), best first: each new
    open-depot set first, then the next best solutions."""
    chosen: list[CLRPSolution] = []
    later: list[CLRPSolution] = []
    depot_sets: set[tuple[int, ...]] = set()
    for solution in valid:
        if solution.open_depots not in depot_sets:
            depot_sets.add(solution.open_depots)
            chosen.append(solution)
            if len(chosen) == count:
                break
        elif len(later) < count:
            later.append(solution)
    chosen += later[: count - len(chosen)]
    chosen.sort(key=lambda s: s.cost(instance).total)
    return chosen
