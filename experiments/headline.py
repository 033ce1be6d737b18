"""The headline table: one line per synthetic preset, the main rows side by side.

Reads the CSVs that :func:`.tables.run_table` writes (``<out>/<preset>/<preset>.csv``
and ``<preset>_per_instance.csv``) and writes ``<out>/headline.md``. Each cell is a row's mean
objective on the preset's headline subset -- the instances on which every shown row except the
exact solver ran -- with the mean per-instance gap to the best row in brackets, so the cells of a
line are comparable. The exact solver often runs on fewer instances: its cell is over its own
instances and says how many it proved optimal. The last columns give DRLHQ x8 on the whole test
set and the paper's figures.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from clrp_rl4co.reporting.markdown import markdown_table

from .specs import SYNTHETIC, trained_on, with_identity

#: Where :data:`PAPER` and :data:`PAPER_SECONDS` come from.
PAPER_SOURCE = (
    "Miao et al., An End-to-End Learning Approach for Solving Capacitated Location-Routing "
    "Problem, table 'Results on Synthetic Datasets' (RTX 4090, one instance at a time)"
)

#: The DRLHQ paper's figures (objective means on its own test sets, :data:`PAPER_SOURCE`).
PAPER = {
    "clrp10": {"DRLHQ x8": 8.6480, "DRLHQ SGBS": 8.6293},
    "clrp20": {"DRLHQ x8": 14.8549, "DRLHQ SGBS": 14.7485},
    "clrp50": {"DRLHQ x8": 27.3326, "DRLHQ SGBS": 27.0417},
    "clrp100": {"DRLHQ x8": 55.4599, "DRLHQ SGBS": 55.0214},
}

#: The paper's time per instance (seconds) of the figures in :data:`PAPER` that it times
#: (:data:`PAPER_SOURCE`: solved one instance at a time on an RTX 4090).
PAPER_SECONDS = {
    "clrp10": {"DRLHQ SGBS": 0.94},
    "clrp20": {"DRLHQ SGBS": 2.08},
    "clrp50": {"DRLHQ SGBS": 9.32},
    "clrp100": {"DRLHQ SGBS": 33.30},
}


def paper_cell(preset: str) -> str:
    """The paper's figures of ``preset`` as one cell: ``x8 8.6480 / SGBS 8.6293 (0.94 s)``."""
    seconds = PAPER_SECONDS.get(preset, {})
    return " / ".join(
        f"{k.removeprefix('DRLHQ ')} {v:.4f}" + (f" ({seconds[k]:.2f} s)" if k in seconds else "")
        for k, v in PAPER.get(preset, {}).items()
    )


COLUMNS = (
    "Exact",
    "PyVRP short",
    "PyVRP long",
    "POMO* x8",
    "MTA* x8",
    "DRLHQ x8",
    "DRLHQ SGBS",
    "DRLHQ x8 + refine",
)


def _columns(summary: list[dict]) -> dict[str, dict]:
    """Headline column -> summary CSV row, by the row's ``family`` column (see
    :class:`.specs.Row`)."""
    return {row["family"]: row for row in summary if row.get("family") in COLUMNS}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def preset_line(summary: list[dict], per_instance: list[dict], preset: str) -> list[str]:
    """The cells of one preset's line."""
    cells = _columns(summary)
    costs = {
        name: {
            int(r["instance"]): float(r[row["method"]])
            for r in per_instance
            if r.get(row["method"]) not in (None, "")
        }
        for name, row in cells.items()
    }
    best = {int(r["instance"]): float(r["best"]) for r in per_instance if r["best"] not in ("",)}
    shown = [n for n in costs if n != "Exact"]
    subset = set.intersection(*(set(costs[n]) for n in shown)) if shown else set()
    line = [preset, str(len(subset))]
    for name in COLUMNS:
        if name not in costs:
            line.append("")
            continue
        own = name == "Exact"
        keys = sorted(costs[name]) if own else sorted(subset)
        values = [costs[name][i] for i in keys]
        gap = _mean([100 * (costs[name][i] - best[i]) / best[i] for i in keys])
        text = f"{_mean(values):.4f} ({gap:.2f}%)"
        row = cells[name]
        if own:
            text += f", {row['optimal']}/{len(keys)} proven"
        if row["model"] and trained_on(row["model"]) != preset:  # trained on another size
            text += f" [{trained_on(row['model'])} model]"
        if name.startswith("PyVRP") or name == "DRLHQ x8 + refine":
            text += f" {float(row['seconds']):.2g}s"
        line.append(text)
    full = cells.get("DRLHQ x8")
    line.append(f"{float(full['objective']):.4f} (n={full['instances']})" if full else "")
    line.append(paper_cell(preset))
    return line


def headline(out: str | Path = "results") -> Path | None:
    """Write ``<out>/headline.md`` from the synthetic tables found; returns its path (None if
    there is none)."""
    out = Path(out)
    lines = []
    for preset in SYNTHETIC:
        summary_path = out / preset / f"{preset}.csv"
        per_instance_path = out / preset / f"{preset}_per_instance.csv"
        if not (summary_path.is_file() and per_instance_path.is_file()):
            continue
        summary = [with_identity(preset, row) for row in csv.DictReader(summary_path.open())]
        per_instance = list(csv.DictReader(per_instance_path.open()))
        lines.append(preset_line(summary, per_instance, preset))
    if not lines:
        return None
    header = ["preset", "subset n", *COLUMNS, "DRLHQ x8, whole test set", "paper (DRLHQ)"]
    text = markdown_table(header, lines) + f"\n\npaper (DRLHQ): {PAPER_SOURCE}."
    target = out / "headline.md"
    target.write_text(text + "\n")
    return target
