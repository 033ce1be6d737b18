"""The library's ``solve`` / ``solve_many``: what ``auto`` picks (exact on tiny instances, the
paper's model only on instances like its training data, the generalist elsewhere), the inputs it
takes, and many instances over executors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance, tensordict_to_instances
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
