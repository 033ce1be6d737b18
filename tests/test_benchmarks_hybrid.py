"""The hybrid benchmark (``python -m benchmarks.hybrid``): its summary math, resuming from a
partial CSV, and bad arguments. Fake solvers stand in for the time-limited ones."""

from __future__ import annotations

import csv
import math

import pytest

from benchmarks.hybrid import cli
from benchmarks.hybrid.runs import COLUMNS, Run
from benchmarks.hybrid.summary import corrected_paper_figure, mean_gap, paired_difference

#: Student's t 0.975-quantile with 2 degrees of freedom (statistical tables).
T_975_2 = 4.302652729911275


def test_corrected_paper_figure_scales_by_the_subsets_x8_ratio():
    # subset x8 mean 11, whole-set x8 mean 13
    assert corrected_paper_figure(27.0, [10.0, 12.0], [10.0, 12.0, 14.0, 16.0]) == pytest.approx(
        27.0 * 11.0 / 13.0
    )
    with pytest.raises(ValueError, match="x8"):
        corrected_paper_figure(27.0, [], [1.0])


def test_paired_difference_mean_interval_and_counts():
    first = {0: 10.0, 1: 12.0, 2: 11.0, 3: 99.0}  # 3 has no partner: left out
    second = {0: 11.0, 1: 12.0, 2: 13.0}
    stats = paired_difference(first, second)
    # differences -1, 0, -2: mean -1, sample sd 1
    assert stats["n"] == 3
    assert stats["mean_diff"] == pytest.approx(-1.0)
    assert stats["ci95"] == pytest.approx(T_975_2 * 1.0 / math.sqrt(3), rel=1e-9)
    assert (stats["wins"], stats["ties"], stats["losses"]) == (2, 1, 0)


def test_mean_gap_to_best_known_values():
    names = {0: "a", 1: "b"}
    assert mean_gap({0: 101.0, 1: 196.0}, names, {"a": 100.0, "b": 200.0}) == pytest.approx(
        (1.0 - 2.0) / 2
    )


