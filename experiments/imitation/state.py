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


def start_policy(arm: str, start_model: str, seed: int = 0) -> torch.nn.Module:
    """The policy ``arm`` starts from: ``start_model`` (:func:`.settings.start_model_path`), for
    an arm of :data:`.settings.GROWN_ARMS` that model with its encoder grown
    (:func:`.growth.deeper`, new layers seeded by ``seed``), or for an arm of
    :data:`.settings.SCRATCH_ARMS` a DRLHQ policy of its architecture with random weights drawn
    from ``seed``."""
    from clrp_rl4co.models import load_policy
    from clrp_rl4co.policies import build_policy

    from . import settings
    from .growth import deeper

    scratch = settings.SCRATCH_ARMS.get(arm)
    if scratch is not None:
        with torch.random.fork_rng():  # the caller's random stream stays as it was
            torch.manual_seed(seed)
            return build_policy("drlhq", **scratch)
    policy = load_policy(settings.start_model_path(start_model))
    grown = settings.GROWN_ARMS.get(arm)
    return policy if grown is None else deeper(policy, grown[1], seed)


def arm_start(state: ArmState) -> str:
    """The model ``state``'s arm continued from, as :func:`clrp_rl4co.models.load_policy` takes
    it: :data:`.settings.START_MODEL` for the arms begun before the start was pinned (they
    record the shipped name, which a ship replaces), else the recorded start."""
    from . import settings

    pinned = state.start_model in ("", settings.START_NAME)
    return settings.start_model_path(settings.START_MODEL if pinned else state.start_model)


def arm_policy(
    weights: dict[str, torch.Tensor], start_model: str, arm: str | None = None
) -> torch.nn.Module:
    """A policy of ``arm``'s architecture (:func:`start_policy`: ``start_model``'s class and
    config, or the scratch arm's) holding ``weights``."""
    policy = start_policy(arm or "", start_model)
    policy.load_state_dict(weights)
    return policy
