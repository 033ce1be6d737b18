"""experiments.extrapolate: the learning-curve fits and the instances a target still needs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments import extrapolate as ex


def synthetic(a=8.6, b=0.2, c=0.35, noise=0.0, seed=0):
    n = np.geomspace(3e4, 1.5e6, 40)
    v = a + b * (n / 1e6) ** -c
    return n, v + np.random.default_rng(seed).normal(0.0, noise, len(n))


def test_fit_recovers_known_power_law():
    n, v = synthetic()
    fit = ex.fit_power_law(n, v)
    assert fit.a == pytest.approx(8.6, abs=1e-3)
    assert fit.b == pytest.approx(0.2, rel=1e-2)
    assert fit.c == pytest.approx(0.35, rel=1e-2)
    assert fit.rms < 1e-4


def test_fit_with_noise_stays_close():
    n, v = synthetic(noise=0.005, seed=3)
    fit = ex.fit_power_law(n, v)
    assert fit.a == pytest.approx(8.6, abs=0.05)
    assert 0.002 < fit.rms < 0.008


def test_instances_for_hand_made_case():
    fit = ex.PowerLaw(a=1.0, b=2.0, c=0.5, rms=0.0)  # v = 1 + 2 / sqrt(n / 1e6)
    assert fit.instances_for(2.0) == pytest.approx(4e6)  # 2 / sqrt(4) = 1
    assert fit.instances_for(3.0) == pytest.approx(1e6)
    assert float(fit(4e6)) == pytest.approx(2.0)
    assert ex.still_needed(fit.instances_for(2.0), 1e6) == pytest.approx(3e6)
    assert ex.still_needed(fit.instances_for(5.0), 1e6) == 0.0  # already below at 1e6


def test_not_reached_where_the_asymptote_is_above_the_target():
    fit = ex.PowerLaw(a=1.0, b=2.0, c=0.5, rms=0.0)
    assert math.isinf(fit.instances_for(1.0))
    assert math.isinf(fit.instances_for(0.5))
    assert math.isinf(ex.still_needed(fit.instances_for(0.5), 1e6))
    assert ex._fmt_n(math.inf) == "not reached"
    # a rising curve fits flat (b = 0): never reaches anything below it
    n = np.geomspace(1e4, 1e6, 10)
    flat = ex.fit_power_law(n, 5.0 + 0.01 * np.log(n))
    assert flat.b == 0.0 and math.isinf(flat.instances_for(4.9))


def test_log_linear_tail_and_quantiles():
    n = np.geomspace(1e4, 1e6, 20)
    fit = ex.fit_log_linear(n, 10.0 - 0.5 * np.log(n / 1e6))
    assert (fit.alpha, fit.beta) == (pytest.approx(10.0), pytest.approx(-0.5))
    assert fit.instances_for(9.5) == pytest.approx(math.e * 1e6)
    assert math.isinf(ex.fit_log_linear(n, 1.0 + 0.1 * np.log(n)).instances_for(0.0))
    q10, q50, q90 = ex.quantiles(np.array([1.0, 2.0, 3.0, math.inf, math.inf]))
    assert q10 == 1.0 and math.isinf(q90)


def test_shipped_curve_matches_its_provenance():
    curve = ex.load_curve("clrp10")
    assert curve.batch == 512 and curve.shipped_instances == 2460 * 512
    assert curve.shipped_val == pytest.approx(8.7588, abs=1e-4)
    assert curve.total_steps == 2783
    assert curve.per_minute == pytest.approx(2783 * 512 / 10.8)


def test_paper_set_x8_reads_the_published_table():
    x8, source = ex.paper_set_x8("clrp10")
    assert x8 == ex.PAPER_SET_X8["clrp10"] and source == "results/paper-sets/paper-clrp10.csv"


def test_plot_writes_one_panel_per_preset(tmp_path):
    path = ex.plot({"clrp10": ex.analyse("clrp10", reps=5)}, tmp_path / "extrapolation.png")
    assert path == tmp_path / "extrapolation.png"
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 1000


def _curve_rows(tmp_path, rows):
    from experiments.imitation.curve import COLUMNS, append_csv_row

    for arm, phase, hours, instances in rows:
        row = dict.fromkeys(COLUMNS, 0)
        row.update(arm=arm, phase=phase, train_cpu_hours=hours, pomo_instances=instances)
        row.update(x8=28.0, commit="abc1234")
        append_csv_row(tmp_path / "curve.csv", COLUMNS, row)


def test_cpu_rates_scale_the_arm_rate_by_each_presets_speed(tmp_path):
    # the pomo arm: 100,000 instances between 0.5 and 2.5 training CPU hours = 50,000 / CPU h;
    # the imitation arm's rows and phases other than POMO do not count
    _curve_rows(
        tmp_path,
        [
            ("pomo", "pomo", 0.5, 20_000),
            ("imitation", "pomo", 0.5, 90_000),
            ("pomo", "pomo", 1.5, 70_000),
            ("pomo", "pomo", 2.5, 120_000),
            ("imitation", "pomo", 3.0, 900_000),
        ],
    )
    rates = ex.cpu_rates(tmp_path, "pomo")
    assert set(rates) == set(ex.PRESETS)
    assert rates["clrp50"] == pytest.approx(50_000.0)
    assert rates["clrp100"] == pytest.approx(50_000.0 * ex.POMO_SPEED_VS_CLRP50["clrp100"])
    assert ex._fmt_min(1e6, rates["clrp50"]) == "20"  # 1M instances at 50,000 an hour


def test_cpu_rates_need_two_pomo_evaluations(tmp_path):
    _curve_rows(tmp_path, [("pomo", "pomo", 0.0, 0), ("pomo", "imitation", 1.0, 0)])
    with pytest.raises(ValueError, match="curve.csv.*no POMO rate for arm 'pomo'"):
        ex.cpu_rates(tmp_path, "pomo")


def test_the_published_speeds_keep_their_order():
    # smaller instances train faster per instance; clrp50 is the unit
    speeds = [ex.POMO_SPEED_VS_CLRP50[p] for p in ex.PRESETS]
    assert speeds == sorted(speeds, reverse=True) and ex.POMO_SPEED_VS_CLRP50["clrp50"] == 1.0


def test_report_gives_cpu_hours_at_the_given_rate():
    result = ex.analyse("clrp10", reps=5)
    text = ex.report({"clrp10": result}, "cmd", {"clrp10": 100_000.0})
    rung = result["rungs"][0]
    row = next(line for line in text.splitlines() if line.startswith("| clrp10 | DRLHQ-Aug"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # power law: instances, GPU min, CPU h ... log-linear tail: instances, GPU min, CPU h
    assert cells[8] == ex._fmt_min(rung["power"], 100_000.0)
    assert cells[-1] == ex._fmt_min(rung["loglin"], 100_000.0)
    assert float(cells[-1]) == pytest.approx(rung["loglin"] / 100_000.0, abs=0.5)  # rounded
    assert "| clrp10 | 14.2 | 100,000 |" in text


def _per_instance(path, gaps, differences):
    lines = ["instance,PyVRP,x8,refine"]
    lines += [f"{i},100,{100 + g},{100 + d}" for i, (g, d) in enumerate(zip(gaps, differences))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hybrid_rung_reads_the_gap_where_the_line_clears_the_interval(tmp_path):
    # refine - PyVRP = -0.1 + 0.02 gap exactly, gaps 2, 4, 6, 8 (mean 5): differences -0.06,
    # -0.02, 0.02, 0.06 (mean 0, sd sqrt(0.008 / 3)); t(0.975, 3) = 3.182446
    path = _per_instance(tmp_path / "t.csv", [2, 4, 6, 8], [-0.06, -0.02, 0.02, 0.06])
    h = ex.hybrid_relation(path, "PyVRP", "x8", "refine")
    half = 3.182446 * math.sqrt(0.008 / 3) / 2
    assert (h.slope, h.intercept) == pytest.approx((0.02, -0.1))
    assert (h.count, h.mean_gap, h.mean_difference) == pytest.approx((4, 5.0, 0.0), abs=1e-12)
    assert h.half_width == pytest.approx(half, rel=1e-6)
    assert h.gap_needed() == pytest.approx((0.1 - half) / 0.02, rel=1e-6)
    # x8 of 50 today (mean gap 5 %) must fall to 50 x (1 + needed %) / 1.05
    assert h.x8_target(50.0) == pytest.approx(50 * (1 + h.gap_needed() / 100) / 1.05)


def test_hybrid_rung_without_a_rising_line_has_no_x8_target(tmp_path):
    path = _per_instance(tmp_path / "t.csv", [2, 4, 6], [0.3, 0.2, 0.1])
    h = ex.hybrid_relation(path, "PyVRP", "x8", "refine")
    assert h.gap_needed() == -math.inf and h.x8_target(50.0) == 0.0


def test_hybrid_rung_names_the_file_and_the_missing_column(tmp_path):
    path = _per_instance(tmp_path / "t.csv", [2, 4, 6], [0.3, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"t\.csv: missing column\(s\) \['PyVRP 10s'\]"):
        ex.hybrid_relation(path, "PyVRP 10s", "x8", "refine")
    with pytest.raises(ValueError, match="2 instances"):
        ex.hybrid_relation(_per_instance(tmp_path / "u.csv", [2, 4], [0, 0]), "PyVRP", "x8",
                           "refine")  # fmt: skip
