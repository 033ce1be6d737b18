"""How a session's training time is split between the tracks."""

from __future__ import annotations


def relative_gap(value: float | None, target: float) -> float | None:
    """``(value - target) / target`` (None without a value)."""
    return None if value is None else (value - target) / target


def minute_shares(gaps: dict[str, float | None], floor: float = 0.1) -> dict[str, float]:
    """Share of the training time per track: ``floor`` each, the rest in proportion to the
    relative gaps (negative gaps count as 0, an unknown gap as the largest known one, or 1).

    >>> minute_shares({"a": 0.01, "b": 0.03}, floor=0.1)
    {'a': 0.3, 'b': 0.7}
    """
    if not gaps:
        raise ValueError("gaps: no track to share the time between")
    if not 0.0 <= floor * len(gaps) <= 1.0:
        raise ValueError(f"floor: {floor} x {len(gaps)} tracks must be within [0, 1]")
    known = [g for g in gaps.values() if g is not None]
    fallback = max(known) if known else 1.0
    weights = {k: max(0.0, fallback if g is None else g) for k, g in gaps.items()}
    total = sum(weights.values())
    rest = 1.0 - floor * len(gaps)
    return {
        k: round(floor + rest * (w / total if total > 0 else 1.0 / len(gaps)), 12)
        for k, w in weights.items()
    }


def shared_durations(shares: dict[str, float], window: float) -> dict[str, float]:
    """Seconds each track trains when all start together and share one GPU in equal time
    slices, so that track ``i`` gets ``shares[i] x window`` of GPU time: the smallest share
    stops first, at ``k x s_1 x window``; then each next one after ``(k - j) x (s_j+1 - s_j) x
    window`` more. The largest share trains for the whole ``window``."""
    order = sorted(shares, key=shares.__getitem__)
    out, t, previous = {}, 0.0, 0.0
    for j, name in enumerate(order):
        t += (len(order) - j) * (shares[name] - previous) * window
        previous = shares[name]
        out[name] = t
    return out


def sequential_durations(shares: dict[str, float], window: float) -> dict[str, float]:
    """Seconds each track trains when the tracks run one after the other."""
    return {name: share * window for name, share in shares.items()}
