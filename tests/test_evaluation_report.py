"""Evaluation summaries, paired comparisons, Markdown / CSV output
(clrp_rl4co.evaluation.report)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from toy_results import record, toy_table

from clrp_rl4co.evaluation.records import InstanceResult
from clrp_rl4co.evaluation.report import (
    MethodSummary,
    mean_ci95,
    paired,
    summarize,
    t_quantile,
    to_csv,
    to_markdown,
)


def by_method(summaries: list[MethodSummary]) -> dict[str, MethodSummary]:
    return {s.method: s for s in summaries}


# --------------------------------------------------------------------------- t quantile, CI
@pytest.mark.parametrize(
    "dof, expected", [(1, 12.706), (2, 4.303), (9, 2.262), (29, 2.045), (99, 1.984), (999, 1.962)]
)
def test_t_quantile_table_values(dof: int, expected: float) -> None:
    assert round(t_quantile(0.975, dof), 3) == expected


def test_t_quantile_symmetry_and_large_dof() -> None:
    assert t_quantile(0.5, 7) == 0.0
    assert t_quantile(0.025, 9) == pytest.approx(-t_quantile(0.975, 9), abs=1e-12)
    assert t_quantile(0.995, 4) == pytest.approx(4.604095, abs=1e-6)
    # the normal quantile in the limit
    assert t_quantile(0.975, 10**7) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError, match="p must be in"):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="dof must be a positive integer, got 0"):
        t_quantile(0.9, 0)
    with pytest.raises(ValueError, match="dof must be a positive integer, got 2.5"):
        t_quantile(0.9, 2.5)


@pytest.mark.parametrize("p", [0.001, 0.1, 0.6, 0.9, 0.975, 0.999])
def test_t_quantile_closed_forms(p: float) -> None:
    # Student's t quantile in closed form for 1, 2 and 4 degrees of freedom.
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    alpha = 4 * p * (1 - p)
    q = math.cos(math.acos(math.sqrt(alpha)) / 3) / math.sqrt(alpha)
    four = math.copysign(2 * math.sqrt(q - 1), p - 0.5)
    assert t_quantile(p, 4) == pytest.approx(four, rel=1e-9)


def test_mean_ci95_by_hand() -> None:
    # costs 10, 12, 14: mean 12, sd 2, t(0.975, 2) = 4.302653 -> 4.302653 * 2 / sqrt(3)
    mean, ci = mean_ci95([10.0, 12.0, 14.0])
    assert mean == 12.0
    assert ci == pytest.approx(4.302653 * 2 / math.sqrt(3), rel=1e-6)
    assert mean_ci95([5.0, 5.0])[1] == 0.0
    assert math.isnan(mean_ci95([5.0])[1])
    assert all(math.isnan(v) for v in mean_ci95([]))


# --------------------------------------------------------------------------- summarize
def test_gaps_are_per_instance_means() -> None:
    rows = by_method(summarize(toy_table()))
    a, b, c = rows["A"], rows["B"], rows["C"]
    gaps_a = [100 * 10 / 90, 100 * 20 / 200, 0.0]  # 11.11, 10, 0
    gaps_b = [100 * 20 / 90, 0.0, 0.0]  # 22.22, 0, 0
    gaps_c = [0.0, 100 * 40 / 200]  # 0, 20
    assert a.gap == pytest.approx(sum(gaps_a) / 3)
    assert b.gap == pytest.approx(sum(gaps_b) / 3)
    assert c.gap == pytest.approx(sum(gaps_c) / 2)
    # the mean of gaps is not the gap of the means: A's mean cost 123.33 is above B's 120,
    # yet A's mean per-instance gap (7.04 %) is below B's (7.41 %)
    assert a.objective == pytest.approx(370 / 3) and b.objective == pytest.approx(120.0)
    assert a.objective > b.objective and a.gap < b.gap
    assert a.gap_ci95 == pytest.approx(mean_ci95(gaps_a)[1])
    assert a.ci95 == pytest.approx(mean_ci95([100.0, 220.0, 50.0])[1])
    assert (a.instances, a.valid, a.failures, a.optimal) == (3, 3, 0, 0)
    assert (c.instances, c.optimal) == (2, 2)
    assert a.seconds == pytest.approx(20.0) and c.seconds == pytest.approx(15.0)
    assert math.isnan(a.ref_gap) and a.ref_instances == 0


def test_common_subset() -> None:
    rows = by_method(summarize(toy_table()))
    # C ran on instances 0, 1 only: the common subset of A, B, C is {0, 1}
    assert {s.subset_instances for s in rows.values()} == {2}
    assert rows["A"].subset_objective == pytest.approx(160.0)
    assert rows["B"].subset_objective == pytest.approx(155.0)
    assert rows["C"].subset_objective == pytest.approx(165.0)
    assert rows["A"].subset_gap == pytest.approx((100 * 10 / 90 + 10.0) / 2)
    assert rows["B"].subset_gap == pytest.approx(100 * 20 / 90 / 2)
    assert rows["C"].subset_gap == pytest.approx(10.0)
    # without C the subset is all 3 instances, but the best still counts C's costs
    rows_ab = by_method(summarize(toy_table(), methods=["B", "A"]))
    assert list(rows_ab) == ["B", "A"]
    assert rows_ab["A"].subset_instances == 3
    assert rows_ab["A"].subset_gap == pytest.approx(rows["A"].gap)
    assert rows_ab["A"].subset_objective == pytest.approx(rows["A"].objective)


def test_method_order_and_unknown_method() -> None:
    assert [s.method for s in summarize(toy_table())] == ["A", "B", "C"]
    assert [s.method for s in summarize(toy_table(), methods=["C", "A"])] == ["C", "A"]
    with pytest.raises(ValueError, match="D"):
        summarize(toy_table(), methods=["A", "D"])


def test_failures() -> None:
    results = toy_table() + [record("D", 0, 95.0), record("D", 1, math.inf), record("D", 2, 60.0)]
    rows = by_method(summarize(results))
    d = rows["D"]
    assert (d.instances, d.valid, d.failures) == (3, 2, 1)
    assert math.isnan(d.objective) and math.isnan(d.ci95)
    # instance 1 is left out of the gap mean; the best of instance 0 stays C's 90
    assert d.gap == pytest.approx((100 * 5 / 90 + 100 * 10 / 50) / 2)
    # common subset {0, 1}: one failure there, only instance 0 left for the gap
    assert d.subset_failures == 1 and math.isnan(d.subset_objective)
    assert d.subset_gap == pytest.approx(100 * 5 / 90)
    assert rows["A"].gap == pytest.approx(by_method(summarize(toy_table()))["A"].gap)
    # an instance where every method failed enters no gap
    only_failed = [record("A", 0, math.inf), record("B", 0, math.inf), record("A", 1, 10.0)]
    rows = by_method(summarize(only_failed, methods=["A"]))
    assert rows["A"].failures == 1 and rows["A"].gap == 0.0
    markdown = to_markdown(summarize(results))
    assert "failed" in markdown and "n/a (1 failed)" in markdown


def test_duplicate_records() -> None:
    results = toy_table()
    assert len(summarize(results + [results[0]])) == 3  # an identical copy is harmless
    with pytest.raises(ValueError, match=r"'B'.*instance 2"):
        summarize(results + [record("B", 2, 49.0)])


def test_reference_gap() -> None:
    reference = {0: 80.0, 1: 200.0}  # instance 2 has no reference value
    rows = by_method(summarize(toy_table(), reference=reference))
    assert rows["A"].ref_gap == pytest.approx((25.0 + 10.0) / 2)
    assert rows["A"].ref_instances == 2
    assert rows["C"].ref_gap == pytest.approx((12.5 + 20.0) / 2)


# --------------------------------------------------------------------------- text output
def test_markdown() -> None:
    summaries = summarize(toy_table())
    text = to_markdown(summaries, title="toy")
    lines = text.strip().splitlines()
    assert lines[0] == "### toy"
    header = lines[2]
    for name in (
        "method",
        "objective (±95% CI)",
        "gap %",
        "common subset n",
        "objective on subset",
        "gap % on subset",
        "time / inst (s)",
        "optimal",
    ):
        assert name in header
    assert "BKS" not in header and "failed" not in header
    assert len(lines) == 4 + 3
    row_a = next(line for line in lines if line.startswith("| A |"))
    cells = [c.strip() for c in row_a.strip("|").split("|")]
    assert cells[1] == "3"
    assert cells[2].startswith("123.3333 ± ")
    assert cells[3].startswith("7.04 ± ")
    assert cells[4:] == ["2", "160.0000", "10.56", "20.0", "0"]

    with_ref = to_markdown(summarize(toy_table(), reference={0: 80.0}), reference_label="BKS")
    assert "gap to BKS %" in with_ref and "| 25.00 |" in with_ref

    big = [record("X", i, 1234.56789 + i, seconds=0.0123456) for i in range(2)]
    text = to_markdown(summarize(big), columns=["method", "objective", "seconds"])
    assert "| X | 1235.1 ± 6.4 | 0.0123 |" in text
    with pytest.raises(ValueError):
        to_markdown(summaries, columns=["method", "nonsense"])


def test_csv_round_trip(tmp_path: Path) -> None:
    results = toy_table() + [record("D", 0, 95.0), record("D", 1, math.inf)]
    summaries = summarize(results, reference={0: 80.0})
    path = to_csv(summaries, tmp_path / "summary.csv")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["method"] for r in rows] == ["A", "B", "C", "D"]
    for s, row in zip(summaries, rows):
        for name, value in vars(s).items():
            if isinstance(value, str):
                assert row[name] == value
            elif isinstance(value, int):
                assert int(row[name]) == value
            elif math.isnan(value):
                assert math.isnan(float(row[name]))
            else:
                assert float(row[name]) == value  # full precision


def test_paired_comparison() -> None:
    rows = [
        record("R", 0, 10.0),
        record("R", 1, 12.0),
        record("R", 2, 9.0),
        record("R", 3, 9.0),
        record("P", 0, 11.0),
        record("P", 1, 12.0),
        record("P", 2, math.inf),  # failed: not paired
        InstanceResult("P", 3, "toy-3", 8.0, 1.0, valid=False),  # invalid: not paired
    ]
    stats = paired(rows, "R", "P")
    assert stats["n"] == 2 and stats["mean_diff"] == pytest.approx(-0.5)
    assert (stats["wins"], stats["ties"], stats["losses"]) == (1, 1, 0)
    # diffs -1, 0: sd = 0.7071, t(0.975, 1) = 12.706 -> half-width 12.706 * 0.7071 / sqrt(2)
    assert stats["ci95"] == pytest.approx(12.7062 * 0.5, rel=1e-4)
    assert paired(rows, "R", "nobody") is None
