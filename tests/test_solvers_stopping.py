"""Budgets and stopping (:mod:`clrp_rl4co.solvers.stopping`), from their definitions: a
:class:`Deadline` on a fake clock (what is left, shares of it, no limit), the PyVRP criterion it
gives (the deadline, an iteration count, a give-up time, a requested stop) and budget shares."""

from __future__ import annotations

import pytest
from clocks import FakeClock, TickingClock
from pyvrp.stop import MaxIterations, MultipleCriteria

from clrp_rl4co.execution import interrupt
from clrp_rl4co.solvers.stopping import (
    INFEASIBLE_COST,
    Budget,
    Deadline,
    DeadlineReached,
    NoFeasibleBy,
    StopRequested,
    as_deadline,
)

INFEASIBLE = 2**63 - 1  # what PyVRP's best cost reads while no solution is feasible


# --------------------------------------------------------------------------------- Deadline
def test_what_is_left_is_the_budget_less_the_time_spent_and_never_below_zero():
    clock = FakeClock(1000.0)
    deadline = Deadline(10.0, clock)
    assert deadline.seconds == 10.0 and deadline.clock is clock
    assert deadline.left() == 10.0 and not deadline.expired()
    clock.now = 1006.0
    assert deadline.left() == 4.0  # 6 s of 10 spent
    clock.now = 1009.5
    assert deadline.left() == 0.5  # less than a second is left as it is
    clock.now = 1030.0
    assert deadline.left() == 0.0 and deadline.expired()  # 30 s spent: nothing, not -20 s


def test_the_deadline_itself_has_not_expired_only_past_it():
    clock = FakeClock(0.0)
    deadline = Deadline(5.0, clock)
    clock.now = 5.0
    assert deadline.left() == 0.0 and not deadline.expired()
    clock.now = 5.0 + 1e-6
    assert deadline.expired()


def test_a_negative_budget_has_expired_at_once():
    clock = FakeClock()
    deadline = Deadline(-1.0, clock)
    assert deadline.left() == 0.0 and deadline.expired()


def test_without_a_limit_nothing_is_left_to_count_and_nothing_expires():
    clock = FakeClock()
    deadline = Deadline(None, clock)
    clock.now += 1e9
    assert deadline.seconds is None and deadline.left() is None and not deadline.expired()
    part = deadline.share(0.25)
    assert part.seconds is None and part.left() is None and not part.expired()
    assert part.clock is clock


def test_a_share_is_a_fraction_of_what_is_left_now_from_now():
    clock = FakeClock(0.0)
    deadline = Deadline(10.0, clock)
    clock.now = 4.0  # 6 s left
    half = deadline.share(0.5)
    assert half.seconds == 3.0 and half.left() == 3.0 and half.clock is clock
    clock.now = 6.0
    assert half.left() == 1.0 and deadline.left() == 4.0  # each counts from its own start
    clock.now = 7.5
    assert half.expired() and not deadline.expired()
    whole = deadline.share(1.0)
    assert whole.left() == deadline.left() == 2.5  # the whole of what is left: the same end


def test_a_share_of_a_spent_deadline_is_nothing():
    clock = FakeClock(0.0)
    deadline = Deadline(1.0, clock)
    clock.now = 3.0
    part = deadline.share(0.5)
    assert part.seconds == 0.0 and part.left() == 0.0
    clock.now += 1e-9
    assert part.expired()


def test_a_share_reads_the_clock_once():
    """The share's start and what is left are the same reading (a clock ticking 1 s per read
    starts at 1, the deadline ends at 11; the share is read at 2: half of 9 s, ending at 6.5)."""
    clock = TickingClock(0.0)
    deadline = Deadline(10.0, clock)
    part = deadline.share(0.5)
    assert part.seconds == 4.5
    assert part.left() == pytest.approx(3.5)  # read at 3


def test_a_deadline_counts_from_an_earlier_start_when_given():
    """The call began at 100 and has 10 s: at 104 (when the deadline is made) 6 s are left."""
    clock = FakeClock(104.0)
    deadline = Deadline(10.0, clock, start=100.0)
    assert deadline.seconds == 10.0 and deadline.left() == 6.0
    clock.now = 110.0
    assert deadline.left() == 0.0 and not deadline.expired()
    clock.now = 110.5
    assert deadline.expired()


def test_a_deadline_before_another_ends_that_margin_earlier():
    clock = FakeClock(0.0)
    deadline = Deadline(10.0, clock)
    clock.now = 3.0
    earlier = deadline.before(0.5)  # ends at 9.5, counted from 3
    assert earlier.seconds == 6.5 and earlier.left() == 6.5 and earlier.clock is clock
    clock.now = 9.5
    assert not earlier.expired() and deadline.left() == 0.5
    clock.now = 9.75
    assert earlier.expired() and not deadline.expired()
    clock.now = 20.0
    spent = deadline.before(0.5)  # made after its end: expired at once
    assert spent.left() == 0.0 and spent.expired()
    unlimited = Deadline(None, clock).before(0.5)
    assert unlimited.left() is None and not unlimited.expired()


