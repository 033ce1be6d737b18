"""The library's ``solve`` / ``solve_many``: what ``auto`` picks (exact on tiny instances, the
paper's model only on instances like its training data, the generalist elsewhere), the inputs it
takes, and many instances over executors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance, read_prodhon, tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.solving import (
    auto_method,
    auto_model,
    generalist_model,
    looks_like_paper,
    solve,
)


def paper_instance(num_customers: int) -> CLRPInstance:
    td = generate_dataset(CLRPGenerator(num_loc=num_customers), 1, seed=5)
    return tensordict_to_instances(td)[0]


def changed(instance: CLRPInstance, **values) -> CLRPInstance:
    return replace(instance, _dist=None, **values)


@pytest.mark.parametrize("size, model", [(10, "drlhq_clrp10"), (20, "drlhq_clrp20"),
                                         (50, "drlhq_clrp50"), (100, "drlhq_clrp100")])  # fmt: skip
def test_paper_instances_get_the_paper_model_of_their_size(size, model):
    instance = paper_instance(size)
    assert looks_like_paper(instance)
    assert auto_model(instance) == model


def test_other_instances_get_the_generalist(benchmarks_root):
    from clrp_rl4co.data import read_prodhon

    prins = read_prodhon(benchmarks_root / "prins" / "coord20-5-1.dat")
    assert not looks_like_paper(prins) and auto_model(prins) == generalist_model()


@pytest.mark.parametrize(
    "change",
    [
        {"vehicle_capacity": 80.0},
        {"vehicle_fixed_cost": 2.0},
        {"rounded_costs": True},
        {"demand": np.full(50, 25.0)},
        {"customer_locs": np.full((50, 2), 2.0)},
        {"opening_cost": np.full(10, 9.0)},
    ],
)
def test_one_difference_from_the_training_data_means_the_generalist(change):
    instance = changed(paper_instance(50), **change)
    assert not looks_like_paper(instance)
    assert auto_model(instance) == generalist_model()


@pytest.mark.parametrize(
    ("shipped", "expected"),
    [
        (["drlhq_clrp50", "drlhqcf_mixed50_cpu"], "drlhqcf_mixed50_cpu"),
        (["drlhqcf_mixed", "drlhqcf_mixed50_cpu"], "drlhqcf_mixed"),
        (["drlhqcf_mixed"], "drlhqcf_mixed"),
    ],
)
def test_the_generalist_is_the_trained_run_once_it_ships(monkeypatch, shipped, expected):
    import clrp_rl4co.policies.pretrained as pretrained

    monkeypatch.setattr(pretrained, "shipped_models", lambda name=None: sorted(shipped))
    assert generalist_model() == expected


def test_no_shipped_generalist_is_an_error(monkeypatch):
    import clrp_rl4co.policies.pretrained as pretrained

    monkeypatch.setattr(pretrained, "shipped_models", lambda name=None: ["drlhq_clrp50"])
    with pytest.raises(FileNotFoundError, match="drlhqcf_mixed"):
        generalist_model()


def test_paper_like_sizes_far_from_any_model_get_the_generalist():
    assert auto_model(paper_instance(300)) == generalist_model()


def test_auto_method_is_exact_only_on_tiny_instances():
    assert auto_method(random_instance(12, seed=0)) == "exact"
    assert auto_method(random_instance(13, seed=0)) == "hybrid"
    assert auto_method(random_instance(12, seed=0), seconds=1000.0) == "exact"


def _sized_instance(customers: int) -> CLRPInstance:
    """A feasible instance of ``customers`` customers and 5 depots (any size)."""
    rng = np.random.default_rng(0)
    return CLRPInstance(
        depot_locs=rng.random((5, 2)),
        customer_locs=rng.random((customers, 2)),
        depot_capacity=np.full(5, 20.0 * customers),
        opening_cost=np.ones(5),
        demand=np.full(customers, 10.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name=f"size{customers}",
    )


@pytest.mark.parametrize(
    "customers, seconds, method",
    [
        (400, 10.0, "pyvrp"),  # the measured band: 400-500 customers, at most 30 s
        (500, 30.0, "pyvrp"),
        (450, 20.0, "pyvrp"),
        (500, 31.0, "hybrid"),  # a longer budget: the learned start may pay
        (500, None, "hybrid"),  # budget unknown
        (399, 10.0, "hybrid"),
        (200, 10.0, "hybrid"),
        (501, 10.0, "hybrid"),
        (1000, 10.0, "hybrid"),  # PyVRP alone far behind the hybrid there
    ],
)
def test_auto_method_runs_pyvrp_alone_where_the_hybrid_was_measured_behind(
    customers, seconds, method
):
    assert auto_method(_sized_instance(customers), seconds) == method


def test_auto_passes_the_budget_on_and_runs_pyvrp_alone_in_its_band():
    outcome = solve(_sized_instance(400), "auto", seconds=1.0)
    assert outcome.method == "pyvrp" and outcome.model is None  # no policy decoded


def test_exact_under_auto_proves_a_tiny_instance():
    outcome = solve(random_instance(6, seed=1, num_depots=2), "auto", seconds=5.0)
    assert outcome.method == "exact" and outcome.status == "optimal"
    assert outcome.model is None


def test_x8_alone_is_the_policy_decode():
    instance = random_instance(15, seed=2)
    outcome = solve(instance, "x8", seconds=5.0, model="drlhq_clrp20")
    assert outcome.method == "x8" and outcome.model == "drlhq_clrp20"
    assert outcome.details["decode"] == "x8"
    outcome.solution.check(instance)


# ---------------------------------------------------------------- the library call's contract
def test_resolve_names_a_model_only_for_the_methods_that_decode_one():
    from clrp_rl4co.solving import resolve

    instance = random_instance(15, seed=2)
    for method in ("x8", "sgbs", "hybrid"):
        assert resolve(instance, method, 10.0, None) == (method, auto_model(instance))
        assert resolve(instance, method, 10.0, "drlhq_clrp20") == (method, "drlhq_clrp20")
    for method in ("pyvrp", "exact"):
        assert resolve(instance, method, 10.0, "drlhq_clrp20") == (method, None)
    assert resolve(instance, "auto", 10.0, None) == ("hybrid", auto_model(instance))
    with pytest.raises(ValueError, match="method: must be one of .* got 'fast'"):
        resolve(instance, "fast", 10.0, None)


@pytest.mark.parametrize("seconds", [0, -1.0, float("inf"), float("nan")])
def test_the_budget_must_be_a_positive_finite_number_of_seconds(seconds):
    with pytest.raises(ValueError, match="seconds: must be a positive number of seconds"):
        solve(random_instance(6, seed=1, num_depots=2), "exact", seconds=seconds)


def test_solve_takes_a_file_path_as_text_or_path(benchmarks_root):
    from pathlib import Path

    path = benchmarks_root / "prins" / "coord20-5-1.dat"
    for given in (str(path), Path(path)):
        result = solve(given, "pyvrp", seconds=0.3)
        assert result.method == "pyvrp" and result.model is None
        # Prins files price arcs ceil(100 d): an integer objective, the solution's cost
        assert result.objective == int(result.objective)
        assert result.objective == result.solution.cost(read_prodhon(path)).total


def test_solve_refuses_what_is_neither_an_instance_nor_a_path():
    with pytest.raises(
        TypeError, match="instance: expected a CLRPInstance or a file path, got int"
    ):
        solve(3, "pyvrp", seconds=1.0)


def test_a_dataset_file_of_several_instances_is_for_solve_many(tmp_path):
    from clrp_rl4co.data import instances_to_tensordict
    from clrp_rl4co.envs.clrp import save_dataset

    pair = [random_instance(6, seed=1, num_depots=2), random_instance(6, seed=2, num_depots=2)]
    path = tmp_path / "pair.npz"
    save_dataset(instances_to_tensordict(pair, normalize_locs=False), path)
    with pytest.raises(ValueError, match="pair.npz: holds 2 instances"):
        solve(path, "exact", seconds=5.0)


def test_the_result_reports_what_ran_within_the_budget():
    instance = random_instance(6, seed=1, num_depots=2)
    result = solve(instance, "exact", seconds=5.0)
    assert result.status == "optimal" and result.error is None and not result.interrupted
    assert result.objective == pytest.approx(result.solution.cost(instance).total, rel=1e-12)
    assert "bound" in result.details and result.details["bound"] <= result.objective + 1e-6
    assert 0.0 < result.seconds < 5.0


def test_a_requested_stop_marks_the_result_interrupted():
    from clrp_rl4co import interrupt

    interrupt.request()
    try:
        result = solve(random_instance(30, seed=4), "pyvrp", seconds=30.0)
    finally:
        interrupt.clear()
    assert result.interrupted and result.seconds < 10.0


def test_sgbs_that_does_not_fit_says_so():
    instance = random_instance(15, seed=2)
    result = solve(instance, "sgbs", seconds=0.5, model="drlhq_clrp20")
    assert result.method == "sgbs" and "sgbs" not in result.details["decode"]
    assert result.details["note"].startswith("SGBS does not fit in the budget")
    result.solution.check(instance)


def test_a_model_is_loaded_once_per_process():
    from clrp_rl4co.solving import load_model

    first = load_model("drlhq_clrp20")
    assert load_model("drlhq_clrp20") is first and not first.training


# ---------------------------------------------------------------- many instances, one process
def test_solve_many_checks_method_and_budget_before_solving():
    from clrp_rl4co.solving import solve_many

    calls = []
    with pytest.raises(ValueError, match="method: must be one of"):
        solve_many([random_instance(6, seed=1)], "fast", 1.0, on_result=lambda *a: calls.append(a))
    with pytest.raises(ValueError, match="seconds: must be a positive"):
        solve_many([random_instance(6, seed=1)], "exact", 0, on_result=lambda *a: calls.append(a))
    assert calls == []


def test_solve_many_reports_each_instance_in_order_and_failures_as_results(tmp_path):
    from clrp_rl4co.solving import solve_many

    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    items = [
        random_instance(6, seed=1, num_depots=2),
        bad,
        random_instance(6, seed=2, num_depots=2),
    ]
    seen = []
    results = solve_many(items, "exact", 5.0, on_result=lambda i, r: seen.append((i, r.status)))
    assert seen == [(0, "optimal"), (1, "failed"), (2, "optimal")]
    assert [r.status for r in results] == ["optimal", "failed", "optimal"]
    # a ValueError's message is the error as it is (it names the file); no type name in front
    assert results[1].error.startswith(str(bad)) and results[1].objective is None
    assert results[0].objective == solve(items[0], "exact", 5.0).objective


def test_an_unexpected_exception_is_named_by_its_type(monkeypatch):
    import clrp_rl4co.solving as solving

    def broken(*args, **kwargs):
        raise IndexError("boom")

    monkeypatch.setattr(solving, "solve", broken)
    (result,) = solving.solve_many([random_instance(6, seed=1)], "exact", 5.0)
    assert (result.status, result.error, result.method) == ("failed", "IndexError: boom", "exact")


def test_after_a_stop_request_the_instances_not_started_are_not_run():
    from clrp_rl4co import interrupt
    from clrp_rl4co.solving import solve_many

    items = [random_instance(6, seed=k, num_depots=2) for k in range(3)]

    def stop_after_first(index, result):
        interrupt.request()

    try:
        results = solve_many(items, "exact", 5.0, on_result=stop_after_first)
    finally:
        interrupt.clear()
    assert [r.status for r in results] == ["optimal", "not run", "not run"]
    assert results[1].error == "interrupted before it started"
