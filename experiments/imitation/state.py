"""An arm's resumable state: the generalist run's (:mod:`experiments.generalist.state`: the
committed ``weights.pt`` + ``state.json``, the local checkpoint with the optimizer) with the
arm's own counters."""

from __future__ import annotations

from dataclasses import dataclass

from ..generalist.state import RunState


@dataclass
class ArmState(RunState):
    """Counters of one arm (cumulative over resumes); :class:`RunState`'s plus:

    Attributes:
        arm: ``pomo`` or ``imitation``.
        phase: ``imitation`` (passes over the labels) or ``pomo``.
        label_count: the labels the arm reads (the first ones of the labels folder).
        label_cpu_hours: the solver's CPU hours of those labels, charged to the arm.
        label_mean_objective: their mean objective.
        examples: imitation examples trained on (labels x passes).
        eval_cpu_hours: CPU hours of the evaluations (recorded, not charged).
        eval_at_cpu_hours: ``cpu_hours`` at the latest evaluation.

    ``cpu_hours`` (training only) and ``instances`` (POMO instances) are :class:`RunState`'s;
    the arm's charge is :attr:`charged_cpu_hours`.
    """

    arm: str = ""
    phase: str = "pomo"
    label_count: int = 0
    label_cpu_hours: float = 0.0
    label_mean_objective: float | None = None
    examples: int = 0
    eval_cpu_hours: float = 0.0
    eval_at_cpu_hours: float | None = None

    @property
    def charged_cpu_hours(self) -> float:
        """Training CPU hours plus the labels' CPU hours: the arm's x axis."""
        return self.cpu_hours + self.label_cpu_hours
