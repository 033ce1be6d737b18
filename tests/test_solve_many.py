"""Many instances: the package's process pool gives the same results as one process; a worker
process killed mid-instance costs only that instance (the Dask cluster: test_solve_dask.py)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.execution.parallel import ProcessPool, WorkerDied, map_ordered
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


# ---------------------------------------------------------------- the pool's own contract
def _interval(seconds: float) -> tuple[float, float]:
    start = time.time()
    time.sleep(seconds)
    return start, time.time()


def test_the_pool_runs_at_most_max_workers_tasks_at_once_and_uses_them():
    with ProcessPool(2) as pool:
        spans = [f.result(timeout=60) for f in [pool.submit(_interval, 0.4) for _ in range(6)]]
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running, most = 0, 0
    for _, step in events:
        running += step
        most = max(most, running)
    assert most == 2


def test_pool_size_must_be_positive_and_defaults_to_the_cpus():
    with pytest.raises(ValueError, match="max_workers: must be >= 1, got -1"):
        ProcessPool(-1)
    assert ProcessPool(None).max_workers == (os.cpu_count() or 1)
    assert ProcessPool(3).max_workers == 3


def test_no_task_after_shutdown_and_shutdown_waits_for_the_running_ones():
    pool = ProcessPool(1)
    running = pool.submit(_interval, 0.5)
    waiting = pool.submit(_interval, 0.5)
    pool.shutdown(wait=True, cancel_futures=True)
    assert running.done() and not running.cancelled()  # it finished before shutdown returned
    assert waiting.cancelled()
    with pytest.raises(RuntimeError, match="cannot submit after shutdown"):
        pool.submit(_square, 2)


def _initialized() -> str:
    return os.environ.get("CLRP_TEST_INITIALIZED", "")


def _set_flag() -> None:
    os.environ["CLRP_TEST_INITIALIZED"] = "yes"


def test_the_initializer_runs_in_the_child_before_its_task():
    with ProcessPool(1, initializer=_set_flag) as pool:
        assert pool.submit(_initialized).result(timeout=30) == "yes"
    assert _initialized() == ""  # not in this process


def test_the_child_sends_back_the_result_or_the_exception():
    import multiprocessing as mp

    from clrp_rl4co.execution.parallel import _child

    for fn, args, kwargs, expected in [
        (divmod, (7, 3), {}, (True, (2, 1))),
        (int, ("12",), {"base": 3}, (True, 5)),
    ]:
        receiver, sender = mp.Pipe(duplex=False)
        _child(sender, fn, args, kwargs, None)
        assert receiver.recv() == expected
    receiver, sender = mp.Pipe(duplex=False)
    _child(sender, _raise, (4,), {}, None)
    ok, exc = receiver.recv()
    assert ok is False and isinstance(exc, KeyError) and exc.args == (4,)
    receiver, sender = mp.Pipe(duplex=False)
    _child(sender, threading.Lock, (), {}, None)  # a result that cannot be pickled
    ok, exc = receiver.recv()
    assert ok is False and isinstance(exc, RuntimeError) and str(exc).startswith("TypeError: ")


def _exit_with(code: int) -> None:
    os._exit(code)


def test_a_task_whose_process_exits_names_its_exit_code():
    with ProcessPool(1) as pool:
        with pytest.raises(WorkerDied, match=r"the worker process died \(exit code 3\)"):
            pool.submit(_exit_with, 3).result(timeout=30)
        with pytest.raises(WorkerDied, match=r"died \(exit code 0\)"):
            pool.submit(_exit_with, 0).result(timeout=30)


def _sleep_or_interrupted(seconds: float) -> str:
    try:
        time.sleep(seconds)
    except KeyboardInterrupt:
        return "interrupted"
    return "slept"


def test_a_stop_cancels_waiting_inputs_and_interrupts_the_running_ones():
    began = time.monotonic()
    calls = []
    with ProcessPool(1) as pool:
        futures = map_ordered(
            _sleep_or_interrupted,
            [30.0, 30.0, 30.0],
            pool,
            on_done=lambda k, f: calls.append(k),
            stop=lambda: time.monotonic() - began > 1.0,
        )
    assert time.monotonic() - began < 15.0  # not the 30 s the running task asked for
    assert futures[0].result() == "interrupted"
    assert futures[1].cancelled() and futures[2].cancelled()
    assert sorted(calls) == [0, 1, 2]


def test_a_stop_interrupts_the_running_task_of_a_parent_that_ignores_sigint():
    # a command started in the background of a shell script has SIGINT ignored, and forked
    # children inherit the disposition: the pool must still be able to interrupt its tasks
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        began = time.monotonic()
        with ProcessPool(1) as pool:
            futures = map_ordered(
                _sleep_or_interrupted, [30.0], pool, stop=lambda: time.monotonic() - began > 1.0
            )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert futures[0].result() == "interrupted"
    assert time.monotonic() - began < 15.0


def test_in_this_process_a_stop_skips_the_rest():
    seen = []
    futures = map_ordered(
        _square, [1, 2, 3], None, on_done=lambda k, f: seen.append(k), stop=lambda: len(seen) >= 1
    )
    assert futures[0].result() == 1 and futures[1].cancelled() and futures[2].cancelled()
    assert seen == [0, 1, 2]
    futures = map_ordered(_raise, [5], None)
    with pytest.raises(KeyError):
        futures[0].result()
    assert [f.result() for f in map_ordered(_square, [2, 3], None, stop=None)] == [4, 9]


def test_the_default_context_forks_on_linux():
    from clrp_rl4co.execution.parallel import default_context

    expected = "fork" if sys.platform.startswith("linux") else "spawn"
    assert default_context().get_start_method() == expected
    assert ProcessPool(1).forks == (expected == "fork")


def _handler_seen() -> object:
    return signal.getsignal(signal.SIGINT)


def _own_handler(signum, frame) -> None:  # noqa: ARG001 (signal handler signature)
    pass


def test_the_child_makes_an_ignored_sigint_raise_and_keeps_an_installed_handler():
    import multiprocessing as mp

    from clrp_rl4co.execution.parallel import _child

    for inherited, expected in [
        (signal.SIG_IGN, signal.default_int_handler),
        (_own_handler, _own_handler),
    ]:
        previous = signal.signal(signal.SIGINT, inherited)
        try:
            receiver, sender = mp.Pipe(duplex=False)
            _child(sender, _handler_seen, (), {}, None)
        finally:
            signal.signal(signal.SIGINT, previous)
        assert receiver.recv() == (True, expected)


def _finish_the_unit_after_a_stop(_) -> str:
    from clrp_rl4co.execution import interrupt

    interrupt.clear()
    with interrupt.catch_sigint():
        while not interrupt.requested():
            time.sleep(0.01)
        time.sleep(1.0)  # the unit of work in progress; a second SIGINT would abort it
    return "finished"


def test_a_stop_interrupts_the_running_tasks_once():
    began = time.monotonic()
    with ProcessPool(1) as pool:
        futures = map_ordered(
            _finish_the_unit_after_a_stop, [0], pool, stop=lambda: time.monotonic() - began > 0.5
        )
    # a second SIGINT would raise KeyboardInterrupt in the task (caught_sigint's rule); it
    # comes back as the future's exception, read without raising it here
    assert futures[0].exception() is None and futures[0].result() == "finished"


class _FailingStart:
    """A multiprocessing context whose processes fail to start on the given calls."""

    def __init__(self, failing: set[int]):
        import multiprocessing as mp

        self._real, self.failing, self.calls = mp.get_context("fork"), failing, 0

    def Pipe(self, duplex=True):  # noqa: N802 (multiprocessing's name)
        return self._real.Pipe(duplex=duplex)

    def Process(self, *args, **kwargs):  # noqa: N802
        process = self._real.Process(*args, **kwargs)
        self.calls += 1
        if self.calls in self.failing:

            def fail():
                raise OSError("no more processes")

            process.start = fail
        return process

    def get_start_method(self):
        return "fork"


def test_a_task_whose_process_cannot_start_fails_alone_and_the_rest_still_run():
    context = _FailingStart({1})
    with ProcessPool(1, mp_context=context) as pool:
        first, second, third = (pool.submit(divmod, n, 3) for n in (7, 8, 9))
        assert third.result(timeout=30) == (3, 0) and second.result(timeout=30) == (2, 2)
        with pytest.raises(OSError, match="no more processes"):
            first.result(timeout=30)
        assert pool._running == 0  # the failed start gave its slot back


def _wait_for(path: str) -> str:
    while not os.path.exists(path):
        time.sleep(0.02)
    return "released"


def test_a_failed_start_goes_on_to_the_next_waiting_task(tmp_path):
    # two slots: the first task holds one until released; the third task's process fails to
    # start when the second one ends, and the fourth must start in that slot at once
    release = str(tmp_path / "release")
    context = _FailingStart({3})
    with ProcessPool(2, mp_context=context) as pool:
        try:
            held = pool.submit(_wait_for, release)
            quick = pool.submit(divmod, 5, 2)
            failed, fourth = pool.submit(divmod, 6, 2), pool.submit(divmod, 7, 2)
            assert quick.result(timeout=30) == (2, 1)
            assert fourth.result(timeout=30) == (3, 1)  # while the first still holds its slot
            assert not held.done()
            with pytest.raises(OSError, match="no more processes"):
                failed.result(timeout=30)
        finally:
            Path(release).touch()
        assert held.result(timeout=30) == "released"


def test_submit_after_shutdown_is_refused_and_shutdown_waits_for_every_task_by_default():
    pool = ProcessPool(1)
    futures = [pool.submit(_sleep_or_interrupted, 0.3) for _ in range(2)]
    pool.shutdown()  # default: wait, and do not cancel the waiting task
    assert all(f.done() and f.result() == "slept" for f in futures)
    with pytest.raises(RuntimeError, match="cannot submit after shutdown"):
        pool.submit(divmod, 1, 1)


# ---------------------------------------------------------------- what ``instances`` may be
def _tiny_file(tmp_path: Path) -> Path:
    from instances import random_instance

    from clrp_rl4co.data import write_json_instance

    path = tmp_path / "tiny.json"
    write_json_instance(random_instance(6, seed=1, num_depots=2), path)
    return path


def test_one_path_as_text_or_path_is_one_instance(tmp_path):
    # not the characters of the text, each a "file" that fails
    path = _tiny_file(tmp_path)
    seen = []
    for given in (str(path), path):
        results = solve_many(given, "exact", 5.0, on_result=lambda i, r: seen.append(i))
        assert [r.status for r in results] == ["optimal"]
    assert seen == [0, 0]  # one instance each time
    # so is one instance, and any ordered iterable of them is listed (a generator too)
    from clrp_rl4co.data import read_json_instance

    (result,) = solve_many(read_json_instance(path), "exact", 5.0)
    assert result.status == "optimal"
    results = solve_many((p for p in [path, str(path)]), "exact", 5.0)
    assert [r.status for r in results] == ["optimal", "optimal"]


@pytest.mark.parametrize(
    "instances, message",
    [
        (5, r"instances: must be a list \(or another ordered iterable\) of CLRPInstances or "
            r"file paths, or one of them, got int 5$"),
        (None, "instances: must be a list .* got NoneType None"),
        (b"tiny.json", "instances: must be a list .* got bytes b'tiny.json'"),
        ({"tiny.json"}, "instances: must be a list .* got set {'tiny.json'}"),
        ({"a": "tiny.json"}, "instances: must be a list .* got dict {'a': 'tiny.json'}"),
        ([Path("a.json"), 7], r"instances\[1\]: must be a CLRPInstance or a file path, got int 7 "
                              r"\(item 2 of 2\)"),
        ([None], r"instances\[0\]: must be a CLRPInstance or a file path, got NoneType None"),
    ],
)  # fmt: skip
def test_what_is_not_instances_or_paths_is_a_type_error_naming_instances(instances, message):
    seen = []
    with pytest.raises(TypeError, match="^" + message):
        solve_many(instances, "exact", 5.0, on_result=lambda *a: seen.append(a))
    assert seen == []  # before any solving
