"""The solvers' shared result record (``make_result``) and input checks, on a hand-made
instance: every field of the result, each status, and the errors naming instance and solver."""

import dataclasses
import math
import re

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers.common import (
    SolverResult,
    check_solution,
    make_result,
)
from clrp_rl4co.status import Status


@pytest.fixture
def inst():
    # depot 0 at (0, 0), customers at (3, 4) and (0, 4): the route 0 -> 1 -> 0 costs 5 + 3 + 4
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0]]),
        customer_locs=np.array([[3.0, 4.0], [0.0, 4.0]]),
        depot_capacity=np.array([10.0]),
        opening_cost=np.array([2.0]),
        demand=np.array([3.0, 4.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
        name="hand",
    )


def test_status_words():
    """One word (or two) per status, the same in str(), formatting and comparisons, as the
    command writes them."""
    words = ["optimal", "feasible", "no solution", "interrupted", "failed", "not run"]
    assert [s.value for s in Status] == words
    assert [str(s) for s in Status] == words and [f"{s}" for s in Status] == words
    assert Status.NOT_RUN == "not run" and Status("no solution") is Status.NO_SOLUTION


def test_a_solution_is_checked_priced_and_flagged(inst):
    sol = CLRPSolution([Route(0, (0, 1))])
    total = 2.0 + 1.0 + 5.0 + 3.0 + 4.0
    res = make_result(inst, sol, solver="exact", runtime=1.5, bound=14.0, proven_optimal=False)
    assert res == SolverResult(sol, total, 14.0, False, "feasible", 1.5, "exact", "hand")
    res = make_result(inst, sol, solver="exact", runtime=0.5, bound=total, proven_optimal=True)
    assert res == SolverResult(sol, total, total, True, "optimal", 0.5, "exact", "hand")
    res = make_result(inst, sol, solver="pyvrp", runtime=2.0, status="time limit")
    assert res == SolverResult(sol, total, None, False, "time limit", 2.0, "pyvrp", "hand")


def test_no_solution_is_not_a_cost(inst):
    res = make_result(inst, None, solver="exact", runtime=3.0, bound=7.5, proven_optimal=True)
    assert res == SolverResult(None, None, 7.5, False, "no solution", 3.0, "exact", "hand")


@pytest.mark.parametrize("bound", [math.inf, -math.inf, math.nan])
def test_a_bound_that_is_not_finite_is_refused(inst, bound):
    message = (
        f"instance 'hand': solver 'exact' gave bound {bound!r}; pass None when there is no "
        "finite bound"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        make_result(inst, None, solver="exact", runtime=0.0, bound=bound)


def test_an_invalid_solution_names_instance_source_and_violation(inst):
    unserved = CLRPSolution([Route(0, (0,))])
    with pytest.raises(
        ValueError,
        match=r"^instance 'hand': solver 'pyvrp' returned an invalid solution: .*customer 1 is "
        r"not served",
    ):
        make_result(inst, unserved, solver="pyvrp", runtime=0.0)
    with pytest.raises(
        ValueError, match=r"^instance 'hand': the warm start is invalid: customer 1 is not served$"
    ):
        check_solution(inst, unserved, "the warm start is invalid")
    check_solution(inst, CLRPSolution([Route(0, (1,)), Route(0, (0,))]), "anything")


def test_an_instance_cannot_change_after_its_check(inst):
    """Checked once, on construction: its arrays cannot change in place afterwards, and a
    changed copy is checked in its turn."""
    with pytest.raises(ValueError, match="read-only"):
        inst.demand[1] = 12.0
    with pytest.raises(ValueError, match=r"^hand: demand\[0, 1\] = 12 exceeds vehicle_capacity"):
        dataclasses.replace(inst, demand=np.array([1.0, 12.0]))
