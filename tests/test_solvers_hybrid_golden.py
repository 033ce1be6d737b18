"""Golden values of the hybrid (:func:`solve_hybrid` and :func:`learned_starts`): a refactoring
pin.

The decode labels, objectives, open depots and routes (as a digest), the seconds each run was
given and the sequence of phases were recorded at commit ``0a7945e``, before the hybrid was
split into decoding within a budget (:mod:`clrp_rl4co.search`) and its orchestration. They are
deterministic by construction:

* the budget is measured on a :class:`clocks.FakeClock`, which moves only when told: decoding
  takes no time on it (every unit of the plan runs, and SGBS runs to its end) unless the policy
  is wrapped to move it a fixed step per call (:class:`TimedPolicy`), and each refinement,
  PyVRP-alone and routing run moves it by exactly the seconds it was given, so every time-based
  decision (the unit plan, which units fit, SGBS, the shares, the last run's rest) is the same
  on any machine and load;
* the policy is the shipped ``drlhq_clrp20`` on one thread (``tests/conftest.py``), decoded
  greedily;
* PyVRP runs (the fakes :func:`runs` puts in place of the refinement, PyVRP alone and the
  routing on a set) record the seconds the hybrid gave them and run the real solver on
  :data:`ITERATIONS` iterations without a time limit, so they are deterministic too;
* the progress bar is a recorder in place of ``tqdm.auto.tqdm``: it gives the phases.

A change of any value means the hybrid behaves differently, not that it got better or worse.
"""

from __future__ import annotations

import hashlib
import math

import pytest
from clocks import FakeClock
from instances import random_instance

import clrp_rl4co.solvers.hybrid as hybrid
from clrp_rl4co.policies import load_policy
from clrp_rl4co.solvers import learned_starts, solve_hybrid
from clrp_rl4co.solvers.pyvrp_solver import route_on_set, solve_pyvrp
from clrp_rl4co.solvers.recombine import recombine as hybrid_recombine
from clrp_rl4co.solvers.refine import refine_solution

#: PyVRP iterations of every refinement, PyVRP-alone and routing run.
ITERATIONS = 100


@pytest.fixture(scope="module")
def policy():
    return load_policy("drlhq_clrp20").eval()


class TimedPolicy:
    """``policy`` that moves ``clock`` forward ``step`` seconds at each call (one decode
    unit)."""

    def __init__(self, policy, clock: FakeClock, step: float) -> None:
        self.policy, self.clock, self.step = policy, clock, step

    def __call__(self, *args, **kwargs):
        self.clock.now += self.step
        return self.policy(*args, **kwargs)


class RecordingTqdm:
    """``tqdm.auto.tqdm`` that records ``(phase, seconds shown)`` at each update."""

    made: list[RecordingTqdm] = []

    def __init__(self, total, desc, **kwargs) -> None:
        self.total, self.desc, self.n, self.postfix = total, desc, 0.0, None
        self.shown: list[tuple[str, float]] = []
        self.closed = False
        RecordingTqdm.made.append(self)

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    def update(self, step: float) -> None:
        self.n += step
        self.shown.append((self.postfix, self.n))

    def close(self) -> None:
        self.closed = True


