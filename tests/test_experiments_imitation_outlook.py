"""The arms' outlook (experiments/imitation/outlook.py): CPU hours to a target on each arm's
trend in log(training instances), at the arm's own POMO rate."""

from __future__ import annotations

import json
import math

import pytest

from experiments.imitation import outlook

START = 100_000
RATE = 50_000.0  # POMO instances per training CPU hour


def row(arm, n, x8, phase="pomo", labels=0.0):
    hours = n / RATE
    return {
        "arm": arm,
        "phase": phase,
        "charged_cpu_hours": labels + hours,
        "label_cpu_hours": labels,
        "train_cpu_hours": hours,
        "pomo_instances": float(n),
        "imitation_examples": 0.0,
        "x8": x8,
    }


def on_trend(arm, ns, alpha=30.0, beta=-1.0, **kw):
    """Rows exactly on x8 = alpha + beta ln((START + n) / START)."""
    return [row(arm, n, alpha + beta * math.log((START + n) / START), **kw) for n in ns]


def test_hours_on_an_exact_log_linear_trend_are_its_solution_at_the_arms_rate():
    rows = on_trend("pomo", [0, 50_000, 100_000, 150_000])
    # 29 = 30 - ln((START + n) / START)  =>  n = START (e - 1); 150,000 already trained.
    expected = (START * (math.e - 1) - 150_000) / RATE
    got = outlook.hours_to_target(rows, "pomo", 29.0, START)
    assert got == pytest.approx(expected, rel=1e-6)


def test_only_the_last_trend_points_and_only_the_pomo_phase_count():
    early = [row("imitation", n, 40.0 - n / 1e4) for n in (0, 10_000, 20_000)]  # another slope
    before = [row("imitation", 0, 99.0, phase="imitation", labels=1.0)]
    late = on_trend("imitation", [30_000, 60_000, 90_000, 120_000], labels=1.0)
    rows = before + early + late
    expected = (START * (math.e - 1) - 120_000) / RATE
    got = outlook.hours_to_target(rows, "imitation", 29.0, START, trend_points=4)
    assert got == pytest.approx(expected, rel=1e-6)
    assert outlook.hours_to_target(rows, "pomo", 29.0, START) is None  # no pomo rows


def test_reached_is_zero_and_a_rising_trend_is_none():
    falling = on_trend("pomo", [0, 50_000, 100_000])
    assert outlook.hours_to_target(falling, "pomo", falling[-1]["x8"], START) == 0.0
    rising = on_trend("pomo", [0, 50_000, 100_000], beta=+1.0)
    assert outlook.hours_to_target(rising, "pomo", 29.0, START) is None


def test_the_rate_is_instances_over_training_hours_between_first_and_last():
    points = [row("pomo", 10_000, 30.0), row("pomo", 40_000, 29.9), row("pomo", 110_000, 29.8)]
    assert outlook.pomo_rate(points) == pytest.approx(RATE)
    assert outlook.pomo_rate(points[:1]) is None


def test_start_instances_reads_the_model_metadata_and_refuses_a_missing_count(tmp_path):
    (tmp_path / "m.pt").write_bytes(b"")
    (tmp_path / "m.json").write_text(json.dumps({"training_instances": 1234}))
    assert outlook.start_instances(str(tmp_path / "m")) == 1234
    (tmp_path / "m.json").write_text(json.dumps({"training_instances": None}))
    with pytest.raises(ValueError, match=r"m\.json: training_instances is None"):
        outlook.start_instances(str(tmp_path / "m"))


def test_the_outlook_table_has_one_row_per_arm_and_target():
    rows = on_trend("pomo", [0, 50_000, 100_000, 150_000]) + on_trend(
        "imitation", [0, 50_000, 100_000], labels=1.0
    )
    lines = outlook.outlook_lines(rows, {"first": 29.0, "second": 28.0}, START)
    body = [line for line in lines if line.startswith("| pomo") or line.startswith("| imit")]
    assert len(body) == 4
    first_pomo = (START * (math.e - 1) - 150_000) / RATE
    assert f"| {first_pomo:.1f} |" in body[0]
    assert outlook.outlook_lines([], {"first": 29.0}, START) == []


def test_a_nearly_flat_trend_reads_more_than_so_many_hours():
    rows = on_trend("pomo", [0, 50_000, 100_000, 150_000], beta=-0.1)  # e^10 x START
    assert outlook.hours_to_target(rows, "pomo", 29.0, START) > outlook.MANY_HOURS
    lines = outlook.outlook_lines(rows, {"first": 29.0}, START)
    assert any(f"more than {outlook.MANY_HOURS:,.0f}" in line for line in lines)


def test_the_hours_use_the_rate_of_the_whole_pomo_phase_not_of_the_trend_window():
    # Exactly on the trend, but the last two evaluations were slow (a shared core): 50,000
    # instances in 2 CPU h instead of 1; the rate is that of the whole phase.
    rows = on_trend("pomo", [0, 50_000, 100_000, 150_000])
    rows[-1]["train_cpu_hours"] += 1.0
    rows[-1]["charged_cpu_hours"] += 1.0
    whole_phase = 150_000 / (150_000 / RATE + 1.0)
    expected = (START * (math.e - 1) - 150_000) / whole_phase
    got = outlook.hours_to_target(rows, "pomo", 29.0, START, trend_points=3)
    assert got == pytest.approx(expected, rel=1e-6)
