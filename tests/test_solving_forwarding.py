"""What :func:`clrp_rl4co.solve` and :func:`clrp_rl4co.solve_many` hand on to the code that runs
each instance: the arguments of every task, the earlier ``started`` of the instances that start
at once, the solvers' arguments in the repeatable mode and the decode's seed and clock, and
what a worker adds to its result (``details["reruns"]``)."""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from clocks import FakeClock
from instances import random_instance

import clrp_rl4co.solving as solving
from clrp_rl4co.data import CLRPSolution, Route
from clrp_rl4co.result import SolveResult
from clrp_rl4co.status import Status


def _spacious(num_customers: int = 5, seed: int = 3):
    """A random instance whose depots and vehicles hold everything (one route is valid)."""
    instance = random_instance(num_customers, seed=seed, num_depots=2)
    return replace(instance, depot_capacity=np.full(2, 1e6), vehicle_capacity=1e6, _dist=None)


def _one_route(instance) -> CLRPSolution:
    return CLRPSolution([Route(0, tuple(range(instance.num_customers)))])


def _recording_solve(
    instance, method, seconds, model, seed, progress=False, iterations=None, started=None
):
    """A stand-in for :func:`solve` whose result carries the arguments it got (it travels back
    from a worker process by pickle)."""
    got = {"args": (method, seconds, model, seed), "progress": progress}
    got.update(iterations=iterations, started=started)
    return SolveResult(None, None, method, model, 0.0, Status.NO_SOLUTION, details=got)


def test_each_instance_in_this_process_gets_every_argument_and_only_the_first_the_start(
    monkeypatch,
):
    """One worker: every instance gets method, seconds, model, seed, progress and iterations;
    only the first (the one that starts at once) counts from ``started``."""
    monkeypatch.setattr(solving, "solve", _recording_solve)
    items = [random_instance(6, seed=k, num_depots=2) for k in range(3)]
    results = solving.solve_many(
        items, "x8", 2.0, model="m", seed=4, progress=True, iterations=7, started=0.5
    )
    for result in results:
        assert result.details["args"] == ("x8", 2.0, "m", 4)
        assert result.details["progress"] is True and result.details["iterations"] == 7
    assert [r.details["started"] for r in results] == [0.5, None, None]


def test_an_executor_gets_every_argument_and_no_instance_counts_from_started(monkeypatch):
    """With an ``executor`` its tasks start when it runs them: ``started`` is not used."""
    monkeypatch.setattr(solving, "solve", _recording_solve)
    items = [random_instance(6, seed=k, num_depots=2) for k in range(2)]
    with ThreadPoolExecutor(1) as executor:
        results = solving.solve_many(
            items, "pyvrp", 3.0, seed=2, iterations=9, started=0.25, executor=executor
        )
    for result in results:
        assert result.details["args"] == ("pyvrp", 3.0, None, 2)
        assert result.details["iterations"] == 9 and result.details["started"] is None


def test_the_first_workers_instances_count_from_started_in_the_process_pool(monkeypatch):
    """``workers`` processes: the first ``workers`` instances start at once and count from
    ``started``, the others from their own start (forked workers see the stand-in)."""
    from clrp_rl4co.execution.parallel import ProcessPool

    if not ProcessPool(1).forks:
        pytest.skip("the workers are not forked here")
    monkeypatch.setattr(solving, "solve", _recording_solve)
    items = [random_instance(6, seed=k, num_depots=2) for k in range(3)]
    results = solving.solve_many(items, "pyvrp", 3.0, workers=2, started=0.75, iterations=5)
    assert [r.details["started"] for r in results] == [0.75, 0.75, None]
    assert all(r.details["iterations"] == 5 for r in results)


