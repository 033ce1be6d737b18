"""Many instances on a real local Dask cluster (two worker processes): the same results as one
process, and a worker killed mid-instance costs only that instance."""

from __future__ import annotations

import os
import threading

import pytest
from test_solve_many import _kill_the_large_run, _large, _objectives

from clrp_rl4co.solving import solve_many

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """A real local Dask cluster: two worker processes, one thread each; a task whose worker
    dies is not retried (it fails at once)."""
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as local,
            distributed.Client(local) as client,
        ):
            yield client


def test_a_dask_cluster_gives_the_serial_results(cluster, tiny_instances, serial):
    results = solve_many(
        tiny_instances, method="exact", seconds=20, executor=cluster.get_executor()
    )
    assert _objectives(results) == _objectives(serial)


def test_a_dask_worker_killed_mid_instance_costs_only_that_instance(
    cluster, tiny_instances, serial
):
    results: list = [None] * 3
    items = [tiny_instances[0], _large(), tiny_instances[1]]
    executor = cluster.get_executor()

    def record(index, result):
        results[index] = result

    def pid():
        busy = [w for w, keys in cluster.processing().items() if keys]
        if len(busy) != 1:
            return None
        return cluster.run(os.getpid, workers=busy)[busy[0]]

    run = threading.Thread(
        target=lambda: results.__setitem__(
            slice(None), solve_many(items, "auto", 30, executor=executor, on_result=record)
        )
    )
    run.start()
    _kill_the_large_run(results, pid)
    run.join(timeout=60)
    assert results[1].status == "failed" and "KilledWorker" in results[1].error
    assert _objectives([results[0], results[2]]) == _objectives(serial[:2])


def _evaluate(argv: list[str]):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "evaluate.py"
    return runpy.run_path(str(script))["main"](argv)


def test_the_evaluation_example_runs_its_classical_rows_on_the_cluster(
    cluster, tiny_instances, serial, tmp_path
):
    from clrp_rl4co.data import instances_to_tensordict
    from clrp_rl4co.envs.clrp import save_dataset

    path = tmp_path / "tiny.npz"
    save_dataset(instances_to_tensordict(tiny_instances[:3], normalize_locs=False), path)
    argv = ["--checkpoint", "drlhq_clrp10", "--data", str(path), "--decode", "greedy"]
    argv += ["--classical", "exact:20"]
    on_cluster = _evaluate([*argv, "--scheduler", cluster.scheduler.address])
    here = _evaluate(argv)
    rows = {s.method: s for s in on_cluster}
    assert set(rows) == {"greedy", "exact|20s"}
    assert rows["exact|20s"].objective == pytest.approx(
        {s.method: s for s in here}["exact|20s"].objective
    )
    # the optimum is what the serial solve proved
    expected = sum(r.objective for r in serial[:3]) / 3
    assert rows["exact|20s"].objective == pytest.approx(expected, rel=1e-5)