def digest(solutions) -> str:
    """A short digest of the routes of ``solutions`` (depots and customers, in order)."""
    routes = [[(int(r.depot), tuple(map(int, r.customers))) for r in s.routes] for s in solutions]
    text = repr(routes)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def close(observed, golden) -> bool:
    """``observed == golden`` with floats compared to a relative 1e-9 (and 1e-12 absolute)."""
    if isinstance(golden, float) or isinstance(observed, float):
        return math.isclose(observed, golden, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(golden, (list, tuple)):
        return (
            isinstance(observed, (list, tuple))
            and len(observed) == len(golden)
            and all(close(a, b) for a, b in zip(observed, golden))
        )
    if isinstance(golden, dict):
        return observed.keys() == golden.keys() and all(
            close(observed[k], golden[k]) for k in golden
        )
    return observed == golden


def starts_record(instance, found) -> dict:
    """What :func:`learned_starts` kept, as plain values."""
    for solution in found.solutions + found.rollouts:
        solution.check(instance)
    return {
        "decode": found.decode,
        "trajectories": found.trajectories,
        "seconds": found.seconds,
        "objectives": list(found.objectives),
        "open_depots": [s.open_depots for s in found.solutions],
        "starts": digest(found.solutions),
        "rollouts": len(found.rollouts),
        "rollouts_digest": digest(found.rollouts),
    }


@pytest.fixture
def runs(monkeypatch):
    """The hybrid's PyVRP runs on :data:`ITERATIONS` iterations (no time limit), each moving
    the fake clock by the seconds it was given; ``(clock, calls)``: ``calls`` lists ``(run,
    seconds, seed)`` (and the depot set of a routing run)."""
    clock, calls = FakeClock(), []

    def refine(instance, solution, seconds, seed):
        calls.append(("refine", seconds, seed))
        clock.now += seconds
        return refine_solution(instance, solution, None, seed=seed, max_iterations=ITERATIONS)

    def alone(instance, seconds, seed):
        calls.append(("pyvrp", seconds, seed))
        clock.now += seconds
        return solve_pyvrp(instance, None, max_iterations=ITERATIONS, seed=seed)

    def route(instance, depots, seconds, seed, initial, scaled_history):
        calls.append(("route", seconds, seed, tuple(depots)))
        clock.now += seconds
        return route_on_set(instance, depots, None, ITERATIONS, seed, initial,
                            scaled_history=scaled_history)  # fmt: skip

    def recombine(instance, rollouts, seconds):
        # HiGHS on the wall clock: a generous limit, so that a loaded machine cannot stop it
        # early (it proves these small models in well under a second)
        return hybrid_recombine(instance, rollouts, seconds=max(seconds, 60.0))

    monkeypatch.setattr(hybrid, "refine_solution", refine)
    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    monkeypatch.setattr(hybrid, "recombine", recombine)
    monkeypatch.setattr(hybrid, "route_on_set", route)
    monkeypatch.setattr("tqdm.auto.tqdm", RecordingTqdm)
    RecordingTqdm.made.clear()
    return clock, calls


def hybrid_record(instance, result, calls) -> dict:
    """What :func:`solve_hybrid` returned, the runs it made and the phases it showed."""
    result.solution.check(instance)
    assert result.objective == pytest.approx(result.solution.cost(instance).total, rel=1e-12)
    (bar,) = RecordingTqdm.made
    assert bar.closed
    return {
        "calls": [list(c) for c in calls],
        "phases": [list(s) for s in bar.shown],
        "decode": result.decode,
        "decode_seconds": result.decode_seconds,
        "starts": result.starts,
        "start_objective": result.start_objective,
        "objective": result.objective,
        "runtime": result.runtime,
        "status": result.status,
        "open_depots": result.solution.open_depots,
        "routes": digest([result.solution]),
    }


# ----------------------------------------------------------------------------- learned starts
LEARNED_X8 = {
    "decode": "x8",
    "trajectories": 160,
    "seconds": 0.0,
    "objectives": [15.085673198674968, 15.105768053981677, 15.192677596847592],
    "open_depots": [(0, 2), (0, 2), (0, 2)],
    "starts": "0f01da477a2d4053",
    # 99 and 45fcda8e5843562b as recorded: two rows of the batch's best 100 were the same
    # rollout, so the pool kept 99 though it keeps 100 distinct (fixed; the starts are the same)
    "rollouts": 100,
    "rollouts_digest": "aac44c41f0da610e",
}
LEARNED_UNITS = {
    "decode": "greedy+ms40",
    "trajectories": 41,
    "seconds": 0.05999999999971806,
    "objectives": [13.810985243255733, 13.821337192533788],
    "open_depots": [(3,), (3,)],
    "starts": "c1ac852c65b0aad6",
    "rollouts": 41,
    "rollouts_digest": "69f997e005d9b38a",
}
LEARNED_SGBS = {
    "decode": "x8+sgbs",
    "trajectories": 65,
    "seconds": 0.0,
    "objectives": [6.092143906356519, 6.092143906356519],
    "open_depots": [(3,), (3,)],
    "starts": "8254bc1ad08703b1",
    "rollouts": 54,
    "rollouts_digest": "2acdb6160c0ae6a6",
}


def test_learned_starts_x8(policy):
    """20 customers: x8 in one batch (it fits by the prior), three diverse starts."""
    instance = random_instance(20, seed=4)
    found = learned_starts(instance, policy, 5.0, seed=0, count=3, sgbs=False, clock=FakeClock())
    record = starts_record(instance, found)
    assert close(record, LEARNED_X8), record


def test_learned_starts_in_units_while_they_fit(policy):
    """20 customers, 0.075 s: x8 does not fit by the prior (0.078 s), so greedy, then blocks
    of start customers (16, then the 4 left) per transform; each unit takes 0.012 s on the
    clock, and a unit runs only while its rescaled prediction fits in what is left: greedy and
    the blocks of the first two transforms (41 rollouts)."""
    instance = random_instance(20, seed=6)
    clock = FakeClock()
    timed = TimedPolicy(policy, clock, 0.012)
    found = learned_starts(instance, timed, 0.075, seed=3, count=2, sgbs=False, clock=clock)
    record = starts_record(instance, found)
    assert close(record, LEARNED_UNITS), record


def test_learned_starts_with_sgbs(policy):
    """SGBS after x8 when its predicted time fits (x8 took no time on the clock: it does)."""
    instance = random_instance(8, seed=8)
    found = learned_starts(instance, policy, 30.0, seed=0, count=2, sgbs=None, clock=FakeClock())
    record = starts_record(instance, found)
    assert close(record, LEARNED_SGBS), record


# ------------------------------------------------------------------------------------ hybrid
HYBRID_DEFAULT = {
    "calls": [
        ["refine", 1.2437500000000057, 0],
        ["refine", 1.2437500000000057, 1],
        ["refine", 1.2437500000000057, 2],
        ["pyvrp", 1.2437500000000057, 3],
        ["refine", 4.7749999999996815, 4],
    ],
    "phases": [
        ["decode", 0.0],
        ["refine start 1", 1.2],
        ["refine start 2", 2.5],
        ["refine start 3", 3.7],
        ["pyvrp alone", 5.0],
        ["done", 9.8],
    ],
    "decode": "x8+sgbs",
    "decode_seconds": 0.0,
    "starts": 3,
    "start_objective": 13.202450171419384,
    "objective": 13.202450171419382,
    "runtime": 9.75,
    "status": "feasible",
    "open_depots": (0, 4),
    "routes": "6e8a7f3de48a1ce3",
}
HYBRID_RECOMBINED = {
    "calls": [
        ["refine", 0.9875000000000114, 1],
        ["refine", 0.9875000000000114, 2],
        ["refine", 1.8950000000001364, 3],
    ],
    "phases": [
        ["decode", 0.0],
        ["recombine", 0.0],
        ["refine start 1", 1.0],
        ["refine start 2", 2.0],
        ["done", 3.9],
    ],
    "decode": "x8+recombined",
    "decode_seconds": 0.0,
    "starts": 2,
    "start_objective": 15.687368101747019,
    "objective": 15.57714387433345,
    "runtime": 3.8700000000001182,
    "status": "feasible",
    "open_depots": (2, 4),
    "routes": "a87dcf4e017bd5f4",
}
HYBRID_NO_POLICY = {
    "calls": [["pyvrp", 2.89, 2]],
    "phases": [["pyvrp", 2.9]],
    "decode": "none",
    "decode_seconds": 0.0,
    "starts": 0,
    "start_objective": None,
    "objective": 14.584832779079397,
    "runtime": 2.8900000000001,
    "status": "feasible",
    "open_depots": (0, 4),
    "routes": "4a72449cb2d16522",
}
HYBRID_FINAL_ROUTING = {
    "calls": [
        ["refine", 1.9875000000000114, 4],
        ["pyvrp", 1.9875000000000114, 5],
        [
            "route",
            3.7750000000001362,
            6,
            (0, 2, 3, 7, 8, 9, 13, 18, 20, 23, 24, 26, 29, 30, 32, 34, 36, 37),
        ],
    ],
    "phases": [["decode", 2.0], ["refine start 1", 4.0], ["pyvrp alone", 6.0], ["done", 9.8]],
    "decode": "greedy",
    "decode_seconds": 2.0,
    "starts": 1,
    "start_objective": 212.29048428187764,
    "objective": 140.3189114731204,
    "runtime": 9.75,
    "status": "feasible",
    "open_depots": (0, 2, 3, 7, 8, 9, 13, 18, 20, 23, 24, 26, 29, 30, 32, 34, 36, 37),
    "routes": "dfb9a6dede96970d",
}


def test_hybrid_defaults_with_sgbs(policy, runs):
    """10 s: x8 + SGBS (decoding takes no time on the clock), three starts refined, PyVRP
    alone, the best refined for the rest."""
    clock, calls = runs
    instance = random_instance(20, seed=0)
    result = solve_hybrid(instance, policy, progress=True, clock=clock)
    record = hybrid_record(instance, result, calls)
    assert close(record, HYBRID_DEFAULT), record


def test_hybrid_recombined_without_classical(policy, runs):
    clock, calls = runs
    instance = random_instance(20, seed=3)
    result = solve_hybrid(instance, policy, seconds=4.0, seed=1, starts=2, sgbs=False,
                          progress=True, classical=False, recombine_share=0.2,
                          clock=clock)  # fmt: skip
    record = hybrid_record(instance, result, calls)
    assert close(record, HYBRID_RECOMBINED), record


def test_hybrid_without_a_policy_is_pyvrp_alone(runs):
    clock, calls = runs
    instance = random_instance(20, seed=1)
    result = solve_hybrid(instance, None, seconds=3.0, seed=2, progress=True, clock=clock)
    record = hybrid_record(instance, result, calls)
    assert close(record, HYBRID_NO_POLICY), record


def test_hybrid_from_final_routing_customers(policy, runs):
    """300 customers: x8 does not fit by the prior, one greedy rollout (2 s on the clock) does
    and then no block; one start, PyVRP alone, then the best routed on its own depot set."""
    clock, calls = runs
    instance = random_instance(300, seed=0, num_depots=40)
    timed = TimedPolicy(policy, clock, 2.0)
    result = solve_hybrid(instance, timed, seconds=10.0, seed=4, progress=True, clock=clock)
    record = hybrid_record(instance, result, calls)
    assert close(record, HYBRID_FINAL_ROUTING), record
