"""Training runs side by side: their validation curves as one CSV and one PNG.

Sources are run folders, metrics CSVs or logs holding the progress lines
(:class:`~clrp_rl4co.models.curves.ProgressLog`); several sources of one run are merged, a
step seen twice keeps the later value::

    python -m experiments.compare_runs --out results/training/clrp20 \\
        DRLHQ=runs/drlhq_clrp20 "POMO*=runs/pomo_clrp20" "MTA*=runs/mta_clrp20"

writes ``<out>.csv`` (label, step, training instances, validation costs) and ``<out>.png``.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from clrp_rl4co.models.build import monitor_metric
from clrp_rl4co.models.curves import Series, plot_curves, read_metrics_csv, read_progress_log
from clrp_rl4co.models.runs import RunFolder

log = logging.getLogger(__name__)

#: Columns of the comparison CSV for the validation metrics (costs).
COST_COLUMNS = {
    "val/max_reward": "val_cost_best_start",
    "val/reward": "val_cost_mean",
    "val/max_aug_reward": "val_cost_best_aug",
}


def read_source(path: str | Path) -> Series:
    """A run folder (its ``csv/metrics.csv``), a metrics ``.csv`` or a text log."""
    path = Path(path)
    if path.is_dir():
        return read_metrics_csv(RunFolder(path).metrics)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no run folder, metrics CSV or log")
    return read_metrics_csv(path) if path.suffix == ".csv" else read_progress_log(path)


def merge(parts: Iterable[Series]) -> Series:
    """Series of several parts of one run; a step in a later part wins."""
    merged: Series = {}
    for part in parts:
        for key, points in part.items():
            merged.setdefault(key, {}).update(points)
    return merged


def compare_runs(
    runs: dict[str, Sequence[str | Path]],
    out: str | Path,
    batch_size: int | None = None,
    metric: str | None = None,
    max_step: int | None = None,
) -> list[dict[str, Any]]:
    """Validation curves of several runs side by side: ``<out>.csv`` and ``<out>.png``.

    ``runs``: label -> sources of one run (:func:`read_source`, merged in order).
    ``batch_size``: training instances per step for sources that are not run folders (a run
    folder knows its own). ``metric``: the reward plotted (default: the run's checkpoint
    metric, :func:`monitor_metric`; ``val/max_reward`` for logs). Returns the CSV rows."""
    if not runs:
        raise ValueError("runs: no run given")
    out = Path(out)
    rows: list[dict[str, Any]] = []
    lines = {}
    for label, sources in runs.items():
        series = merge(read_source(s) for s in sources)
        folder = next((RunFolder(s) for s in sources if Path(s).is_dir()), None)
        per_step = folder.instances_per_step() if folder and batch_size is None else batch_size
        if per_step is None:
            raise ValueError(f"{label}: --batch-size is needed for {list(map(str, sources))}")
        name = metric or (
            monitor_metric(str(folder.config().model.algorithm)) if folder else "val/max_reward"
        )
        points = series.get(name, {})
        steps = sorted(s for s in points if max_step is None or s <= max_step)
        if not steps:
            raise ValueError(f"{label}: no {name} values in {list(map(str, sources))}")
        for step in steps:
            row: dict[str, Any] = {
                "label": label,
                "step": step,
                "training_instances": step * per_step,
            }
            for key, column in COST_COLUMNS.items():
                row[column] = -series[key][step] if step in series.get(key, {}) else math.nan
            rows.append(row)
        lines[label] = ([s * per_step for s in steps], [-points[s] for s in steps])
        best = min(-points[s] for s in steps)
        log.info(
            "%s: %d validations up to step %d, best cost %.4f", label, len(steps), steps[-1], best
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.with_suffix(".csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ylabel = "validation objective" + (f" ({metric})" if metric else "")
    plot_curves(lines, out.with_suffix(".png"), "training instances", ylabel)
    return rows


def _parse_run(text: str) -> tuple[str, list[str]]:
    label, sep, sources = text.partition("=")
    if not sep or not label or not sources:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LABEL=SOURCE[,SOURCE...]")
    return label, sources.split(",")


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(
        prog="python -m experiments.compare_runs",
        description="Validation curves of training runs side by side (CSV + PNG).",
    )
    p.add_argument(
        "runs",
        nargs="+",
        type=_parse_run,
        help="LABEL=SOURCE[,SOURCE...]: run folders, metrics CSVs or logs",
    )
    p.add_argument("--out", required=True, help="stem of the .csv and .png")
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="training instances per step (needed for logs and CSVs)",
    )
    p.add_argument("--metric", default=None, help="default: each run's checkpoint metric")
    p.add_argument("--max-step", type=int, default=None, help="ignore later steps")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rows = compare_runs(dict(args.runs), args.out, args.batch_size, args.metric, args.max_step)
    print(f"written: {Path(args.out).with_suffix('.csv')} and {Path(args.out).with_suffix('.png')}")
    return rows


if __name__ == "__main__":
    main()
