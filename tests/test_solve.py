"""The library's ``solve`` / ``solve_many``: what ``auto`` picks (exact on tiny instances, the
paper's model only on instances like its training data, the generalist elsewhere), the inputs it
takes, and many instances over executors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.auto import auto_method, auto_model, generalist_model, looks_like_paper
from clrp_rl4co.data import CLRPInstance, read_prodhon, tensordict_to_instances
from clrp_rl4co.envs.clrp import CLRPGenerator, generate_dataset
from clrp_rl4co.solving import load_model, solve


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
    import clrp_rl4co.pretrained as pretrained  # where auto imports shipped_models from

    monkeypatch.setattr(pretrained, "shipped_models", lambda name=None: sorted(shipped))
    assert generalist_model() == expected


def test_no_shipped_generalist_is_an_error(monkeypatch):
    import clrp_rl4co.pretrained as pretrained  # where auto imports shipped_models from

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
    """A feasible instance of ``customers`` customers and 5 depots (any size), whose depots
    are far from nearly free (opening costs of 100 each: at least 19% of the estimate of
    ``opening_share`` up to 10,000 customers)."""
    rng = np.random.default_rng(0)
    return CLRPInstance(
        depot_locs=rng.random((5, 2)),
        customer_locs=rng.random((customers, 2)),
        depot_capacity=np.full(5, 20.0 * customers),
        opening_cost=np.full(5, 100.0),
        demand=np.full(customers, 10.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name=f"size{customers}",
    )


@pytest.mark.parametrize(
    "customers, seconds, method",
    [
        (400, 10.0, "pyvrp"),  # from 400 customers, at most 30 s
        (500, 30.0, "pyvrp"),
        (450, 20.0, "pyvrp"),
        (1000, 10.0, "pyvrp"),
        (5000, 30.0, "pyvrp"),
        (500, 31.0, "hybrid"),  # a longer budget: the learned start may pay
        (1000, 60.0, "hybrid"),
        (500, None, "hybrid"),  # budget unknown
        (399, 10.0, "hybrid"),
        (200, 10.0, "hybrid"),
    ],
)
def test_auto_method_runs_pyvrp_alone_where_the_hybrid_was_measured_behind(
    customers, seconds, method
):
    assert auto_method(_sized_instance(customers), seconds) == method


def test_auto_runs_pyvrp_alone_on_nearly_free_depots_at_any_size_and_budget():
    """Opening costs of 0.01 against vehicles of 1 and routes of about 0.2 per customer: far
    below 5% of the cost; the exact MIP still takes the tiny instances."""
    base = random_instance(50, seed=0)
    free = replace(base, opening_cost=np.full(5, 0.01))
    assert auto_method(base, 60.0) == "hybrid"
    assert auto_method(free, 60.0) == "pyvrp"
    assert auto_method(free, None) == "pyvrp"
    tiny = replace(random_instance(12, seed=0), opening_cost=np.full(5, 0.01))
    assert auto_method(tiny, 60.0) == "exact"


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
    from clrp_rl4co.auto import resolve

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
    from clrp_rl4co.execution import interrupt

    interrupt.request()
    try:
        result = solve(random_instance(30, seed=4), "pyvrp", seconds=30.0)
    finally:
        interrupt.clear()
    assert result.interrupted and result.seconds < 10.0


def test_sgbs_that_does_not_fit_says_so(monkeypatch):
    from clrp_rl4co.search import decode_plan

    never = replace(decode_plan.PARAMS, sgbs_first_step_factor=1e9)  # its first step never fits
    monkeypatch.setattr(decode_plan, "PARAMS", never)
    instance = random_instance(15, seed=2)
    result = solve(instance, "sgbs", seconds=0.5, model="drlhq_clrp20")
    assert result.method == "sgbs" and "sgbs" not in result.details["decode"]
    assert result.details["note"].startswith("SGBS does not fit in the budget")
    result.solution.check(instance)


def test_sgbs_uses_its_budget_and_returns_within_it():
    """30 customers, 3 s: x8 takes a fraction of a second and all of SGBS 4x4+aug8 about as
    long as the budget; SGBS runs (anytime), returns by the budget (a generous margin for a
    loaded machine) and is never worse than x8 on the same instance."""
    instance = random_instance(30, seed=2)
    load_model("drlhq_clrp20")  # loaded once per process: not part of what is compared
    x8 = solve(instance, "x8", seconds=3.0, model="drlhq_clrp20")
    result = solve(instance, "sgbs", seconds=3.0, model="drlhq_clrp20")
    assert result.details["decode"] == "x8+sgbs" and "note" not in result.details
    assert result.seconds <= 3.0 * 1.05 + 0.5
    assert result.objective <= x8.objective + 1e-9
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


#: Bad arguments of solve and solve_many: (keyword arguments, error, message).
BAD_ARGUMENTS = [
    (dict(seconds="abc"), TypeError, "seconds: must be a number of seconds, got str 'abc'"),
    (dict(seconds=None), TypeError, "seconds: must be a number of seconds, got NoneType None"),
    (dict(seconds=True), TypeError, "seconds: must be a number of seconds, got bool True"),
    (dict(seconds=-2), ValueError, "seconds: must be a positive number of seconds, got -2.0"),
    (dict(seed=1.5), TypeError, "seed: must be an int, got float 1.5"),
    (dict(seed="3"), TypeError, "seed: must be an int, got str '3'"),
    (dict(seed=-1), ValueError, r"seed: must be from 0 to 2147483647 \(2\*\*31 - 1\), got -1"),
    (dict(seed=2**31), ValueError, "seed: must be from 0 to 2147483647 .* got 2147483648"),
    (dict(method=3), TypeError, r"method: must be a str, one of \['auto', .* got int 3"),
    (dict(method=None), TypeError, "method: must be a str, .* got NoneType None"),
    (dict(method="fast"), ValueError, "method: must be one of .* got 'fast'"),
    (dict(model=3), TypeError, "model: must be a model name, a checkpoint path or None, got int 3"),
    (dict(model=""), ValueError, "model: must be a model name or a checkpoint path, got ''"),
    (dict(progress="yes"), TypeError, "progress: must be a bool, got str 'yes'"),
    (dict(progress=None), TypeError, "progress: must be a bool, got NoneType None"),
]


@pytest.mark.parametrize("kwargs, error, message", BAD_ARGUMENTS)
def test_each_bad_argument_is_named_with_its_value(kwargs, error, message):
    from clrp_rl4co.solving import solve_many

    instance = random_instance(6, seed=1, num_depots=2)
    args = {"method": "exact", "seconds": 5.0, **kwargs}
    with pytest.raises(error, match="^" + message + "$"):
        solve(instance, **args)
    seen = []
    with pytest.raises(error, match="^" + message + "$"):
        solve_many([instance], **args, on_result=lambda *a: seen.append(a))
    assert seen == []  # before any solving


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(workers=0), ValueError, "workers: must be >= 1, got 0"),
        (dict(workers=-3), ValueError, "workers: must be >= 1, got -3"),
        (dict(workers=2.5), TypeError, "workers: must be an int, got float 2.5"),
        (dict(workers="4"), TypeError, "workers: must be an int, got str '4'"),
        (dict(workers=True), TypeError, "workers: must be an int, got bool True"),
        (dict(executor=4), TypeError, "executor: must be a concurrent.futures.Executor or None, "
                                      "got int 4"),
        (dict(on_result="print"), TypeError, "on_result: must be callable or None, got str "
                                             "'print'"),
    ],
)  # fmt: skip
def test_each_bad_argument_of_solve_many_is_named_with_its_value(kwargs, error, message):
    from clrp_rl4co.solving import solve_many

    with pytest.raises(error, match="^" + message + "$"):
        solve_many([random_instance(6, seed=1, num_depots=2)], "exact", 5.0, **kwargs)


def test_numpy_numbers_and_a_path_like_model_are_arguments_too(monkeypatch):
    import clrp_rl4co.solvers as solvers

    fake = _Recorder("optimal")
    monkeypatch.setattr(solvers, "solve_exact", fake)
    result = solve(_big_depot_instance(), "exact", seconds=np.float32(5), seed=np.int64(7))
    assert result.status == "optimal" and fake.calls[0]["seed"] == 7
    assert type(fake.calls[0]["seed"]) is int
    from pathlib import Path

    from clrp_rl4co.arguments import check_solve_arguments

    checked = check_solve_arguments("x8", 1, Path("runs/x/policy"), 0, False)
    assert checked == (1.0, "runs/x/policy", 0)


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
    from clrp_rl4co.execution import interrupt
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


# ---------------------------------------------------------------- what solve passes on
def test_the_signature_is_the_documented_one():
    import inspect

    from clrp_rl4co.solving import solve_many

    defaults = {k: p.default for k, p in inspect.signature(solve).parameters.items()}
    assert defaults == {"instance": inspect.Parameter.empty, "method": "auto", "seconds": 10.0,
                        "model": None, "seed": 0, "progress": False, "iterations": None,
                        "started": None}  # fmt: skip
    many = {k: p.default for k, p in inspect.signature(solve_many).parameters.items()}
    assert (many["method"], many["seconds"], many["seed"], many["workers"]) == ("auto", 10.0, 0, 1)
    assert many["executor"] is None and many["progress"] is False
    assert many["iterations"] is None and many["started"] is None


class _Recorder:
    """A stand-in classical solver that records what it was asked and returns a fixed result."""

    def __init__(self, status: str = "feasible", bound: float | None = None):
        self.calls: list[dict] = []
        self.status, self.bound = status, bound

    def __call__(self, instance, **kwargs):
        from types import SimpleNamespace

        from clrp_rl4co.data import CLRPSolution, Route
        from clrp_rl4co.solvers.stopping import Deadline

        if isinstance(kwargs.get("seconds"), Deadline):  # the seconds it had left when called
            kwargs = {**kwargs, "deadline": kwargs["seconds"], "seconds": kwargs["seconds"].left()}
        self.calls.append(kwargs)
        solution = CLRPSolution([Route(0, tuple(range(instance.num_customers)))])
        return SimpleNamespace(solution=solution, status=self.status, bound=self.bound)


def _big_depot_instance() -> CLRPInstance:
    instance = random_instance(5, seed=3, num_depots=2)
    return replace(instance, depot_capacity=np.full(2, 1e6), vehicle_capacity=1e6, _dist=None)


@pytest.mark.parametrize("method, name", [("pyvrp", "solve_pyvrp"), ("exact", "solve_exact")])
def test_a_classical_run_gets_the_budget_left_less_its_margin_and_the_seed(
    monkeypatch, method, name
):
    import clrp_rl4co.solvers as solvers
    from clrp_rl4co.solvers.hybrid import solver_budget

    fake = _Recorder("optimal" if method == "exact" else "feasible", bound=4.0)
    monkeypatch.setattr(solvers, name, fake)
    instance = _big_depot_instance()
    result = solve(instance, method, seconds=2.0, seed=7)
    (call,) = fake.calls
    assert call["seed"] == 7
    assert solver_budget(2.0) - 0.5 < call["seconds"] <= solver_budget(2.0)
    assert result.status == fake.status and result.method == method and result.model is None
    assert result.objective == result.solution.cost(instance).total
    assert result.details == ({"bound": 4.0} if method == "exact" else {})
    # a budget already spent leaves the solver its floor of 1 ms, not more
    solve(instance, method, seconds=1e-4, seed=7)
    assert fake.calls[-1]["deadline"].seconds == solver_budget(0.0) == 1e-3  # its budget


def test_an_exact_run_without_a_bound_reports_no_bound(monkeypatch):
    import clrp_rl4co.solvers as solvers

    monkeypatch.setattr(solvers, "solve_exact", _Recorder("feasible", bound=None))
    assert solve(_big_depot_instance(), "exact", seconds=1.0).details == {}


def test_the_hybrid_gets_the_policy_budget_seed_and_progress(monkeypatch):
    from types import SimpleNamespace

    import clrp_rl4co.solvers.hybrid as hybrid
    from clrp_rl4co.data import CLRPSolution, Route
    from clrp_rl4co.solving import load_model

    calls = []

    def fake(instance, policy, seconds, seed=0, progress=False):
        calls.append((policy, seconds.left(), seed, progress))  # the deadline of the call
        solution = CLRPSolution([Route(0, tuple(range(instance.num_customers)))])
        return SimpleNamespace(solution=solution, status="feasible", decode="x8",
                               start_objective=99.0)  # fmt: skip

    monkeypatch.setattr(hybrid, "solve_hybrid", fake)
    instance = _big_depot_instance()
    result = solve(instance, "hybrid", seconds=3.0, model="drlhq_clrp20", seed=5, progress=True)
    ((policy, seconds, seed, progress),) = calls
    assert policy is load_model("drlhq_clrp20") and 2.0 < seconds <= 3.0
    assert (seed, progress) == (5, True)
    assert (result.method, result.model, result.status) == ("hybrid", "drlhq_clrp20", "feasible")
    assert result.details == {"decode": "x8", "start_objective": 99.0}
    assert result.objective == result.solution.cost(instance).total


def test_x8_that_fits_nothing_is_no_solution_with_a_note():
    instance = random_instance(15, seed=2)
    result = solve(instance, "x8", seconds=1e-4, model="drlhq_clrp20")
    assert (result.solution, result.objective, result.status) == (None, None, "no solution")
    assert result.details["note"] == "not even one greedy rollout fits in the budget"


def test_x8_that_fits_is_feasible_with_its_decode():
    instance = random_instance(15, seed=2)
    result = solve(instance, "x8", seconds=10.0, model="drlhq_clrp20")
    assert result.status == "feasible" and "note" not in result.details
    assert result.details["decode"] == "x8"


@pytest.mark.parametrize("size, model", [(5, "drlhq_clrp10"), (200, "drlhq_clrp100")])
def test_a_factor_two_from_a_training_size_still_gets_that_model(size, model):
    instance = paper_instance(size)
    assert looks_like_paper(instance)
    assert auto_model(instance) == model


@pytest.mark.parametrize(
    "field, edit",
    [
        ("locs", "zero"),  # a coordinate exactly 0 or 1 is still in the unit square
        ("locs", "one"),
        ("depot_capacity", "low"),  # the size rule's bounds are inside
        ("depot_capacity", "high"),
        ("opening_cost", "low"),
        ("opening_cost", "high"),
    ],
)
def test_the_paper_ranges_include_their_bounds(field, edit):
    from clrp_rl4co.envs.clrp import size_rule

    instance = paper_instance(20)
    rule = size_rule(20)
    if field == "locs":
        value = 0.0 if edit == "zero" else 1.0
        instance = changed(
            instance, customer_locs=np.vstack([[value, value], instance.customer_locs[1:]])
        )
    else:
        low, high = rule[field]
        values = getattr(instance, field).copy()
        values[0] = low if edit == "low" else high
        instance = changed(instance, **{field: values})
    assert looks_like_paper(instance)


def test_a_demand_of_twenty_is_not_the_papers():
    instance = paper_instance(20)
    demand = instance.demand.copy()
    demand[0] = 20
    assert not looks_like_paper(changed(instance, demand=demand))


def test_a_worker_task_runs_one_thread_and_passes_everything_on(monkeypatch):
    import torch

    import clrp_rl4co.solving as solving

    seen = []
    monkeypatch.setattr(solving, "solve", lambda *args, **kw: seen.append((args, kw)) or "r")
    threads = torch.get_num_threads()
    try:
        assert solving._solve_task(("inst", "pyvrp", 3.0, "m", 4, 7, 0.5)) == "r"
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    assert seen == [(("inst", "pyvrp", 3.0, "m", 4), {"iterations": 7, "started": 0.5})]
    assert solving._solve_here(("inst", "x8", 2.0, None, 1, None, None)) == "r"
    assert seen[-1] == (
        ("inst", "x8", 2.0, None, 1),
        {"progress": False, "iterations": None, "started": None},
    )


def test_preloading_reads_files_and_loads_the_models_a_fork_will_share(benchmarks_root, tmp_path):
    import clrp_rl4co.solving as solving

    path = benchmarks_root / "prins" / "coord20-5-1.dat"
    bad = tmp_path / "bad.json"
    solving._POLICIES.pop("drlhq_clrp20", None)
    tasks = [(str(path), "x8", 5.0, "drlhq_clrp20", 0, None, None)]
    tasks.append((str(bad), "x8", 5.0, None, 1, None, None))
    out = solving._preload(tasks)
    assert isinstance(out[0][0], CLRPInstance) and out[0][1:] == tasks[0][1:]
    assert out[1] == tasks[1]  # unreadable: left for its task to report
    assert "drlhq_clrp20" in solving._POLICIES


def test_many_instances_over_workers_use_the_package_pool(monkeypatch):
    import clrp_rl4co.execution.parallel as parallel
    from clrp_rl4co.solving import solve_many

    made = []

    class Pool(parallel.ProcessPool):
        def __init__(self, max_workers):
            made.append(max_workers)
            super().__init__(max_workers)

    monkeypatch.setattr(parallel, "ProcessPool", Pool)
    items = [random_instance(6, seed=k, num_depots=2) for k in range(2)]
    solve_many(items, "exact", 5.0, workers=1)
    assert made == []  # one worker: this process
    results = solve_many(items, "exact", 5.0, workers=2)
    assert made == [2] and [r.status for r in results] == ["optimal", "optimal"]


def test_failed_and_not_run_results_name_the_method_and_model(monkeypatch):
    import clrp_rl4co.solving as solving
    from clrp_rl4co.execution import interrupt

    monkeypatch.setattr(solving, "solve", lambda *a, **k: (_ for _ in ()).throw(KeyError()))
    (result,) = solving.solve_many([random_instance(6, seed=1)], "x8", 5.0, model="m")
    assert (result.method, result.model, result.seconds, result.objective) == ("x8", "m", 0.0, None)
    assert result.error == "KeyError"  # an exception without a message: its type
    interrupt.request()
    try:
        (result,) = solving.solve_many([random_instance(6, seed=1)], "x8", 5.0, model="m")
    finally:
        interrupt.clear()
    assert (result.status, result.method, result.model, result.seconds) == (
        "not run",
        "x8",
        "m",
        0.0,
    )
    assert solving.not_run("why").method == "" and solving.failed("e").model is None


def test_an_error_is_its_first_line():
    import clrp_rl4co.solving as solving

    assert solving._error_text(ValueError("a.dat: bad\nmore")) == "a.dat: bad"
    assert solving._error_text(OSError("")) == ""
    assert solving._error_text(RuntimeError("x\ny")) == "RuntimeError: x"


def test_the_defaults_are_auto_ten_seconds_seed_zero_no_progress(monkeypatch):
    import clrp_rl4co.solvers as solvers
    import clrp_rl4co.solvers.hybrid as hybrid
    from clrp_rl4co.solvers.hybrid import solver_budget
    from clrp_rl4co.solving import solve_many

    fake = _Recorder("optimal")
    monkeypatch.setattr(solvers, "solve_exact", fake)
    tiny = _big_depot_instance()  # 5 customers: auto is exact
    assert solve(tiny).method == "exact"
    assert solve_many([tiny])[0].method == "exact"
    for call in fake.calls:
        assert call["seed"] == 0
        assert solver_budget(10.0) - 0.5 < call["seconds"] <= solver_budget(10.0)
    seen = []

    def fake_hybrid(instance, policy, seconds, seed=0, progress=False):
        seen.append(progress)
        raise RuntimeError("stop here")

    monkeypatch.setattr(hybrid, "solve_hybrid", fake_hybrid)
    with pytest.raises(RuntimeError):
        solve(random_instance(15, seed=2), "hybrid", model="drlhq_clrp20")
    solve_many([random_instance(15, seed=2)], "hybrid", model="drlhq_clrp20")
    assert seen == [False, False]


def test_sgbs_that_fits_is_in_the_decode_without_a_note():
    instance = random_instance(15, seed=2)
    result = solve(instance, "sgbs", seconds=30.0, model="drlhq_clrp20")
    assert "sgbs" in result.details["decode"] and "note" not in result.details
    result.solution.check(instance)


def test_a_stop_request_cancels_what_an_executor_has_not_started():
    from concurrent.futures import ThreadPoolExecutor

    from clrp_rl4co.execution import interrupt
    from clrp_rl4co.solving import solve_many

    items = [random_instance(6, seed=k, num_depots=2) for k in range(4)]
    try:
        with ThreadPoolExecutor(1) as executor:
            results = solve_many(
                items, "exact", 5.0, executor=executor, on_result=lambda i, r: interrupt.request()
            )
    finally:
        interrupt.clear()
    assert results[0].status == "optimal" and results[-1].status == "not run"


def test_preloading_resolves_auto_with_the_instance_and_its_budget():
    from test_solve_many import _large

    import clrp_rl4co.solving as solving

    generalist = generalist_model()
    solving._POLICIES.pop(generalist, None)
    solving._preload([(_large(), "auto", 10.0, None, 0, None, None)])  # 400, 10 s: PyVRP alone
    assert generalist not in solving._POLICIES
    solving._preload([(_large(), "x8", 10.0, None, 0, None, None)])  # auto's: the generalist
    assert generalist in solving._POLICIES


def _routes(result) -> list:
    return [(r.depot, r.customers) for r in result.solution.routes]


def test_the_repeatable_mode_gives_the_same_solution_under_any_load():
    """Same instance and seed with ``iterations``: the same solution, once on a quiet core and
    once beside two processes that keep the CPUs busy (a time budget would give PyVRP fewer
    iterations there)."""
    import subprocess
    import sys

    instance = random_instance(40, seed=11, num_depots=4)
    quiet = solve(instance, "pyvrp", iterations=300, seed=3)
    burn = "import time\nend = time.time() + 60\nwhile time.time() < end: pass"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(2)]
    try:
        loaded = solve(instance, "pyvrp", iterations=300, seed=3)
    finally:
        for process in burners:
            process.kill()
    assert _routes(loaded) == _routes(quiet) and loaded.objective == quiet.objective
    assert quiet.details["iterations"] == 300 and quiet.method == "pyvrp"
    other_seed = solve(instance, "pyvrp", iterations=300, seed=4)
    other_seed.solution.check(instance)


def test_the_repeatable_mode_of_each_method():
    tiny = random_instance(6, seed=0, num_depots=2)
    exact = solve(tiny, "auto", iterations=50)
    assert exact.method == "exact" and exact.status == "optimal"
    assert solve(tiny, "exact", iterations=50).objective == exact.objective
    larger = random_instance(20, seed=1, num_depots=3)
    assert solve(larger, "auto", iterations=50).method == "pyvrp"  # never the hybrid
    first = solve(larger, "x8", iterations=50, model="drlhq_clrp20")
    again = solve(larger, "x8", iterations=50, model="drlhq_clrp20")
    assert first.details["decode"] == "x8" and _routes(first) == _routes(again)
    for method in ("hybrid", "sgbs"):
        with pytest.raises(ValueError, match=rf"iterations: method '{method}' depends on"):
            solve(larger, method, iterations=50)
    with pytest.raises(ValueError, match="iterations: must be >= 1, got 0"):
        solve(larger, "pyvrp", iterations=0)
    with pytest.raises(TypeError, match="iterations: must be an int or None, got float 2.5"):
        solve(larger, "pyvrp", iterations=2.5)


def test_the_budget_counts_from_an_earlier_start_when_given():
    """``started`` 1.5 s before the call (the command's process start): a 2 s budget leaves
    about 0.5 s for the run, and the reported seconds count from ``started``."""
    import time

    instance = random_instance(30, seed=4, num_depots=3)
    called = time.perf_counter()
    result = solve(instance, "pyvrp", seconds=2.0, started=called - 1.5)
    call = time.perf_counter() - called
    assert call < 1.5  # about 0.5 s: counted from the call, it would take the whole 2 s
    assert 1.5 <= result.seconds <= 2.0 * 1.05 + 0.5


@pytest.mark.parametrize(
    "customers, spread, method",
    [
        (300, 4.0, "pyvrp"),  # heterogeneous from 300 customers, at any budget
        (300, 3.99, "hybrid"),
        (299, 4.0, "hybrid"),
        (600, 12.0, "pyvrp"),
    ],
)
def test_auto_runs_pyvrp_alone_on_heterogeneous_depots_from_300_customers(
    customers, spread, method
):
    """Largest capacity ``spread`` times the smallest (one depot large, four small)."""
    base = _sized_instance(customers)
    small = 20.0 * customers
    capacity = np.array([small * spread, small, small, small, small])
    instance = replace(base, depot_capacity=capacity)
    assert auto_method(instance, 60.0) == method
    assert auto_method(instance, None) == method
