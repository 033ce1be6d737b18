"""Learning curves: the metrics CSV that survives a resume, the progress line logged at each
validation, a run's learning-curve PNG, and several runs side by side (CSV + PNG).

Compare runs (run folders, metrics CSVs or logs holding the progress lines; several sources of
one run are merged, a step seen twice keeps the later value)::

    python -m clrp_rl4co.models.curves --out results/training/clrp20 \\
        DRLHQ=runs/drlhq_clrp20 "POMO*=runs/pomo_clrp20" "MTA*=runs/mta_clrp20"

writes ``<out>.csv`` (label, step, training instances, validation costs) and ``<out>.png``.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter
from lightning.pytorch.loggers.logger import rank_zero_experiment

from .build import monitor_metric
from .runs import RunFolder

#: Reward metrics a run's learning curve shows (as costs: cost = -reward).
CURVE_METRICS = ("val/reward", "val/max_reward", "val/max_aug_reward", "train/reward")

#: Columns of the comparison CSV for the validation metrics (costs).
COST_COLUMNS = {
    "val/max_reward": "val_cost_best_start",
    "val/reward": "val_cost_mean",
    "val/max_aug_reward": "val_cost_best_aug",
}

#: A progress line: ``[epoch E step S M min] key=value ...`` (:class:`ProgressLog`), after the
#: logging handler's prefix if any (Hydra's ``[time][logger][INFO] - ``).
PROGRESS_LINE = re.compile(r"\[epoch (\d+) step (\d+) ([\d.]+) min\] (.*)$")

log = logging.getLogger(__name__)

#: ``{metric: {step: value}}``
Series = dict[str, dict[int, float]]


class _AppendingWriter(ExperimentWriter):
    """Lightning's CSV writer, but an existing ``metrics.csv`` is continued, not deleted."""

    def _check_log_dir_exists(self) -> None:
        if self._fs.isfile(self.metrics_file_path):
            with self._fs.open(self.metrics_file_path, "r", newline="") as f:
                self.metrics_keys = next(csv.reader(f), [])


class ResumableCSVLogger(CSVLogger):
    """Lightning's ``CSVLogger`` whose ``metrics.csv`` keeps the rows of earlier parts of a
    resumed run (Lightning's own deletes them). A fresh run removes a stale file first
    (:func:`clrp_rl4co.models.training.train`)."""

    @property
    @rank_zero_experiment
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = _AppendingWriter(log_dir=self.log_dir)
        return self._experiment


class ProgressLog(Callback):
    """Logs :data:`PROGRESS_LINE` (INFO) after each validation (epoch, step, training minutes, the
    scalar metrics) and keeps two totals across resumed parts, stored in every checkpoint
    (:meth:`from_checkpoint`): wall seconds of training (validation included) and training
    instances (batch size x processes, summed over steps)."""

    def __init__(self) -> None:
        self.seconds = 0.0  # before this invocation's training started
        self.instances = 0
        self._start: float | None = None

    def elapsed(self) -> float:
        """Training wall seconds over all parts of the run so far."""
        return self.seconds + (time.time() - self._start if self._start is not None else 0.0)

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._start = time.time()

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        size = batch.batch_size[0] if hasattr(batch, "batch_size") else len(batch)
        self.instances += int(size) * trainer.world_size

    def on_validation_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if trainer.sanity_checking or not trainer.is_global_zero:
            return
        scalars = {k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}
        parts = " ".join(f"{k}={v:.4f}" for k, v in sorted(scalars.items()))
        minutes = self.elapsed() / 60
        log.info(
            "[epoch %d step %d %.1f min] %s",
            trainer.current_epoch,
            trainer.global_step,
            minutes,
            parts,
        )

    def state_dict(self) -> dict[str, float]:
        return {"seconds": self.elapsed(), "instances": self.instances}

    def load_state_dict(self, state_dict: dict[str, float]) -> None:
        self.seconds = float(state_dict["seconds"])
        self.instances = int(state_dict["instances"])

    @classmethod
    def from_checkpoint(cls, checkpoint: dict) -> dict[str, float] | None:
        """``{"seconds", "instances"}`` stored in a loaded Lightning checkpoint, or None."""
        for key, state in checkpoint.get("callbacks", {}).items():
            if str(key).startswith(cls.__qualname__):
                return state
        return None


