"""clrp_rl4co.execution.parallel.map_jobs: the results themselves, in input order, over
processes, an executor or this process; a failed job raises."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from clrp_rl4co.execution import parallel
from clrp_rl4co.execution.parallel import map_jobs


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _fail_on_odd(x: int) -> int:
    if x % 2:
        raise KeyError(x)
    return x


def test_one_worker_runs_every_job_here_in_order():
    out = map_jobs(_pid_and_square, [3, 1, 2])
    assert out == [(os.getpid(), 9), (os.getpid(), 1), (os.getpid(), 4)]


def test_two_workers_run_the_jobs_in_child_processes_results_in_input_order():
    out = map_jobs(_pid_and_square, [5, 4, 3, 2, 1], workers=2)
    assert [square for _, square in out] == [25, 16, 9, 4, 1]
    assert os.getpid() not in {pid for pid, _ in out}


def test_an_executor_runs_the_jobs_instead_of_processes():
    with ThreadPoolExecutor(2) as executor:
        out = map_jobs(_pid_and_square, [2, 3], workers=8, executor=executor)
    assert out == [(os.getpid(), 4), (os.getpid(), 9)]  # threads of this process


def test_the_first_failure_in_input_order_is_raised():
    with pytest.raises(KeyError, match="^3$"):
        map_jobs(_fail_on_odd, [2, 3, 4, 5], workers=2)


def test_the_progress_bar_counts_every_finished_job(capsys):
    assert map_jobs(_fail_on_odd, [0, 2, 4], progress=True, desc="even") == [0, 2, 4]
    shown = capsys.readouterr().err
    assert "even: 100%" in shown and "3/3" in shown


def test_a_single_job_runs_here_whatever_the_workers():
    """At most one process per job: one job with two workers runs in this process."""
    assert map_jobs(_pid_and_square, [3], workers=2) == [(os.getpid(), 9)]


@pytest.mark.parametrize("cpus", [1, None])
def test_at_most_one_process_per_cpu(monkeypatch, cpus):
    """At most one process per CPU (an unknown count: one): on one CPU two workers run here."""
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: cpus)
    assert map_jobs(_pid_and_square, [1, 2], workers=2) == [(os.getpid(), 1), (os.getpid(), 4)]


def test_the_pool_gets_the_number_of_workers(monkeypatch):
    sizes = []

    class Pool(parallel.ProcessPool):
        def __init__(self, max_workers):
            sizes.append(max_workers)
            super().__init__(max_workers)

    monkeypatch.setattr(parallel, "ProcessPool", Pool)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 8)
    assert [s for _, s in map_jobs(_pid_and_square, [1, 2, 3], workers=3)] == [1, 4, 9]
    assert sizes == [3]


def test_no_progress_bar_unless_asked(capsys):
    map_jobs(_fail_on_odd, [0, 2])
    assert capsys.readouterr().err == ""
