"""A toy table of evaluation records shared by the report tests (package and harness)."""

from __future__ import annotations

import math

from clrp_rl4co.evaluation.records import InstanceResult


def record(method: str, instance: int, cost: float, seconds: float = 1.0, **kw) -> InstanceResult:
    """A record of a toy table; a non-finite cost is a failure (valid False)."""
    return InstanceResult(
        method=method,
        instance=instance,
        name=f"toy-{instance}",
        cost=cost,
        seconds=seconds,
        valid=math.isfinite(cost),
        **kw,
    )


def toy_table() -> list[InstanceResult]:
    """A and B ran on instances 0..2, the slow exact method C on 0..1 only.

    best: instance 0 -> 90 (C), 1 -> 200 (B), 2 -> 50 (A and B tie).
    """
    costs = {
        "A": [100.0, 220.0, 50.0],
        "B": [110.0, 200.0, 50.0],
        "C": [90.0, 240.0],
    }
    out = []
    for method, row in costs.items():
        for i, c in enumerate(row):
            out.append(record(method, i, c, seconds=10.0 * (i + 1), optimal=method == "C"))
    return out
