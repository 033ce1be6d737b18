"""Many instances: the package's process pool gives the same results as one process; a worker
process killed mid-instance costs only that instance (the Dask cluster: test_solve_dask.py)."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.parallel import ProcessPool, WorkerDied, map_ordered
from clrp_rl4co.solving import solve_many


def _square(x: int) -> int:
    return x * x


def _sleep_then(x: float) -> float:
    time.sleep(x)
    return x


def _raise(x: int) -> int:
    raise KeyError(x)


def test_pool_runs_every_task_in_input_order():
    with ProcessPool(2) as pool:
        futures = map_ordered(_square, [3, 1, 2, 5], pool)
    assert [f.result() for f in futures] == [9, 1, 4, 25]


def test_an_exception_travels_back_as_itself():
    with ProcessPool(2) as pool:
        future = pool.submit(_raise, 7)
        with pytest.raises(KeyError, match="7"):
            future.result(timeout=30)


def test_a_killed_task_process_fails_only_its_own_future():
    with ProcessPool(2) as pool:
        slow = pool.submit(_sleep_then, 30.0)
        quick = [pool.submit(_square, k) for k in range(4)]
        assert [f.result(timeout=30) for f in quick] == [0, 1, 4, 9]
        deadline = time.monotonic() + 10
        while not pool.running_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        (pid,) = pool.running_pids()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerDied, match="signal 9"):
            slow.result(timeout=30)
        assert pool.submit(_square, 6).result(timeout=30) == 36  # the pool goes on


def _large() -> CLRPInstance:
    """400 customers: ``auto`` runs PyVRP alone for the whole budget there."""
    rng = np.random.default_rng(0)
    return CLRPInstance(
        depot_locs=rng.random((5, 2)),
        customer_locs=rng.random((400, 2)),
        depot_capacity=np.full(5, 8000.0),
        opening_cost=np.ones(5),
        demand=np.full(400, 10.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="large",
    )


def _objectives(results) -> list:
    return [None if r.objective is None else round(r.objective, 9) for r in results]


def test_the_process_pool_gives_the_serial_results(tiny_instances, serial):
    pooled = solve_many(tiny_instances, method="exact", seconds=20, workers=2)
    assert _objectives(pooled) == _objectives(serial)
    assert [r.method for r in pooled] == ["exact"] * 4


def _kill_the_large_run(results, find_pid, stop_after: float = 60.0):
    """Wait until the two tiny instances are done and the large one runs; kill its process."""
    deadline = time.monotonic() + stop_after
    while time.monotonic() < deadline:
        pid = find_pid()
        if sum(r is not None for r in results) == 2 and pid is not None:
            time.sleep(0.5)
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.1)
    raise AssertionError("the large instance never ran")


def test_a_worker_killed_mid_instance_costs_only_that_instance(tiny_instances, serial):
    pool = ProcessPool(2)
    results: list = [None] * 3
    items = [tiny_instances[0], _large(), tiny_instances[1]]

    def record(index, result):
        results[index] = result

    def pid():
        pids = pool.running_pids()
        return pids[0] if len(pids) == 1 else None

    run = threading.Thread(
        target=lambda: results.__setitem__(
            slice(None), solve_many(items, "auto", 30, executor=pool, on_result=record)
        )
    )
    run.start()
    _kill_the_large_run(results, pid)
    run.join(timeout=60)
    pool.shutdown()
    assert results[1].status == "failed" and "worker process died" in results[1].error
    assert _objectives([results[0], results[2]]) == _objectives(serial[:2])
