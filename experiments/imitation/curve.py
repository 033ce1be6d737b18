"""The arms' curve: ``results/imitation/<preset>/curve.csv`` (one row per evaluation of either
arm), its plot against charged CPU hours, and the report that says which arm leads at equal
CPU hours."""

from __future__ import annotations

import csv
from pathlib import Path

from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from . import settings
from .state import ArmState

CURVE = "curve.csv"
CURVE_PNG = "curve.png"
REPORT = "README.md"
COLUMNS = (
    "arm",
    "phase",
    "charged_cpu_hours",
    "label_cpu_hours",
    "train_cpu_hours",
    "pomo_instances",
    "imitation_examples",
    "x8",
    "eval_cpu_seconds",
    "commit",
)
#: Evaluations averaged in the comparison (1 CPU hour at one every 0.25).
WINDOW = 4
#: CPU hours within which two arms' evaluations count as at the same hours (two arms evaluate
#: every 0.25 or 0.5 CPU hours from the same branch point, each a step or two past the mark).
SAME_HOURS = 0.01


def append_point(
    report_dir: Path,
    state: ArmState,
    x8: float,
    eval_cpu_seconds: float,
    commit: str | None = None,
) -> Path:
    """Append one evaluation of ``state``'s arm to ``curve.csv`` (header with the first row);
    ``commit``: the code the training runs (default: the checkout's commit now)."""
    path = Path(report_dir) / CURVE
    row = {
        "arm": state.arm,
        "phase": state.phase,
        "charged_cpu_hours": round(state.charged_cpu_hours, 4),
        "label_cpu_hours": round(state.label_cpu_hours, 4),
        "train_cpu_hours": round(state.cpu_hours, 4),
        "pomo_instances": state.instances - state.examples,
        "imitation_examples": state.examples,
        "x8": round(float(x8), 6),
        "eval_cpu_seconds": round(float(eval_cpu_seconds), 1),
        "commit": (commit or commit_line()).split()[0],
    }
    return append_csv_row(path, COLUMNS, row)


