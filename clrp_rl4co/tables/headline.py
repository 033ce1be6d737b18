"""The headline table: one line per synthetic preset, the main rows side by side.

Reads the summary CSVs that :func:`clrp_rl4co.tables.run.run_table` writes
(``<out>/<preset>/<preset>.csv``) and writes ``<out>/headline.md``. Every cell is the row's mean
objective on the preset's common subset (the instances all rows ran on) with its mean
per-instance gap to the best row in brackets, so the cells of a line are comparable; the last
columns give DRLHQ x8 on the whole test set and the paper's figure.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .specs import SYNTHETIC

#: The DRLHQ paper's figures quoted in the issue (objective means on its own test sets).
PAPER = {
    "clrp10": {"DRLHQ x8": 8.6480},
    "clrp20": {"DRLHQ x8": 14.8549, "DRLHQ SGBS": 14.7485},
}

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


def family(label: str) -> str | None:
    """The headline column of a table row (None: not shown)."""
    if label.startswith("Exact"):
        return "Exact"
    if label.startswith("PyVRP"):
        return "PyVRP"
    if "untrained" in label or label.endswith("greedy"):
        return None
    for name in ("POMO*", "MTA*"):
        if label.startswith(name) and label.endswith(" x8"):
            return f"{name} x8"
    if label.startswith("DRLHQ"):
        if "SGBS" in label:
            return "DRLHQ SGBS"
        if "+ refine" in label:
            return "DRLHQ x8 + refine"
        if label.endswith(" x8"):
            return "DRLHQ x8"
    return None


def _fmt(value: str | float) -> str:
    return f"{float(value):.4f}"


def headline(out: str | Path = "results") -> Path | None:
    """Write ``<out>/headline.md`` from the synthetic tables found; returns its path (None if
    there is none)."""
    out = Path(out)
    lines = []
    for preset in SYNTHETIC:
        path = out / preset / f"{preset}.csv"
        if not path.is_file():
            continue
        rows = list(csv.DictReader(path.open()))
        cells: dict[str, str] = {}
        pyvrp = sorted((r for r in rows if family(r["method"]) == "PyVRP"),
                       key=lambda r: float(r["seconds"]))  # fmt: skip
        for name, row in zip(("PyVRP short", "PyVRP long"), pyvrp):
            cells[name] = row
        for row in rows:
            name = family(row["method"])
            if name and name != "PyVRP":
                cells[name] = row
        subset = rows[0]["subset_instances"] if rows else "0"
        line = [preset, subset]
        for name in COLUMNS:
            row = cells.get(name)
            if row is None:
                line.append("")
                continue
            text = f"{_fmt(row['subset_objective'])} ({float(row['subset_gap']):.2f}%)"
            if name.startswith("PyVRP") or name == "DRLHQ x8 + refine":
                text += f" {float(row['seconds']):.2g}s"
            line.append(text)
        full = cells.get("DRLHQ x8")
        line.append(f"{_fmt(full['objective'])} (n={full['instances']})" if full else "")
        paper = PAPER.get(preset, {})
        line.append(" / ".join(f"{k.removeprefix('DRLHQ ')} {v:.4f}" for k, v in paper.items()))
        lines.append("| " + " | ".join(line) + " |")
    if not lines:
        return None
    header = ["preset", "subset n", *COLUMNS, "DRLHQ x8, whole test set", "paper (DRLHQ)"]
    text = "\n".join(
        [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *lines,
        ]
    )
    target = out / "headline.md"
    target.write_text(text + "\n")
    return target