def read_metrics_csv(path: str | Path) -> Series:
    """Every numeric column of a Lightning metrics CSV by step (a later row wins)."""
    series: Series = {}
    with Path(path).open(newline="") as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            for key, value in row.items():
                if key not in ("step", "epoch") and value not in ("", None):
                    series.setdefault(key, {})[step] = float(value)
    return series


def read_progress_log(path: str | Path) -> Series:
    """The metrics of the :data:`PROGRESS_LINE` lines of a text log (a later line wins)."""
    series: Series = {}
    for line in Path(path).read_text(errors="replace").splitlines():
        match = PROGRESS_LINE.search(line.strip())
        if match:
            step = int(match.group(2))
            for key, _, value in (kv.partition("=") for kv in match.group(4).split()):
                if value:
                    series.setdefault(key, {})[step] = float(value)
    return series


def merge(parts: Iterable[Series]) -> Series:
    """Series of several parts of one run; a step in a later part wins."""
    merged: Series = {}
    for part in parts:
        for key, points in part.items():
            merged.setdefault(key, {}).update(points)
    return merged


def read_source(path: str | Path) -> Series:
    """A run folder (its ``csv/metrics.csv``), a metrics ``.csv`` or a text log."""
    path = Path(path)
    if path.is_dir():
        return read_metrics_csv(RunFolder(path).metrics)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no run folder, metrics CSV or log")
    return read_metrics_csv(path) if path.suffix == ".csv" else read_progress_log(path)


def _plot(
    lines: dict[str, tuple[list[float], list[float]]],
    xlabel: str,
    ylabel: str,
    png: Path,
    hlines: dict[str, float] | None = None,
) -> None:
    """Draw ``lines`` (label -> (xs, ys)) and, for each ``hlines`` entry (label -> y), a dashed
    horizontal reference line (e.g. a paper's figure) into ``png``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, (xs, ys) in lines.items():
        ax.plot(xs, ys, marker="o" if len(xs) < 50 else None, ms=3, lw=1.2, label=label)
    for (label, y), style in zip((hlines or {}).items(), ("--", ":", "-.", (0, (5, 5)))):
        ax.axhline(y, color="0.3", ls=style, lw=1.0, label=f"{label} {y:.4f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    plt.close(fig)


def plot_curves(
    lines: dict[str, tuple[list[float], list[float]]],
    png: str | Path,
    xlabel: str = "training instances",
    ylabel: str = "validation objective (cost)",
    hlines: dict[str, float] | None = None,
) -> Path:
    """A learning-curve PNG of ``lines`` (label -> (xs, ys)) with reference ``hlines``
    (label -> y, dashed); returns ``png``."""
    if not any(xs for xs, _ in lines.values()):
        raise ValueError(f"lines: no points to plot into {png}")
    _plot(lines, xlabel, ylabel, Path(png), hlines)
    return Path(png)


def plot_run(metrics_csv: str | Path, png: str | Path) -> bool:
    """A run's learning curve: the :data:`CURVE_METRICS` it logged, as costs, against the
    training step. False (nothing written) if the CSV is missing or holds none of them."""
    metrics_csv = Path(metrics_csv)
    if not metrics_csv.is_file():
        return False
    series = read_metrics_csv(metrics_csv)
    lines = {}
    for key in CURVE_METRICS:
        if series.get(key):
            steps = sorted(series[key])
            lines[key.replace("reward", "cost")] = (steps, [-series[key][s] for s in steps])
    if not lines:
        return False
    _plot(lines, "training step", "objective (cost)", Path(png))
    return True


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
    _plot(lines, "training instances", ylabel, out.with_suffix(".png"))
    return rows


def _parse_run(text: str) -> tuple[str, list[str]]:
    label, sep, sources = text.partition("=")
    if not sep or not label or not sources:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LABEL=SOURCE[,SOURCE...]")
    return label, sources.split(",")


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(
        prog="python -m clrp_rl4co.models.curves",
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
