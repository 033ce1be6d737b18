"""The campaign's generalist track: the generalist run (:mod:`experiments.generalist`)
continued on the campaign's device, in the campaign's output folder.

``run --generalist-minutes M`` copies the committed generalist state and curve into
``<out>/generalist/``, trains there for M minutes after the preset tracks (same device, no
``nice``), and leaves the updated state in that folder; ``apply`` brings it back into
``results/generalist/`` when it has seen more instances than the committed state (a state that
is not ahead is left out, so an old output folder cannot roll the run back).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from experiments.generalist import settings as generalist_settings
from experiments.generalist.report import CURVE, CURVE_PNG, write_curve_png
from experiments.training.state import STATE, WEIGHTS, load_committed

log = logging.getLogger(__name__)

#: The track's folder inside the campaign's output folder.
FOLDER = "generalist"


def _copy_state(source: Path, dest: Path) -> None:
    """Copy a generalist report folder's state and curve (what exists of them)."""
    (dest / "state").mkdir(parents=True, exist_ok=True)
    for name in (STATE, WEIGHTS):
        if (source / "state" / name).is_file():
            shutil.copy2(source / "state" / name, dest / "state" / name)
    for name in (CURVE, CURVE_PNG):
        if (source / name).is_file():
            shutil.copy2(source / name, dest / name)


def run_generalist(
    minutes: float,
    out: Path,
    device: str,
    threads: int | None = None,
    report_dir: Path = generalist_settings.REPORT_DIR,
    **train_options: Any,
) -> dict[str, Any]:
    """Train the generalist for ``minutes`` in ``<out>/generalist``; returns a summary."""
    from experiments.generalist.loop import TrainOptions, train

    folder = Path(out) / FOLDER
    _copy_state(report_dir, folder)
    before = load_committed(folder / "state")
    state = train(
        TrainOptions(
            hours=minutes / 60.0, device=device, threads=threads or 1, nice=0,
            state_dir=folder / "state", work_dir=folder / "work", report_dir=folder,
            **train_options,
        )
    )  # fmt: skip
    shutil.rmtree(folder / "work", ignore_errors=True)  # the optimizer stays local
    return {
        "start_instances": before[0].instances if before else None,
        "instances": state.instances,
        "last_validation": state.last_validation,
    }


def apply_generalist(folder: Path, report_dir: Path = generalist_settings.REPORT_DIR) -> str:
    """Bring ``<folder>/generalist``'s state back into ``report_dir`` if it is ahead."""
    source = Path(folder) / FOLDER
    returned = load_committed(source / "state")
    if returned is None:
        raise FileNotFoundError(f"{source / 'state'}: no generalist state in the output folder")
    committed = load_committed(report_dir / "state")
    if committed is not None and returned[0].instances <= committed[0].instances:
        return (
            f"generalist: kept the committed state ({committed[0].instances:,} instances; "
            f"the returned one has {returned[0].instances:,})"
        )
    _copy_state(source, report_dir)
    write_curve_png(report_dir)
    return f"generalist: state brought back ({returned[0].instances:,} instances)"
