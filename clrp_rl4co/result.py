"""The one result of solving an instance (:func:`clrp_rl4co.solve`,
:func:`clrp_rl4co.solve_many`): solution, objective and its parts, status, method, model,
seconds and details, with a readable summary (``print(result)``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .status import Status

if TYPE_CHECKING:  # ``import clrp_rl4co`` stays light (no torch)
    from .data.solution import CLRPSolution, CostBreakdown


@dataclass
class SolveResult:
    """What one run produced.

    Attributes:
        solution: the best valid solution (None when none was found or the run failed).
        objective: its cost in the instance's units (None without a solution).
        method: the method that ran (``auto`` resolved).
        model: the policy's name (None for the classical methods).
        seconds: wall time of the run.
        status: a :class:`~clrp_rl4co.status.Status`: ``OPTIMAL`` (exact, proven),
            ``FEASIBLE``, ``NO_SOLUTION``, ``FAILED`` (the run raised or its process died) or
            ``NOT_RUN`` (stopped before it started); an interrupted run keeps its own status
            and sets ``interrupted`` (the command writes it ``interrupted``).
        details: method-specific numbers (``start_objective``, ``decode``, ``bound``, ``note``,
            ``iterations``, ``reruns``).
        interrupted: the run was stopped early (Ctrl-C); ``solution`` is the best found so far.
        error: why the run failed (``status == Status.FAILED``).
        cost: the objective's parts (opening, vehicles, routing; None without a solution).

    ``print(result)`` shows :meth:`summary`.
    """

    solution: CLRPSolution | None
    objective: float | None
    method: str
    model: str | None
    seconds: float
    status: Status
    details: dict = field(default_factory=dict)
    interrupted: bool = False
    error: str | None = None
    cost: CostBreakdown | None = None

    def is_feasible(self) -> bool:
        """Whether the run has a valid solution."""
        return self.solution is not None

    def summary(self) -> str:
        """A readable summary: status, objective and its parts, routes and open depots,
        method, model, seconds, and the details."""
        status = f"{self.status}{' (interrupted)' if self.interrupted else ''}"
        lines = ["Solve result", "============", f"    status: {status}"]
        if self.solution is not None and self.cost is not None:
            cost = self.cost
            lines += [
                f" objective: {self.objective:.10g} = opening {cost.opening:.10g} + vehicles "
                f"{cost.vehicles:.10g} + routing {cost.routing:.10g}",
                f"    routes: {len(self.solution.routes)}",
                f"    depots: {', '.join(str(d) for d in self.solution.open_depots)} open",
            ]
        model = f" ({self.model})" if self.model else ""
        lines += [f"    method: {self.method}{model}", f"   seconds: {self.seconds:.2f}"]
        if self.error:
            lines.append(f"     error: {self.error}")
        lines += [f"{key:>10}: {value}" for key, value in self.details.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
