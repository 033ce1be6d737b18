"""The budgets benchmark's bookkeeping (benchmarks/budgets.py): resuming, the table's flags."""

from __future__ import annotations

import json
import subprocess

from benchmarks import budgets


def row(size, method, seconds, ratio, peak_gb=0.5, budget=60.0):
    return {
        "size": size, "depots": 5, "method": method, "ran": method, "budget": budget,
        "seed": 0, "seconds": seconds, "ratio": ratio, "peak_gb": peak_gb, "objective": 1.5,
        "status": "feasible", "machine": "m", "commit": "c", "load": "0.1",
    }  # fmt: skip


def test_the_table_flags_a_run_over_105_percent_of_its_budget(tmp_path):
    rows = [row(10, "pyvrp", 62.9, 1.0483), row(10000, "pyvrp", 63.1, 1.0517, peak_gb=2.1)]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = budgets.table(tmp_path)
    cells = [[c.strip() for c in x.strip("|").split("|")] for x in text.splitlines()]
    by_size = {c[0]: c for c in cells if c[0] in ("10", "10000")}
    header = next(c for c in cells if c[0] == "customers")
    over, ratio = header.index("over 1.05x"), header.index("ratio")
    assert (by_size["10"][ratio], by_size["10"][over]) == ("1.048", "")
    assert (by_size["10000"][ratio], by_size["10000"][over]) == ("1.052", "yes")
    assert (tmp_path / "table.md").read_text() == text
    assert (tmp_path / "budgets.png").stat().st_size > 0


def test_a_rerun_runs_only_what_is_missing(tmp_path, monkeypatch):
    (tmp_path / "runs.jsonl").write_text(json.dumps(row(10, "pyvrp", 1.0, 1.0, budget=1.0)) + "\n")
    ran = []

    def fake_run(cmd, **kwargs):
        size, method, seconds = int(cmd[4]), cmd[5], float(cmd[6])
        ran.append((size, method, seconds))
        out = json.dumps(row(size, method, seconds, 1.0, budget=seconds))
        return subprocess.CompletedProcess(cmd, 0, stdout="log line\n" + out + "\n", stderr="")

    monkeypatch.setattr(budgets.subprocess, "run", fake_run)
    status = budgets.run([10, 100], ["pyvrp", "hybrid"], [1.0], seed=0, out=tmp_path)
    assert status == 0
    assert sorted(ran) == [(10, "hybrid", 1.0), (100, "hybrid", 1.0), (100, "pyvrp", 1.0)]
    assert len(budgets.load(tmp_path)) == 4
    budgets.run([10, 100], ["pyvrp", "hybrid"], [1.0], seed=0, out=tmp_path)
    assert len(ran) == 3  # nothing left to run


def test_a_failed_run_is_reported_and_not_recorded(tmp_path, monkeypatch):
    def failing(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="Traceback\nValueError: x")

    monkeypatch.setattr(budgets.subprocess, "run", failing)
    assert budgets.run([10], ["pyvrp"], [1.0], seed=0, out=tmp_path) == 1
    assert budgets.load(tmp_path) == []


def test_runs_are_compared_with_the_best_run_of_ten_times_their_budget():
    def run(size, method, budget, objective):
        return {**row(size, method, budget, 1.0, budget=budget), "objective": objective}

    rows = [
        run(1000, "pyvrp", 60.0, 444.30), run(1000, "hybrid", 60.0, 440.07),
        run(1000, "pyvrp", 100.0, 435.0),  # 100 s: more than a tenth of 600 s, not compared
        run(1000, "pyvrp", 600.0, 430.0), run(1000, "hybrid", 600.0, 432.0),
        run(2000, "pyvrp", 60.0, 800.0),  # no long run at this size: no reference
    ]  # fmt: skip
    text = budgets.reference_table(rows)
    cells = [[c.strip() for c in x.strip("|").split("|")] for x in text.splitlines()]
    gaps = {(c[2], c[3]): c[6] for c in cells if len(c) == 7 and c[0] == "1000"}
    assert gaps == {("60", "pyvrp"): "+3.33", ("60", "hybrid"): "+2.34",
                    ("600", "pyvrp"): "reference"}  # fmt: skip
    versus = {c[2]: c[5] for c in cells if len(c) == 6 and c[0] == "1000"}
    assert versus == {"60": "-0.952", "600": "+0.465"}
    assert not any(c[0] == "2000" for c in cells)
    assert budgets.reference_table(rows[-1:]) == ""
