"""examples/learning_curves.py: merging resumed logs and writing the comparison CSV/PNG."""

import csv
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("learning_curves", ROOT / "examples" /
                                                  "learning_curves.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    _module().main(["--batch-size", "64", "--out", str(out), f"A={part1},{part2}", f"B={other}"])
    rows = list(csv.DictReader((tmp_path / "curves.csv").open()))
    a = [r for r in rows if r["label"] == "A"]
    assert [int(r["step"]) for r in a] == [100, 200, 300]
    assert [int(r["training_instances"]) for r in a] == [6400, 12800, 19200]
    assert [float(r["val_cost_best_start"]) for r in a] == [17.5, 16.9, 16.5]
    assert len([r for r in rows if r["label"] == "B"]) == 1
    assert (tmp_path / "curves.png").stat().st_size > 1000