class FakeSolvers:
    """Objectives known in advance: hybrid ``10 + i``, pyvrp ``11 + i``, x8 ``20 + 2 i``."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.decoded: list[int] = []

    def solve(self, method, instance, seconds, seed):
        self.calls.append((instance.name, method))
        i = int(instance.name.rsplit("-", 1)[1])
        return Run(10.0 + i if method == "hybrid" else 11.0 + i, 0.01)

    def decode(self, indices):
        self.decoded += list(indices)
        return [Run(20.0 + 2 * i, 0.001) for i in indices]


def _write_rows(path, rows, model="drlhq_clrp20", seed="0"):
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for index, method, objective in rows:
            writer.writerow({"index": index, "instance": f"clrp20-{index}", "method": method,
                             "model": model, "budget_s": "1", "objective": objective,
                             "seconds": "0.01", "seed": seed, "load_avg": "1.0",
                             "start_objective": "", "decode": ""})  # fmt: skip


def test_rerun_runs_only_the_missing_instances_interleaved(tmp_path, capsys):
    _write_rows(tmp_path / "clrp20_1s.csv", [(0, "hybrid", 10.0), (0, "pyvrp", 11.0),
                                              (1, "pyvrp", 12.0)])  # fmt: skip
    _write_rows(tmp_path / "clrp20_x8_drlhq_clrp20.csv", [(1, "x8", 22.0)], seed="")
    fake = FakeSolvers()
    argv = ["--set", "clrp20", "--num", "3", "--seconds", "1", "--out", str(tmp_path)]
    assert cli.main(argv, solve=fake.solve, decode=fake.decode) == 0
    # instance 1 lacks its hybrid; instance 2 is new and even: hybrid first, then PyVRP
    assert fake.calls == [("clrp20-1", "hybrid"), ("clrp20-2", "hybrid"), ("clrp20-2", "pyvrp")]
    assert fake.decoded == [0, 2]
    rows = list(csv.DictReader((tmp_path / "clrp20_1s.csv").open()))
    assert len(rows) == 6 and {r["seed"] for r in rows} == {"0"}
    md = (tmp_path / "clrp20_1s.md").read_text()
    assert "| hybrid minus pyvrp | 3 | -1.0000 ± 0.0000 [-1.0000, -1.0000] | 3 | 0 | 0 |" in md
    assert "| x8 (untimed) | 3 |" in md
    command = f"python -m benchmarks.hybrid --set clrp20 --num 3 --seconds 1 --out {tmp_path} "
    assert f"command: `{command}--seed 0`" in md  # reruns into the same file
    assert capsys.readouterr().out.count("clrp20-2: hybrid 12.0000") == 1

    again = FakeSolvers()
    assert cli.main(argv, solve=again.solve, decode=again.decode) == 0
    assert again.calls == [] and again.decoded == []


def test_rows_of_another_seed_are_refused(tmp_path):
    _write_rows(tmp_path / "clrp20_1s_seed3.csv", [(0, "pyvrp", 11.0)], seed="4")
    fake = FakeSolvers()
    argv = ["--set", "clrp20", "--num", "1", "--seconds", "1", "--seed", "3"]
    with pytest.raises(ValueError, match=r"line 2: seed '4', but this run's seed is '3'"):
        cli.main([*argv, "--out", str(tmp_path)], solve=fake.solve, decode=fake.decode)


def test_paper_set_corrects_the_paper_figure_with_x8_on_the_whole_set(tmp_path):
    fake = FakeSolvers()
    argv = ["--set", "paper-clrp50", "--num", "2", "--seconds", "9.3", "--x8-all", "4",
            "--out", str(tmp_path)]  # fmt: skip
    assert cli.main(argv, solve=fake.solve, decode=fake.decode) == 0
    assert fake.decoded == [0, 1, 2, 3]
    md = (tmp_path / "paper-clrp50_9.3s.md").read_text()
    # the paper's DRLHQ-SGBS on clrp50: 27.0417 at 9.32 s; x8 20, 22 on the subset (mean 21),
    # 20, 22, 24, 26 on the first 4 (mean 23)
    corrected = 27.0417 * 21.0 / 23.0
    assert f"| paper DRLHQ SGBS, corrected for the subset | 2 | {corrected:.4f} | 9.32" in md
    assert "our x8 on the first 4 of the 1000 instances 23.0000" in md
    assert "Miao et al." in md


def test_ablation_runs_every_variant_or_the_ones_named_into_its_own_file(tmp_path):
    from benchmarks.hybrid.runs import HYBRID_VARIANTS

    fake = FakeSolvers()
    base = ["--set", "clrp20", "--num", "2", "--seconds", "1", "--out", str(tmp_path)]
    assert cli.main([*base, "--ablation", "hybrid-recombine"], fake.solve, fake.decode) == 0
    # instance 0 in the listed order, instance 1 reversed
    assert [m for _, m in fake.calls] == ["hybrid", "hybrid-recombine", "pyvrp",
                                          "pyvrp", "hybrid-recombine", "hybrid"]  # fmt: skip
    md = (tmp_path / "clrp20_1s_ablation-recombine.md").read_text()
    assert "--ablation hybrid-recombine`" in md
    fake.calls.clear()
    assert cli.main([*base, "--ablation"], fake.solve, fake.decode) == 0
    assert [m for _, m in fake.calls[: len(HYBRID_VARIANTS) + 1]] == [*HYBRID_VARIANTS, "pyvrp"]
    assert (tmp_path / "clrp20_1s_ablation.csv").is_file()


def test_generated_1000_customer_set_follows_the_size_rule_and_skips_x8(tmp_path):
    import numpy as np

    from benchmarks.hybrid.sets import load_set
    from clrp_rl4co.envs.clrp import size_rule

    fake = FakeSolvers()
    sizes = []

    def solve(method, instance, seconds, seed):
        sizes.append((instance.num_customers, instance.num_depots))
        return fake.solve(method, instance, seconds, seed)

    argv = ["--set", "clrp1000", "--num", "2", "--seconds", "1", "--out", str(tmp_path)]
    assert cli.main(argv, solve=solve, decode=fake.decode) == 0
    assert fake.decoded == []  # no x8 of 1,000 customers
    assert sizes == [(1000, size_rule(1000)["num_depots"])] * 4
    assert [name for name, _ in fake.calls] == ["clrp1000-0"] * 2 + ["clrp1000-1"] * 2
    md = (tmp_path / "clrp1000_1s.md").read_text()
    assert "no x8 on this set" in md and "x8 (untimed)" not in md
    assert not list(tmp_path.glob("*_x8_*.csv"))
    # the same seeded draw every time, and a prefix of the whole set
    first, again = load_set("clrp1000", 1).instances[0], load_set("clrp1000", 2).instances[0]
    assert np.array_equal(first.customer_locs, again.customer_locs)
    assert np.array_equal(first.demand, again.demand)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--set", "clrp15", "--seconds", "1"], "argument --set: invalid choice: 'clrp15'"),
        (["--set", "clrp20", "--num", "0", "--seconds", "1"], "--num: must be in [1, 1000]"),
        (["--set", "clrp20", "--seconds", "0"], "--seconds: must be a positive number, got 0"),
        (["--set", "clrp20", "--seconds", "1", "--x8-all", "5"], "--x8-all: only for the paper"),
        (["--set", "paper-clrp50", "--seconds", "1", "--x8-all", "0"], "--x8-all: must be in"),
        (
            ["--set", "clrp20", "--seconds", "1", "--ablation", "hybrid-fast"],
            "--ablation: unknown variant(s) ['hybrid-fast']",
        ),
    ],
)
def test_bad_arguments_name_the_argument_and_value(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv, solve=FakeSolvers().solve, decode=FakeSolvers().decode)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if "--num" in message:
        assert "got 0" in err


def test_end_to_end_with_the_real_solvers_on_two_instances(tmp_path):
    argv = ["--set", "clrp20", "--num", "2", "--seconds", "0.5", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    rows = list(csv.DictReader((tmp_path / "clrp20_0.5s.csv").open()))
    assert sorted((r["index"], r["method"]) for r in rows) == [
        ("0", "hybrid"), ("0", "pyvrp"), ("1", "hybrid"), ("1", "pyvrp")
    ]  # fmt: skip
    x8 = list(csv.DictReader((tmp_path / "clrp20_x8_drlhq_clrp20.csv").open()))
    assert [r["index"] for r in x8] == ["0", "1"] and all(float(r["objective"]) > 0 for r in x8)
    for row in rows:
        assert float(row["seconds"]) < 3 * 0.5, row  # the budget is wall time
        if row["method"] == "hybrid":  # never worse than its learned start
            assert float(row["objective"]) <= float(row["start_objective"]) + 1e-9
    assert "| hybrid minus pyvrp | 2 |" in (tmp_path / "clrp20_0.5s.md").read_text()


def test_rows_carry_the_weights_fingerprint_and_other_weights_are_refused(tmp_path):
    from benchmarks.hybrid.runs import RowFile

    path = tmp_path / "clrp20_x8_drlhq_clrp20.csv"
    first = RowFile(path, "drlhq_clrp20", None, "aaaa")
    first.add(0, "clrp20-0", "x8", None, Run(20.0, 0.1), "1.0")
    rows = list(csv.DictReader(path.open()))
    assert rows[0]["weights"] == "aaaa" and rows[0]["objective"] == "20.0"
    assert RowFile(path, "drlhq_clrp20", None, "aaaa").done() == {(0, "x8")}
    with pytest.raises(ValueError, match=r"line 2: weights 'aaaa', but this run's weights is 'bb'"):
        RowFile(path, "drlhq_clrp20", None, "bb")


def test_older_rows_without_weights_are_read_but_not_extended_by_known_weights(tmp_path):
    from benchmarks.hybrid.runs import RowFile

    path = tmp_path / "clrp20_1s.csv"
    _write_rows(path, [(0, "pyvrp", 11.0)])  # the columns before the fingerprint
    older = RowFile(path, "drlhq_clrp20", 0, "cccc")
    assert older.objectives("pyvrp") == {0: 11.0}
    with pytest.raises(ValueError, match="no weights column, so which weights they came from"):
        older.add(1, "clrp20-1", "pyvrp", 1.0, Run(12.0, 0.1), "1.0")
    unknown = RowFile(path, "drlhq_clrp20", 0)  # no policy loaded: nothing to record
    unknown.add(1, "clrp20-1", "pyvrp", 1.0, Run(12.0, 0.1), "1.0")
    rows = list(csv.DictReader(path.open()))
    assert [r["objective"] for r in rows] == ["11.0", "12.0"] and "weights" not in rows[1]
