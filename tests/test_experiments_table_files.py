"""The evaluation tables' files (experiments.table_files): a summary CSV read back, the
per-instance CSV and the gap chart."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from toy_results import record, toy_table

from clrp_rl4co.evaluation.report import summarize, to_csv
from experiments.table_files import per_instance_csv, plot_gaps, read_csv


def test_csv_extra_columns_and_read_back(tmp_path: Path) -> None:
    results = toy_table() + [record("D", 0, 95.0), record("D", 1, math.inf)]
    summaries = summarize(results, reference={0: 80.0})
    extra = {"A": {"family": "fam A", "budget": 1.5}, "C": {"family": "fam C", "model": None}}
    path = to_csv(summaries, tmp_path / "summary.csv", extra=extra)
    header = path.read_text().splitlines()[0].split(",")
    assert header[-3:] == ["family", "budget", "model"]
    back = read_csv(path)
    assert len(back) == len(summaries)
    for (got, _), want in zip(back, summaries):
        for name, value in vars(want).items():
            other = getattr(got, name)
            assert type(other) is type(value), name
            assert other == value or (math.isnan(value) and math.isnan(other)), name
    extras = [e for _, e in back]
    assert extras[0] == {"family": "fam A", "budget": "1.5", "model": ""}
    assert extras[1] == {"family": "", "budget": "", "model": ""}  # B: no extra columns
    assert extras[2]["family"] == "fam C" and extras[2]["model"] == ""  # None -> blank


def test_per_instance_csv(tmp_path: Path) -> None:
    results = toy_table() + [record("D", 1, math.inf)]
    path = per_instance_csv(results, tmp_path / "instances.csv")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["instance", "name", "A", "B", "C", "D", "best", "best_method"]
    assert [r["instance"] for r in rows] == ["0", "1", "2"]
    assert rows[0]["name"] == "toy-0"
    assert (rows[0]["best"], rows[0]["best_method"]) == ("90.0", "C")
    assert (rows[1]["D"], rows[1]["best"], rows[1]["best_method"]) == ("inf", "200.0", "B")
    assert rows[2]["C"] == "" and rows[2]["D"] == ""
    assert (float(rows[2]["best"]), rows[2]["best_method"]) == (50.0, "A;B")


# --------------------------------------------------------------------------- gap chart
def test_plot_gaps(tmp_path: Path) -> None:
    tables = {
        "clrp10": summarize(toy_table()),
        "clrp20": summarize([r for r in toy_table() if r.method != "C"]),  # C missing
    }
    for use_subset in (True, False):
        path = plot_gaps(tables, tmp_path / f"gaps_{use_subset}.png", use_subset=use_subset)
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 1000


def test_plot_gaps_leaves_the_backend_and_pyplot_alone(tmp_path: Path, monkeypatch) -> None:
    # A library function must not switch the caller's backend (e.g. a notebook's) nor leave
    # figures registered with pyplot.
    import matplotlib
    import matplotlib.pyplot as plt

    switches = []
    monkeypatch.setattr(matplotlib, "use", lambda *args, **kw: switches.append(args))
    figures = plt.get_fignums()
    plot_gaps({"clrp10": summarize(toy_table())}, tmp_path / "gaps.png")
    assert switches == []
    assert plt.get_fignums() == figures
