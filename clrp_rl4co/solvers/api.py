"""The solvers on env batches (:func:`solve_td`, :func:`local_search_td`): the role of RL4CO's
optional env methods ``solve`` / ``local_search``, kept here so that the env stands alone. Many
instances by any method: :func:`clrp_rl4co.solve_many`.

Example::

    from clrp_rl4co import CLRPEnv
    from clrp_rl4co.solvers import local_search_td, solve_td

    env = CLRPEnv(generator_params={"preset": "clrp20"})
    td = env.generator(batch_size=[4])
    actions, costs = solve_td(td, seconds=0.5)  # PyVRP, 0.5 s per instance
    better = local_search_td(td, policy_actions, seconds=0.5)  # never worse
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data import CLRPInstance, CLRPSolution, tensordict_to_instances
from ..envs.clrp.validity import PADDING_ACTION
from ..execution.parallel import map_jobs
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


def _solve_instances(
    instances: Sequence[CLRPInstance], solver: str, seconds: float | None, workers: int, **kw
) -> list[SolverResult]:
    """:func:`.pyvrp_solver.solve_pyvrp` or :func:`.exact.solve_exact` on every instance over
    ``workers`` processes, results in input order; ``kw`` goes to the solver.

    Raises:
        ValueError: an unknown solver, or ``seconds=None`` for the exact solver (before any
            solving).
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver: expected one of {SOLVERS}, got {solver!r}")
    if solver == "exact" and seconds is None:
        raise ValueError("seconds: the exact solver needs a time limit, got None")
    max_iterations = kw.pop("max_iterations", None)
    seed = kw.pop("seed", 0)
    jobs = [(inst, solver, seconds, seed, max_iterations, kw) for inst in instances]
    return map_jobs(_solve_one, jobs, workers, desc=solver)


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
        **kw: ``seed``, ``max_iterations`` (PyVRP only) and what the solver takes
            (:func:`.pyvrp_solver.solve_pyvrp`, :func:`.exact.solve_exact`: ``threads``, ...).

    Returns:
        actions: LongTensor [B, T] of env node indices (depots ``0..D-1``, customer ``j`` is
            ``D + j``), padded with the env's no-op (node 0).
        costs: float64 tensor [B] of positive objective values in the instance's units.

    Raises:
        RuntimeError: when no solution was found for some instance within the time limit.
    """
    import torch

    instances = tensordict_to_instances(td)
    results = _solve_instances(instances, solver, seconds, num_procs, **kw)
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
    refined = map_jobs(_refine_one, jobs, num_procs, progress=progress, desc="refine")
    return _pad([s.to_actions(num_depots) or list(r[:1]) for s, r in zip(refined, acts)])
