"""The package's one process pool: :class:`ProcessPool`, a ``concurrent.futures.Executor`` that
runs every task in a fresh child process, at most ``max_workers`` at a time.

A process per task (not a long-lived worker per core, as ``ProcessPoolExecutor`` has) is what
lets a crash stay local: when the process of one task dies (killed, out of memory, a fault in
a native solver), only that task's future fails (:class:`WorkerDied`); the others run on. On
Linux the children are forked, so they start in milliseconds with everything the parent
imported or loaded (a policy loaded before :meth:`ProcessPool.submit` is shared, not reloaded);
elsewhere they are spawned.

:func:`map_ordered` runs a function over many inputs on any executor (this pool, a Dask
cluster's ``client.get_executor()``, ...) or in the calling process, with results in input
order and an optional callback per finished input; :func:`map_jobs` is its plain form for
batch work: the results themselves, over a number of processes or an executor, a failure
raised.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any


class WorkerDied(RuntimeError):
    """The process running a task ended without returning its result."""


def default_context():
    """``fork`` on Linux (cheap, no ``__main__`` guard needed), else ``spawn``."""
    return mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def _child(conn, fn: Callable, args: tuple, kwargs: dict, initializer: Callable | None) -> None:
    # a parent started in the background of a shell ignores SIGINT and a forked child inherits
    # that; :meth:`ProcessPool.interrupt_running` needs the task to see the signal (a handler
    # the parent installed, such as :func:`clrp_rl4co.execution.interrupt.catch_sigint`'s, is kept)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if initializer is not None:
            initializer()
        message = (True, fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 (everything goes back to the parent)
        message = (False, exc)
    try:
        conn.send(message)
    except Exception as exc:  # noqa: BLE001 (an unpicklable result or exception)
        conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


class ProcessPool(Executor):
    """Run each submitted call in its own child process, at most ``max_workers`` at a time.

    Args:
        max_workers: processes running at once (default: the number of CPUs).
        mp_context: a ``multiprocessing`` context (default :func:`default_context`).
        initializer: called in each child before its task (e.g. to set torch's threads).
    """

    def __init__(
        self,
        max_workers: int | None = None,
        mp_context=None,
        initializer: Callable[[], Any] | None = None,
    ):
        self.max_workers = int(max_workers or os.cpu_count() or 1)
        if self.max_workers < 1:
            raise ValueError(f"max_workers: must be >= 1, got {max_workers}")
        self._context = mp_context or default_context()
        self._initializer = initializer
        self._lock = threading.Lock()
        self._waiting: list[tuple[Future, Callable, tuple, dict]] = []
        self._running = 0
        self._watchers: list[threading.Thread] = []
        self._processes: set = set()
        self._shutdown = False

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit after shutdown")
            future: Future = Future()
            self._waiting.append((future, fn, args, kwargs))
        self._start_waiting()
        return future

    def _start_waiting(self) -> None:
        while True:
            with self._lock:
                if self._running >= self.max_workers or not self._waiting:
                    return
                future, fn, args, kwargs = self._waiting.pop(0)
                if not future.set_running_or_notify_cancel():
                    continue
                self._running += 1
            receiver, sender = self._context.Pipe(duplex=False)
            process = self._context.Process(
                target=_child, args=(sender, fn, args, kwargs, self._initializer), daemon=True
            )
            try:
                process.start()
            except BaseException as exc:
                with self._lock:
                    self._running -= 1
                future.set_exception(exc)
                continue
            finally:
                sender.close()
            with self._lock:
                self._processes.add(process)
            watcher = threading.Thread(
                target=self._watch, args=(future, process, receiver), daemon=True
            )
            watcher.start()
            with self._lock:  # finished watchers are dropped as new ones start
                self._watchers = [w for w in self._watchers if w.is_alive()] + [watcher]

    def _watch(self, future: Future, process, receiver) -> None:
        try:
            ok, value = receiver.recv()
        except (EOFError, OSError):
            ok, value = None, None
        finally:
            receiver.close()
        process.join()
        with self._lock:
            self._running -= 1
            self._processes.discard(process)
        if ok is None:
            code = process.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            future.set_exception(WorkerDied(f"the worker process died ({how})"))
        elif ok:
            future.set_result(value)
        else:
            future.set_exception(value)
        self._start_waiting()

    @property
    def forks(self) -> bool:
        """Whether children are forked (they share what this process has loaded)."""
        return self._context.get_start_method() == "fork"

    def interrupt_running(self) -> None:
        """Send SIGINT to the running tasks' processes (they stop early if they catch it, as
        under :func:`clrp_rl4co.execution.interrupt.catch_sigint`)."""
        for pid in self.running_pids():
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def running_pids(self) -> list[int]:
        """Process ids of the tasks running now."""
        with self._lock:
            return [p.pid for p in self._processes if p.pid is not None]

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                for future, *_ in self._waiting:
                    future.cancel()
                self._waiting.clear()
        if wait:
            while True:
                with self._lock:
                    pending = bool(self._waiting) or self._running > 0
                    watchers = list(self._watchers)
                if not pending:
                    break
                for watcher in watchers:
                    watcher.join(timeout=0.1)
                if not watchers:  # a task between its start and its watcher's
                    time.sleep(0.01)


def map_ordered(
    fn: Callable,
    items: Sequence,
    executor: Executor | None = None,
    on_done: Callable[[int, Future], Any] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[Future]:
    """Run ``fn(item)`` for every item; returns one finished (or cancelled) future per item, in
    input order.

    Args:
        fn: a picklable function of one argument (module level).
        items: its inputs.
        executor: where to run (None: one after another in this process).
        on_done: called as ``on_done(index, future)`` in the calling thread as each input
            finishes (in order of completion), cancelled ones included.
        stop: polled a few times a second; once it returns True, the inputs not started are
            cancelled and a :class:`ProcessPool` is asked to interrupt its running tasks
            (:meth:`ProcessPool.interrupt_running`), which then finish early.
    """
    stopping = False
    if executor is None:
        futures: list[Future] = []
        for index, item in enumerate(items):
            future: Future = Future()
            if stop is not None and stop():
                future.cancel()
            else:
                try:
                    future.set_result(fn(item))
                except Exception as exc:  # noqa: BLE001 (reported through the future)
                    future.set_exception(exc)
            futures.append(future)
            if on_done is not None:
                on_done(index, future)
        return futures
    futures = [executor.submit(fn, item) for item in items]
    index_of = {id(f): k for k, f in enumerate(futures)}
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
        for future in done:
            if on_done is not None:
                on_done(index_of[id(future)], future)
        if not stopping and stop is not None and stop():
            stopping = True
            for future in pending:
                future.cancel()
            if isinstance(executor, ProcessPool):
                executor.interrupt_running()
    return futures


def map_jobs(
    fn: Callable,
    jobs: Sequence,
    workers: int = 1,
    executor: Executor | None = None,
    progress: bool = False,
    desc: str | None = None,
) -> list:
    """``[fn(job) for job in jobs]``, in input order: on ``executor``, else over ``workers``
    processes (a :class:`ProcessPool`; 1, or a single job: in this process).

    Args:
        fn: a picklable function of one argument (module level).
        jobs: its inputs.
        workers: processes at once without an ``executor`` (at most one per job and per CPU).
        executor: where to run instead (any ``concurrent.futures.Executor``).
        progress: a tqdm bar counting finished jobs, labelled ``desc``.

    Raises:
        The first failed job's exception (in input order), after every job has finished.
    """
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=desc)
    workers = max(1, min(int(workers), len(jobs), os.cpu_count() or 1))
    pool = ProcessPool(workers) if workers > 1 and executor is None else None
    try:
        tick = None if bar is None else lambda index, future: bar.update(1)
        futures = map_ordered(fn, jobs, executor or pool, tick)
    finally:
        if pool is not None:
            pool.shutdown()
        if bar is not None:
            bar.close()
    return [future.result() for future in futures]


def _suspicious_deaths(dask_scheduler, key) -> int | None:
    """On a Dask scheduler: how many workers died while running the task ``key``."""
    task = dask_scheduler.tasks.get(key)
    return None if task is None else int(task.suspicious)


def dask_reruns() -> int | None:
    """How many times the Dask task calling this was started before, each time on a worker
    that died while running it (the scheduler's count of the task's suspicious deaths): 0 on
    its first run; None outside a Dask worker (``distributed`` not even imported).

    With Dask's default ``distributed.scheduler.allowed-failures`` (3), a task whose worker
    dies is run again on another worker, up to that many deaths; with 0 it fails at once with
    ``KilledWorker``. The count lets a re-run say that it is one.
    """
    if "distributed" not in sys.modules:  # a Dask worker has it imported; nothing else need
        return None
    from distributed import get_client
    from distributed.worker import thread_state

    key = getattr(thread_state, "key", None)
    if key is None:
        return None
    return get_client().run_on_scheduler(_suspicious_deaths, key=key)
