"""clrp_rl4co.models.curves (the metrics CSV across resumes, progress logs, the learning-curve
plotter) and experiments.compare_runs (runs side by side)."""

import csv
import json

import pytest

from clrp_rl4co.models import curves
from clrp_rl4co.models.curves import ResumableCSVLogger
from clrp_rl4co.models.runs import RunFolder
from experiments import compare_runs


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_resumable_csv_logger_keeps_earlier_rows(tmp_path):
    first = ResumableCSVLogger(tmp_path, name="csv", version="")
    first.log_metrics({"val/reward": -10.0}, step=1)
    first.log_metrics({"val/reward": -9.0}, step=3)
    first.save()
    # a resumed part: a new logger on the same folder, with a new column
    second = ResumableCSVLogger(tmp_path, name="csv", version="")
    second.log_metrics({"val/reward": -8.0, "train/loss": 0.5}, step=5)
    second.save()
    rows = _rows(tmp_path / "csv" / "metrics.csv")
    assert [int(r["step"]) for r in rows] == [1, 3, 5]
    assert [float(r["val/reward"]) for r in rows] == [-10.0, -9.0, -8.0]
    assert [r["train/loss"] for r in rows] == ["", "", "0.5"]


def test_resumed_logs_are_merged_and_written(tmp_path):
    part1 = tmp_path / "part1.log"
    part2 = tmp_path / "part2.log"
    part1.write_text(
        "noise\n[epoch 0 step 100 1.0 min] train/loss=-1.0 val/max_reward=-17.5 val/reward=-18.0\n"
        "[epoch 1 step 200 2.0 min] val/max_reward=-17.0 val/reward=-17.8\n"
    )
    part2.write_text(  # resumed: step 200 logged again, the later line wins
        "[epoch 1 step 200 0.5 min] val/max_reward=-16.9 val/reward=-17.7\n"
        "[epoch 2 step 300 1.5 min] val/max_reward=-16.5 val/reward=-17.2\n"
    )
    other = tmp_path / "other.log"
    other.write_text("[epoch 0 step 100 1.0 min] val/max_reward=-18.0 val/reward=-19.0\n")
    out = tmp_path / "curves"
    compare_runs.main(["--batch-size", "64", "--out", str(out), f"A={part1},{part2}", f"B={other}"])
    rows = _rows(tmp_path / "curves.csv")
    a = [r for r in rows if r["label"] == "A"]
    assert [int(r["step"]) for r in a] == [100, 200, 300]
    assert [int(r["training_instances"]) for r in a] == [6400, 12800, 19200]
    assert [float(r["val_cost_best_start"]) for r in a] == [17.5, 16.9, 16.5]
    assert [float(r["val_cost_mean"]) for r in a] == [18.0, 17.7, 17.2]
    assert len([r for r in rows if r["label"] == "B"]) == 1
    assert (tmp_path / "curves.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="B: --batch-size is needed"):
        compare_runs.compare_runs({"B": [other]}, tmp_path / "x")
    with pytest.raises(SystemExit):
        compare_runs.main(["--out", str(out), "no-label"])


def test_run_folders_know_their_instances_and_metric(tmp_path):
    """A run folder: instances per step = batch x processes, metric = its algorithm's."""
    run = RunFolder(tmp_path / "run")
    run.csv_dir.mkdir(parents=True)
    run.config_file.write_text("model:\n  batch_size: 8\n  algorithm: reinforce\n")
    run.provenance_file.write_text(json.dumps({"invocations": [{"world_size": 2}]}))
    run.metrics.write_text("epoch,step,train/loss,val/reward\n0,9,,-5.0\n,10,0.1,\n1,19,,-4.0\n")
    rows = compare_runs.compare_runs({"R": [run.path]}, tmp_path / "cmp")
    assert [(r["step"], r["training_instances"], r["val_cost_mean"]) for r in rows] == [
        (9, 144, 5.0),
        (19, 304, 4.0),
    ]
    assert curves.plot_run(run.metrics, run.learning_curve) and run.learning_curve.is_file()
    assert not curves.plot_run(tmp_path / "missing.csv", tmp_path / "no.png")


def test_progress_lines_are_logged_and_read_back_behind_a_log_prefix(tmp_path, caplog):
    import logging
    from types import SimpleNamespace

    import torch

    trainer = SimpleNamespace(
        sanity_checking=False,
        is_global_zero=True,
        current_epoch=2,
        global_step=40,
        callback_metrics={"val/reward": torch.tensor(-5.25), "train/loss": torch.tensor(0.5)},
    )
    with caplog.at_level(logging.INFO, logger="clrp_rl4co.models.curves"):
        curves.ProgressLog().on_validation_epoch_end(trainer, None)
    (record,) = caplog.records
    hydra_format = logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    log = tmp_path / "train.log"
    log.write_text(f"noise\n{hydra_format.format(record)}\n")
    assert record.getMessage().startswith("[epoch 2 step 40 ")
    assert curves.read_progress_log(log) == {"train/loss": {40: 0.5}, "val/reward": {40: -5.25}}


def test_plot_curves_draws_styles_title_and_references_outside_pyplot(tmp_path, monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    drawn = []
    save = Figure.savefig

    def savefig(fig, *args, **kwargs):
        drawn.append(fig.axes[0])
        return save(fig, *args, **kwargs)

    switches = []
    monkeypatch.setattr(matplotlib, "use", lambda *args, **kw: switches.append(args))
    monkeypatch.setattr(Figure, "savefig", savefig)
    figures = plt.get_fignums()
    lines = {"ours": ([0, 10, 20], [9.0, 8.0, 7.5]), "theirs": ([0, 10], [9.5, 8.5])}
    png = curves.plot_curves(
        lines,
        tmp_path / "sub" / "c.png",
        hlines={"paper": 7.25},
        title="toy",
        styles={"theirs": {"color": "tab:orange", "ls": "--"}},
    )
    assert png == tmp_path / "sub" / "c.png" and png.stat().st_size > 1000
    (ax,) = drawn
    assert ax.get_title() == "toy"
    ours, theirs, paper = ax.get_lines()
    assert list(ours.get_ydata()) == [9.0, 8.0, 7.5] and ours.get_linestyle() == "-"
    assert theirs.get_color() == "tab:orange" and theirs.get_linestyle() == "--"
    assert list(paper.get_ydata()) == [7.25, 7.25] and paper.get_label() == "paper 7.2500"
    assert switches == [] and plt.get_fignums() == figures
    with pytest.raises(ValueError, match="lines: no points"):
        curves.plot_curves({"empty": ([], [])}, tmp_path / "e.png")
