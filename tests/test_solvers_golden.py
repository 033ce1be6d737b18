"""Golden values of the PyVRP path: a refactoring pin.

The objective, open depots and number of routes of :func:`solve_pyvrp` (depot-set search on)
and :func:`route_on_set` were recorded at commit ``cde98e5``, before the PyVRP solver was split
into its stopping criteria, runs and depot-set search. Every run has a seed and an iteration
budget and no time limit (``seconds=None``), so PyVRP is deterministic: two runs of each case in
separate processes gave the same values. A change of any value means the solve path behaves
differently, not that it got better or worse; each case also checks that the solution is valid
(:meth:`CLRPSolution.check`) and priced as recorded.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from instances import large_golden_instance, random_instance

from clrp_rl4co.data import CLRPInstance, CLRPSolution, read_prodhon, tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.solvers import solve_pyvrp
from clrp_rl4co.solvers.pyvrp_solver import nearly_free_depots, route_on_set


def assert_pinned(
    instance: CLRPInstance,
    solution: CLRPSolution,
    objective: float,
    open_depots: tuple[int, ...],
    routes: int,
) -> None:
    """``solution`` is valid and has the recorded cost, open depots and number of routes."""
    solution.check(instance)
    assert solution.cost(instance).total == pytest.approx(objective, rel=1e-9)
    assert solution.open_depots == open_depots
    assert len(solution.routes) == routes


def test_prins_coord20_5_1(benchmarks_root):
    instance = read_prodhon(benchmarks_root / "prins" / "coord20-5-1.dat")
    result = solve_pyvrp(instance, seconds=None, max_iterations=1000, seed=1, depot_search=True)
    assert result.objective == pytest.approx(54793.0, rel=1e-9)
    assert_pinned(instance, result.solution, 54793.0, (1, 2, 4), 5)


def test_generated_clrp50():
    instance = tensordict_to_instances(generate_dataset(CLRPGenerator(num_loc=50), 1, seed=7))[0]
    assert instance.num_depots == 10 and not nearly_free_depots(instance)
    result = solve_pyvrp(instance, seconds=None, max_iterations=1000, seed=2, depot_search=True)
    assert_pinned(instance, result.solution, 27.914358760630215, (2, 5, 6), 11)


def test_nearly_free_depots():
    base = random_instance(40, seed=3, num_depots=6)
    instance = replace(base, opening_cost=base.opening_cost * 0.01, _dist=None)
    assert nearly_free_depots(instance)
    result = solve_pyvrp(instance, seconds=None, max_iterations=1000, seed=3, depot_search=True)
    assert_pinned(instance, result.solution, 16.582642733543437, (0, 1, 2, 4, 5), 9)


def test_route_on_a_fixed_depot_set():
    instance = random_instance(30, seed=4, num_depots=5)
    found = route_on_set(instance, (0, 2, 4), None, max_iterations=1000, seed=4)
    assert_pinned(instance, found, 24.666158253179503, (0, 2, 4), 7)


def test_the_large_instance_path():
    """2,000 customers (``decompose.LARGE_INSTANCE``): one ranked set, routed by parts."""
    instance = large_golden_instance()
    result = solve_pyvrp(instance, seconds=None, max_iterations=50, seed=5, depot_search=True)
    assert_pinned(instance, result.solution, 989.4459642647014, (1, 2, 4, 5), 444)
