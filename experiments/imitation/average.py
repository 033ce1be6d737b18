"""The mean of an arm's committed weights at several commits (tail averaging).

    python -m experiments.imitation --preset clrp100 average --arm pomo-slow \\
        --revisions c6e2fce 3cef0f9 070dcee 0323404 bff65f9

Weights a few CPU hours apart along one run at a small learning rate lie close together; their
mean (stochastic weight averaging, Izmailov et al. 2018) can decode better than any one of
them, at no training cost. Each revision's committed state of the arm (``<arm>/weights.pt`` and
``state.json`` as git holds them at that commit) is read, the weights are averaged entry by
entry (in float64), and the mean is evaluated like a point of the curve (x8 on the first
:data:`.settings.EVAL_SIZE` instances of the paper's set). It is written as
``<arm>/average/``: ``weights.pt``, the newest revision's ``state.json`` (its hours and
instances: averaging trains nothing) with this command added to its commands, and
``sources.json`` (the revisions, their CPU hours and the x8); an average written before is
replaced only with ``--replace``. ``ship --arm ARM --average`` compares it with the shipped
model on the held-out instances.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from experiments.training.state import STATE, WEIGHTS, load_committed, save_committed

from . import settings
from .state import ArmState, arm_policy, arm_start

AVERAGE_DIR = "average"
SOURCES = "sources.json"


def mean_weights(weights: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The entry-wise mean of ``weights`` (state dicts of one architecture), each floating
    entry averaged in float64 and returned in its own dtype; other entries must be equal and
    are kept.

    Raises:
        ValueError: no weights, different keys, or unequal non-floating entries (naming the
            entry).
    """
    if not weights:
        raise ValueError("weights: nothing to average")
    first = weights[0]
    for number, other in enumerate(weights[1:], start=1):
        if other.keys() != first.keys():
            differ = sorted(set(other) ^ set(first))
            raise ValueError(f"weights[{number}]: entries differ from weights[0]'s: {differ}")
    mean = {}
    for key, value in first.items():
        if value.is_floating_point():
            total = sum(w[key].double() for w in weights)
            mean[key] = (total / len(weights)).to(value.dtype)
        elif all(torch.equal(w[key], value) for w in weights):
            mean[key] = value
        else:
            raise ValueError(f"weights: the non-floating entry {key!r} differs between them")
    return mean


def hours_list(hours: Sequence[float]) -> str:
    """``5.42, 6.42, 7.93``: the CPU hours an average is taken at, as reports write them."""
    return ", ".join(f"{h:.2f}" for h in hours)


def _show(state_dir: Path, revision: str, name: str) -> bytes:
    done = subprocess.run(
        ["git", "show", f"{revision}:./{name}"], cwd=state_dir, capture_output=True, timeout=60
    )
    if done.returncode != 0:
        raise ValueError(
            f"revisions: {revision!r} holds no {state_dir / name} "
            f"({done.stderr.decode(errors='replace').strip()})"
        )
    return done.stdout


def revision_state(state_dir: Path, revision: str) -> tuple[ArmState, dict[str, torch.Tensor]]:
    """The arm's committed ``(state, weights)`` in ``state_dir`` as commit ``revision`` has
    them.

    Raises:
        ValueError: the revision lacks either file (naming the revision and the file).
    """
    data = json.loads(_show(state_dir, revision, STATE))
    state = ArmState.from_dict(data, f"{revision}:{state_dir / STATE}")
    weights = torch.load(io.BytesIO(_show(state_dir, revision, WEIGHTS)), weights_only=True)
    return state, weights


def average_command(arm: str, revisions: Sequence[str], replace: bool = False) -> str:
    """The command line of :func:`average` (``--replace`` with ``replace``), as the written
    state records it."""
    return (
        f"python -m experiments.imitation{settings.preset_flag()} average --arm {arm} "
        f"--revisions {' '.join(revisions)}" + (" --replace" if replace else "")
    )


def average(
    arm: str,
    revisions: Sequence[str],
    report_dir: Path | None = None,
    evaluate_fn: Callable[[torch.nn.Module], float] | None = None,
    replace: bool = False,
) -> dict[str, Any]:
    """Average ``arm``'s committed weights at ``revisions`` (oldest first), evaluate and write
    the mean to ``<report_dir>/<arm>/average/`` (an average already there only with
    ``replace``); returns what ``sources.json`` holds.

    Raises:
        ValueError: an unknown arm, fewer than two revisions, a revision repeated or without
            the arm's state, revisions not in the order of the arm's hours, or an average
            already written (without ``replace``).
    """
    from .loop import evaluate_paper_set

    settings.check_arm(arm)
    if len(revisions) < 2 or len(set(revisions)) != len(revisions):
        raise ValueError(f"revisions: need two or more distinct commits, got {list(revisions)}")
    state_dir = Path(report_dir or settings.REPORT_DIR) / arm
    out = state_dir / AVERAGE_DIR
    if out.exists() and not replace:
        raise ValueError(f"{out}: holds an average already (replace it with --replace)")
    loaded = [revision_state(state_dir, revision) for revision in revisions]
    hours = [state.charged_cpu_hours for state, _ in loaded]
    if any(later <= earlier for earlier, later in zip(hours, hours[1:])):
        raise ValueError(
            f"revisions: the arm's hours must rise from one to the next, got "
            f"{dict(zip(revisions, (round(h, 3) for h in hours)))}"
        )
    x8_of_each = [(s.last_validation or {}).get("x8") for s, _ in loaded]
    state = loaded[-1][0]
    weights = mean_weights([w for _, w in loaded])
    policy = arm_policy(weights, arm_start(state), arm)
    x8 = (evaluate_fn or evaluate_paper_set)(policy)
    command = average_command(arm, revisions, replace)
    state.commands.append(command)
    state.last_validation = {"instances": state.instances, "x8": x8}
    save_committed(state, weights, out)
    sources = {
        "command": command,
        "revisions": list(revisions),
        "cpu_hours": hours,  # unrounded: reports round once, as each state's label does
        "x8": x8,
        "x8_of_each": x8_of_each,
    }
    (out / SOURCES).write_text(json.dumps(sources, indent=2) + "\n")
    return sources


def committed_average(report_dir: Path, arm: str) -> tuple[ArmState, dict, dict] | None:
    """``arm``'s written average: ``(state, weights, sources)``; None when it has none."""
    folder = Path(report_dir) / arm / AVERAGE_DIR
    loaded = load_committed(folder, ArmState)
    if loaded is None:
        return None
    sources_path = folder / SOURCES
    if not sources_path.is_file():
        raise FileNotFoundError(f"{sources_path}: missing (the average needs its sources)")
    return *loaded, json.loads(sources_path.read_text())
