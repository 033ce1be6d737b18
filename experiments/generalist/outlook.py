"""Where the generalist stands against its targets, written for ``results/ood/``.

``python -m experiments.generalist report`` writes ``generalist.md`` (and the curve as
``generalist_curve.png``) from the committed state and ``curve.csv``: the targets at the latest
validation, every OOD family's gap to PyVRP 10 s (first, best and latest validation, and the
training instances until it is within 15% on its own trend), and the extrapolated hours to each
target at the run's measured CPU and GPU rates. Every figure comes from those two files, so the
report is rewritten after each ``train`` call.
"""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path

from clrp_rl4co.reporting.markdown import markdown_table

from ..training.state import RunState
from ..training.trend import instances_to_target
from . import settings
from .report import plot_curve, status_line, training_rates
from .validation import FAMILY_COUNT_TARGET, FAMILY_GAP_TARGET, PRINS_GAP_TARGET

REPORT = "generalist.md"
REPORT_PNG = "generalist_curve.png"
#: ``curve.csv`` columns of the per-family gaps start with this.
GAP_PREFIX = "gap_"


def family_outlook(rows: list[dict[str, float]]) -> list[dict[str, float | str | None]]:
    """One entry per OOD family of the latest row: its gap (percent) at the first, best and
    latest validation, and the training instances until it is within
    :data:`.validation.FAMILY_GAP_TARGET` on its own log-linear trend (0 if it is, None if its
    trend does not fall, ``inf`` if beyond reach). Sorted by the latest gap."""
    if not rows:
        return []
    names = [k[len(GAP_PREFIX) :] for k in rows[-1] if k.startswith(GAP_PREFIX)]
    table = []
    for name in names:
        key = GAP_PREFIX + name
        values = [(r["instances"], r[key]) for r in rows if key in r]
        best_at, best = min(values, key=lambda p: p[1])
        table.append({
            "family": name,
            "first": values[0][1],
            "best": best,
            "best_at": best_at,
            "latest": values[-1][1],
            "more": instances_to_target(rows, key, FAMILY_GAP_TARGET, higher_is_better=False),
        })  # fmt: skip
    return sorted(table, key=lambda e: e["latest"])


def count_from_families(outlook: list[dict], count: int = FAMILY_COUNT_TARGET) -> float | None:
    """Training instances until ``count`` families are within the gap target when each family
    follows its own trend: the ``count``-th smallest of their estimates (None: fewer than
    ``count`` families move towards it)."""
    estimates = sorted(e["more"] for e in outlook if e["more"] is not None)
    return estimates[count - 1] if len(estimates) >= count else None


def instances_cell(more: float | None) -> str:
    """A table cell for :func:`experiments.training.trend.instances_to_target`'s answer."""
    if more is None:
        return "not on the trend"
    if math.isinf(more):
        return "beyond 1e15"
    return "reached" if more == 0 else f"~{more:.2g}"


def hours_cells(more: float | None, rates: dict[str, float]) -> list[str]:
    """The CPU-hour and GPU-hour cells for ``more`` instances at ``rates``
    (:func:`.report.training_rates`); empty where reached, unknown or out of reach."""
    cells = []
    for kind in ("cpu", "gpu"):
        rate = rates.get(kind)
        if not more or rate is None or math.isinf(more):  # None, reached (0) or out of reach
            cells.append("")
        else:
            cells.append(f"{more / rate:.3g}")
    return cells


def rates_text(rates: dict[str, float]) -> str:
    """``rates`` (:func:`.report.training_rates`) in words: "8,438 per CPU hour, ..."."""
    return ", ".join(f"{rate:,.0f} per {kind.upper()} hour" for kind, rate in rates.items())


def _source_lines(curve_dir: Path, out_dir: Path) -> list[str]:
    """Which command wrote the report and from which run's folder (a link relative to it)."""
    link = Path(os.path.relpath(curve_dir, out_dir)).as_posix()
    return [
        f"Written by `{settings.command('report')}` from the committed state "
        f"and curve of [`{link}/`]({link}/) (the {settings.RUN} run).",
    ]


