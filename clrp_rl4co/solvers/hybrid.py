"""Hybrid solver: learned starts from a policy, then PyVRP refinement, within one time budget.

:func:`solve_hybrid` spends at most ``start_share`` of the budget decoding the policy
(:func:`learned_starts`), keeps a few good and diverse solutions (different open-depot sets
first: each is a proposal of where to locate; optionally a recombination of the best
rollouts' routes, :mod:`.recombine`, first), refines each briefly with
:func:`.refine.refine_solution`, gives PyVRP alone (:func:`.pyvrp_solver.solve_pyvrp`) an
equal part as one more candidate, and the rest of the budget to the best one. The result is
never worse than the best learned start.

Decoding is planned against the budget. The paper's x8 decoding (every customer as a first
move, times the 8 dihedral transforms of the coordinates) is one batch when it fits in memory
and time; larger instances are decoded in *units*: one greedy rollout first, then blocks of
start customers (a seeded random order of the customers, one transform at a time), each unit no
larger than :data:`TRAJECTORY_NODE_LIMIT` trajectory-nodes. The encoder's attention over all
node pairs grows with the square of the nodes, so no unit runs when it alone is predicted above
:data:`ENCODER_MEMORY_GB` (from about 4,700 customers with the generator's 6% depots: the hybrid is
then PyVRP alone).
A unit runs only when its predicted time fits in what is left of the decode budget; predictions
start from a prior (:func:`predict_decode_seconds`) and are scaled by the measured/predicted
ratio of the units already run. SGBS (``sgbs:4x4+aug8``) adds one more start when its predicted
time (a multiple of the measured x8 time) fits too; asked for by name it runs as long as the
budget allows and returns its best so far at the deadline.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..data import CLRPInstance, CLRPSolution, instances_to_tensordict
from .common import SolverResult, check_instance, make_result
from .decompose import LARGE_INSTANCE
from .pyvrp_solver import route_on_set, solve_pyvrp
from .recombine import recombine
from .refine import refine_solution

logger = logging.getLogger(__name__)

#: Largest ``trajectories x nodes`` decoded in one batch (bounds the decoder's memory: about
#: 0.5 GB of activations at the default embedding size).
TRAJECTORY_NODE_LIMIT = 1_000_000
#: Most memory (GB) the encoder may take (:func:`predict_encoder_gb`); above it nothing is
#: decoded.
ENCODER_MEMORY_GB = 2.5
#: SGBS ``4x4+aug8`` takes about this many times the x8 decode (measured 20x at 50 customers,
#: 35x at 100; the multiple is kept on the safe side). The hybrid adds an SGBS start only when
#: all of it is predicted to fit.
SGBS_FACTOR = 40.0
#: SGBS asked for by name (``sgbs=True``) is anytime: it runs when its own first step, a greedy
#: multistart as long as the x8 decode, fits this many times over in what is left, and stops
#: at the deadline with the best solutions found so far (:func:`clrp_rl4co.search.sgbs`).
SGBS_FIRST_STEP_FACTOR = 2.0
#: Multiplier on predicted decode times once a unit was measured (the prior's shape is rough).
PREDICTION_SAFETY = 1.5
#: Largest share of the budget the first decode unit (x8, or one greedy rollout on large
#: instances) may take: on 1,000 customers one greedy rollout is far better than what PyVRP
#: finds in the seconds it costs.
FIRST_UNIT_SHARE = 0.5
#: Distinct rollouts kept from decoding (the best by cost): the starts are chosen among them
#: and :func:`.recombine.recombine` takes their routes.
POOL_SIZE = 100
#: Seconds kept free at the end of the budget for pricing and returning the result.
END_MARGIN = 0.05
#: Largest decode share from :data:`.decompose.LARGE_INSTANCE` customers, where PyVRP by
#: parts beats the learned starts at 2,000 and 5,000 customers (results/budgets/).
LARGE_START_SHARE = 0.1
#: From this many customers (below :data:`.decompose.LARGE_INSTANCE`) the last phase routes the
#: best solution's own depot set (one :func:`.pyvrp_solver.route_on_set` with the history of its
#: budget) instead of searching depot sets again: the explore phase has searched them, and on
#: 600 customers the last search's candidate runs (0.8 s, about 500 PyVRP iterations) were all
#: worse than the set they left. On the eight ``hetero`` instances of 300-600 customers of
#: ``benchmarks.hard`` at 60 s it ended lower on seven (mean -0.44%, side by side with the
#: set search).
FINAL_ROUTING_CUSTOMERS = 300
#: Share of the budget first assumed as a refinement's overrun (PyVRP's set-up and the
#: decoding of its result come on top of its own time limit); then the largest overrun seen.
END_SHARE = 0.02


def solver_budget(seconds: float) -> float:
    """The time limit to give a classical solver so that it returns within ``seconds`` of wall
    time: less :data:`END_SHARE` and :data:`END_MARGIN` (at least 1 ms)."""
    return max(seconds * (1.0 - END_SHARE) - END_MARGIN, 1e-3)


def predict_decode_seconds(num_customers: int, num_depots: int, trajectories: int) -> float:
    """Prior estimate of one decode's wall time on one CPU thread.

    A rollout takes about ``2.2 N`` steps; a step costs a fixed part plus a part proportional to
    ``trajectories x nodes``. Fitted on single-thread CPU decodes of 20 to 1,000 customers; it
    errs on the slow side, and :func:`learned_starts` rescales it by measured times.
    """
    steps = 2.2 * num_customers
    return steps * (1.5e-3 + 7e-8 * trajectories * (num_customers + num_depots))


def predict_encoder_gb(num_customers: int, num_depots: int) -> float:
    """Prior estimate of the encoder's peak memory on one instance, in GB: about 100 bytes per
    pair of nodes (its attention scores: heads x float32, and their copies). Measured on the
    generalist with one CPU thread: one greedy rollout of 10,000 customers and 600 depots took
    11.6 GB above the process's 0.44 GB."""
    nodes = num_customers + num_depots
    return 100.0 * nodes * nodes / 1e9


