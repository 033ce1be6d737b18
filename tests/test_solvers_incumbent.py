"""The incumbent of a solver call (clrp_rl4co.solvers.incumbent): the cheapest solution offered,
and runs given at most their seconds and what the deadline leaves less the largest overrun
seen, on a fake clock."""

from __future__ import annotations

from clocks import FakeClock
from instances import random_instance

from clrp_rl4co.data import CLRPSolution, Route
from clrp_rl4co.solvers.incumbent import Incumbent
from clrp_rl4co.solvers.stopping import Deadline

INSTANCE = random_instance(4, seed=0, num_depots=2)
#: Three solutions of different costs (one route per customer pair, or per customer).
PAIRS = CLRPSolution([Route(0, (0, 1)), Route(0, (2, 3))])
SINGLES = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(0, (2,)), Route(0, (3,))])
TWO_DEPOTS = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])


def cost(solution: CLRPSolution) -> float:
    return solution.cost(INSTANCE).total


def incumbent(solution=SINGLES, seconds=10.0, overrun=1.0, clock=None) -> Incumbent:
    clock = clock or FakeClock()
    return Incumbent(INSTANCE, solution, cost(solution), Deadline(seconds, clock), overrun)


def test_costs_of_the_solutions_differ():
    # the four routes pay three more vehicles than the pairs on one depot
    assert cost(PAIRS) < cost(SINGLES)
    assert cost(PAIRS) != cost(TWO_DEPOTS)


def test_a_cheaper_solution_replaces_the_incumbent_and_its_cost():
    held = incumbent(SINGLES)
    assert held.instance is INSTANCE and held.overrun == 1.0
    held.offer(PAIRS)
    assert held.solution is PAIRS and held.cost == cost(PAIRS)


def test_none_an_equal_or_a_dearer_solution_keeps_the_incumbent():
    held = incumbent(PAIRS)
    held.offer(None)
    assert held.solution is PAIRS and held.cost == cost(PAIRS)
    same = CLRPSolution([Route(0, (0, 1)), Route(0, (2, 3))])
    held.offer(same)  # an equal cost keeps the incumbent itself
    assert held.solution is PAIRS and held.cost == cost(PAIRS)
    held.offer(SINGLES)
    assert held.solution is PAIRS and held.cost == cost(PAIRS)


class Run:
    """A run that records its seconds, takes ``spent(seconds)`` on the clock and returns
    ``found``."""

    def __init__(self, clock: FakeClock, found=None, spent=lambda s: s) -> None:
        self.clock, self.found, self.spent = clock, found, spent
        self.given: list[float] = []

    def __call__(self, seconds: float):
        self.given.append(seconds)
        self.clock.now += self.spent(seconds)
        return self.found


def test_a_run_gets_its_seconds_when_the_deadline_leaves_more():
    clock = FakeClock()
    held = incumbent(seconds=10.0, overrun=1.0, clock=clock)
    run = Run(clock, found=PAIRS)
    held.attempt(run, 4.0)
    assert run.given == [4.0]
    assert held.solution is PAIRS and held.cost == cost(PAIRS)  # what it found is offered
    assert held.overrun == 1.0  # on time: the assumed overrun stays


def test_a_run_gets_what_the_deadline_leaves_less_the_overrun():
    clock = FakeClock()
    held = incumbent(seconds=10.0, overrun=1.5, clock=clock)
    run = Run(clock)
    held.attempt(run, 20.0)
    assert run.given == [8.5]
    assert held.solution is SINGLES  # found nothing: the incumbent stays


def test_a_late_run_shortens_the_next_ones_and_an_early_one_does_not_undo_it():
    clock = FakeClock()
    held = incumbent(seconds=30.0, overrun=0.5, clock=clock)
    late = Run(clock, spent=lambda s: s + 3.0)
    held.attempt(late, 2.0)  # 2 s given, 5 s taken: overrun 3
    assert late.given == [2.0] and held.overrun == 3.0
    # 25 s left, less the overrun 3: at most 22
    early = Run(clock, spent=lambda s: s / 2)
    held.attempt(early, 100.0)
    assert early.given == [22.0] and held.overrun == 3.0  # 11 s early: the largest stays
    # 14 s left, less 3: 11
    last = Run(clock)
    held.attempt(last, 50.0)
    assert last.given == [11.0]


def test_nothing_runs_when_no_time_is_left_after_the_overrun():
    clock = FakeClock()
    held = incumbent(seconds=2.0, overrun=2.0, clock=clock)  # exactly no time
    run = Run(clock, found=PAIRS)
    held.attempt(run, 1.0)
    assert run.given == [] and held.solution is SINGLES and held.overrun == 2.0
    clock.now += 5.0  # past the deadline
    held = incumbent(seconds=1.0, overrun=0.0, clock=clock)
    clock.now += 5.0
    held.attempt(run, 1.0)
    assert run.given == []
    held = incumbent(seconds=10.0, overrun=0.0, clock=clock)
    held.attempt(run, 0.0)  # no seconds of its own
    assert run.given == []


def test_a_run_with_a_little_time_runs():
    clock = FakeClock()
    held = incumbent(seconds=2.25, overrun=2.0, clock=clock)
    run = Run(clock, found=TWO_DEPOTS)
    held.attempt(run, 1.0)
    assert run.given == [0.25]
    assert held.solution is (TWO_DEPOTS if cost(TWO_DEPOTS) < cost(SINGLES) else SINGLES)
