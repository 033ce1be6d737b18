"""Each arm's CPU hours still to go to the paper's figures, on the arm's own trend.

For the report: an arm's evaluations in its POMO phase, x8 against training instances ``n`` =
the start model's fine-tuning instances (its shipped ``training_instances``, as
``results/training/extrapolation.md`` counts them) + the arm's POMO instances, extrapolated by
the generalist's rule (:func:`experiments.training.trend.instances_to_target`: a line in
``log n``, here over the last :data:`TREND_POINTS` evaluations), then turned into CPU hours at
the arm's POMO instances per training CPU hour over its whole POMO phase (the steps a CPU hour
buys depend on what else shares the core, so a short window says more about one session's
load than about the arm). The imitation arm's
labels and passes lie before its POMO phase: they are already charged and show in the trend
only through where it starts.

Rough by construction: one evaluation moves by a few hundredths from the next (200 instances),
the trend spans a fraction of a decade of ``n`` and is extrapolated beyond it, and a line in
``log n`` has no floor, so the hours are an order of magnitude, not a forecast.
"""

from __future__ import annotations

import json

from clrp_rl4co.pretrained import pretrained_files
from clrp_rl4co.reporting.markdown import markdown_table

from ..training.trend import instances_to_target
from . import settings

#: Evaluations the trend is fitted on (3 CPU hours at one every 0.25).
TREND_POINTS = 12
#: CPU hours above which the table says only "more than" this.
MANY_HOURS = 1000.0


def start_instances(model: str | None = None) -> int:
    """The fine-tuning instances recorded for the shipped ``model`` (``training_instances``;
    default: the preset's start)."""
    _, meta_path = pretrained_files(settings.start_model_path(model or settings.START_MODEL))
    meta = json.loads(meta_path.read_text())
    value = meta.get("training_instances")
    if not isinstance(value, int) or value < 0:
        raise ValueError(f"{meta_path}: training_instances is {value!r}, not a count")
    return value


def pomo_points(rows: list[dict], arm: str) -> list[dict]:
    """``arm``'s evaluations in its POMO phase, by charged CPU hours."""
    mine = [r for r in rows if r["arm"] == arm and r["phase"] == "pomo"]
    return sorted(mine, key=lambda r: r["charged_cpu_hours"])


def pomo_rate(points: list[dict]) -> float | None:
    """POMO instances per training CPU hour between the first and the last of ``points``
    (None: no training time between them)."""
    if len(points) < 2:
        return None
    hours = points[-1]["train_cpu_hours"] - points[0]["train_cpu_hours"]
    done = points[-1]["pomo_instances"] - points[0]["pomo_instances"]
    return done / hours if hours > 0 and done > 0 else None


def hours_to_target(
    rows: list[dict], arm: str, target: float, start: int, trend_points: int = TREND_POINTS
) -> float | None:
    """CPU hours beyond ``arm``'s last evaluation until its x8 reaches ``target`` on its trend:
    0 if its last evaluation is at or below it, ``inf`` beyond reach, None where the trend does
    not fall (or has fewer than three points). ``start``: the start model's instances."""
    points = pomo_points(rows, arm)
    if points and points[-1]["x8"] <= target:
        return 0.0
    trend = points[-trend_points:]
    rate = pomo_rate(points)
    if rate is None:
        return None
    series = [{"instances": start + r["pomo_instances"], "x8": r["x8"]} for r in trend]
    more = instances_to_target(
        series, "x8", target, higher_is_better=False, trend_points=len(trend)
    )
    return None if more is None else more / rate


def _hours(value: float | None) -> str:
    if value is None:
        return "trend not falling"
    if value == float("inf"):
        return "beyond reach"
    if value > MANY_HOURS:
        return f"more than {MANY_HOURS:,.0f} (trend nearly flat)"
    return f"{value:.1f}"


def outlook_lines(rows: list[dict], targets: dict[str, float], start: int) -> list[str]:
    """Markdown: per arm and target, the CPU hours still to go, and how they were computed."""
    table = []
    for arm in settings.ARMS:
        points = pomo_points(rows, arm)
        if not points or arm in settings.GPU_ARMS:  # GPU hours, not CPU hours
            continue
        rate = pomo_rate(points)
        for label, target in targets.items():
            table.append(
                [
                    arm,
                    label,
                    f"{target:.4f}",
                    f"{points[-1]['x8']:.4f}",
                    f"{points[-1]['charged_cpu_hours']:.2f}",
                    "-" if rate is None else f"{rate:,.0f}",
                    _hours(hours_to_target(rows, arm, target, start)),
                ]
            )
    if not table:
        return []
    return [
        "CPU hours still to go, each arm on its own trend: a line in log(training instances) "
        f"over its last {TREND_POINTS} POMO-phase evaluations (instances counted from the "
        f"start model's {start:,} fine-tuning instances), at its POMO instances per training "
        "CPU hour over its whole POMO phase. Rough: noisy points extrapolated beyond their span.",
        "",
        *markdown_table(
            [
                "arm",
                "target",
                "target x8",
                "arm's latest x8",
                "at CPU h",
                "POMO instances / CPU h",
                "CPU h still to go",
            ],
            table,
        ).splitlines(),
    ]