def append_csv_row(path: Path, columns: tuple[str, ...], row: dict) -> Path:
    """Append ``row`` to the CSV file ``path`` (its folder made, the header with the first row)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.is_file()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        if new:
            writer.writeheader()
        writer.writerow(row)
    return path


def read_points(report_dir: Path) -> list[dict]:
    """The rows of ``curve.csv`` (numbers as floats; empty if there is none)."""
    path = Path(report_dir) / CURVE
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in COLUMNS:
            if key not in ("arm", "phase", "commit"):
                row[key] = float(row[key])
    return rows


def latest_at(
    rows: list[dict], arm: str, value: float, key: str = "charged_cpu_hours"
) -> dict | None:
    """``arm``'s last evaluation with ``key`` at or below ``value`` (None: none); of rows with
    the same ``key`` (a GPU arm's points all stand at its parent's CPU hours) the later one."""
    mine = [r for r in rows if r["arm"] == arm and r[key] <= value + 1e-9]
    return max(reversed(mine), key=lambda r: r[key]) if mine else None


def window_mean(
    rows: list[dict], arm: str, value: float, key: str = "charged_cpu_hours", count: int = WINDOW
) -> float | None:
    """Mean x8 of ``arm``'s last ``count`` evaluations with ``key`` at or below ``value`` (one
    evaluation moves by a few hundredths from the next; None: none)."""
    mine = sorted(
        (r for r in rows if r["arm"] == arm and r[key] <= value + 1e-9), key=lambda r: r[key]
    )[-count:]
    return sum(r["x8"] for r in mine) / len(mine) if mine else None


def comparison(rows: list[dict], key: str = "charged_cpu_hours") -> dict | None:
    """The arms with evaluations at the largest ``key`` (charged CPU hours, or
    ``pomo_instances``) all of them have reached: each arm's last evaluation there, the mean of
    its last :data:`WINDOW` up to there, the leader (lower last x8) and the mean's leader. None
    until two arms have a point. Arms that branch from another arm's state
    (:data:`.settings.BRANCHES`) start late and are left out: they continue their parent's
    curve; so are the GPU arms (:data:`.settings.GPU_ARMS`), whose hours are GPU hours."""
    reached = {}
    skip = (*settings.BRANCHES, *settings.GPU_ARMS)
    for arm in (a for a in settings.ARMS if a not in skip):
        mine = [r[key] for r in rows if r["arm"] == arm]
        if mine:
            reached[arm] = max(mine)
    if len(reached) < 2:
        return None
    value = min(reached.values())
    points = {arm: latest_at(rows, arm, value, key) for arm in reached}
    if any(p is None for p in points.values()):
        return None
    means = {arm: window_mean(rows, arm, value, key) for arm in reached}
    leader = min(points, key=lambda arm: points[arm]["x8"])
    mean_leader = min(means, key=lambda arm: means[arm])
    return {
        "value": value,
        "points": points,
        "means": means,
        "leader": leader,
        "mean_leader": mean_leader,
    }


def control_comparison(rows: list[dict], arm: str, control: str) -> dict | None:
    """``arm`` against its ``control`` (:data:`.settings.CONTROLS`) from ``arm``'s branch point
    (its first evaluation, of its parent's weights) to the CPU hours both have reached: each of
    ``arm``'s later evaluations there paired with the control's latest evaluation at or before
    it (give or take :data:`SAME_HOURS`) and after the branch point. None until there is such
    a pair.

    Returns:
        ``start`` and ``end`` (CPU hours), ``pairs`` (``(arm's x8, control's x8)`` per
        evaluation of ``arm``), ``means`` (each side's mean over the pairs) and ``lower`` (the
        pairs where ``arm`` is lower).
    """
    key = "charged_cpu_hours"
    mine = [r for r in rows if r["arm"] == arm]
    theirs = [r for r in rows if r["arm"] == control]
    if not mine or not theirs:
        return None
    start = min(r[key] for r in mine)
    end = min(max(r[key] for r in mine), max(r[key] for r in theirs))
    after = [r for r in theirs if r[key] > start + 1e-9]
    pairs = []
    for row in sorted(
        (r for r in mine if start + 1e-9 < r[key] <= end + SAME_HOURS), key=lambda r: r[key]
    ):
        match = latest_at(after, control, row[key] + SAME_HOURS)
        if match is not None:
            pairs.append((row["x8"], match["x8"]))
    if not pairs:
        return None
    return {
        "start": start,
        "end": end,
        "pairs": pairs,
        "means": tuple(sum(p[i] for p in pairs) / len(pairs) for i in (0, 1)),
        "lower": sum(a < c for a, c in pairs),
    }


def _control_lines(rows: list[dict]) -> list[str]:
    """One sentence per arm of :data:`.settings.CONTROLS` in the preset, against its control."""
    lines = []
    arms = settings.preset_arms()
    for arm, control in settings.CONTROLS.items():
        if arm not in arms or control not in arms:
            continue
        pair = control_comparison(rows, arm, control)
        if pair is None:
            lines += ["", f"{arm} against its control {control}: no evaluations to pair yet."]
            continue
        (mine, theirs), count = pair["means"], len(pair["pairs"])
        lines += [
            "",
            f"{arm} against its control {control}, from the branch point at "
            f"{pair['start']:.2f} CPU h to {pair['end']:.2f} (both have trained that far): at "
            f"{arm}'s {count} evaluation{'s' if count != 1 else ''} there, each paired with "
            f"{control}'s latest at or before it (give or take {SAME_HOURS:g} CPU h), mean x8 "
            f"{mine:.4f} against {theirs:.4f} "
            f"({mine - theirs:+.4f}); {arm} lower in {pair['lower']} of {count}.",
        ]
    return lines


def write_curve_png(report_dir: Path) -> Path | None:
    """Plot x8 against charged CPU hours, one line per arm, with the paper's figures."""
    rows = read_points(report_dir)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..campaign.settings import reference_lines

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for arm in settings.ARMS:
        mine = sorted((r for r in rows if r["arm"] == arm), key=lambda r: r["charged_cpu_hours"])
        if mine:
            ax.plot(
                [r["charged_cpu_hours"] for r in mine],
                [r["x8"] for r in mine],
                marker="o",
                label=arm,
            )
    for label, value in reference_lines(settings.PRESET).items():
        ax.axhline(value, linestyle="--", linewidth=1, color="grey")
        ax.annotate(label, (0, value), fontsize=7, va="bottom")
    ax.set_xlabel("CPU hours of one thread (labels included)")
    ax.set_ylabel(f"x8 objective, paper's {settings.PRESET} set, first {settings.EVAL_SIZE}")
    ax.legend()
    ax.grid(alpha=0.3)
    path = Path(report_dir) / CURVE_PNG
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def report_lines(report_dir: Path, states: dict[str, ArmState | None]) -> list[str]:
    """The arms' status and the comparison at equal CPU hours, as Markdown lines."""
    rows = read_points(report_dir)
    table = []
    for arm in settings.preset_arms():
        state = states.get(arm)
        last = latest_at(rows, arm, float("inf"))
        if state is None:
            table.append([arm, "not started", "", "", "", "", "", ""])
            continue
        table.append(
            [
                arm,
                state.phase,
                f"{state.charged_cpu_hours:.2f}",
                f"{state.gpu_hours:.2f}",
                f"{state.label_cpu_hours:.2f} ({state.label_count} labels)",
                f"{state.instances - state.examples:,}",
                f"{state.examples:,}",
                f"{last['x8']:.4f}" if last else "",
            ]
        )
    lines = markdown_table(
        [
            "arm",
            "phase",
            "CPU h charged",
            "GPU h",
            "of which labels",
            "POMO instances",
            "imitation examples",
            "x8 (latest)",
        ],
        table,
    ).splitlines()
    both = comparison(rows)
    if both is None:
        reached = {
            a: hours
            for a in settings.ARMS
            if (hours := [r["charged_cpu_hours"] for r in rows if r["arm"] == a])
        }
        if len(reached) >= 2:
            spans = ", ".join(f"{a} {min(h):.2f}-{max(h):.2f}" for a, h in reached.items())
            lines += ["", f"No comparison yet: the arms share no CPU hours ({spans})."]
        else:
            lines += ["", "No comparison yet: fewer than two arms have an evaluation."]
    else:
        lines += [
            "",
            _compared(both, f"{both['value']:.2f} CPU hours (the most every arm has reached)"),
        ]
        by_instances = comparison(rows, key="pomo_instances")
        if by_instances is not None:
            lines += [
                "",
                _compared(
                    by_instances,
                    f"{by_instances['value']:,.0f} POMO instances (the most every arm has "
                    "trained; a view that does not depend on how many steps a CPU hour bought)",
                ),
            ]
    return lines + _control_lines(rows)


def _compared(both: dict, where: str) -> str:
    """One sentence: each arm's last x8 and window mean at ``where``, and the leader."""
    points, means = both["points"], both["means"]
    return (
        f"At {where}: "
        + ", ".join(
            f"{arm} {points[arm]['x8']:.4f} (mean of its last {WINDOW} evaluations "
            f"{means[arm]:.4f})"
            for arm in points
        )
        + f"; **{both['leader']}** leads"
        + (
            "."
            if both["mean_leader"] == both["leader"]
            else f" (by the means, **{both['mean_leader']}**: the two readings disagree)."
        )
    )
