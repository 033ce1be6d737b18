"""The headline table and the gap plot read summary CSVs written before the identity columns."""

import csv

import pytest

from experiments import tables
from experiments.headline import headline
from experiments.specs import identity_by_label

#: The summary columns of a table written before ``key``, ``model``, ``family`` ... existed.
OLD_COLUMNS = ["method", "instances", "valid", "failures", "objective", "ci95", "gap", "gap_ci95",
               "subset_instances", "subset_failures", "subset_objective", "subset_gap", "seconds",
               "optimal", "ref_gap", "ref_instances"]  # fmt: skip


def _write_old_clrp10(root):
    """A clrp10 table in the old format: PyVRP 0.5 s, POMO* x8 (a clrp20 model) and DRLHQ x8
    on two instances whose best costs are 10 and 20."""
    folder = root / "clrp10"
    folder.mkdir()
    costs = {"PyVRP 0.5s": [10.0, 20.0], "POMO*[clrp20 model] x8": [12.0, 20.0],
             "DRLHQ x8": [11.0, 21.0]}  # fmt: skip
    with (folder / "clrp10.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, OLD_COLUMNS)
        writer.writeheader()
        for method, values in costs.items():
            row = dict.fromkeys(OLD_COLUMNS, "0")
            row.update(method=method, instances="2", objective=str(sum(values) / 2),
                       seconds="0.5" if method.startswith("PyVRP") else "0.01")  # fmt: skip
            writer.writerow(row)
    with (folder / "clrp10_per_instance.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["instance", "name", *costs, "best", "best_method"])
        for i in range(2):
            writer.writerow([i, f"clrp10-{i}", *(v[i] for v in costs.values()), costs[
                "PyVRP 0.5s"][i], "PyVRP 0.5s"])  # fmt: skip


def test_identity_by_label_names_the_family_and_model_of_a_spec_row():
    assert identity_by_label("clrp10", "PyVRP 0.5s") == {"family": "PyVRP short", "model": ""}
    assert identity_by_label("clrp10", "DRLHQ x8") == {"family": "DRLHQ x8",
                                                       "model": "drlhq_clrp10"}  # fmt: skip
    assert identity_by_label("clrp10", "POMO*[clrp20 model] x8")["model"] == "pomo_clrp20"
    assert identity_by_label("clrp10", "no such row") == {}


def test_headline_reads_a_summary_written_before_the_identity_columns(tmp_path):
    _write_old_clrp10(tmp_path)
    lines = headline(tmp_path).read_text().splitlines()
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    cells = dict(zip(header, (c.strip() for c in lines[2].split("|")[1:-1]), strict=True))
    assert cells["preset"] == "clrp10" and cells["subset n"] == "2"
    assert cells["PyVRP short"] == "15.0000 (0.00%) 0.5s"
    # gaps 20% and 0%; the model of another size is named
    assert cells["POMO* x8"] == "16.0000 (10.00%) [clrp20 model]"
    # gaps 10% and 5%
    assert cells["DRLHQ x8"] == "16.0000 (7.50%)"
    assert cells["DRLHQ x8, whole test set"] == "16.0000 (n=2)"
    assert cells["Exact"] == "" and cells["DRLHQ SGBS"] == ""


def test_the_gap_plot_names_old_rows_by_their_family(tmp_path, monkeypatch):
    _write_old_clrp10(tmp_path)
    drawn = {}
    monkeypatch.setattr(tables.table_files, "plot_gaps",
                        lambda t, path: drawn.update(t))  # fmt: skip
    tables._gap_plot(tmp_path)
    assert [s.method for s in drawn["clrp10"]] == ["PyVRP short", "POMO* x8", "DRLHQ x8"]


@pytest.mark.parametrize("family", ["DRLHQ x8", ""])
def test_a_family_column_wins_over_the_label(tmp_path, monkeypatch, family):
    """A CSV with a ``family`` column is read as written (blank: the row keeps its label)."""
    _write_old_clrp10(tmp_path)
    path = tmp_path / "clrp10" / "clrp10.csv"
    rows = list(csv.DictReader(path.open()))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, [*OLD_COLUMNS, "family"])
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "family": family})
    drawn = {}
    monkeypatch.setattr(tables.table_files, "plot_gaps",
                        lambda t, path: drawn.update(t))  # fmt: skip
    tables._gap_plot(tmp_path)
    expected = [family] * 3 if family else ["PyVRP 0.5s", "POMO*[clrp20 model] x8", "DRLHQ x8"]
    assert [s.method for s in drawn["clrp10"]] == expected
