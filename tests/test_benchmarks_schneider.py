"""The Schneider benchmark's bookkeeping (benchmarks/schneider.py), without solving: gaps, file
names, resuming, the columns of runs.csv and the report."""

from __future__ import annotations

import csv

import pytest

from benchmarks import schneider


def test_the_gap_is_relative_to_the_best_known_value_in_percent():
    assert schneider.gap_pct(110.0, 100.0) == pytest.approx(10.0)
    assert schneider.gap_pct(253888 - 2538.88, 253888) == pytest.approx(-1.0)
    assert schneider.gap_pct(None, 100.0) is None
    for bad in (0.0, -5.0, float("nan")):
        with pytest.raises(ValueError, match="bks: must be a positive number"):
            schneider.gap_pct(1.0, bad)


def test_file_names_give_size_and_kind():
    assert schneider.parse_name("600-30-4e.json") == (600, 30, 4, "e")
    assert schneider.parse_name("100-5-2c") == (100, 5, 2, "c")
    assert schneider.kind_of("200-15-4c.json") == "c"
    for bad in ("coord20-5-1.dat", "100-5-2.json", "100-5-2cc.json"):
        with pytest.raises(ValueError, match=bad.replace(".", r"\.")):
            schneider.kind_of(bad)


def test_pending_runs_skip_what_is_done_budgets_first_then_size(tmp_path):
    files = [tmp_path / n for n in ("200-10-2c.json", "100-10-2e.json", "100-5-2c.json")]
    done = {("100-5-2c.json", 1.0), ("200-10-2c.json", 60.0)}
    todo = [(p.name, s) for p, s in schneider.pending(files, [60, 1], done)]
    assert todo == [
        ("100-10-2e.json", 1.0),
        ("200-10-2c.json", 1.0),
        ("100-5-2c.json", 60.0),
        ("100-10-2e.json", 60.0),
    ]


