"""Learning curves: the metrics CSV that survives a resume, the progress line logged at each
validation (and their readers), and the one learning-curve plotter (:func:`draw_curves` onto
axes, :func:`plot_curves` into a PNG, :func:`plot_run` for a run folder's metrics).

Several runs side by side (CSV + PNG) are the harness's ``python -m experiments.compare_runs``.
"""

from __future__ import annotations

import csv
import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter
from lightning.pytorch.loggers.logger import rank_zero_experiment

#: Reward metrics a run's learning curve shows (as costs: cost = -reward).
CURVE_METRICS = ("val/reward", "val/max_reward", "val/max_aug_reward", "train/reward")

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


def draw_curves(
    ax,
    lines: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    hlines: Mapping[str, float] | None = None,
    title: str | None = None,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
):
    """Draw learning curves onto the matplotlib axes ``ax`` and return them.

    Args:
        ax: the axes.
        lines: label -> (xs, ys), one curve each (markers while a curve has under 50 points).
        xlabel, ylabel: the axis labels.
        hlines: label -> y: dashed horizontal reference lines (e.g. a paper's figure).
        title: the axes' title.
        styles: label -> keyword arguments of ``ax.plot`` for that curve (colour, line style,
            ...), over the defaults.
    """
    for label, (xs, ys) in lines.items():
        style = {"marker": "o" if len(xs) < 50 else None, "ms": 3, "lw": 1.2}
        style.update((styles or {}).get(label, {}))
        ax.plot(xs, ys, label=label, **style)
    for (label, y), dash in zip((hlines or {}).items(), ("--", ":", "-.", (0, (5, 5)))):
        ax.axhline(y, color="0.3", ls=dash, lw=1.0, label=f"{label} {y:.4f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if lines or hlines:
        ax.legend(fontsize=8)
    return ax


def save_png(fig, png: str | Path, dpi: int = 120) -> Path:
    """Write the matplotlib figure ``fig`` (made outside pyplot) to ``png``, parent folders
    created; returns the path."""
    png = Path(png)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=dpi)
    return png


def plot_curves(
    lines: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    png: str | Path,
    xlabel: str = "training instances",
    ylabel: str = "validation objective (cost)",
    hlines: Mapping[str, float] | None = None,
    title: str | None = None,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """A learning-curve PNG of ``lines`` (label -> (xs, ys)) with reference ``hlines``
    (label -> y, dashed), drawn by :func:`draw_curves` on a figure outside pyplot (the
    caller's backend is left alone); returns ``png``.

    Raises:
        ValueError: no line has a point.
    """
    from matplotlib.figure import Figure

    if not any(len(xs) for xs, _ in lines.values()):
        raise ValueError(f"lines: no points to plot into {png}")
    fig = Figure(figsize=(7, 4))
    draw_curves(fig.subplots(), lines, xlabel, ylabel, hlines, title, styles)
    return save_png(fig, png)


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
    plot_curves(lines, png, "training step", "objective (cost)")
    return True
