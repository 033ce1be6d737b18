"""Solve CLRP instances within a time budget: :func:`solve` for one, :func:`solve_many` for many
over any ``concurrent.futures.Executor``; what ``method="auto"`` picks lives here too.

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
import numbers
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from . import interrupt

if TYPE_CHECKING:  # imported where used: ``import clrp_rl4co`` stays light (no torch)
    from .data.instance import CLRPInstance
    from .data.solution import CLRPSolution

logger = logging.getLogger(__name__)

#: The methods of :func:`solve`.
METHODS = ("auto", "x8", "sgbs", "hybrid", "pyvrp", "exact")
#: Methods that decode a policy.
POLICY_METHODS = ("x8", "sgbs", "hybrid")
#: Methods with a repeatable mode (``iterations``): the same solution for the same instance and
#: seed on any machine load. ``pyvrp`` runs PyVRP for that many iterations (the depot-set
#: search shares them out), ``exact`` proves with HiGHS from such a PyVRP start without a time
#: limit, ``x8`` decodes all of x8 (or all its units on large instances).
REPEATABLE_METHODS = ("auto", "pyvrp", "exact", "x8")
#: Largest instance on which ``auto`` tries the exact MIP (its monolithic model proves
#: optimality of such instances within seconds).
EXACT_MAX_CUSTOMERS = 12
#: Fewest customers and largest budget (seconds) at which ``auto`` runs PyVRP alone instead of
#: the hybrid. Measured on the size rule's instances, one thread: at 400 and 500 customers and
#: 10 or 30 s the hybrid's mean was above PyVRP alone's in every paired run (by 0.1-0.9%,
#: results/hybrid/); at 700, 1,000 and 1,500 customers and 10 s PyVRP alone was lower on 7 of
#: 9 instances and equal on 2 (hybrid +0.3% to +3.3%), at 1,000 and 30 s lower on both
#: (results/auto-rule/); at 200 customers (10 s) and 1,000 (60 s) the hybrid was lower. Since
#: the hybrid's last phase routes its own depot set, it is lower at 30 s on the presets' 400
#: and 500 customers (by about 0.5%), but on the heterogeneous hard families at 400-600
#: customers and 30 s it was +1.2% on average and up to +12% (results/hard/), so the rule stays.
PYVRP_MIN_CUSTOMERS = 400
PYVRP_MAX_SECONDS = 30.0
#: The generalist models, preferred first: ``auto``'s choice outside the paper's distribution
#: is the first of them that is shipped.
GENERALIST_MODELS = ("drlhqcf_mixed", "drlhqcf_mixed50_cpu")
#: The paper's models by training size (customers).
PAPER_MODELS = {10: "drlhq_clrp10", 20: "drlhq_clrp20", 50: "drlhq_clrp50", 100: "drlhq_clrp100"}


@dataclass
class SolveResult:
    """What one run produced.

    Attributes:
        solution: the best valid solution (None when none was found or the run failed).
        objective: its cost in the instance's units (None without a solution).
        method: the method that ran (``auto`` resolved).
        model: the policy's name (None for the classical methods).
        seconds: wall time of the run.
        status: ``optimal`` (exact, proven), ``feasible``, ``no solution``, ``failed`` (the
            run raised or its process died) or ``not run`` (stopped before it started).
        details: method-specific numbers (``start_objective``, ``decode``, ``bound``, ``note``).
        interrupted: the run was stopped early (Ctrl-C); ``solution`` is the best found so far.
        error: why the run failed (``status == "failed"``).
    """

    solution: CLRPSolution | None
    objective: float | None
    method: str
    model: str | None
    seconds: float
    status: str
    details: dict = field(default_factory=dict)
    interrupted: bool = False
    error: str | None = None


def looks_like_paper(instance: CLRPInstance) -> bool:
    """Whether ``instance`` could come from the paper's generator: coordinates in the unit
    square, real (unrounded) arc costs, integer demands 10..19, vehicle capacity 70, vehicle
    cost 1, and the number of depots, capacities and opening costs of the size rule
    (:func:`clrp_rl4co.envs.clrp.size_rule`) at its number of customers."""
    import numpy as np

    from .envs.clrp.generator import size_rule

    rule = size_rule(instance.num_customers)
    locs = instance.locs
    demand = instance.demand
    cap_low, cap_high = rule["depot_capacity"]
    open_low, open_high = rule["opening_cost"]
    return bool(
        not instance.rounded_costs
        and locs.min() >= 0.0
        and locs.max() <= 1.0
        and np.all(demand == np.round(demand))
        and demand.min() >= 10
        and demand.max() <= 19
        and instance.vehicle_capacity == 70
        and instance.vehicle_fixed_cost == 1
        and instance.num_depots == rule["num_depots"]
        and instance.depot_capacity.min() >= cap_low
        and instance.depot_capacity.max() <= cap_high
        and instance.opening_cost.min() >= open_low
        and instance.opening_cost.max() <= open_high
    )


def generalist_model() -> str:
    """The first shipped model of :data:`GENERALIST_MODELS`."""
    from .pretrained import shipped_models

    shipped = set(shipped_models())
    for name in GENERALIST_MODELS:
        if name in shipped:
            return name
    raise FileNotFoundError(f"none of the generalist models {list(GENERALIST_MODELS)} is shipped")


def auto_model(instance: CLRPInstance) -> str:
    """The model ``auto`` decodes with: the paper's model of the nearest training size (in
    ratio, within a factor 2) on instances like its training data, else the generalist."""
    if looks_like_paper(instance):
        size = min(PAPER_MODELS, key=lambda s: abs(math.log(instance.num_customers / s)))
        if 0.5 <= instance.num_customers / size <= 2.0:
            return PAPER_MODELS[size]
    return generalist_model()


def auto_method(
    instance: CLRPInstance, seconds: float | None = None, repeatable: bool = False
) -> str:
    """The method ``auto`` runs on ``instance`` within ``seconds`` (None: budget unknown), or
    in the repeatable mode (``repeatable``: ``exact`` where a proof is in reach, else
    ``pyvrp``, the methods whose runs do not depend on the wall clock there).

    ``exact`` where a proof is in reach (at most :data:`EXACT_MAX_CUSTOMERS` customers);
    ``pyvrp`` when depots are nearly free (:func:`.solvers.pyvrp_solver.nearly_free_depots`:
    there the policy's depot choices matter little and its starts were far from PyVRP's, 66%
    above on 600 customers, so decoding and refining them only took PyVRP's time) and from
    :data:`PYVRP_MIN_CUSTOMERS` customers within :data:`PYVRP_MAX_SECONDS`; else ``hybrid``.
    """
    from .solvers.pyvrp_solver import nearly_free_depots

    customers = instance.num_customers
    if customers <= EXACT_MAX_CUSTOMERS:
        return "exact"
    if repeatable or nearly_free_depots(instance):
        return "pyvrp"
    if customers >= PYVRP_MIN_CUSTOMERS and seconds is not None and seconds <= PYVRP_MAX_SECONDS:
        return "pyvrp"
    return "hybrid"


def resolve(
    instance: CLRPInstance,
    method: str,
    seconds: float,
    model: str | None,
    iterations: int | None = None,
):
    """``(method, model)`` that :func:`solve` runs: ``auto`` resolved (for the repeatable mode
    when ``iterations`` is given), and the policy's name for the methods that decode one
    (None otherwise).

    Raises:
        ValueError: ``method`` is unknown, or has no repeatable mode and ``iterations`` is
            given.
    """
    if method not in METHODS:
        raise ValueError(f"method: must be one of {list(METHODS)}, got {method!r}")
    if method == "auto":
        method = auto_method(instance, seconds, repeatable=iterations is not None)
    if iterations is not None and method not in REPEATABLE_METHODS:
        raise ValueError(
            f"iterations: method {method!r} depends on the wall clock and has no repeatable "
            f"mode; give seconds instead, or one of {list(REPEATABLE_METHODS)}"
        )
    if method in POLICY_METHODS:
        return method, model or auto_model(instance)
    return method, None


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


#: Largest ``seed``: PyVRP takes unsigned 32-bit seeds and the solvers add offsets to it.
MAX_SEED = 2**31 - 1


def _got(value: object) -> str:
    """``str 'abc'``: the type and (cut) value of a bad argument, for a message."""
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _check_budget(seconds: float) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"seconds: must be a number of seconds, got {_got(seconds)}")
    seconds = float(seconds)
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"seconds: must be a positive number of seconds, got {seconds!r}")
    return seconds


def _check_arguments(method, seconds, model, seed, progress) -> tuple[float, str | None, int]:
    """Check what :func:`solve` and :func:`solve_many` share: each bad argument is an error
    naming the parameter and the value (TypeError: its type, ValueError: its value).

    Returns:
        ``seconds`` as a float, ``model`` as a str (a path-like model as its path) or None,
        ``seed`` as an int (a NumPy integer as Python's).
    """
    if not isinstance(method, str):
        raise TypeError(f"method: must be a str, one of {list(METHODS)}, got {_got(method)}")
    if method not in METHODS:
        raise ValueError(f"method: must be one of {list(METHODS)}, got {method!r}")
    seconds = _check_budget(seconds)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if model is not None and not isinstance(model, str):
        raise TypeError(
            f"model: must be a model name, a checkpoint path or None, got {_got(model)}"
        )
    if model is not None and not model.strip():
        raise ValueError(f"model: must be a model name or a checkpoint path, got {model!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed: must be an int, got {_got(seed)}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed: must be from 0 to {MAX_SEED} (2**31 - 1), got {int(seed)}")
    if not isinstance(progress, bool):
        raise TypeError(f"progress: must be a bool, got {_got(progress)}")
    return seconds, model, int(seed)


def _instance_list(instances) -> list:
    """``instances`` of :func:`solve_many` as a list: one instance or path (a ``str`` or
    ``os.PathLike``) is a list of one; an iterable is listed, each item checked.

    Raises:
        TypeError: ``instances`` is not an instance, a path or an ordered iterable of them
            (the message names ``instances``, or the item as ``instances[k]``, 0-based like
            the ``index`` of ``on_result``).
    """
    from .data.instance import CLRPInstance

    if isinstance(instances, str | os.PathLike | CLRPInstance):
        return [instances]
    if isinstance(instances, bytes | bytearray | Mapping | Set) or not isinstance(
        instances, Iterable
    ):
        raise TypeError(
            "instances: must be a list (or another ordered iterable) of CLRPInstances or file "
            f"paths, or one of them, got {_got(instances)}"
        )
    items = list(instances)
    for k, item in enumerate(items):
        if not isinstance(item, str | os.PathLike | CLRPInstance):
            raise TypeError(
                f"instances[{k}]: must be a CLRPInstance or a file path, got {_got(item)} "
                f"(item {k + 1} of {len(items)})"
            )
    return items


def _check_iterations(iterations) -> int | None:
    """``iterations`` of the repeatable mode: None, or an int >= 1."""
    if iterations is None:
        return None
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral):
        raise TypeError(f"iterations: must be an int or None, got {_got(iterations)}")
    if iterations < 1:
        raise ValueError(f"iterations: must be >= 1, got {int(iterations)}")
    return int(iterations)


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
        method: one of :data:`METHODS`; ``auto`` is :func:`auto_method`.
        seconds: the wall-time budget (not applied in the repeatable mode).
        seed: the random seed.
        model: the policy of ``x8`` / ``sgbs`` / ``hybrid`` (a shipped model's name or a
            checkpoint path; default :func:`auto_model`).
        progress: a progress bar within the instance (hybrid).
        iterations: the repeatable mode: PyVRP iterations instead of a time budget, for the
            methods of :data:`REPEATABLE_METHODS`; the same instance and seed give the same
            solution on any machine load, in whatever time that takes. None: the time budget.
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
    seconds, model, seed = _check_arguments(method, seconds, model, seed, progress)
    iterations = _check_iterations(iterations)
    instance = _as_instance(instance)
    method, name = resolve(instance, method, seconds, model, iterations)
    policy = load_model(name) if name is not None else None
    left = max(seconds - (time.perf_counter() - begin), 1e-3)
    if iterations is None:
        solution, status, details = _run_timed(instance, method, policy, left, seed, progress)
    else:
        solution, status, details = _run_repeatable(instance, method, policy, iterations, seed)
        details["iterations"] = iterations
    return SolveResult(
        solution,
        None if solution is None else solution.cost(instance).total,
        method,
        name,
        time.perf_counter() - begin,
        status,
        details,
        interrupt.requested(),
    )


def _run_timed(instance, method: str, policy, left: float, seed: int, progress: bool):
    """``(solution, status, details)`` of ``method`` within ``left`` seconds."""
    from .solvers.hybrid import solver_budget

    if method == "exact":
        from .solvers import solve_exact

        res = solve_exact(instance, seconds=solver_budget(left), seed=seed)
        return res.solution, res.status, {} if res.bound is None else {"bound": res.bound}
    if method == "pyvrp":
        from .solvers import solve_pyvrp

        res = solve_pyvrp(instance, seconds=solver_budget(left), seed=seed)
        return res.solution, res.status, {}
    if method == "hybrid":
        from .solvers.hybrid import solve_hybrid

        res = solve_hybrid(instance, policy, left, seed=seed, progress=progress)
        return (
            res.solution,
            res.status,
            {"decode": res.decode, "start_objective": res.start_objective},
        )
    from .search.learned_starts import learned_starts

    found = learned_starts(instance, policy, left, seed, count=1, sgbs=method == "sgbs")
    solution = found.solutions[0] if found.solutions else None
    details = {"decode": found.decode}
    if method == "sgbs" and "sgbs" not in found.decode:
        details["note"] = "SGBS does not fit in the budget; best of the x8 starts that fit"
    if solution is None:
        details["note"] = "not even one greedy rollout fits in the budget"
    return solution, "feasible" if solution is not None else "no solution", details


def _run_repeatable(instance, method: str, policy, iterations: int, seed: int):
    """``(solution, status, details)`` of ``method`` in the repeatable mode: no wall clock."""
    from .solvers import solve_exact, solve_pyvrp

    if method == "x8":
        from .search.learned_starts import learned_starts

        found = learned_starts(instance, policy, math.inf, seed, count=1, sgbs=False)
        solution = found.solutions[0] if found.solutions else None
        status = "feasible" if solution is not None else "no solution"
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
    from .parallel import dask_reruns

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
            name = resolve(instance, method, seconds, model, iterations)[1]
            if name is not None:
                load_model(name)
        except Exception:  # noqa: BLE001 (the task itself reports the error)
            pass
        out.append((instance, method, seconds, model, seed, iterations, started))
    return out


def failed(error: str, method: str = "", model: str | None = None) -> SolveResult:
    """The result of a run that raised or whose process died."""
    return SolveResult(None, None, method, model, 0.0, "failed", error=error)


def not_run(reason: str, method: str = "", model: str | None = None) -> SolveResult:
    """The result of an instance that was never started (a stop was requested first)."""
    return SolveResult(None, None, method, model, 0.0, "not run", error=reason)


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
            after another in this process; more uses a :class:`~clrp_rl4co.parallel.ProcessPool`
            (one process per instance, one torch thread each).
        executor: any ``concurrent.futures.Executor`` (e.g. a Dask cluster's
            ``distributed.Client(...).get_executor()``); instances and results travel by pickle.
        on_result: called as ``on_result(index, result)`` as each instance finishes.
        progress: a progress bar within each instance (hybrid; only when run in this process).

    Raises:
        TypeError / ValueError: an argument of the wrong type or value, as in :func:`solve`,
            ``instances`` that is not instances or paths, ``workers`` not an int >= 1
            (before any solving; the message names the parameter and the value).
    """
    from .parallel import ProcessPool, map_ordered

    seconds, model, seed = _check_arguments(method, seconds, model, seed, progress)
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers: must be an int, got {_got(workers)}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {int(workers)}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor: must be a concurrent.futures.Executor or None, got {_got(executor)}"
        )
    if on_result is not None and not callable(on_result):
        raise TypeError(f"on_result: must be callable or None, got {_got(on_result)}")
    iterations = _check_iterations(iterations)
    instances = _instance_list(instances)
    at_once = workers if executor is None else 0
    tasks = [
        (inst, method, seconds, model, seed, iterations, started if k < at_once else None)
        for k, inst in enumerate(instances)
    ]
    pool = None
    if executor is None and workers > 1:
        pool = executor = ProcessPool(workers)
        if pool.forks:
            tasks = _preload(tasks)
    results: list[SolveResult] = [not_run("not run", method, model)] * len(tasks)

    def done(index: int, future) -> None:
        if future.cancelled():
            res = not_run("interrupted before it started", method, model)
        else:
            try:
                res = future.result()
            except BaseException as exc:  # noqa: BLE001 (a failed instance; the others go on)
                res = failed(_error_text(exc), method, model)
        results[index] = res
        if on_result is not None:
            on_result(index, res)

    try:
        if executor is None:
            fn = partial(_solve_here, progress=progress)
            map_ordered(fn, tasks, None, done, stop=interrupt.requested)
        else:
            map_ordered(_solve_task, tasks, executor, done, stop=interrupt.requested)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return results  # every index was filled by ``done`` (cancelled futures included)


__all__ = [
    "METHODS",
    "SolveResult",
    "auto_method",
    "auto_model",
    "load_model",
    "solve",
    "solve_many",
]