@dataclass
class LearnedStarts:
    """The solutions kept from decoding a policy on one instance.

    Attributes:
        solutions: valid solutions, best first (the first is the best decoded).
        objectives: their costs in the instance's units.
        decode: what was decoded, e.g. ``x8``, ``greedy+ms64``, ``x8+sgbs``, or ``none``.
        trajectories: the number of rollouts decoded.
        seconds: wall time spent.
        rollouts: the best distinct valid rollouts (at most :data:`POOL_SIZE`), best first: the
            route pool of :func:`.recombine.recombine`.
    """

    solutions: list[CLRPSolution] = field(default_factory=list)
    objectives: list[float] = field(default_factory=list)
    decode: str = "none"
    trajectories: int = 0
    seconds: float = 0.0
    rollouts: list[CLRPSolution] = field(default_factory=list)


@dataclass
class HybridResult(SolverResult):
    """A :class:`.common.SolverResult` of :func:`solve_hybrid` with its learned part.

    Attributes:
        start_objective: the best learned start's cost (None when no decode fitted the budget).
        starts: how many learned starts were refined.
        decode: what was decoded (see :attr:`LearnedStarts.decode`).
        decode_seconds: wall time of the decoding.
    """

    start_objective: float | None = None
    starts: int = 0
    decode: str = "none"
    decode_seconds: float = 0.0


