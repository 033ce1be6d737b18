"""Route recombination: the cheapest valid solution made of the given solutions' routes."""

from __future__ import annotations

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers.recombine import recombine, route_pool


def length(instance: CLRPInstance, route: Route) -> float:
    """Euclidean length of a route, from the definition."""
    points = [instance.depot_locs[route.depot]]
    points += [instance.customer_locs[c] for c in route.customers]
    points.append(instance.depot_locs[route.depot])
    return sum(float(np.hypot(*(b - a))) for a, b in zip(points[:-1], points[1:]))


def objective(instance: CLRPInstance, routes) -> float:
    """Opening costs of the depots used + one vehicle per route + route lengths."""
    depots = {r.depot for r in routes}
    return (
        sum(float(instance.opening_cost[d]) for d in depots)
        + instance.vehicle_fixed_cost * len(routes)
        + sum(length(instance, r) for r in routes)
    )


def two_sides() -> CLRPInstance:
    """Depot 0 on the left with customers 0 and 1 near it, depot 1 on the right with 2 and 3."""
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 0.0], [10.0, 1.0], [11.0, 0.0]]),
        depot_capacity=np.array([10.0, 10.0]),
        opening_cost=np.array([1.0, 1.0]),
        demand=np.ones(4),
        vehicle_capacity=2.0,
        vehicle_fixed_cost=1.0,
        name="two-sides",
    )


def test_routes_of_two_solutions_combine_into_a_better_one():
    instance = two_sides()
    # a: the left side in one route, the right side in two; b: the other way round
    a = CLRPSolution([Route(0, (0, 1)), Route(1, (2,)), Route(1, (3,))])
    b = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(1, (3, 2))])
    best = recombine(instance, [a, b], seconds=10.0)
    best.check(instance)
    expected = objective(instance, [Route(0, (0, 1)), Route(1, (3, 2))])
    assert best.cost(instance).total == pytest.approx(expected, rel=1e-12)
    assert expected < min(objective(instance, s.routes) for s in (a, b)) - 1.0
    assert sorted((r.depot, sorted(r.customers)) for r in best.routes) == [
        (0, [0, 1]),
        (1, [2, 3]),
    ]


def test_the_pool_keeps_one_route_per_depot_and_customer_set_in_its_shortest_order():
    instance = two_sides()
    # customers 2 and 3 from depot 1 in both orders (equal length: a cycle), and a detour order
    # of customers 0 and 1 from depot 1 versus from depot 0 (different depots: both kept)
    a = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])
    b = CLRPSolution([Route(1, (1, 0)), Route(1, (3, 2))])
    pool = route_pool(instance, [a, b])
    keys = sorted((p.route.depot, tuple(sorted(p.route.customers))) for p in pool)
    assert keys == [(0, (0, 1)), (1, (0, 1)), (1, (2, 3))]
    for p in pool:
        assert p.length == pytest.approx(length(instance, p.route), rel=1e-12)
        assert p.load == 2.0


