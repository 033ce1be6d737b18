"""Batch entry points: many instances over processes (:func:`solve`), and the same solvers on env
batches (:func:`solve_td`, :func:`local_search_td`), the role of RL4CO's optional env methods
``solve`` / ``local_search``, kept here so that the env stands alone.

Example::

    from clrp_rl4co import CLRPEnv
    from clrp_rl4co.solvers import local_search_td, solve_td

    env = CLRPEnv(generator_params={"preset": "clrp20"})
    td = env.generator(batch_size=[4])
    actions, costs = solve_td(td, seconds=0.5)  # PyVRP, 0.5 s per instance
    better = local_search_td(td, policy_actions, seconds=0.5)  # never worse
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Executor

import numpy as np

from ..data import CLRPInstance, CLRPSolution, tensordict_to_instances
from ..envs.clrp.validity import PADDING_ACTION
from .common import SolverResult
from .refine import refine_solution

SOLVERS = ("pyvrp", "exact")


def _solve_one(args: tuple) -> SolverResult:
    instance, solver, seconds, seed, max_iterations, kw = args
    if solver == "pyvrp":
        from .pyvrp_solver import solve_pyvrp

        return solve_pyvrp(
            instance, seconds=seconds, max_iterations=max_iterations, seed=seed, **kw
        )
    from .exact import solve_exact

    return solve_exact(instance, seconds=seconds, seed=seed, **kw)


def _refine_one(args: tuple) -> CLRPSolution:
    instance, solution, seconds, mode, seed, max_iterations = args
    return refine_solution(instance, solution, seconds, mode, seed, max_iterations)


def _map(
    fn,
    jobs: list[tuple],
    num_procs: int,
    progress: bool,
    desc: str,
    executor: Executor | None = None,
) -> list:
    """``[fn(job) for job in jobs]`` on ``executor``, else over ``num_procs`` processes
    (:class:`~clrp_rl4co.execution.parallel.ProcessPool`), in input order; a failure is
    re-raised."""
    from ..execution.parallel import ProcessPool, map_ordered

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=desc)
    num_procs = max(1, min(int(num_procs), len(jobs), os.cpu_count() or 1))
    pool = ProcessPool(num_procs) if num_procs > 1 and executor is None else None
    try:
        tick = None if bar is None else lambda k, f: bar.update(1)
        futures = map_ordered(fn, jobs, executor or pool, tick)
    finally:
        if pool is not None:
            pool.shutdown()
        if bar is not None:
            bar.close()
    return [f.result() for f in futures]


def solve(
    instances: Sequence[CLRPInstance],
    solver: str = "pyvrp",
    seconds: float = 1.0,
    num_procs: int = 1,
    seed: int = 0,
    max_iterations: int | None = None,
    progress: bool = False,
    executor: Executor | None = None,
    **kw,
) -> list[SolverResult]:
    """Solve every instance; results in input order.

    Args:
        instances: the CLRP instances.
        solver: ``"pyvrp"`` (heuristic) or ``"exact"`` (HiGHS MIP).
        seconds: wall-clock budget per instance. For PyVRP with ``max_iterations`` set, pass
            ``seconds=None`` for a deterministic iteration-limited run.
        num_procs: worker processes (instances are solved in parallel).
        seed: random seed (PyVRP; the exact solver's warm start).
        max_iterations: PyVRP iteration limit (ignored by the exact solver).
        progress: show a tqdm progress bar.
        executor: any ``concurrent.futures.Executor`` to run on instead of ``num_procs``
            local processes (e.g. a Dask cluster's ``client.get_executor()``).
        **kw: passed to :func:`.pyvrp_solver.solve_pyvrp` or :func:`.exact.solve_exact`
            (e.g. ``threads``, ``strategy``, ``depot_search``).

    Raises:
        ValueError: unknown solver or ``seconds=None`` for the exact solver (before any
            solving; an instance was checked when it was made).
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver == "exact" and seconds is None:
        raise ValueError("the exact solver needs a time limit: pass seconds")
    instances = list(instances)
    jobs = [(inst, solver, seconds, seed, max_iterations, kw) for inst in instances]
    return _map(_solve_one, jobs, num_procs, progress, f"{solver}", executor)


def _pad(sequences: list[list[int]]):
    """[B, T] LongTensor; each row padded with the env's no-op (``PADDING_ACTION``)."""
    import torch

    length = max(len(s) for s in sequences)
    out = torch.full((len(sequences), length), PADDING_ACTION, dtype=torch.long)
    for b, s in enumerate(sequences):
        out[b, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    return out


def solve_td(td, seconds: float, num_procs: int = 1, solver: str = "pyvrp", **kw):
    """Reference solutions of an env batch as env actions, with their costs.

    Unlike RL4CO's MTVRP ``solve``, the costs are positive (the env's reward is ``-cost``).

    Args:
        td: an instance batch (``env.generator(...)``, a dataset, or a reset state): a
            TensorDict with ``cost_locs`` [B, D+N, 2], ``depot_capacity`` [B, D],
            ``opening_cost`` [B, D], ``demand`` [B, N], ``vehicle_capacity`` [B, 1],
            ``vehicle_fixed_cost`` [B, 1], ``rounded_costs`` [B].
        seconds: wall-clock budget per instance.
        num_procs: worker processes.
        solver: ``"pyvrp"`` (heuristic) or ``"exact"`` (HiGHS MIP).
        **kw: passed to :func:`solve` (``seed``, ``max_iterations``, ``threads``, ...).

    Returns:
        actions: LongTensor [B, T] of env node indices (depots ``0..D-1``, customer ``j`` is
            ``D + j``), padded with the env's no-op (node 0).
        costs: float64 tensor [B] of positive objective values in the instance's units.

    Raises:
        RuntimeError: when no solution was found for some instance within the time limit.
    """
    import torch

    instances = tensordict_to_instances(td)
    results = solve(instances, solver=solver, seconds=seconds, num_procs=num_procs, **kw)
    missing = [k for k, r in enumerate(results) if r.solution is None]
    if missing:
        raise RuntimeError(f"no solution found for batch rows {missing} in {seconds} s")
    num_depots = instances[0].num_depots
    actions = _pad([r.solution.to_actions(num_depots) for r in results])
    costs = torch.tensor([r.objective for r in results], dtype=torch.float64)
    return actions, costs


def local_search_td(
    td,
    actions,
    seconds: float = 1.0,
    mode: str = "full",
    num_procs: int = 1,
    seed: int = 0,
    max_iterations: int | None = None,
    progress: bool = False,
):
    """Improve env action sequences (e.g. a policy's) with PyVRP warm-started from them
    (:func:`.refine.refine_solution`); no row is made worse.

    Args:
        td: the instance batch the actions solve (see :func:`solve_td`).
        actions: [B, T] node-index actions (trailing padding allowed).
        seconds: PyVRP seconds per instance (None: ``max_iterations`` only).
        mode: ``"full"`` (depots and routes may change) or ``"routes"`` (the open depots stay).
        num_procs: worker processes.
        seed: PyVRP seed.
        max_iterations: PyVRP iterations per instance (0 returns the input).
        progress: show a tqdm progress bar.

    Returns:
        LongTensor [B, T'] of improved actions, padded with the env's no-op (node 0).
    """
    instances = tensordict_to_instances(td)
    acts = np.asarray(actions.detach().cpu() if hasattr(actions, "detach") else actions)
    num_depots = instances[0].num_depots
    sols = [CLRPSolution.from_actions(row, num_depots) for row in acts]
    jobs = [(inst, sol, seconds, mode, seed, max_iterations) for inst, sol in zip(instances, sols)]
    refined = _map(_refine_one, jobs, num_procs, progress, "refine")
    return _pad([s.to_actions(num_depots) or list(r[:1]) for s, r in zip(refined, acts)])