def _setup(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("100-5-2c.json", "100-5-2e.json"):
        (data / name).write_text("{}")  # never read: the runs are faked
    (data / "readme.txt").write_text("not an instance")
    bks = tmp_path / "bks.csv"
    bks.write_text("file,bks\n100-5-2c.json,1000\n100-5-2e.json,2000\n")
    return data, bks


def _fake_runs(monkeypatch):
    ran = []

    def fake(path, seconds, method, seed, bks, command):
        ran.append((path.name, seconds))
        objective = bks * (1.1 if seconds < 2 else 1.05)
        return {
            "file": path.name, "kind": schneider.kind_of(path.name), "customers": 100,
            "depots": 5, "seconds": f"{seconds:g}", "wall_seconds": seconds, "requested": method,
            "method": "pyvrp", "objective": objective, "bks": bks,
            "gap_pct": schneider.gap_pct(objective, bks), "depots_opened": 2, "load_avg": "0.5",
            "status": "feasible", "seed": seed, "commit": "abc", "machine": "m",
            "command": command,
        }  # fmt: skip

    monkeypatch.setattr(schneider, "run_one", fake)
    return ran


def test_a_rerun_runs_only_what_is_missing_and_keeps_earlier_rows(tmp_path, monkeypatch):
    data, bks = _setup(tmp_path)
    out = tmp_path / "out"
    ran = _fake_runs(monkeypatch)
    argv = ["--files", str(data), "--seconds", "1", "--bks", str(bks), "--out", str(out)]
    assert schneider.main(argv) == 0
    assert sorted(ran) == [("100-5-2c.json", 1.0), ("100-5-2e.json", 1.0)]
    first = (out / "runs.csv").read_text()
    # a second budget: only its runs; the first rows stay byte for byte
    ran.clear()
    assert schneider.main(argv[:3] + ["5"] + argv[3:]) == 0
    assert sorted(ran) == [("100-5-2c.json", 5.0), ("100-5-2e.json", 5.0)]
    text = (out / "runs.csv").read_text()
    assert text.startswith(first) and len(text.splitlines()) == 5
    ran.clear()
    assert schneider.main(argv) == 0 and ran == []  # nothing left
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == schneider.COLUMNS
    assert {(r["file"], r["seconds"], r["kind"]) for r in rows} == {
        ("100-5-2c.json", "1", "c"), ("100-5-2e.json", "1", "e"),
        ("100-5-2c.json", "5", "c"), ("100-5-2e.json", "5", "e"),
    }  # fmt: skip
    readme = (out / "README.md").read_text()
    assert "## Kind c: mean gap % (files) per budget" in readme and "## Kind e" in readme
    # a row per size and one over all sizes; a column per budget: mean gap (files)
    assert "| 100 | 10.00 (1) | 5.00 (1) |" in readme and "| all | 10.00 (1) | 5.00 (1) |" in readme
    assert "- command: `python -m benchmarks.schneider --files" in readme
    assert (out / "gap_by_size.png").stat().st_size > 0


def test_runs_of_another_layout_or_method_are_never_overwritten(tmp_path, monkeypatch):
    data, bks = _setup(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs.csv").write_text("file,seconds\nx,1\n")
    ran = _fake_runs(monkeypatch)
    argv = ["--files", str(data), "--seconds", "1", "--bks", str(bks), "--out", str(out)]
    with pytest.raises(SystemExit) as info:
        schneider.main(argv)
    assert info.value.code == 2 and ran == []
    assert (out / "runs.csv").read_text() == "file,seconds\nx,1\n"
    # runs of one --method, then another into the same --out: refused
    (out / "runs.csv").unlink()
    assert schneider.main(argv) == 0
    before = (out / "runs.csv").read_text()
    with pytest.raises(SystemExit):
        schneider.main(argv + ["--method", "pyvrp"])
    assert (out / "runs.csv").read_text() == before


def test_a_file_without_a_best_known_value_is_refused_before_any_run(tmp_path, monkeypatch):
    data, bks = _setup(tmp_path)
    bks.write_text("file,bks\n100-5-2c.json,1000\n")
    ran = _fake_runs(monkeypatch)
    argv = ["--files", str(data), "--seconds", "1", "--bks", str(bks), "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        schneider.main(argv)
    assert ran == [] and not (tmp_path / "runs.csv").exists()


def test_best_known_values_are_read_and_checked(tmp_path):
    path = tmp_path / "bks.csv"
    path.write_text("file,bks\n100-5-2c.json,83855\n")
    assert schneider.read_bks(path) == {"100-5-2c.json": 83855.0}
    path.write_text("file,bks\n100-5-2c.json,83855\n100-5-2e.json,x\n")
    with pytest.raises(ValueError, match=r"bks\.csv:3: bks must be a positive number, got 'x'"):
        schneider.read_bks(path)
    path.write_text("file,value\na,1\n")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['bks'\] \(need file,bks\)"):
        schneider.read_bks(path)
    path.write_text("file,bks\na.json,1\na.json,2\n")
    with pytest.raises(ValueError, match=r"bks\.csv:3: a\.json is named twice"):
        schneider.read_bks(path)


def test_two_run_folders_side_by_side_on_the_files_both_hold(tmp_path, capsys):
    from benchmarks import schneider_pairs

    def run(folder, gaps, seconds=60):
        for name, gap in gaps.items():
            size, depots, _ = schneider_pairs._order(name)
            (tmp_path / folder).mkdir(exist_ok=True)
            schneider.append_row(tmp_path / folder, {"file": name, "kind": name[-6],
                                 "customers": size, "depots": depots, "seconds": seconds,
                                 "gap_pct": gap})  # fmt: skip

    run("a", {"300-15-2e.json": 1.0, "400-20-2e.json": 2.0, "500-25-2e.json": 3.0})
    run("b", {"300-15-2e.json": 0.5, "400-20-2e.json": 2.0, "500-25-2e.json": 4.0})
    run("b", {"600-30-2e.json": 9.0, "300-15-2c.json": 9.0})  # only in b, or of kind c
    run("b", {"300-15-2e.json": 7.0}, seconds=10)  # another budget
    schneider_pairs.main(["--seconds", "60", "--kind", "e", f"A={tmp_path / 'a'}",
                          f"B={tmp_path / 'b'}"])  # fmt: skip
    out = capsys.readouterr().out
    assert "| 300-15-2e.json | 1.00 | 0.50 |" in out and "600-30" not in out
    assert "| **mean** | **2.00** | **2.17** |" in out and "| above 2.5 | 1 | 1 |" in out
    # differences -0.5, 0, +1: mean +0.17, one lower, one equal, one higher
    assert "B minus A: +0.17 +- " in out and "lower / equal / higher 1 / 1 / 1" in out
