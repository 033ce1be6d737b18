"""The generalist's curve (CSV + PNG), its one-line status and the extrapolation to the targets.

``curve.csv`` gets one row per validation: the run's counters at that point (instances, CPU and
wall hours, curriculum stage) and the validation record (:mod:`.validation`). The training
instances still needed for a target are a rough extrapolation (:mod:`experiments.training.trend`):
the metric's trend against log(instances) over the last points (in instances, since a CPU thread
and a GPU train at very different rates); it says "not reached" when the trend does not move
towards the target.
"""

from __future__ import annotations

import csv
import logging
import math
from pathlib import Path
from typing import Any

from ..training.state import RunState
from ..training.trend import instances_to_target
from .validation import FAMILY_COUNT_TARGET, PRINS_GAP_TARGET

log = logging.getLogger(__name__)

CURVE = "curve.csv"
CURVE_PNG = "curve.png"
#: Leading columns of ``curve.csv``; the validation record's keys follow in a fixed order.
COUNTERS = ("instances", "cpu_hours", "wall_hours", "stage")


def append_curve(report_dir: Path, state: RunState, stage: int, record: dict[str, Any]) -> Path:
    """Append one validation row to ``curve.csv`` (header written with the first row)."""
    path = report_dir / CURVE
    row = {
        "instances": state.instances,
        "cpu_hours": round(state.cpu_hours, 4),
        "wall_hours": round(state.wall_hours, 4),
        "stage": stage,
        **{k: (round(v, 6) if isinstance(v, float) else v) for k, v in record.items()},
    }
    report_dir.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        with path.open(newline="") as handle:
            header = next(csv.reader(handle))
        if set(header) != set(row):
            raise ValueError(
                f"{path}: its columns {header} differ from this validation's {list(row)}"
            )
    else:
        header = list(row)
        path.write_text(",".join(header) + "\n")
    with path.open("a", newline="") as handle:
        csv.DictWriter(handle, fieldnames=header).writerow(row)
    return path


def read_curve(report_dir: Path) -> list[dict[str, float]]:
    """The rows of ``curve.csv`` as floats (empty if there is none)."""
    path = report_dir / CURVE
    if not path.is_file():
        return []
    rows = []
    with path.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                rows.append({k: float(v) for k, v in row.items() if v != ""})
            except ValueError as exc:
                raise ValueError(f"{path}, line {line}: not a number ({exc})") from exc
    return rows


def write_curve_png(report_dir: Path) -> Path | None:
    """Plot the family metrics and Prins gap against instances (``curve.png``)."""
    rows = read_curve(report_dir)
    return plot_curve(rows, report_dir / CURVE_PNG) if rows else None


def plot_curve(rows: list[dict[str, float]], path: Path) -> Path:
    """Plot the rows of ``curve.csv`` (:func:`read_curve`) into the PNG ``path``: three panels
    against training instances (thousands), drawn by the package's learning-curve plotter."""
    from matplotlib.figure import Figure

    from clrp_rl4co.models.curves import draw_curves, save_png

    x = [r["instances"] / 1000 for r in rows]
    panels = [
        ("families_met", FAMILY_COUNT_TARGET, "OOD families within 15% of PyVRP 10 s (x8)"),
        ("family_gap_mean", None, "mean gap to PyVRP 10 s over families, %"),
        ("prins_gap_paper_bks", PRINS_GAP_TARGET, "Prins x8: gap to the paper's BKS, %"),
    ]
    fig = Figure(figsize=(13, 3.6))
    for ax, (key, target, title) in zip(fig.subplots(1, 3), panels):
        shown = all(key in r for r in rows)
        lines = {key: (x, [r[key] for r in rows])} if shown else {}
        hlines = {"target": target} if shown and target is not None else None
        draw_curves(ax, lines, "training instances (thousands)", "", hlines, title)
    return save_png(fig, path, dpi=110)


def training_rates(state: RunState) -> dict[str, float]:
    """Training instances per hour of the run on each kind of device it used: ``cpu`` (per CPU
    hour of the CPU runs) and ``gpu`` (per wall hour on the accelerator), where measured. The
    CPU time of a GPU run's host process is taken as its GPU hours."""
    rates = {}
    cpu_instances = state.instances - state.start_instances - state.gpu_instances
    cpu_hours = state.cpu_hours - state.gpu_hours
    if cpu_instances > 0 and cpu_hours > 0:
        rates["cpu"] = cpu_instances / cpu_hours
    if state.gpu_instances > 0 and state.gpu_hours > 0:
        rates["gpu"] = state.gpu_instances / state.gpu_hours
    return rates


def status_line(state: RunState | None, rows: list[dict[str, float]]) -> str:
    """One line: hours, instances, last validation, the targets and the instances to each."""
    if state is None:
        return "generalist: no state yet (python -m experiments.generalist train --hours H)"
    parts = [
        f"generalist: {state.cpu_hours:.2f} CPU h"
        + (f" ({state.gpu_hours:.2f} h of it on a GPU)" if state.gpu_hours else "")
        + f", {state.instances:,} instances "
        f"({state.instances - state.start_instances:,} in this run, {state.resumes} resumes)"
    ]
    val = state.last_validation
    if val:
        parts.append(
            f"families within 15% of PyVRP: {val['families_met']:.0f}/22 "
            f"(target {FAMILY_COUNT_TARGET}), mean gap {val['family_gap_mean']:+.1f}%"
        )
        if "prins_gap_paper_bks" in val:
            parts.append(
                f"Prins x8 {val['prins_gap_paper_bks']:+.2f}% vs paper BKS "
                f"(target {PRINS_GAP_TARGET}%)"
            )
    rates = training_rates(state)
    for label, key, target, higher in (
        ("families", "families_met", FAMILY_COUNT_TARGET, True),
        ("Prins", "prins_gap_paper_bks", PRINS_GAP_TARGET, False),
    ):
        more = instances_to_target(rows, key, target, higher)
        if more == 0:
            parts.append(f"{label}: reached")
        elif more is None:
            parts.append(f"{label}: not reached on the trend")
        elif math.isinf(more):
            parts.append(f"{label}: beyond 1e15 instances on the trend")
        else:
            hours = ", ".join(
                f"~{more / rate:.3g} {kind.upper()} h" for kind, rate in rates.items()
            )
            parts.append(
                f"{label}: ~{more:.3g} more instances on the trend"
                + (f" ({hours})" if hours else "")
            )
    return "; ".join(parts)
