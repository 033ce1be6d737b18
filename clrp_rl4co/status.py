"""The one status of a run, shared by every solver, the library and the command."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """How a run ended. A ``StrEnum``: each member is its word (``Status.FEASIBLE ==
    "feasible"``, ``str()`` and formatting give the word), as written in ``summary.csv``, the
    solution JSON and the printed table.

    Members:
        OPTIMAL: an exact solver proved the solution optimal.
        FEASIBLE: a valid solution, not proven optimal.
        NO_SOLUTION: the budget ended before any valid solution.
        INTERRUPTED: stopped early (Ctrl-C); the solution is the best found so far.
        FAILED: the run raised or its process died (the reason in the result's ``error``).
        NOT_RUN: stopped before it started.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_SOLUTION = "no solution"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    NOT_RUN = "not run"
