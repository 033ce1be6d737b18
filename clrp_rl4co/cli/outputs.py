"""What ``clrp-rl4co solve`` writes: per instance a JSON solution, a Prodhon ``.sol`` file and
optionally a PNG; for the run ``summary.csv`` and the printed table (with gaps to best-known
values)."""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..data import CLRPInstance, prins_bks
from .inputs import Job
from .run import Outcome

#: Columns of ``summary.csv`` (and of the printed table, less ``error``).
SUMMARY_COLUMNS = (
    "instance",
    "customers",
    "depots",
    "method",
    "model",
    "objective",
    "bks",
    "gap_pct",
    "seconds",
    "status",
    "error",
)


@dataclass(frozen=True)
class BestKnown:
    """Best-known objective values: a ``--bks`` CSV (columns ``file,bks``; ``file`` is a file
    name, a stem or an instance label such as ``data.npz[3]``), then the package's Prins table
    (column ``current``), used only when the file's sizes match the table's."""

    table: dict[str, float]

    @classmethod
    def read(cls, path: Path | None) -> BestKnown:
        """The values of ``path`` (None: the Prins table only).

        Raises:
            ValueError: the CSV lacks a column or holds a value that is not a positive number
                (the message names the file, the line and the value).
        """
        table: dict[str, float] = {}
        if path is None:
            return cls(table)
        with Path(path).open(newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("file", "bks") if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing} (need file,bks)")
            for lineno, row in enumerate(reader, start=2):
                try:
                    value = float(row["bks"])
                except (TypeError, ValueError):
                    value = math.nan
                if not (math.isfinite(value) and value > 0):
                    raise ValueError(
                        f"{path}:{lineno}: bks must be a positive number, got {row['bks']!r}"
                    )
                table[row["file"]] = value
        return cls(table)

    def lookup(self, job: Job) -> float | None:
        for key in (job.label, job.source.name, job.stem):
            if key in self.table:
                return self.table[key]
        entry = prins_bks().get(job.source.stem)
        instance = job.instance
        if (
            entry is not None
            and instance is not None
            and job.source.suffix.lower() != ".npz"
            and instance.num_customers == entry.num_customers
            and instance.num_depots == entry.num_depots
            and instance.rounded_costs
        ):
            return float(entry.current)
        return None


def solution_record(job: Job, outcome: Outcome, seed: int) -> dict:
    """The JSON object of a solved instance (see ``docs/formats.md``)."""
    instance: CLRPInstance = job.instance
    solution = outcome.solution
    cost = solution.cost(instance)
    record = {
        "instance": job.label,
        "objective": cost.total,
        **solution.to_dict(),
        "cost": {"opening": cost.opening, "vehicles": cost.vehicles, "routing": cost.routing},
        "method": outcome.method,
        "model": outcome.model,
        "seconds": outcome.seconds,
        "seed": seed,
        "status": outcome.status,
        "rounding": "ceil100" if instance.rounded_costs else "none",
    }
    record.update({k: v for k, v in outcome.details.items() if v is not None})
    return record


def _json_text(record: dict) -> str:
    """``record`` as indented JSON with each list of integers on one line."""
    text = json.dumps(record, indent=2)

    def flat(match: re.Match) -> str:
        return "[" + ", ".join(t for t in re.split(r"[,\s]+", match.group(0)[1:-1]) if t) + "]"

    return re.sub(r"\[[\d,\s]*\]", flat, text) + "\n"


def write_solution(job: Job, outcome: Outcome, seed: int, out: Path, plot: bool) -> list[Path]:
    """Write ``<stem>.json``, ``<stem>.sol`` (and ``<stem>.png``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    record = solution_record(job, outcome, seed)
    paths = [out / f"{job.stem}.json", out / f"{job.stem}.sol"]
    paths[0].write_text(_json_text(record))
    outcome.solution.write_sol(paths[1], job.instance.num_customers)
    if plot:
        paths.append(plot_solution(job, outcome, out / f"{job.stem}.png"))
    return paths


def plot_solution(job: Job, outcome: Outcome, path: Path) -> Path:
    """A PNG of the instance and its routes, titled with the cost parts."""
    import matplotlib.pyplot as plt
    import torch

    from ..data import instances_to_tensordict
    from ..envs.clrp import render

    instance = job.instance
    cost = outcome.solution.cost(instance)
    td = instances_to_tensordict([instance])
    actions = torch.tensor([outcome.solution.to_actions(instance.num_depots)])
    fig, ax = plt.subplots(figsize=(7, 7))
    costs = {
        "total": cost.total,
        "opening": cost.opening,
        "vehicles": cost.vehicles,
        "routing": cost.routing,
    }
    render(td, actions, ax=ax, title=f"{job.label} ({outcome.method})", costs=costs)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def summary_row(job: Job, outcome: Outcome | None, bks: float | None, error: str | None) -> dict:
    """One row of ``summary.csv``; the gap is ``100 (objective - bks) / bks``."""
    row = dict.fromkeys(SUMMARY_COLUMNS, "")
    row["instance"] = job.label
    if job.instance is not None:
        row["customers"] = job.instance.num_customers
        row["depots"] = job.instance.num_depots
    if bks is not None:
        row["bks"] = bks
    if outcome is not None:
        row.update(
            method=outcome.method,
            model=outcome.model or "",
            status=outcome.status,
            seconds=round(outcome.seconds, 3),
        )
        if outcome.solution is not None:
            objective = outcome.solution.cost(job.instance).total
            row["objective"] = objective
            if bks is not None:
                row["gap_pct"] = 100.0 * (objective - bks) / bks
    if error:
        row["status"] = "failed"
        row["error"] = error
    return row


def write_summary(rows: list[dict], path: Path) -> Path:
    """``summary.csv``: :data:`SUMMARY_COLUMNS`, one row per instance."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def summary_table(rows: list[dict]) -> str:
    """The summary as a Markdown table (objectives with up to 10 significant digits)."""
    from ..markdown import markdown_table

    def cell(key: str, value) -> str:
        if isinstance(value, float) and key == "objective":
            return f"{value:.10g}"
        if isinstance(value, float) and key in ("gap_pct", "bks"):
            return f"{value:.2f}" if key == "gap_pct" else f"{value:.10g}"
        return str(value)

    columns = [c for c in SUMMARY_COLUMNS if c != "error"]
    body = [[cell(c, row[c]) for c in columns] for row in rows]
    header = [c.replace("gap_pct", "gap %") for c in columns]
    return markdown_table(header, body, align="lrrllrrrrl")
