"""The generalist's report against its targets (experiments/generalist/outlook.py)."""

from __future__ import annotations

import math

import pytest

from experiments.generalist import outlook
from experiments.training.state import RunState


def _rows():
    # four validations, instances doubling from 1,000; the gaps follow log2(n / 1000) exactly:
    # "falling" = 40 - 5 log2 -> 15% at n = 1000 * 2**5; "met" is within 15% throughout;
    # "rising" moves away from the target; the count goes 1, 1, 1, 2 and Prins 20, 18, 16, 14.
    rows = []
    for i in range(4):
        rows.append({
            "instances": 1000.0 * 2**i,
            "gap_falling": 40.0 - 5.0 * i,
            "gap_met": 10.0 - i,
            "gap_rising": 30.0 + i,
            "family_gap_mean": (40.0 - 5.0 * i + 10.0 - i + 30.0 + i) / 3,
            "families_met": 1.0 + (i == 3),
            "prins_gap_paper_bks": 20.0 - 2.0 * i,
        })  # fmt: skip
    return rows


def test_each_family_gets_its_own_trend_to_the_gap_target():
    table = {e["family"]: e for e in outlook.family_outlook(_rows())}
    assert set(table) == {"falling", "met", "rising"}
    assert table["falling"]["more"] == pytest.approx(32_000 - 8_000)
    assert (table["falling"]["first"], table["falling"]["latest"]) == (40.0, 25.0)
    assert (table["falling"]["best"], table["falling"]["best_at"]) == (25.0, 8_000)
    assert table["met"]["more"] == 0.0
    assert table["rising"]["more"] is None
    assert table["rising"]["best_at"] == 1_000
    assert [e["family"] for e in outlook.family_outlook(_rows())] == ["met", "falling", "rising"]


def test_the_count_from_families_is_the_kth_smallest_estimate():
    entries = [{"more": 0.0}, {"more": 500.0}, {"more": None}, {"more": 50.0}]
    assert outlook.count_from_families(entries, count=1) == 0.0
    assert outlook.count_from_families(entries, count=3) == 500.0
    assert outlook.count_from_families(entries, count=4) is None


def test_report_writes_targets_families_hours_and_the_curve(tmp_path):
    rows = _rows()
    # 1,000 instances on a CPU in 0.5 h, 6,000 on a GPU in 0.1 h: 2,000 and 60,000 per hour
    state = RunState(instances=8_000, start_instances=1_000, cpu_hours=0.6, gpu_hours=0.1,
                     gpu_instances=6_000)  # fmt: skip
    path = outlook.write_ood_report(state, rows, tmp_path, tmp_path / "ood")
    text = path.read_text()
    assert (tmp_path / "ood" / outlook.REPORT_PNG).stat().st_size > 0
    # Prins: 20 - 2 log2(n / 1000) reaches 11.85 at log2 = 4.075
    more = 1000 * 2**4.075 - 8000
    line = next(x for x in text.splitlines() if x.startswith("| Prins x8"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:3] == ["14.00%", "14.00% (at 8,000)"]
    assert cells[4] == f"~{more:.2g}"
    assert float(cells[5]) == pytest.approx(more / 2_000, rel=1e-2)
    assert float(cells[6]) == pytest.approx(more / 60_000, rel=1e-2)
    falling = next(x for x in text.splitlines() if x.startswith("| falling"))
    assert [c.strip() for c in falling.strip("|").split("|")] == [
        "falling", "+40.0", "+25.0", "8,000", "+25.0", "no", "~2.4e+04"]  # fmt: skip
    # only one family moves towards 15%: the 18-family target has no per-family estimate
    assert "not on the trend" in text
    assert math.isfinite(more)


def test_report_refuses_a_curve_behind_the_state(tmp_path):
    with pytest.raises(ValueError, match="8,000 instances, the state is at 9,000"):
        outlook.write_ood_report(RunState(instances=9_000), _rows(), tmp_path, tmp_path)
    with pytest.raises(ValueError, match="no validation rows"):
        outlook.write_ood_report(RunState(instances=9_000), [], tmp_path, tmp_path)


def test_status_line_says_reached_when_the_last_validation_meets_a_target(tmp_path):
    from experiments.generalist.report import status_line

    rows = _rows()
    rows[-1]["prins_gap_paper_bks"] = 11.0  # at or below 11.85: reached
    state = RunState(instances=8_000, start_instances=1_000, cpu_hours=0.5,
                     last_validation=rows[-1])  # fmt: skip
    line = status_line(state, rows)
    assert "Prins x8 +11.00% vs paper BKS (target 11.85%)" in line
    # the count (1, 1, 1, 2 over three doublings) needs some 50 more doublings for 18
    assert "Prins: reached" in line and "families: beyond 1e15 instances" in line
    text = outlook.write_ood_report(state, rows, tmp_path, tmp_path).read_text()
    prins = next(x for x in text.splitlines() if x.startswith("| Prins x8"))
    assert [c.strip() for c in prins.strip("|").split("|")][4:] == ["reached", "", ""]