class _Bar:
    """A tqdm bar over the seconds of one instance (a no-op unless asked for)."""

    def __init__(self, enabled: bool, seconds: float, name: str, clock: Callable[[], float]):
        self.bar = None
        self.clock = clock
        self.start = clock()
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=round(seconds, 1), desc=name or "hybrid", unit="s", leave=False)

    def update(self, phase: str) -> None:
        if self.bar is not None:
            elapsed = min(self.clock() - self.start, self.bar.total)
            self.bar.set_postfix_str(phase)
            self.bar.update(round(elapsed, 1) - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _permuted(instance: CLRPInstance, order: np.ndarray) -> CLRPInstance:
    """``instance`` with its customers listed in ``order`` (customer ``k`` is ``order[k]``)."""
    return CLRPInstance(
        depot_locs=instance.depot_locs,
        customer_locs=instance.customer_locs[order],
        depot_capacity=instance.depot_capacity,
        opening_cost=instance.opening_cost,
        demand=instance.demand[order],
        vehicle_capacity=instance.vehicle_capacity,
        vehicle_fixed_cost=instance.vehicle_fixed_cost,
        rounded_costs=instance.rounded_costs,
        name=instance.name,
    )


@torch.no_grad()
def _rollouts(policy, env, instance: CLRPInstance, augment: list[int] | None, starts: int):
    """Decode ``instance`` (greedy when ``starts == 0``, else multistart greedy from its first
    ``starts`` customers) on the dihedral transforms ``augment`` (None: the identity only).
    Returns ``(actions [R, T] numpy, costs [R] numpy)``, costs in the instance's units."""
    from rl4co.data.transforms import StateAugmentation

    td = env.reset(instances_to_tensordict([instance]))
    if augment is not None:
        td = StateAugmentation(num_augment=8, augment_fn="dihedral8")(td)[torch.tensor(augment)]
    if starts:
        out = policy(td, env, decode_type="multistart_greedy", num_starts=starts, calc_reward=True)
    else:
        out = policy(td, env, decode_type="greedy", calc_reward=True)
    return out["actions"].cpu().numpy(), (-out["reward"]).double().cpu().numpy()


class _Pool:
    """The best rollouts seen so far (by env cost), as actions on the original customers."""

    def __init__(self, num_depots: int, keep: int = POOL_SIZE):
        self.num_depots = num_depots
        self.keep = keep
        self.items: list[tuple[float, tuple[int, ...]]] = []

    def add(self, actions: np.ndarray, costs: np.ndarray, order: np.ndarray | None) -> None:
        num_depots = self.num_depots
        best = np.argsort(costs, kind="stable")[: self.keep]
        for r in best:
            row = actions[r].astype(np.int64)
            if order is not None:  # customers only (depot indices may exceed the customers')
                customers = row >= num_depots
                row[customers] = num_depots + order[row[customers] - num_depots]
            self.items.append((float(costs[r]), tuple(int(a) for a in row)))
        self.items.sort(key=lambda item: item[0])
        seen, kept = set(), []
        for item in self.items:
            if item[1] not in seen:
                seen.add(item[1])
                kept.append(item)
        self.items = kept[: self.keep]


def _valid(instance: CLRPInstance, pool: _Pool) -> list[CLRPSolution]:
    """The valid solutions of ``pool``, cheapest first by their exact cost (the pool ranks by
    the env's reward)."""
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


def _diverse(instance: CLRPInstance, valid: list[CLRPSolution], count: int) -> list[CLRPSolution]:
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


def _units(
    instance: CLRPInstance, seed: int, seconds: float
) -> list[tuple[list[int] | None, int, np.ndarray]]:
    """The decode plan: ``(transforms, starts, customer order)`` per unit, in run order: x8 in
    one batch when it fits in memory and (by the prior) in ``seconds``, else greedy first and
    then growing blocks of start customers, one transform after the other; none when the
    encoder alone would take more than :data:`ENCODER_MEMORY_GB`."""
    num_customers = instance.num_customers
    encoder_gb = predict_encoder_gb(num_customers, instance.num_depots)
    if encoder_gb > ENCODER_MEMORY_GB:
        logger.info("%s: no decoding (the encoder would take about %.1f GB, above %.1f GB)",
                    instance.name, encoder_gb, ENCODER_MEMORY_GB)  # fmt: skip
        return []
    nodes = instance.num_customers + instance.num_depots
    per_unit = max(1, TRAJECTORY_NODE_LIMIT // nodes)
    identity = np.arange(num_customers)
    x8 = 8 * num_customers
    if x8 <= per_unit and predict_decode_seconds(num_customers, instance.num_depots, x8) <= seconds:
        return [(list(range(8)), num_customers, identity)]
    units: list[tuple[list[int] | None, int, np.ndarray]] = [(None, 0, identity)]
    rng = np.random.default_rng(seed)
    for transform in range(8):
        order = rng.permutation(num_customers)
        block, done = 16, 0
        while done < num_customers:
            size = min(block, per_unit, num_customers - done)
            # customers order[done:done + size] first: they are the starts of this unit
            first = np.concatenate([order[done : done + size], order[:done], order[done + size :]])
            units.append(([transform] if transform else None, size, first))
            done += size
            block *= 4
    return units


def learned_starts(
    instance: CLRPInstance,
    policy: torch.nn.Module,
    seconds: float,
    seed: int = 0,
    count: int = 3,
    sgbs: bool | None = None,
    env=None,
    on_unit=None,
    first_seconds: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> LearnedStarts:
    """Decode ``policy`` on ``instance`` within ``seconds`` and keep ``count`` diverse starts.

    Args:
        instance: the CLRP instance.
        policy: a CLRP policy (e.g. from :func:`clrp_rl4co.policies.load_policy`), in eval mode.
        seconds: the decode budget (wall time); units predicted not to fit are not run.
        seed: orders the start customers of large instances.
        count: how many solutions to keep (distinct open-depot sets first).
        sgbs: add an SGBS ``4x4+aug8`` solution after an x8 decode. None: when all of its
            predicted time (:data:`SGBS_FACTOR` x the x8 time) fits; True (SGBS asked for by
            name): anytime, whenever its first step fits (:data:`SGBS_FIRST_STEP_FACTOR`),
            stopped at the deadline with its best so far; False: never.
        env: the env to decode in (default ``CLRPEnv(check_actions=False)``).
        on_unit: called with the decode label after each unit (progress).
        first_seconds: a larger budget for the first unit alone (on large instances one
            greedy rollout is worth more than the refinement time it takes).
        clock: the wall clock (seconds) the budget is measured on.

    Returns:
        The kept starts; none when not even one greedy rollout fits in ``seconds``.
    """
    from ..envs import CLRPEnv

    env = env if env is not None else CLRPEnv(check_actions=False)
    start = clock()
    num_customers, num_depots = instance.num_customers, instance.num_depots
    pool = _Pool(num_depots)
    ratio = 1.0  # safety x measured / predicted time of the last unit
    trajectories = 0
    labels: list[str] = []
    for transforms, starts, order in _units(instance, seed, seconds):
        rows = max(1, starts) * (len(transforms) if transforms else 1)
        predicted = ratio * predict_decode_seconds(num_customers, num_depots, rows)
        unit_seconds = seconds if trajectories else max(seconds, first_seconds or 0.0)
        seconds_left = unit_seconds - (clock() - start)
        if predicted > seconds_left:
            logger.debug("%s: decode unit of %d rollouts (%.2f s predicted) does not fit "
                         "(%.2f s left)", instance.name, rows, predicted, seconds_left)  # fmt: skip
            break
        unit_start = clock()
        permuted = instance if order is None or starts == num_customers else None
        target = permuted if permuted is not None else _permuted(instance, order)
        actions, costs = _rollouts(policy, env, target, transforms, starts)
        pool.add(actions, costs, None if permuted is not None else order)
        elapsed = clock() - unit_start
        unit_prior = predict_decode_seconds(num_customers, num_depots, rows)
        ratio = PREDICTION_SAFETY * elapsed / unit_prior
        trajectories += rows
        if transforms is not None and len(transforms) == 8:
            labels.append("x8")
        elif starts == 0:
            labels.append("greedy")
        if on_unit is not None:
            on_unit("decode")
    if trajectories and trajectories not in (1, 8 * num_customers):
        labels.append(f"ms{trajectories - 1}")
    x8_seconds = clock() - start
    factor = SGBS_FIRST_STEP_FACTOR if sgbs else SGBS_FACTOR
    if sgbs is not False and labels[:1] == ["x8"]:
        if factor * x8_seconds <= seconds - (clock() - start):
            from ..models import decode_batch

            # the last expansion may run past the stop by about an x8 decode's time
            end = start + seconds - x8_seconds
            td = instances_to_tensordict([instance])
            actions, parts, _ = decode_batch(
                policy, env, td, "sgbs:4x4+aug8", stop=lambda: clock() >= end
            )
            pool.add(actions.cpu().numpy(), parts["total"].double().cpu().numpy(), None)
            trajectories += 1
            labels.append("sgbs")
    rollouts = _valid(instance, pool) if trajectories else []
    solutions = _diverse(instance, rollouts, count)
    return LearnedStarts(
        solutions=solutions,
        objectives=[s.cost(instance).total for s in solutions],
        decode="+".join(labels) if labels else "none",
        trajectories=trajectories,
        seconds=clock() - start,
        rollouts=rollouts,
    )


def _recombine_starts(instance: CLRPInstance, found: LearnedStarts, seconds: float) -> None:
    """Recombine the routes of ``found.rollouts`` (:func:`.recombine.recombine`, HiGHS for at
    most ``seconds``); a better solution becomes the first start of ``found`` (in place): it
    replaces the start with its open-depot set, else the last one, and ``+recombined`` is
    added to ``found.decode``."""
    combined = recombine(instance, found.rollouts, seconds=seconds)
    cost = combined.cost(instance).total
    if cost >= found.objectives[0]:
        return
    same = [s for s in found.solutions if s.open_depots == combined.open_depots]
    others = [s for s in found.solutions if s.open_depots != combined.open_depots]
    kept = others + same[1:]  # one start with the combination's depot set gives way
    kept.sort(key=lambda s: s.cost(instance).total)
    found.solutions = [combined, *kept[: len(found.solutions) - 1]]
    found.objectives = [s.cost(instance).total for s in found.solutions]
    found.decode += "+recombined"


def solve_hybrid(
    instance: CLRPInstance,
    policy: torch.nn.Module | None,
    seconds: float = 10.0,
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
    """Solve one instance: learned starts, then PyVRP refinement, in ``seconds`` of wall time.

    1. :func:`learned_starts` decodes ``policy`` for at most ``start_share * seconds`` (its
       first unit up to :data:`FIRST_UNIT_SHARE` of the budget) and keeps ``starts`` diverse
       solutions (distinct open-depot sets first);
       with ``recombine_share``, :func:`.recombine.recombine` then combines the routes of the
       best rollouts for at most that share of the budget; when that beats the best start it
       becomes the first start (replacing a start with its depot set, else the last one);
    2. each start is refined (:func:`.refine.refine_solution`, location and routing) for an equal
       part of ``explore_share`` of the time left; with ``classical`` one more part goes to
       PyVRP alone (:func:`.pyvrp_solver.solve_pyvrp`, from the cost estimate's best depot
       set), so a poor learned depot set cannot hold the search (only when there are several
       candidates); from :data:`.decompose.LARGE_INSTANCE` customers (routed by parts, a
       start's depots and assignment stay fixed) the decoding, its first unit included, gets
       at most :data:`LARGE_START_SHARE` of the budget and PyVRP alone all of
       ``explore_share``;
    3. the best solution so far is refined for the rest of the budget; from
       :data:`FINAL_ROUTING_CUSTOMERS` customers (below :data:`.decompose.LARGE_INSTANCE`) it
       is routed on its own depot set instead (:func:`.pyvrp_solver.route_on_set`, with the
       late-acceptance history of that budget).

    The result is never worse than the best learned start. With no policy, or when not even
    one greedy rollout fits in the decode budget, it is PyVRP alone
    (:func:`.pyvrp_solver.solve_pyvrp`) over the whole budget (``decode == "none"``).

    Args:
        instance: the CLRP instance.
        policy: a CLRP policy in eval mode, or None.
        seconds: the wall-time budget (decoding included).
        seed: PyVRP's seed (start ``i`` is refined with ``seed + i``) and the order of the
            start customers of large instances; a run is reproducible up to timing.
        starts: learned starts to refine.
        start_share: largest share of the budget spent decoding.
        explore_share: share of the time left after decoding spent refining every start.
        sgbs: see :func:`learned_starts`.
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
        ValueError: ``instance`` is obviously infeasible, or a non-positive ``seconds`` /
            ``starts`` or a share outside [0, 1].
    """
    check_instance(instance)
    if not seconds > 0:
        raise ValueError(f"seconds: must be positive, got {seconds}")
    if starts < 1:
        raise ValueError(f"starts: must be >= 1, got {starts}")
    shares = (("start_share", start_share), ("explore_share", explore_share),
              ("recombine_share", recombine_share))  # fmt: skip
    for name, share in shares:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name}: must be in [0, 1], got {share}")
    begin = clock()
    deadline = begin + seconds - END_MARGIN
    bar = _Bar(progress, seconds, instance.name, clock)
    try:
        found = LearnedStarts()
        first_share = max(start_share, FIRST_UNIT_SHARE)
        if instance.num_customers >= LARGE_INSTANCE:
            # the first unit too: one greedy rollout of 5,000 customers took about 20 s and 4.5 GB
            start_share = first_share = min(start_share, LARGE_START_SHARE)
        if policy is not None and start_share > 0:
            found = learned_starts(
                instance,
                policy,
                seconds * start_share,
                seed,
                starts,
                sgbs,
                on_unit=bar.update,
                first_seconds=seconds * first_share,
                clock=clock,
            )
        if not found.solutions:
            logger.info("%s: no learned start fits in the budget; PyVRP alone", instance.name)
            res = solve_pyvrp(instance, seconds=solver_budget(deadline + END_MARGIN - clock()),
                              seed=seed)  # fmt: skip
            bar.update("pyvrp")
            fields = {**res.__dict__, "solver": "hybrid", "runtime": clock() - begin}
            return HybridResult(**fields)
        if recombine_share > 0 and len(found.rollouts) > 1:
            recombine_seconds = min(recombine_share * seconds, deadline - clock())
            if recombine_seconds > 0:
                _recombine_starts(instance, found, recombine_seconds)
                bar.update("recombine")
        best = found.solutions[0]
        best_cost = found.objectives[0]
        overrun = END_SHARE * seconds  # how far past its budget a refinement may run

        def attempt(run, run_seconds: float) -> None:
            """``run(seconds)`` for at most ``run_seconds`` and within the deadline; keep its
            result if better."""
            nonlocal best, best_cost, overrun
            run_seconds = min(run_seconds, deadline - clock() - overrun)
            if run_seconds <= 0:
                return
            began = clock()
            found_now = run(run_seconds)
            overrun = max(overrun, clock() - began - run_seconds)
            if found_now is None:
                return
            cost = found_now.cost(instance).total
            if cost < best_cost:
                best, best_cost = found_now, cost

        def refine(solution: CLRPSolution, seed_k: int):
            return lambda run_seconds: refine_solution(
                instance, solution, seconds=run_seconds, seed=seed_k
            )

        def pyvrp_alone(run_seconds: float) -> CLRPSolution | None:
            return solve_pyvrp(
                instance, seconds=run_seconds, seed=seed + len(found.solutions)
            ).solution

        seconds_left = deadline - clock()
        candidates = len(found.solutions) + (1 if classical else 0)

        def route_best(run_seconds: float) -> CLRPSolution | None:
            return route_on_set(instance, best.open_depots, run_seconds, seed=seed + candidates,
                                initial=best, scaled_history=True)  # fmt: skip

        if instance.num_customers >= LARGE_INSTANCE and classical and seconds_left > 0:
            # refining a start by parts keeps its depots and assignment: PyVRP alone (the
            # estimate's set) first, then the better of it and the best start goes on
            attempt(pyvrp_alone, seconds_left * explore_share)
            bar.update("pyvrp alone")
        elif candidates > 1 and seconds_left > 0:
            each = seconds_left * explore_share / candidates
            for k, solution in enumerate(found.solutions):
                attempt(refine(solution, seed + k), each)
                bar.update(f"refine start {k + 1}")
            if classical:
                attempt(pyvrp_alone, each)
                bar.update("pyvrp alone")
        if FINAL_ROUTING_CUSTOMERS <= instance.num_customers < LARGE_INSTANCE:
            attempt(route_best, math.inf)
        else:
            attempt(refine(best, seed + candidates), math.inf)
        bar.update("done")
        res = make_result(instance, best, solver="hybrid", runtime=clock() - begin)
        return HybridResult(
            **res.__dict__,
            start_objective=found.objectives[0],
            starts=len(found.solutions),
            decode=found.decode,
            decode_seconds=found.seconds,
        )
    finally:
        bar.close()
