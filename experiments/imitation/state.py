"""An arm's resumable state: a training run's (:mod:`experiments.training.state`: the
committed ``weights.pt`` + ``state.json``, the local checkpoint with the optimizer) with the
arm's own counters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from ..training.state import RunState, load_committed


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


def hours_label(state: ArmState) -> str:
    """``12.84 CPU h``, plus ``+ 0.17 GPU h`` for an arm that trained on a GPU."""
    text = f"{state.charged_cpu_hours:.2f} CPU h"
    return text + (f" + {state.gpu_hours:.2f} GPU h" if state.gpu_hours > 0 else "")


def committed_arm(report_dir: Path, arm: str) -> tuple[ArmState, dict[str, torch.Tensor]] | None:
    """``arm``'s committed state and weights under ``report_dir`` (None: it has none)."""
    return load_committed(Path(report_dir) / arm, ArmState)


def arm_policy(weights: dict[str, torch.Tensor], start_model: str) -> torch.nn.Module:
    """A policy of ``start_model``'s class and config (:func:`.settings.start_model_path`)
    holding ``weights``."""
    from clrp_rl4co.models import load_policy

    from .settings import start_model_path

    policy = load_policy(start_model_path(start_model))
    policy.load_state_dict(weights)
    return policy
