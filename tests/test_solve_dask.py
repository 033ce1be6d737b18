"""Many instances on a real local Dask cluster (two worker processes): the same results as one
process, and a worker killed mid-instance costs only that instance: with
``allowed-failures: 0`` it is a ``failed`` result naming ``KilledWorker``; with Dask's default
it is run again on another worker and its result says so (``details["reruns"]``)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest
from test_solve_many import _kill_the_large_run, _large, _objectives

from clrp_rl4co.solving import solve_many

distributed = pytest.importorskip("distributed")


@contextlib.contextmanager
def _local_client(allowed_failures: int):
    """A client of a real local Dask cluster: two worker processes, one thread each, and the
    scheduler's ``allowed-failures`` set (a module-scoped setting holds while its fixture
    lives, so each cluster sets its own)."""
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as local,
            distributed.Client(local) as client,
        ):
            yield client


@pytest.fixture(scope="module")
def cluster():
    """A task whose worker dies is not retried (it fails at once)."""
    with _local_client(0) as client:
        yield client


@pytest.fixture(scope="module")
def retrying_cluster():
    """Dask's default ``allowed-failures`` (read from distributed's own defaults): a task
    whose worker dies is run again elsewhere."""
    import yaml

    defaults = Path(distributed.__file__).with_name("distributed.yaml")
    default = yaml.safe_load(defaults.read_text())["distributed"]["scheduler"]["allowed-failures"]
    assert default > 0
    with _local_client(default) as client:
        yield client


def _killed_mid_run(client, items: list, seconds: float) -> list:
    """``solve_many`` of ``items`` on ``client``; the worker running ``items[1]`` (the large
    one) is killed once the two others are done."""
    results: list = [None] * 3
    executor = client.get_executor()

    def record(index, result):
        results[index] = result

    def pid():
        busy = [w for w, keys in client.processing().items() if keys]
        if len(busy) != 1:
            return None
        return client.run(os.getpid, workers=busy)[busy[0]]

    run = threading.Thread(
        target=lambda: results.__setitem__(
            slice(None), solve_many(items, "auto", seconds, executor=executor, on_result=record)
        )
    )
    run.start()
    _kill_the_large_run(results, pid)
    run.join(timeout=120)
    return results


def test_a_dask_cluster_gives_the_serial_results(cluster, tiny_instances, serial):
    results = solve_many(
        tiny_instances, method="exact", seconds=20, executor=cluster.get_executor()
    )
    assert _objectives(results) == _objectives(serial)


def test_a_dask_worker_killed_mid_instance_costs_only_that_instance(
    cluster, tiny_instances, serial
):
    results = _killed_mid_run(cluster, [tiny_instances[0], _large(), tiny_instances[1]], 30)
    assert results[1].status == "failed" and "KilledWorker" in results[1].error
    assert _objectives([results[0], results[2]]) == _objectives(serial[:2])
    assert all(r.details.get("reruns") == 0 for r in (results[0], results[2]))


def test_with_dasks_default_a_killed_instance_is_run_again_and_says_so(
    retrying_cluster, tiny_instances, serial
):
    items = [tiny_instances[0], _large(), tiny_instances[1]]
    results = _killed_mid_run(retrying_cluster, items, 8)
    assert results[1].status == "feasible" and results[1].details["reruns"] == 1
    results[1].solution.check(items[1])
    assert _objectives([results[0], results[2]]) == _objectives(serial[:2])
    assert results[0].details["reruns"] == 0


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
