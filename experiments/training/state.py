"""A training run's resumable state (the generalist's and each imitation arm's).

Two copies exist:

* the **committed state** (a folder such as ``results/generalist/state/``): ``weights.pt`` (the
  policy's fp32 ``state_dict``, loadable with ``weights_only=True``) and ``state.json``
  (:class:`RunState`, or a subclass with a run's own counters); written in place once, at the
  end of each ``train`` call, so the repository grows by at most one state per resume;
* the **local checkpoint** (``checkpoint.pt`` in a git-ignored folder such as
  ``runs/generalist-work/``): the same plus the optimizer's moments, written every 15 minutes and
  at the end. A resume continues from it when it is ahead of the committed state (its optimizer
  too); otherwise from the committed weights with a fresh Adam.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

log = logging.getLogger(__name__)

WEIGHTS = "weights.pt"
STATE = "state.json"
CHECKPOINT = "checkpoint.pt"


@dataclass
class RunState:
    """Counters of the run (all cumulative over resumes).

    Attributes:
        instances: training instances seen, the start model's included.
        start_instances: instances the start model had seen before this run.
        steps: optimizer steps of this run.
        cpu_hours: process CPU time of training and validation, in hours.
        wall_hours: wall time of training and validation, in hours.
        gpu_hours: the part of ``wall_hours`` spent on an accelerator (``--device cuda``); the
            host process's CPU time there still counts in ``cpu_hours``.
        gpu_instances: the training instances seen on an accelerator.
        resumes: ``train`` calls so far.
        start_model: the shipped model the run started from.
        commits: git commits the run was trained at (one entry per resume that changed it).
        commands: the command line of every ``train`` call (and of the run's start).
        hardware: one entry per distinct hardware / thread setting the run used.
        last_validation: the latest validation record (the run's validation).
        best_family_gap: the best mean gap to PyVRP over the OOD families so far (percent).
    """

    instances: int = 0
    start_instances: int = 0
    steps: int = 0
    cpu_hours: float = 0.0
    wall_hours: float = 0.0
    gpu_hours: float = 0.0
    gpu_instances: int = 0
    resumes: int = 0
    start_model: str = ""
    commits: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    hardware: list[str] = field(default_factory=list)
    last_validation: dict[str, Any] | None = None
    best_family_gap: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str) -> RunState:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{source}: unknown state fields {unknown} (known: {sorted(known)})")
        return cls(**data)


def save_committed(state: RunState, weights: dict[str, torch.Tensor], state_dir: Path) -> None:
    """Write ``weights.pt`` and ``state.json`` into ``state_dir`` (in place)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fp32 = {k: v.detach().cpu().float() if v.is_floating_point() else v for k, v in weights.items()}
    torch.save(fp32, state_dir / WEIGHTS)
    (state_dir / STATE).write_text(state.to_json())


def load_committed(
    state_dir: Path, state_class: type[RunState] = RunState
) -> tuple[RunState, dict[str, torch.Tensor]] | None:
    """The committed ``(state, weights)``, or None if ``state_dir`` holds no state;
    ``state_class`` is :class:`RunState` or a subclass (another run's counters)."""
    state_path, weights_path = state_dir / STATE, state_dir / WEIGHTS
    if not state_path.is_file() and not weights_path.is_file():
        return None
    for path in (state_path, weights_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing (the state needs both {STATE} and {WEIGHTS})")
    try:
        data = json.loads(state_path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{state_path}: not valid JSON ({exc})") from exc
    state = state_class.from_dict(data, str(state_path))
    weights = torch.load(weights_path, map_location="cpu", weights_only=True)
    return state, weights


def save_local(
    state: RunState,
    weights: dict[str, torch.Tensor],
    optimizer: dict[str, Any],
    work_dir: Path,
) -> Path:
    """Write the local checkpoint (state, weights, optimizer) atomically; returns its path."""
    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / CHECKPOINT
    tmp = path.with_suffix(".tmp")
    torch.save(
        {"state": json.loads(state.to_json()), "weights": weights, "optimizer": optimizer}, tmp
    )
    tmp.replace(path)
    return path


def load_local(
    work_dir: Path, state_class: type[RunState] = RunState
) -> tuple[RunState, dict[str, torch.Tensor], dict[str, Any]] | None:
    """The local ``(state, weights, optimizer state)``, or None if there is no checkpoint."""
    path = work_dir / CHECKPOINT
    if not path.is_file():
        return None
    data = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state", "weights", "optimizer"):
        if key not in data:
            raise ValueError(f"{path}: no {key!r} entry (not a run's checkpoint)")
    return state_class.from_dict(data["state"], str(path)), data["weights"], data["optimizer"]


def choose_resume(
    committed: tuple[RunState, dict] | None,
    local: tuple[RunState, dict, dict] | None,
) -> tuple[str, RunState | None, dict | None, dict | None]:
    """Where a resume starts: ``("local" | "committed" | "fresh", state, weights, optimizer)``.

    The local checkpoint wins when it has seen more instances than the committed state (an
    earlier call that stopped before writing its state back); the optimizer comes only with it.
    A local checkpoint at the committed point with the committed weights (the usual case after
    a call that ended cleanly on this machine) lends its optimizer state to the committed resume,
    so Adam's moments survive; the committed state keeps any notes added to it since.
    """
    if local is not None and (committed is None or local[0].instances > committed[0].instances):
        return "local", local[0], local[1], local[2]
    if committed is not None:
        optimizer = None
        if local is not None and local[0].instances == committed[0].instances:
            if _same_weights(local[1], committed[1]):
                optimizer = local[2]
        return "committed", committed[0], committed[1], optimizer
    return "fresh", None, None, None


def _same_weights(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> bool:
    """Whether two state dicts hold the same tensors under the same names."""
    if first.keys() != second.keys():
        return False
    return all(torch.equal(first[name], second[name]) for name in first)
