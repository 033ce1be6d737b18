"""HiGHS: one home for creating, loading and running a MIP of the package's solvers.

HiGHS keeps one global thread scheduler per process, prints a banner from its C++ constructor
before any option can silence it, and reports "Optimal" within its own gap: these helpers deal
with each once, for :mod:`.exact`, :mod:`.recombine` and :mod:`.location_model`.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Sequence

import highspy
import numpy as np

from ..execution import interrupt

INF = highspy.kHighsInf
#: A MIP row: column indices, coefficients, lower and upper bound.
Row = tuple[Sequence[int], Sequence[float], float, float]

_scheduler_threads: list[int] = []  # threads of this process's HiGHS scheduler, once set


@contextlib.contextmanager
def _stdout_to_devnull():
    """Send the process's stdout (file descriptor 1) to /dev/null for the block: HiGHS prints
    its banner from its C++ constructor, before any option can turn its output off."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def new_highs(threads: int, verbose: bool) -> highspy.Highs:
    """A HiGHS instance with ``threads`` threads, a MIP gap of 0 and output only if
    ``verbose`` (the global scheduler is rebuilt when the thread count changes)."""
    if verbose:
        h = highspy.Highs()
    else:
        with _stdout_to_devnull():
            h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    if _scheduler_threads and _scheduler_threads[0] != int(threads):
        highspy.Highs.resetGlobalScheduler(True)
    _scheduler_threads[:] = [int(threads)]
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("mip_rel_gap", 0.0)
    return h


def load_mip(
    h: highspy.Highs,
    cost: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    integer: np.ndarray,
    rows: Sequence[Row],
) -> None:
    """Add the columns (objective ``cost``, bounds, ``integer`` flags, all ``[C]``) and the
    ``rows`` of a minimisation MIP to ``h``."""
    starts, index, value, lo, hi = [], [], [], [], []
    for idx, val, rlo, rhi in rows:
        starts.append(len(index))
        index.extend(idx)
        value.extend(val)
        lo.append(rlo)
        hi.append(rhi)
    load_sparse_mip(h, cost, lower, upper, integer, (starts, index, value), lo, hi)


def load_sparse_mip(
    h: highspy.Highs,
    cost: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    integer: np.ndarray,
    matrix: tuple[Sequence[int], Sequence[int], Sequence[float]],
    row_lower: Sequence[float],
    row_upper: Sequence[float],
) -> None:
    """:func:`load_mip` with the rows as one compressed sparse row matrix ``(starts, index,
    value)`` (row ``r``'s entries at ``starts[r]:starts[r + 1]``) and their bounds."""
    ncol = len(cost)
    empty = np.zeros(0, np.int32)
    h.addCols(ncol, np.asarray(cost, float), np.asarray(lower, float),
              np.asarray(upper, float), 0, empty, empty, np.zeros(0))  # fmt: skip
    starts, index, value = matrix
    h.addRows(len(row_lower), np.asarray(row_lower, float), np.asarray(row_upper, float),
              len(index), np.asarray(starts, np.int32), np.asarray(index, np.int32),
              np.asarray(value, float))  # fmt: skip
    h.changeColsIntegrality(
        ncol,
        np.arange(ncol, dtype=np.int32),
        np.where(integer, highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous),
    )


def start_from(h: highspy.Highs, values: np.ndarray) -> None:
    """Give ``h`` the column values ``values`` as its MIP start."""
    solution = highspy.HighsSolution()
    solution.col_value = list(map(float, values))
    solution.value_valid = True
    h.setSolution(solution)


def run_highs(h: highspy.Highs, seconds: float) -> tuple[str, float, float, np.ndarray | None]:
    """Run ``h`` for at most ``seconds`` (at least 0.01; HiGHS's ``time_limit``).

    Returns:
        ``(model status, objective, dual bound, column values)``; objective ``inf`` and values
        None when HiGHS has no feasible solution.
    """
    h.setOptionValue("time_limit", max(float(seconds), 0.01))
    if h.run() == highspy.HighsStatus.kError:
        raise RuntimeError(f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}")
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    col = np.array(h.getSolution().col_value) if has_sol else None
    obj = info.objective_function_value if has_sol else math.inf
    return status, obj, info.mip_dual_bound, col


def stop_on_request(h: highspy.Highs) -> None:
    """Make ``h``'s simplex and branch-and-bound stop (keeping what they found) once a stop is
    requested (:mod:`clrp_rl4co.execution.interrupt`, Ctrl-C)."""

    def check(event) -> None:
        if interrupt.requested():
            event.interrupt()

    h.cbSimplexInterrupt += check
    h.cbMipInterrupt += check
