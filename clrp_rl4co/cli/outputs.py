"""What ``clrp-rl4co solve`` writes: per instance a JSON solution, a Prodhon ``.sol`` file and
optionally a PNG; for the run ``summary.csv`` and the printed table (with gaps to best-known
values).

Nothing a user gave is lost: :func:`check_outputs` refuses, before anything is solved, an
output folder where a run would write over one of its own inputs, or over an earlier run's
files unless ``--overwrite`` is given; every file is written whole or not at all (a temporary
file in the same folder, then a rename).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from ..data.instance import CLRPInstance
from ..result import SolveResult
from ..status import Status
from .inputs import Job

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


def solution_record(job: Job, result: SolveResult, seed: int) -> dict:
    """The JSON object of a solved instance (see ``docs/formats.md``)."""
    instance: CLRPInstance = job.instance
    solution = result.solution
    cost = solution.cost(instance)
    record = {
        "instance": job.label,
        "objective": cost.total,
        **solution.to_dict(),
        "cost": {"opening": cost.opening, "vehicles": cost.vehicles, "routing": cost.routing},
        "method": result.method,
        "model": result.model,
        "seconds": result.seconds,
        "seed": seed,
        "status": result.status,
        "interrupted": result.interrupted,
        "rounding": "ceil100" if instance.rounded_costs else "none",
    }
    record.update({k: v for k, v in result.details.items() if v is not None})
    return record


def _json_text(record: dict) -> str:
    """``record`` as indented JSON with each list of integers on one line."""
    text = json.dumps(record, indent=2)

    def flat(match: re.Match) -> str:
        return "[" + ", ".join(t for t in re.split(r"[,\s]+", match.group(0)[1:-1]) if t) + "]"

    return re.sub(r"\[[\d,\s]*\]", flat, text) + "\n"


#: The name of the run's summary in the output folder.
SUMMARY_NAME = "summary.csv"
#: How many clashing paths an error message names before it counts the rest.
NAMED_PATHS = 3


def solution_paths(job: Job, out: Path, plot: bool) -> list[Path]:
    """The files :func:`write_solution` writes for ``job``: ``<stem>.json``, ``<stem>.sol``
    (and ``<stem>.png``) in ``out``."""
    suffixes = (".json", ".sol", ".png") if plot else (".json", ".sol")
    return [out / f"{job.stem}{suffix}" for suffix in suffixes]


def run_outputs(jobs: list[Job], out: Path, plot: bool) -> list[Path]:
    """Every file a run over ``jobs`` may write: each readable job's solution files and the
    summary."""
    paths = [p for job in jobs if job.error is None for p in solution_paths(job, out, plot)]
    return [*paths, out / SUMMARY_NAME]


def _named(paths: list[Path]) -> str:
    names = ", ".join(str(p) for p in paths[:NAMED_PATHS])
    more = len(paths) - NAMED_PATHS
    return names + (f" and {more} more" if more > 0 else "")


def check_outputs(jobs: list[Job], out: Path, plot: bool, overwrite: bool) -> str | None:
    """Why the run must not write into ``out`` (None: it may), checked before any solving.

    Refused always: ``out`` is a file, or an output would replace one of the run's inputs (a
    JSON instance solved into its own folder). Refused unless ``overwrite``: an output file of
    the run exists already (an earlier run's solution or summary).
    """
    if out.exists() and not out.is_dir():
        return f"--out: {out} is a file, not a folder"
    outputs = run_outputs(jobs, out, plot)
    inputs = {job.source.resolve() for job in jobs if job.source.exists()}
    over_inputs = [p for p in outputs if p.resolve() in inputs]
    if over_inputs:
        return (
            f"--out: {out} holds the input {_named(over_inputs)}, which the run would "
            "overwrite with its outputs; choose another --out"
        )
    existing = [p for p in outputs if p.exists()]
    if existing and not overwrite:
        return (
            f"--out: {out} holds an earlier run's outputs ({_named(existing)}); give --overwrite "
            "to replace them, or choose another --out"
        )
    return None


def write_whole(path: Path, write: Callable[[Path], object]) -> Path:
    """``write(temporary)`` then rename the temporary file to ``path``: a reader sees the old
    file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")  # a writer may read it
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_solution(job: Job, result: SolveResult, seed: int, out: Path, plot: bool) -> list[Path]:
    """Write ``<stem>.json``, ``<stem>.sol`` (and ``<stem>.png``) into ``out``, each whole."""
    record = solution_record(job, result, seed)
    paths = solution_paths(job, out, plot)
    write_whole(paths[0], lambda tmp: tmp.write_text(_json_text(record)))
    write_whole(paths[1], lambda tmp: result.solution.write_sol(tmp, job.instance.num_customers))
    if plot:
        write_whole(paths[2], lambda tmp: plot_solution(job, result, tmp))
    return paths


def plot_title(label: str, result: SolveResult, instance: CLRPInstance) -> str:
    """The PNG's title above the depot and route counts: the instance and method, then the cost
    parts in full (``docs/formats.md``)."""
    cost = result.solution.cost(instance)
    return (
        f"{label} ({result.method}{', interrupted' if result.interrupted else ''})\n"
        f"cost {cost.total:.10g} = depots {cost.opening:.10g} + vehicles {cost.vehicles:.10g}"
        f" + routing {cost.routing:.10g}"
    )


def plot_solution(job: Job, result: SolveResult, path: Path) -> Path:
    """A PNG of the instance and its routes (:func:`clrp_rl4co.envs.clrp.plot_solution`), titled
    with :func:`plot_title`."""
    import torch

    from ..data import instances_to_tensordict
    from ..envs.clrp import plot_solution as plot

    instance = job.instance
    td = instances_to_tensordict([instance])
    actions = torch.tensor([result.solution.to_actions(instance.num_depots)])
    return plot(td, actions, path, title=plot_title(job.label, result, instance))


def summary_row(job: Job, result: SolveResult | None, bks: float | None, error: str | None) -> dict:
    """One row of ``summary.csv``; the gap is ``100 (objective - bks) / bks``; the status of an
    interrupted run is ``interrupted`` (its best solution so far is written)."""
    row = dict.fromkeys(SUMMARY_COLUMNS, "")
    row["instance"] = job.label
    if job.instance is not None:
        row["customers"] = job.instance.num_customers
        row["depots"] = job.instance.num_depots
    if bks is not None:
        row["bks"] = bks
    if result is not None:
        row.update(
            method=result.method,
            model=result.model or "",
            status=Status.INTERRUPTED if result.interrupted else Status(result.status),
            seconds=round(result.seconds, 3),
        )
        if result.solution is not None:
            objective = result.solution.cost(job.instance).total
            row["objective"] = objective
            if bks is not None:
                row["gap_pct"] = 100.0 * (objective - bks) / bks
    if error:
        not_run = result is not None and result.status == Status.NOT_RUN
        row["status"] = Status.NOT_RUN if not_run else Status.FAILED
        row["error"] = error
    return row


def write_summary(rows: list[dict], path: Path) -> Path:
    """``summary.csv``: :data:`SUMMARY_COLUMNS`, one row per instance, written whole."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=SUMMARY_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return write_whole(path, lambda tmp: tmp.write_text(text.getvalue(), newline=""))


def summary_table(rows: list[dict]) -> str:
    """The summary as a Markdown table (objectives with up to 10 significant digits)."""
    from ..reporting.markdown import markdown_table

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
