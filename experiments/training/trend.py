"""How many more training instances until a metric reaches its target, on the curve's trend.

A rough extrapolation shared by the runs' reports (the generalist's and the imitation arms'): a
line through the metric against log(instances) over the curve's latest points, in instances
rather than hours, since a CPU thread and a GPU train at very different rates.
"""

from __future__ import annotations

import math

#: Points of the curve the extrapolation fits (the latest ones).
TREND_POINTS = 6


def instances_to_target(
    rows: list[dict[str, float]],
    key: str,
    target: float,
    higher_is_better: bool,
    trend_points: int = TREND_POINTS,
) -> float | None:
    """Training instances beyond the last row until ``key`` reaches ``target`` on a linear trend
    in log(instances) over the last ``trend_points`` rows; 0 if reached, None if the trend
    does not move towards it (or there are fewer than three points). In instances, not hours:
    the run trains on CPUs and GPUs at very different rates."""
    points = [(r["instances"], r[key]) for r in rows if key in r]
    if not points:
        return None
    last_n, last_value = points[-1]
    if (last_value >= target) if higher_is_better else (last_value <= target):
        return 0.0
    points = points[-trend_points:]
    if len(points) < 3:
        return None
    xs = [math.log(p[0]) for p in points]
    ys = [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    if slope == 0 or (slope > 0) != higher_is_better:
        return None
    exponent = mx + (target - my) / slope
    if exponent > math.log(1e15):
        return math.inf
    return max(0.0, math.exp(exponent) - last_n)
