"""The one result of solving: its readable summary and feasibility, from its definition."""

from __future__ import annotations

from instances import random_instance

from clrp_rl4co.data import CLRPSolution, Route
from clrp_rl4co.result import SolveResult
from clrp_rl4co.solving import failed, not_run, solve
from clrp_rl4co.status import Status


def test_print_shows_status_objective_parts_routes_depots_method_and_details():
    instance = random_instance(4, seed=0, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1)), Route(0, (2, 3))])
    cost = solution.cost(instance)
    result = SolveResult(
        solution, cost.total, "hybrid", "drlhq_clrp20", 2.345, Status.FEASIBLE,
        {"decode": "x8"}, cost=cost,
    )  # fmt: skip
    lines = str(result).splitlines()
    assert lines[:3] == ["Solve result", "============", "    status: feasible"]
    assert lines[3] == (
        f" objective: {cost.total:.10g} = opening {cost.opening:.10g} + vehicles "
        f"{cost.vehicles:.10g} + routing {cost.routing:.10g}"
    )
    assert lines[4:] == [
        "    routes: 2",
        "    depots: 0 open",
        "    method: hybrid (drlhq_clrp20)",
        "   seconds: 2.35",
        "    decode: x8",
    ]
    assert result.is_feasible() and cost.opening + cost.vehicles + cost.routing == cost.total


def test_a_failed_or_unstarted_run_says_why_and_is_not_feasible():
    lost = failed("KilledWorker: worker died", "pyvrp")
    assert lost.status is Status.FAILED and not lost.is_feasible()
    assert "     error: KilledWorker: worker died" in str(lost).splitlines()
    assert not_run("interrupted before it started").status is Status.NOT_RUN


def test_solve_returns_the_cost_parts_without_the_file():
    instance = random_instance(8, seed=3, num_depots=2)
    result = solve(instance, "pyvrp", iterations=100)
    assert result.cost == result.solution.cost(instance)
    assert result.status is Status.FEASIBLE and "    status: feasible" in str(result)


def test_an_interrupted_run_keeps_its_status_and_says_it_was_interrupted():
    instance = random_instance(4, seed=1, num_depots=2)
    solution = CLRPSolution([Route(1, (0, 1)), Route(1, (2, 3))])
    cost = solution.cost(instance)
    result = SolveResult(
        solution, cost.total, "pyvrp", None, 0.5, Status.FEASIBLE, interrupted=True, cost=cost
    )
    lines = str(result).splitlines()
    assert lines[2] == "    status: feasible (interrupted)"
    assert "    method: pyvrp" in lines  # no model: no parentheses after the method
    assert "    depots: 1 open" in lines
    plain = SolveResult(solution, cost.total, "pyvrp", "", 0.5, Status.FEASIBLE, cost=cost)
    assert str(plain).splitlines()[2] == "    status: feasible"
    assert "    method: pyvrp" in str(plain).splitlines()


def test_the_open_depots_are_listed_comma_separated():
    instance = random_instance(4, seed=2, num_depots=3)
    solution = CLRPSolution([Route(0, (0, 1)), Route(2, (2, 3))])
    cost = solution.cost(instance)
    result = SolveResult(solution, cost.total, "hybrid", "m", 1.0, Status.FEASIBLE, cost=cost)
    assert "    depots: 0, 2 open" in str(result).splitlines()


def test_no_objective_line_without_both_a_solution_and_its_cost():
    instance = random_instance(4, seed=3, num_depots=2)
    solution = CLRPSolution([Route(0, (0, 1)), Route(0, (2, 3))])
    cost = solution.cost(instance)
    for result in (
        SolveResult(None, None, "pyvrp", None, 1.0, Status.NO_SOLUTION, cost=cost),
        SolveResult(solution, cost.total, "pyvrp", None, 1.0, Status.FEASIBLE),
    ):
        text = str(result)
        assert "objective:" not in text and "routes:" not in text and "depots:" not in text
        assert text.splitlines()[3:] == ["    method: pyvrp", "   seconds: 1.00"]