@pytest.mark.parametrize("short_first", [True, False])
def test_the_pool_keeps_the_shortest_order_of_a_route_whichever_came_first(short_first):
    """Depot 0 at the origin, customers 0 (0, 1), 1 (1, 1), 2 (1, 0): the order 0, 1, 2 is
    4 long (four unit steps), the order 0, 2, 1 is 2 + 2 sqrt 2."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0]]),
        customer_locs=np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]),
        depot_capacity=np.array([10.0]),
        opening_cost=np.array([1.0]),
        demand=np.array([1.0, 2.0, 3.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    short = CLRPSolution([Route(0, (0, 1, 2))])
    long = CLRPSolution([Route(0, (0, 2, 1))])
    (kept,) = route_pool(instance, [short, long] if short_first else [long, short])
    assert kept.route == Route(0, (0, 1, 2))
    assert kept.length == pytest.approx(4.0, rel=1e-12) and kept.load == 6.0


def test_a_lone_solution_comes_back_unchanged_and_bad_input_is_named():
    instance = two_sides()
    only = CLRPSolution([Route(0, (0, 1)), Route(1, (2, 3))])
    assert recombine(instance, [only], seconds=1.0).cost(instance).total == pytest.approx(
        objective(instance, only.routes), rel=1e-12
    )
    with pytest.raises(ValueError, match="at least one solution"):
        recombine(instance, [], seconds=1.0)
    overloaded = CLRPSolution([Route(0, (0, 1, 2)), Route(1, (3,))])  # q = 2
    with pytest.raises(ValueError, match=r"solutions\[1\] is invalid.*vehicle capacity"):
        recombine(instance, [only, overloaded], seconds=1.0)


#: Seeds whose random solutions recombine into a better one and whose depot capacities bind.
SEEDS = (2, 3, 5, 7)


def random_solutions(instance: CLRPInstance, rng: np.random.Generator, count: int):
    """Valid solutions built at random: customers in random order, routes filled up to q at a
    random depot (kept only when every capacity holds)."""
    found = []
    q = instance.vehicle_capacity
    while len(found) < count:
        routes, current, load = [], [], 0.0
        depot = int(rng.integers(instance.num_depots))
        for c in rng.permutation(instance.num_customers):
            if load + instance.demand[c] > q or (current and rng.random() < 0.3):
                routes.append(Route(depot, tuple(current)))
                current, load, depot = [], 0.0, int(rng.integers(instance.num_depots))
            current.append(int(c))
            load += instance.demand[c]
        routes.append(Route(depot, tuple(current)))
        solution = CLRPSolution(routes)
        try:
            solution.check(instance)
        except ValueError:
            continue
        found.append(solution)
    return found


def brute_force(instance: CLRPInstance, solutions) -> float:
    """The cheapest set of the distinct routes (each in its shortest order seen) that serves
    every customer once within every depot's capacity: every exact cover of the customers by
    the routes, enumerated."""
    shortest: dict[tuple[int, frozenset], Route] = {}
    for s in solutions:
        for r in s.routes:
            key = (r.depot, frozenset(r.customers))
            if key not in shortest or length(instance, r) < length(instance, shortest[key]):
                shortest[key] = r
    keys = list(shortest)

    def covers(unserved: frozenset, chosen: list):
        if not unserved:
            yield list(chosen)
            return
        first = min(unserved)
        for key in keys:
            if first in key[1] and key[1] <= unserved:
                chosen.append(key)
                yield from covers(unserved - key[1], chosen)
                chosen.pop()

    best = np.inf
    for cover in covers(frozenset(range(instance.num_customers)), []):
        load = np.zeros(instance.num_depots)
        for d, cs in cover:
            load[d] += instance.demand[list(cs)].sum()
        if (load <= instance.depot_capacity + 1e-9).all():
            best = min(best, objective(instance, [shortest[k] for k in cover]))
    return best


def binding_instance(seed: int, depot_capacity) -> CLRPInstance:
    rng = np.random.default_rng(seed)
    return CLRPInstance(
        depot_locs=rng.random((3, 2)),
        customer_locs=rng.random((7, 2)),
        depot_capacity=np.asarray(depot_capacity, float),
        opening_cost=rng.uniform(0.5, 1.5, 3),
        demand=np.ones(7),
        vehicle_capacity=3.0,
        vehicle_fixed_cost=0.2,
        name=f"binding-{seed}",
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_recombination_finds_the_best_feasible_combination(seed):
    """Against every exact cover of the customers by the pool's routes, on small instances
    whose depot capacities bind (routes valid one by one overload a depot together)."""
    instance = binding_instance(seed, [3.0, 3.0, 4.0])
    solutions = random_solutions(instance, np.random.default_rng(seed), 8)
    best = recombine(instance, solutions, seconds=10.0)
    best.check(instance)
    optimum = brute_force(instance, solutions)
    assert best.cost(instance).total == pytest.approx(optimum, rel=1e-9)
    # guards: the optimum beats every input, and without depot capacities it would be cheaper
    assert optimum < min(objective(instance, s.routes) for s in solutions) - 1e-6
    loose = binding_instance(seed, [99.0, 99.0, 99.0])
    assert brute_force(loose, solutions) < optimum - 1e-6


def test_each_customer_is_served_once_even_where_twice_would_be_cheaper():
    """On a line d0 - c0 - c1 - c2 - d1 each input serves one far customer from the wrong depot;
    the two good routes overlap on c1 (cost 8 + 2F), every partition costs 10 + 2F."""
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [4.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]),
        depot_capacity=np.array([10.0, 10.0]),
        opening_cost=np.zeros(2),
        demand=np.ones(3),
        vehicle_capacity=2.0,
        vehicle_fixed_cost=1.0,
        name="line",
    )
    a = CLRPSolution([Route(0, (0, 1)), Route(0, (2,))])
    b = CLRPSolution([Route(1, (0,)), Route(1, (1, 2))])
    best = recombine(instance, [a, b], seconds=10.0)
    best.check(instance)
    assert best.cost(instance).total == pytest.approx(10.0 + 2.0)


def test_highs_starts_from_the_best_input_silently_on_one_thread(monkeypatch, capfd, caplog):
    import logging

    from clrp_rl4co.solvers import recombine as module

    instance = two_sides()
    a = CLRPSolution([Route(0, (0, 1)), Route(1, (2,)), Route(1, (3,))])
    b = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(1, (3,)), Route(1, (2,))])
    seen = {}
    real_new, real_start = module.new_highs, module.start_from

    def new_highs(threads, verbose):
        seen["threads"], seen["verbose"] = threads, verbose
        return real_new(threads, verbose)

    def start_from(h, values):
        seen["start"] = list(values)
        real_start(h, values)

    monkeypatch.setattr(module, "new_highs", new_highs)
    monkeypatch.setattr(module, "start_from", start_from)
    caplog.set_level(logging.DEBUG, logger=module.__name__)
    capfd.readouterr()
    recombine(instance, [b, a], seconds=10.0)
    assert capfd.readouterr().out == ""
    assert (seen["threads"], seen["verbose"]) == (1, False)
    # b pays a fourth vehicle; the pool: b's 4 routes, then a's d0 [0, 1]; depots last
    assert objective(instance, a.routes) < objective(instance, b.routes) - 0.5
    assert seen["start"] == [0, 0, 1, 1, 1, 1, 1]
    [message] = [r.getMessage() for r in caplog.records if r.name == module.__name__]
    start = objective(instance, a.routes)
    assert message.startswith("two-sides: recombination of 5 routes: Optimal, ")
    assert message.endswith(f", start {start:.6g})")


def test_an_invalid_highs_result_is_an_error_naming_the_recombination(monkeypatch):
    """HiGHS's columns are decoded as they are: a result serving a customer twice (every
    route chosen) is a bug, reported as such, never returned."""
    import clrp_rl4co.solvers.recombine as module

    instance = two_sides()
    a = CLRPSolution([Route(0, (0, 1)), Route(1, (2,)), Route(1, (3,))])
    b = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(1, (3, 2))])
    monkeypatch.setattr(
        module, "run_highs", lambda h, seconds: ("Optimal", 0.0, 0.0, np.ones(6 + 2))
    )
    with pytest.raises(ValueError, match="two-sides'?: recombination returned an invalid sol"):
        recombine(instance, [a, b], seconds=1.0)