def test_a_failing_callback_cancels_the_waiting_instances_and_waits_for_the_running_ones(
    monkeypatch, tmp_path
):
    """When ``on_result`` raises, ``solve_many`` raises it only after the pool's running
    instances have ended, and the instances still waiting never start."""
    from clrp_rl4co.execution.parallel import ProcessPool

    if not ProcessPool(1).forks:
        pytest.skip("the workers are not forked here")
    takes = {6: 0.05, 7: 0.6, 8: 0.6, 9: 0.05}  # seconds by the instance's customers

    def marking_solve(instance, method, seconds, model, seed, **kwargs):
        """Marks its start and end in ``tmp_path`` (forked workers see this stand-in)."""
        size = instance.num_customers
        (tmp_path / f"start-{size}").touch()
        time.sleep(takes[size])
        (tmp_path / f"end-{size}").touch()
        return SolveResult(None, None, method, model, 0.0, Status.NO_SOLUTION)

    def fail(index, result):
        raise RuntimeError(f"callback failed on {index}")

    monkeypatch.setattr(solving, "solve", marking_solve)
    items = [random_instance(size, seed=size, num_depots=2) for size in takes]
    with pytest.raises(RuntimeError, match="callback failed on 0"):
        solving.solve_many(items, "pyvrp", 1.0, workers=2, on_result=fail)
    marks = {p.name for p in tmp_path.iterdir()}
    # 0 ended first and its callback raised; 1 was running and was waited for, and so was 2
    # if it started in 0's place before the stop; 3 was still waiting and never started
    assert "end-7" in marks and ("start-8" not in marks or "end-8" in marks)
    assert "start-9" not in marks
    time.sleep(0.2)
    assert "start-9" not in {p.name for p in tmp_path.iterdir()}


def _rerun_result(*args, **kwargs) -> SolveResult:
    return SolveResult(None, None, "pyvrp", None, 0.0, Status.NO_SOLUTION, details={})


@pytest.mark.parametrize("reruns", [0, 2])
def test_a_dask_task_says_how_often_it_was_rerun(monkeypatch, reruns):
    """On a Dask worker the result says how often the task was started before
    (``details["reruns"]``), 0 on its first run."""
    import clrp_rl4co.execution.parallel as parallel

    monkeypatch.setattr(parallel, "dask_reruns", lambda: reruns)
    monkeypatch.setattr(solving, "solve", _rerun_result)
    result = solving._solve_task(("inst", "pyvrp", 1.0, None, 0, None, None))
    assert result.details == {"reruns": reruns}


def test_outside_dask_a_task_reports_no_reruns(monkeypatch):
    """Outside a Dask worker (``dask_reruns()`` is None) there is no ``reruns`` detail."""
    import clrp_rl4co.execution.parallel as parallel

    monkeypatch.setattr(parallel, "dask_reruns", lambda: None)
    monkeypatch.setattr(solving, "solve", _rerun_result)
    assert solving._solve_task(("inst", "pyvrp", 1.0, None, 0, None, None)).details == {}


def test_a_failed_result_names_no_method_by_default():
    """``failed(error)`` without a method names none (the empty string) and no model."""
    result = solving.failed("boom")
    assert (result.method, result.model, result.error, result.status) == ("", None, "boom",
                                                                          "failed")  # fmt: skip


def test_the_result_carries_the_parts_of_its_objective():
    """``result.cost`` is the solution's cost breakdown, its total the objective."""
    instance = random_instance(6, seed=0, num_depots=2)
    result = solving.solve(instance, "exact", iterations=50)
    assert result.cost is not None
    assert result.cost == result.solution.cost(instance)
    assert result.cost.total == pytest.approx(result.objective)
    assert "= opening" in result.summary()


def test_preloading_resolves_auto_for_the_repeatable_mode():
    """With ``iterations`` auto never runs the hybrid, so no policy is loaded for it."""
    import clrp_rl4co.auto as auto

    instance = random_instance(20, seed=1, num_depots=3)
    method, name = auto.resolve(instance, "auto", 10.0, None)
    assert method == "hybrid" and name is not None  # the timed mode would load a policy
    solving._POLICIES.pop(name, None)
    solving._preload([(instance, "auto", 10.0, None, 0, 50, None)])
    assert name not in solving._POLICIES


class _Solver:
    """A stand-in classical solver: records its keyword arguments, returns ``solution``."""

    def __init__(self, solution, status="feasible", bound=None):
        self.calls: list[dict] = []
        self.solution, self.status, self.bound = solution, status, bound

    def __call__(self, instance, **kwargs):
        self.calls.append(kwargs)
        return SimpleNamespace(solution=self.solution, status=self.status, bound=self.bound)


