"""The hybrid's budget (:mod:`clrp_rl4co.solvers.hybrid`) from its definitions, on fake clocks:
the deadline a classical solver gets (:func:`solver_deadline`), the budget counted from the
call's start, and no explore phase shown when decoding left no time."""

from __future__ import annotations

import pytest
from clocks import FakeClock
from test_solvers_hybrid_budget import (  # the fakes of the budget tests
    BARS,
    S1,
    Policy,
    corner,
    fakes,  # noqa: F401 (a fixture)
    hybrid_params,
)

from clrp_rl4co.search.learned_starts import LearnedStarts
from clrp_rl4co.solvers import hybrid
from clrp_rl4co.solvers.hybrid import solve_hybrid, solver_budget, solver_deadline
from clrp_rl4co.solvers.stopping import Deadline


def test_a_classical_solver_gets_the_solver_budget_of_the_time_left_on_the_same_clock():
    clock = FakeClock(0.0)
    deadline = Deadline(10.0, clock)
    clock.now = 4.0  # 6 s left
    given = solver_deadline(deadline)
    assert given.clock is clock
    assert given.seconds == pytest.approx(solver_budget(6.0), rel=1e-12)
    assert given.left() == pytest.approx(solver_budget(6.0), rel=1e-12)  # from now


def test_the_budget_counts_from_the_calls_first_clock_reading(monkeypatch):
    """A clock that reads 1000 at the call's start and 1004 at every later reading: 4 of the
    10 s are spent whatever the call does after starting, so PyVRP alone (no learned start)
    gets the solver budget of the 6 s left."""
    readings = iter([1000.0])
    calls = []

    def alone(instance, seconds, seed):
        calls.append(seconds)
        return hybrid.make_result(instance, S1, solver="pyvrp", runtime=seconds)

    monkeypatch.setattr(hybrid, "learned_starts", lambda *a, **k: LearnedStarts())
    monkeypatch.setattr(hybrid, "solve_pyvrp", alone)
    result = solve_hybrid(corner(), object(), seconds=10.0, clock=lambda: next(readings, 1004.0))
    assert calls == [pytest.approx(solver_budget(6.0), rel=1e-12)]
    assert result.runtime == pytest.approx(4.0)


@pytest.mark.parametrize("large", [False, True])
def test_no_explore_phase_is_shown_when_decoding_left_no_time(fakes, monkeypatch, large):  # noqa: F811
    """The decode ends at the deadline (no end margin or reserve): step 2 runs nothing, and
    the bar shows none of its phases (refining a start, PyVRP alone)."""
    clock, calls = fakes
    hybrid_params(monkeypatch, end_margin=0.0, end_share=0.0)
    if large:  # the large-instance branch: PyVRP alone first
        monkeypatch.setattr(hybrid, "LARGE_INSTANCE", 2)
    decode, end = hybrid.learned_starts, clock.now + 100.0

    def to_the_end(*args, **kwargs):
        found = decode(*args, **kwargs)
        clock.now = end
        return found

    monkeypatch.setattr(hybrid, "learned_starts", to_the_end)
    solve_hybrid(corner(), Policy(), seconds=100.0, recombine_share=0.0, clock=clock)
    assert [c[0] for c in calls] == ["decode"]
    phases = BARS[-1].phases
    assert not [p for p in phases if p.startswith(("refine", "pyvrp"))], phases