def test_a_number_becomes_a_deadline_from_now_and_a_deadline_stays_itself():
    clock = FakeClock(50.0)
    deadline = Deadline(3.0, clock)
    assert as_deadline(deadline) is deadline  # its own clock and end, whatever clock is given
    assert as_deadline(deadline, FakeClock(0.0)) is deadline
    made = as_deadline(2.0, clock)
    assert made.clock is clock and made.seconds == 2.0 and made.left() == 2.0
    clock.now = 52.5
    assert made.expired() and deadline.left() == 0.5
    assert as_deadline(None, clock).left() is None


# -------------------------------------------------------------------------- the criterion
def test_the_criterion_holds_what_stops_pyvrp_in_order():
    clock = FakeClock()
    timed = Deadline(2.5, clock).criterion()  # each budget comes with the stop request
    assert isinstance(timed, MultipleCriteria)
    assert [type(c) for c in timed.criteria] == [DeadlineReached, StopRequested]
    counted = Deadline(None, clock).criterion(40.7)
    assert [type(c) for c in counted.criteria] == [MaxIterations, StopRequested]
    assert counted.criteria[0]._max_iters == 40
    every = Deadline(5.0, clock).criterion(-3, give_up=2.0)  # a negative count: none
    assert [type(c) for c in every.criteria] == [
        NoFeasibleBy, MaxIterations, DeadlineReached, StopRequested
    ]  # fmt: skip
    assert every.criteria[1]._max_iters == 0
    assert every.criteria[0].deadline.seconds == 2.0 and every.criteria[0].deadline.clock is clock


def test_without_a_time_limit_or_iterations_there_is_no_criterion():
    with pytest.raises(ValueError, match="give seconds or max_iterations"):
        Deadline(None).criterion()
    with pytest.raises(ValueError, match="give seconds or max_iterations"):
        Deadline(None).criterion(give_up=1.0)  # giving up alone never ends a feasible run


def test_the_criterion_stops_at_the_deadline():
    clock = FakeClock(0.0)
    stop = Deadline(3.0, clock).criterion()
    assert not stop(100)
    clock.now = 3.0
    assert not stop(100)  # at the deadline itself: one more iteration
    clock.now = 3.5
    assert stop(100)


def test_the_criterion_stops_after_its_iterations():
    stop = Deadline(None).criterion(3)
    assert [stop(100) for _ in range(4)] == [False, False, False, True]
    assert Deadline(None).criterion(0)(100)  # no iteration at all


def test_the_criterion_stops_on_a_requested_stop():
    stop = Deadline(3600.0).criterion(10**9)
    assert not stop(100)
    interrupt.request()
    try:
        assert stop(100)
        assert StopRequested()(100)
    finally:
        interrupt.clear()
    assert not stop(100)


def test_giving_up_stops_only_an_infeasible_search_after_its_seconds():
    clock = FakeClock(0.0)
    stop = Deadline(10.0, clock).criterion(give_up=2.0)
    clock.now = 2.5
    assert stop(INFEASIBLE) and stop(INFEASIBLE_COST)  # nothing feasible after 2 s
    assert not stop(INFEASIBLE_COST - 1) and not stop(12345)  # feasible: runs on
    clock.now = 10.5
    assert stop(12345)  # the deadline stops it either way
    later = NoFeasibleBy(Deadline(3600.0, clock))
    assert not later(INFEASIBLE)  # an hour has not passed


# ---------------------------------------------------------------------------------- Budget
@pytest.mark.parametrize(
    "seconds, iterations, share, expected",
    [(10.0, None, 0.25, (2.5, None)), (None, 1000, 0.04, (None, 40)), (2.0, 10, 0.01, (0.02, 1))],
)
def test_a_budget_part_is_a_share_of_each_budget_and_at_least_one_iteration(
    seconds, iterations, share, expected
):
    part = Budget(seconds, iterations).part(share)
    assert (part.seconds, part.iterations) == pytest.approx(expected)


def test_a_budget_part_rounds_iterations_down():
    assert Budget(None, 999).part(0.15).iterations == 149
    assert Budget(None, 0).part(1.0).iterations == 1  # at least one


def test_a_deadline_before_another_reads_the_clock_once_and_keeps_it_without_a_limit():
    """Its start and its seconds are the same reading: made at 0 with 10 s (ends at 10), read
    at 2 by ``before(2)`` (6 s from 2, ending at 8) and at 5 afterwards: 3 s are left. A
    deadline without a limit gives one on the same clock."""
    readings = iter([0.0, 2.0])
    clock = FakeClock(5.0)
    deadline = Deadline(10.0, lambda: next(readings, clock()))
    earlier = deadline.before(2.0)
    assert earlier.seconds == 6.0 and earlier.left() == 3.0
    unlimited = Deadline(None, clock).before(0.5)
    assert unlimited.clock is clock and unlimited.seconds is None


def test_without_a_limit_or_iterations_the_error_says_exactly_what_to_give():
    with pytest.raises(ValueError, match=r"^give seconds or max_iterations$"):
        Deadline(None).criterion()
