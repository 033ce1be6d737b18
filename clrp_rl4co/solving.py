"""Solve CLRP instances within a time budget: :func:`solve` for one, :func:`solve_many` for many
over any ``concurrent.futures.Executor``. What ``method="auto"`` picks is
:mod:`clrp_rl4co.auto`; the argument checks are :mod:`clrp_rl4co.arguments`.

Example::

    from clrp_rl4co import solve

    result = solve("coord20-5-1.dat", seconds=2)  # a Prodhon file, a JSON file or a CLRPInstance
    print(result.objective, result.method, result.status)

The budget is ``seconds`` of wall time per instance, everything included (reading the model,
decoding, solving); it has this one name in every public signature of the package (the unit in
the name; PyVRP's own ``max_runtime`` appears only where PyVRP is called).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from . import auto
from .arguments import (
    check_instances,
    check_iterations,
    check_many_arguments,
    check_solve_arguments,
)
from .execution import interrupt
from .result import SolveResult
from .status import Status

if TYPE_CHECKING:  # imported where used: ``import clrp_rl4co`` stays light (no torch)
    from .data.instance import CLRPInstance

logger = logging.getLogger(__name__)


_POLICIES: dict[str, object] = {}


def load_model(name: str):
    """The policy ``name`` (a shipped model or a path), loaded once per process, on CPU, in
    eval mode.

    Raises:
        ValueError / FileNotFoundError: unknown model name or unreadable file.
    """
    if name not in _POLICIES:
        from .policies import load_policy

        _POLICIES[name] = load_policy(name).eval()
    return _POLICIES[name]


def _as_instance(instance: CLRPInstance | str | Path) -> CLRPInstance:
    from .data.instance import CLRPInstance

    if isinstance(instance, CLRPInstance):
        return instance
    if isinstance(instance, str | Path):
        from .data.files import read_instance

        return read_instance(instance)
    raise TypeError(
        f"instance: expected a CLRPInstance or a file path, got {type(instance).__name__}"
    )


def solve(
    instance: CLRPInstance | str | Path,
    method: str = "auto",
    seconds: float = 10.0,
    model: str | None = None,
    seed: int = 0,
    progress: bool = False,
    iterations: int | None = None,
    started: float | None = None,
) -> SolveResult:
    """Solve one instance within ``seconds`` of wall time counted from the call (imports,
    reading the file and loading the model included), or repeatably with ``iterations``.

    Args:
        instance: a :class:`~clrp_rl4co.data.CLRPInstance` or the path of an instance file
            (Prodhon, ``.json``, or a one-instance ``.npz``; see ``docs/formats.md``).
        method: one of :data:`~clrp_rl4co.auto.METHODS`; ``auto`` is
            :func:`~clrp_rl4co.auto.auto_method`.
        seconds: the wall-time budget (not applied in the repeatable mode).
        seed: the random seed.
        model: the policy of ``x8`` / ``sgbs`` / ``hybrid`` (a shipped model's name or a
            checkpoint path; default :func:`~clrp_rl4co.auto.auto_model`).
        progress: a progress bar within the instance (hybrid).
        iterations: the repeatable mode: PyVRP iterations instead of a time budget, for the
            methods of :data:`~clrp_rl4co.auto.REPEATABLE_METHODS`; the same instance and seed
            give the same solution on any machine load, in whatever time that takes. None: the
            time budget.
        started: the ``time.perf_counter()`` reading the budget counts from, when earlier than
            the call (the command gives its process's start); None: the call.

    Raises:
        TypeError: an argument of the wrong type (``seconds="10"``, ``seed=1.5``); the message
            names the parameter, the type and the value.
        ValueError: a bad file, method, model, budget or seed (``seconds=0``, ``seed=-1``;
            the message names the parameter or the file and the value); a method without a
            repeatable mode with ``iterations``; an instance that is obviously infeasible.
    """
    begin = time.perf_counter()  # the budget counts from here: every import comes after
    if started is not None:
        begin = min(begin, float(started))
    seconds, model, seed = check_solve_arguments(method, seconds, model, seed, progress)
    iterations = check_iterations(iterations)
    instance = _as_instance(instance)
    method, name = auto.resolve(instance, method, seconds, model, iterations)
    policy = load_model(name) if name is not None else None
    if iterations is None:
        _import_solvers()
        from .solvers.stopping import Deadline

        deadline = Deadline(seconds, start=begin)  # the call's one deadline, handed down
        solution, status, details = _run_timed(instance, method, policy, deadline, seed, progress)
    else:
        solution, status, details = _run_repeatable(instance, method, policy, iterations, seed)
        details["iterations"] = iterations
    cost = None if solution is None else solution.cost(instance)
    return SolveResult(
        solution,
        None if cost is None else cost.total,
        method,
        name,
        time.perf_counter() - begin,
        Status(status),
        details,
        interrupt.requested(),
        cost=cost,
    )


def _import_solvers() -> None:
    """Import what the methods run (PyVRP, HiGHS, the hybrid) so that the time it takes on a
    process's first call is spent before a solver reads the time left."""
    from .search import learned_starts  # noqa: F401
    from .solvers import hybrid, pyvrp_solver  # noqa: F401


def _run_timed(instance, method: str, policy, deadline, seed: int, progress: bool):
    """``(solution, status, details)`` of ``method`` by ``deadline`` (a
    :class:`.solvers.stopping.Deadline`)."""
    from .solvers.hybrid import solver_deadline

    if method == "exact":
        from .solvers import solve_exact

        res = solve_exact(instance, seconds=solver_deadline(deadline), seed=seed)
        return res.solution, res.status, {} if res.bound is None else {"bound": res.bound}
    if method == "pyvrp":
        from .solvers import solve_pyvrp

        res = solve_pyvrp(instance, seconds=solver_deadline(deadline), seed=seed)
        return res.solution, res.status, {}
    if method == "hybrid":
        from .solvers.hybrid import solve_hybrid

        res = solve_hybrid(instance, policy, deadline, seed=seed, progress=progress)
        return (
            res.solution,
            res.status,
            {"decode": res.decode, "start_objective": res.start_objective},
        )
    from .search.learned_starts import learned_starts

    left = max(deadline.left(), 1e-3)
    found = learned_starts(instance, policy, left, seed, count=1, sgbs=method == "sgbs",
                           clock=deadline.clock)  # fmt: skip
    solution = found.solutions[0] if found.solutions else None
    details = {"decode": found.decode}
    if method == "sgbs" and "sgbs" not in found.decode:
        details["note"] = "SGBS does not fit in the budget; best of the x8 starts that fit"
    if solution is None:
        details["note"] = "not even one greedy rollout fits in the budget"
    return solution, Status.FEASIBLE if solution is not None else Status.NO_SOLUTION, details


def _run_repeatable(instance, method: str, policy, iterations: int, seed: int):
    """``(solution, status, details)`` of ``method`` in the repeatable mode: no wall clock."""
    from .solvers import solve_exact, solve_pyvrp

    if method == "x8":
        from .search.learned_starts import learned_starts

        found = learned_starts(instance, policy, math.inf, seed, count=1, sgbs=False)
        solution = found.solutions[0] if found.solutions else None
        status = Status.FEASIBLE if solution is not None else Status.NO_SOLUTION
        return solution, status, {"decode": found.decode}
    res = solve_pyvrp(instance, seconds=None, max_iterations=iterations, seed=seed)
    if method == "pyvrp":
        return res.solution, res.status, {}
    start = res.solution if res.solution is not None else False
    res = solve_exact(instance, seconds=math.inf, seed=seed, warm_start=start)
    return res.solution, res.status, {} if res.bound is None else {"bound": res.bound}


def _solve_task(args: tuple) -> SolveResult:
    """One instance in a worker (one torch thread). On a Dask worker its result says how
    often it was started before on workers that died (``details["reruns"]``)."""
    from .execution.parallel import dask_reruns

    reruns = dask_reruns()
    instance, method, seconds, model, seed, iterations, started = args
    import torch

    torch.set_num_threads(1)
    result = solve(instance, method, seconds, model, seed, iterations=iterations, started=started)
    if reruns is not None:
        result.details["reruns"] = reruns
    return result


def _solve_here(args: tuple, progress: bool = False) -> SolveResult:
    instance, method, seconds, model, seed, iterations, started = args
    return solve(
        instance,
        method,
        seconds,
        model,
        seed,
        progress=progress,
        iterations=iterations,
        started=started,
    )


def _preload(tasks: list[tuple]) -> list[tuple]:
    """Read file paths and load the policies the tasks need, in this process, so that forked
    workers share them; a file or model that fails is left for its task to report."""
    out = []
    for instance, method, seconds, model, seed, iterations, started in tasks:
        try:
            instance = _as_instance(instance)
            name = auto.resolve(instance, method, seconds, model, iterations)[1]
            if name is not None:
                load_model(name)
        except Exception:  # noqa: BLE001 (the task itself reports the error)
            pass
        out.append((instance, method, seconds, model, seed, iterations, started))
    return out


def failed(error: str, method: str = "", model: str | None = None) -> SolveResult:
    """The result of a run that raised or whose process died."""
    return SolveResult(None, None, method, model, 0.0, Status.FAILED, error=error)


def not_run(reason: str, method: str = "", model: str | None = None) -> SolveResult:
    """The result of an instance that was never started (a stop was requested first)."""
    return SolveResult(None, None, method, model, 0.0, Status.NOT_RUN, error=reason)


def _error_text(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    if not isinstance(exc, ValueError | OSError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text


def solve_many(
    instances: Sequence[CLRPInstance | str | Path],
    method: str = "auto",
    seconds: float = 10.0,
    model: str | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Executor | None = None,
    on_result: Callable[[int, SolveResult], object] | None = None,
    progress: bool = False,
    iterations: int | None = None,
    started: float | None = None,
) -> list[SolveResult]:
    """Solve every instance within ``seconds`` each; results in input order.

    A run that raises, or whose worker process dies, gives a ``failed`` result with its
    ``error``; the other instances go on.

    Args:
        instances: a list (any ordered iterable) of instances or instance file paths (one
            instance each); a single instance or path (``str`` / ``Path``) is a list of one.
        method, seconds, model, seed, iterations: as in :func:`solve`, for every instance
            (``iterations``: the repeatable mode).
        started: the ``time.perf_counter()`` reading from which the budgets of the instances
            that start at once (the first, or the first ``workers``) count, when earlier than
            this call (the command gives its process's start); the others count from their
            own start. Not used with an ``executor`` (its tasks start when it runs them).
        workers: instances solved at once when no ``executor`` is given: 1 runs them one
            after another in this process; more uses a
            :class:`~clrp_rl4co.execution.parallel.ProcessPool` (one process per instance, one
            torch thread each).
        executor: any ``concurrent.futures.Executor`` (e.g. a Dask cluster's
            ``distributed.Client(...).get_executor()``); instances and results travel by pickle.
        on_result: called as ``on_result(index, result)`` as each instance finishes.
        progress: a progress bar within each instance (hybrid; only when run in this process).

    Raises:
        TypeError / ValueError: an argument of the wrong type or value, as in :func:`solve`,
            ``instances`` that is not instances or paths, ``workers`` not an int >= 1
            (before any solving; the message names the parameter and the value).
    """
    seconds, model, seed = check_solve_arguments(method, seconds, model, seed, progress)
    check_many_arguments(workers, executor, on_result)
    iterations = check_iterations(iterations)
    instances = check_instances(instances)
    at_once = workers if executor is None else 0
    tasks = [
        (inst, method, seconds, model, seed, iterations, started if k < at_once else None)
        for k, inst in enumerate(instances)
    ]
    results: list[SolveResult | None] = [None] * len(tasks)  # each filled by ``done``

    def done(index: int, future) -> None:
        results[index] = res = _outcome(future, method, model)
        if on_result is not None:
            on_result(index, res)

    _run_tasks(tasks, workers, executor, progress, done)
    return results  # every index was filled by ``done`` (cancelled futures included)


def _outcome(future, method: str, model: str | None) -> SolveResult:
    """The result of a finished task's ``future``: ``not run`` when it was cancelled before it
    started, ``failed`` when it raised (or its process died)."""
    if future.cancelled():
        return not_run("interrupted before it started", method, model)
    try:
        return future.result()
    except BaseException as exc:  # noqa: BLE001 (a failed instance; the others go on)
        return failed(_error_text(exc), method, model)


def _run_tasks(tasks: list[tuple], workers: int, executor, progress: bool, done) -> None:
    """Run ``tasks`` in this process (one ``workers``, no ``executor``), on a
    :class:`~clrp_rl4co.execution.parallel.ProcessPool` of ``workers`` processes, or on
    ``executor``; ``done(index, future)`` as each finishes, until
    :func:`.execution.interrupt.requested`."""
    from .execution.parallel import ProcessPool, map_ordered

    pool = None
    if executor is None and workers > 1:
        pool = executor = ProcessPool(workers)
        if pool.forks:
            tasks = _preload(tasks)
    try:
        if executor is None:
            fn = partial(_solve_here, progress=progress)
            map_ordered(fn, tasks, None, done, stop=interrupt.requested)
        else:
            map_ordered(_solve_task, tasks, executor, done, stop=interrupt.requested)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


__all__ = [
    "failed",
    "load_model",
    "not_run",
    "solve",
    "solve_many",
]