def write_ood_report(
    state: RunState, rows: list[dict[str, float]], curve_dir: Path, out_dir: Path
) -> Path:
    """Write ``generalist.md`` and ``generalist_curve.png`` into ``out_dir``.

    Args:
        state: the committed run state.
        rows: the rows of ``curve.csv`` (:func:`.report.read_curve`).
        curve_dir: the folder ``rows`` were read from (named in errors).
        out_dir: where the report goes (``results/ood``).

    Raises:
        ValueError: ``rows`` is empty or its latest row is not the state's validation.
    """
    if not rows:
        raise ValueError(f"{curve_dir}: curve.csv has no validation rows to report")
    last = rows[-1]
    if int(last["instances"]) != state.instances:
        raise ValueError(
            f"{curve_dir}: curve.csv ends at {int(last['instances']):,} instances, the state "
            f"is at {state.instances:,}; validate (train) before reporting"
        )
    rates = training_rates(state)
    outlook = family_outlook(rows)
    met = sum(e["latest"] <= FAMILY_GAP_TARGET for e in outlook)
    by_count = instances_to_target(rows, "families_met", FAMILY_COUNT_TARGET, True)
    by_family = count_from_families(outlook)
    prins = instances_to_target(rows, "prins_gap_paper_bks", PRINS_GAP_TARGET, False)
    best_prins = min((r["prins_gap_paper_bks"], r["instances"]) for r in rows
                     if "prins_gap_paper_bks" in r)  # fmt: skip
    targets = markdown_table(
        ["target", "latest", "best so far", "estimate from", "more instances",
         "CPU h", "GPU h"],
        [
            [f"x8 within {FAMILY_GAP_TARGET:g}% of PyVRP 10 s on >= {FAMILY_COUNT_TARGET} "
             "of 22 families", f"{met} / 22", f"{max(r['families_met'] for r in rows):.0f} / 22",
             "the count's trend", instances_cell(by_count), *hours_cells(by_count, rates)],
            ["", "", "", "each family's own trend", instances_cell(by_family),
             *hours_cells(by_family, rates)],
            [f"Prins x8 <= {PRINS_GAP_TARGET}% above the paper's BKS",
             f"{last['prins_gap_paper_bks']:.2f}%",
             f"{best_prins[0]:.2f}% (at {best_prins[1]:,.0f})", "the gap's trend",
             instances_cell(prins), *hours_cells(prins, rates)],
        ],
        align="llllrrr",
    )  # fmt: skip
    families = markdown_table(
        ["family", "first %", "best %", "best at", "latest %", "within 15%",
         "more instances on its trend"],
        [[e["family"], f"{e['first']:+.1f}", f"{e['best']:+.1f}", f"{e['best_at']:,.0f}",
          f"{e['latest']:+.1f}", "yes" if e["latest"] <= FAMILY_GAP_TARGET else "no",
          instances_cell(e["more"])] for e in outlook],
        align="lrrrrcr",
    )  # fmt: skip
    rate_text = rates_text(rates)
    text = "\n".join([
        "# The generalist against its targets (issue 23)",
        "",
        *_source_lines(curve_dir, out_dir),
        "",
        "```",
        status_line(state, rows),
        "```",
        "",
        f"## Targets at {state.instances:,} training instances "
        f"({state.cpu_hours:.2f} CPU h, {state.gpu_hours:.2f} h of it on a GPU)",
        "",
        targets,
        "",
        textwrap.fill(
            "More instances: a linear trend in log(instances) over the last validations, rough "
            "by design (the metrics move by several points from call to call). Hours: those "
            f"instances at the run's own rates ({rate_text}); the CPU rate is the mean over all "
            "CPU calls, and the calls at N 20-200 trained more slowly.",
            width=100,
        ),
        "",
        f"## OOD families: x8 gap to PyVRP 10 s (first 6 instances each), {len(rows)} "
        "validations",
        "",
        families,
        "",
        "## Curve",
        "",
        f"![the generalist's curve]({REPORT_PNG})",
        "",
    ])  # fmt: skip
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_curve(rows, out_dir / REPORT_PNG)
    path = out_dir / REPORT
    path.write_text(text)
    return path
