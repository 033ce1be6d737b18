"""The regression comparison of two hybrid-benchmark CSVs (``python -m benchmarks.hybrid.compare``):
pairing by instance, the relative change, and runs of different configurations refused."""

from __future__ import annotations

import csv
import math

import pytest

from benchmarks.hybrid import compare
from benchmarks.hybrid.runs import COLUMNS

#: Student's t 0.975-quantile with 2 degrees of freedom (statistical tables).
T_975_2 = 4.302652729911275


def _write(path, rows, model="m"):
    """rows: (index, method, objective[, budget, instance name])."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for index, method, objective, *rest in rows:
            budget = rest[0] if rest else "10"
            name = rest[1] if len(rest) > 1 else f"set-{index}"
            writer.writerow({"index": index, "instance": name, "method": method, "model": model,
                             "budget_s": budget, "objective": objective, "seconds": "9.8",
                             "seed": "" if method == "x8" else "0", "load_avg": "1.0",
                             "start_objective": "", "decode": ""})  # fmt: skip


def test_pairs_by_instance_and_reports_the_relative_change(tmp_path, capsys):
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    # hybrid: new 10, 12, 11 (+ instance 3 the old run lacks); old 11, 12, 13
    _write(new, [(0, "hybrid", 10.0), (1, "hybrid", 12.0), (2, "hybrid", 11.0),
                 (3, "hybrid", 5.0), (0, "pyvrp", 20.0), (0, "x8", 1.0)], model="m2")  # fmt: skip
    _write(old, [(0, "hybrid", 11.0), (1, "hybrid", 12.0), (2, "hybrid", 13.0),
                 (0, "x8", 9.0)])  # fmt: skip
    found = compare.compare(new, old)
    assert [f["method"] for f in found] == ["hybrid"]  # pyvrp and x8: nothing to pair with
    hybrid = found[0]
    assert hybrid["n"] == 3
    assert hybrid["new_mean"] == pytest.approx(11.0)
    assert hybrid["old_mean"] == pytest.approx(12.0)
    # relative changes -1/11, 0, -2/13 in %
    assert hybrid["change_pct"] == pytest.approx(100.0 * (-1 / 11 - 2 / 13) / 3)
    stats = hybrid["stats"]  # differences -1, 0, -2: mean -1, sample sd 1
    assert stats["mean_diff"] == pytest.approx(-1.0)
    assert stats["ci95"] == pytest.approx(T_975_2 / math.sqrt(3), rel=1e-9)
    assert (stats["wins"], stats["ties"], stats["losses"]) == (2, 1, 0)
    assert (hybrid["new_models"], hybrid["old_models"]) == (["m2"], ["m"])
    assert compare.main([str(new), str(old)]) == 0
    table = capsys.readouterr().out  # -8.159: 100 (-1/11 - 2/13) / 3 = -8.1585
    row = (
        "| hybrid | 11.0000 | 12.0000 | -8.159 | 3 | -1.0000 ± 2.4841 [-3.4841, +1.4841] "
        "| 2 | 1 | 0 |"
    )
    assert row in table
    assert "m2 / m" in table


@pytest.mark.parametrize(
    "column, old_row",
    [("budget_s", (0, "hybrid", 11.0, "60")), ("instance", (0, "hybrid", 11.0, "10", "other"))],
)
def test_runs_of_another_configuration_are_refused(tmp_path, column, old_row):
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    _write(new, [(0, "hybrid", 10.0)])
    _write(old, [old_row])
    with pytest.raises(ValueError, match=f"instance 0 of hybrid: {column}"):
        compare.compare(new, old)


def test_a_second_row_for_one_instance_is_refused(tmp_path):
    path = tmp_path / "twice.csv"
    _write(path, [(0, "hybrid", 10.0), (0, "hybrid", 9.0)])
    with pytest.raises(ValueError, match="twice.csv: line 3: a second row for instance 0"):
        compare.read_rows(path)


def test_a_file_without_the_benchmark_columns_is_refused(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("index,objective\n0,1.0\n")
    with pytest.raises(ValueError, match="other.csv: missing the columns"):
        compare.read_rows(path)