@pytest.fixture
def classical(monkeypatch):
    """The repeatable mode's solvers replaced by recorders on a spacious 5-customer instance."""
    import clrp_rl4co.solvers as solvers

    instance = _spacious()
    pyvrp = _Solver(_one_route(instance))
    exact = _Solver(_one_route(instance), "optimal", bound=4.0)
    monkeypatch.setattr(solvers, "solve_pyvrp", pyvrp)
    monkeypatch.setattr(solvers, "solve_exact", exact)
    return instance, pyvrp, exact


def test_repeatable_pyvrp_runs_its_iterations_without_a_clock_and_with_the_seed(classical):
    """``iterations``: PyVRP gets that many iterations, no time limit, and the seed."""
    instance, pyvrp, exact = classical
    result = solving.solve(instance, "pyvrp", iterations=40, seed=6)
    assert pyvrp.calls == [{"seconds": None, "max_iterations": 40, "seed": 6}]
    assert exact.calls == []
    assert result.details == {"iterations": 40} and result.status == "feasible"


def test_repeatable_exact_starts_from_pyvrps_solution_without_a_time_limit(classical):
    """The repeatable exact run: PyVRP's iterations, then the MIP warm-started from its
    solution, with no time limit and the seed; the bound is reported."""
    instance, pyvrp, exact = classical
    result = solving.solve(instance, "exact", iterations=30, seed=8)
    assert pyvrp.calls == [{"seconds": None, "max_iterations": 30, "seed": 8}]
    ((call),) = exact.calls
    assert call["warm_start"] is pyvrp.solution
    assert call["seconds"] == math.inf and call["seed"] == 8
    assert result.status == "optimal"
    assert result.details == {"bound": 4.0, "iterations": 30}


def test_repeatable_exact_without_a_pyvrp_solution_starts_cold(classical):
    """No PyVRP solution: the MIP starts without one (``warm_start=False``: not a timed PyVRP
    run of its own, which would depend on the clock); no bound, no ``bound`` detail."""
    instance, pyvrp, exact = classical
    pyvrp.solution, exact.bound = None, None
    result = solving.solve(instance, "exact", iterations=30, seed=1)
    assert exact.calls[0]["warm_start"] is False
    assert result.details == {"iterations": 30}


def _decoder(solutions, calls):
    def learned_starts(instance, policy, seconds, seed=0, count=3, sgbs=None, clock=None, **kw):
        calls.append({"seconds": seconds, "seed": seed, "sgbs": sgbs, "clock": clock})
        return SimpleNamespace(solutions=solutions, decode="x8")

    return learned_starts


@pytest.mark.parametrize("found", [True, False])
def test_repeatable_x8_decodes_with_the_seed_and_no_time_limit(monkeypatch, found):
    """The repeatable x8 decode: no time limit, the seed; its best solution is feasible, no
    solution is ``no solution``."""
    import clrp_rl4co.search.learned_starts as learned

    instance = _spacious()
    calls: list[dict] = []
    solutions = [_one_route(instance)] if found else []
    monkeypatch.setattr(learned, "learned_starts", _decoder(solutions, calls))
    result = solving.solve(instance, "x8", iterations=1, seed=5, model="drlhq_clrp20")
    assert [(c["seconds"], c["seed"], c["sgbs"]) for c in calls] == [(math.inf, 5, False)]
    assert result.status == ("feasible" if found else "no solution")
    assert (result.solution is not None) == found
    assert result.details == {"decode": "x8", "iterations": 1}


@pytest.mark.parametrize("method", ["x8", "sgbs"])
def test_a_timed_decode_gets_the_seed_and_measures_on_the_deadlines_clock(monkeypatch, method):
    """A timed x8 / SGBS decode gets the seed and the time left on the call's deadline, read
    on that deadline's clock."""
    import clrp_rl4co.search.learned_starts as learned
    from clrp_rl4co.solvers.stopping import Deadline

    instance = _spacious()
    calls: list[dict] = []
    monkeypatch.setattr(learned, "learned_starts", _decoder([_one_route(instance)], calls))
    clock = FakeClock()
    deadline = Deadline(5.0, clock=clock)
    solution, status, _ = solving._run_timed(instance, method, None, deadline, 9, False)
    ((call),) = calls
    assert call["clock"] is clock and call["seconds"] == 5.0
    assert (call["seed"], call["sgbs"]) == (9, method == "sgbs")
    assert status == "feasible" and solution is not None
