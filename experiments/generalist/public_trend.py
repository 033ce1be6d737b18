"""The generalist's x8 on public benchmark files along its training, and the trend to a target.

``python -m experiments.generalist public-trend FILES... --bks CSV`` decodes every instance file
with dihedral x8 multistart greedy under each committed state of the run found in git history
(the run's ``state/`` folder, ``results/generalist/state/`` for the plain run; one state per
commit that changed its weights), measures the mean gap to the best-known values, and
extrapolates the gap's log-linear trend in training instances to the target (default 15 %, the
shipped generalist's target on the first six Tuzun-Burke 100-customer files; an earlier target
was 10 %), in instances and in CPU hours at the run's own CPU rate. The benchmark files never
enter training or the run's validation; this reads them only here.

Writes ``generalist_public.md`` and ``generalist_public.csv`` (one row per state and file) into
``--out`` (default ``results/ood``).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import torch

from clrp_rl4co.data.bks import BestKnown
from clrp_rl4co.data.files import read_instance
from clrp_rl4co.data.instance import instances_to_tensordict
from clrp_rl4co.envs import CLRPEnv
from clrp_rl4co.models import decode_batch
from clrp_rl4co.policies import build_policy
from clrp_rl4co.reporting.markdown import markdown_table
from clrp_rl4co.reporting.provenance import commit_line

from ..training.state import STATE, WEIGHTS, RunState
from ..training.trend import instances_to_target
from . import settings
from .outlook import hours_cells, instances_cell, rates_text
from .report import training_rates
from .validation import X8

REPORT = "generalist_public.md"
CSV = "generalist_public.csv"
#: The generalist's target on the public files: x8 at most this many percent above the
#: best-known values (mean over the files).
GAP_TARGET = 15.0


@dataclass(frozen=True)
class CommittedState:
    """One committed state of the run: the commit, its counters and its weights."""

    commit: str
    state: RunState
    weights: dict[str, torch.Tensor]


def _git(args: list[str], repo: Path) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout


def state_history(repo: Path, state_dir: Path | None = None) -> list[CommittedState]:
    """Every committed state in the history of ``repo``'s HEAD, oldest first; of commits that
    hold the same training instances only the newest is kept.

    Args:
        repo: the repository's root (a clone with its history).
        state_dir: the state folder (default: the run's, ``results/generalist/state``).

    Raises:
        ValueError: ``repo`` holds no commit of ``state_dir``'s weights.
    """
    state_dir = settings.STATE_DIR if state_dir is None else state_dir
    folder = (state_dir.relative_to(repo) if state_dir.is_absolute() else state_dir).as_posix()
    commits = _git(["log", "--format=%H", "--", f"{folder}/{WEIGHTS}"], repo).decode().split()
    if not commits:
        raise ValueError(f"{repo}: no commit of {folder}/{WEIGHTS} in the history of HEAD")
    by_instances: dict[int, CommittedState] = {}
    for commit in commits:  # newest first
        data = json.loads(_git(["show", f"{commit}:{folder}/{STATE}"], repo))
        state = RunState.from_dict(data, f"{commit[:7]}:{folder}/{STATE}")
        if state.instances in by_instances:
            continue
        raw = _git(["show", f"{commit}:{folder}/{WEIGHTS}"], repo)
        weights = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        by_instances[state.instances] = CommittedState(commit[:7], state, weights)
    return [by_instances[n] for n in sorted(by_instances)]


def measure(
    history: list[CommittedState], files: list[Path], bks: BestKnown
) -> list[dict[str, object]]:
    """x8 objective and gap (percent above the best-known value) of each state on each file.

    Raises:
        ValueError: a file without a best-known value (the message names it).
    """
    instances = [read_instance(path) for path in files]
    known = [bks.lookup(path, path.name, inst) for path, inst in zip(files, instances)]
    missing = [path.name for path, value in zip(files, known) if value is None]
    if missing:
        raise ValueError(f"--bks: no best-known value for {missing}")
    env = CLRPEnv(check_actions=False)
    inputs = [instances_to_tensordict([inst]) for inst in instances]
    rows: list[dict[str, object]] = []
    for entry in history:
        policy = build_policy(settings.POLICY, **settings.ARCHITECTURE)
        policy.load_state_dict(entry.weights)
        policy.eval()
        for path, td, best in zip(files, inputs, known):
            with torch.inference_mode():
                _, parts, _ = decode_batch(policy, env, td, X8)
            objective = parts["total"][0].item()
            rows.append({
                "commit": entry.commit,
                "instances": entry.state.instances,
                "cpu_hours": round(entry.state.cpu_hours, 3),
                "file": path.name,
                "objective": objective,
                "bks": best,
                "gap_pct": 100.0 * (objective - best) / best,
            })  # fmt: skip
    return rows


def mean_gaps(rows: list[dict[str, object]]) -> list[dict[str, float]]:
    """One row per state: ``instances``, ``cpu_hours`` and ``gap`` (mean over its files)."""
    return [
        {
            "instances": float(group[0]["instances"]),
            "cpu_hours": float(group[0]["cpu_hours"]),
            "gap": sum(float(r["gap_pct"]) for r in group) / len(group),
        }
        for group in by_state(rows)
    ]


def by_state(rows: list[dict[str, object]]) -> list[list[dict[str, object]]]:
    """``rows`` grouped by state (training instances), fewest instances first."""
    groups: dict[int, list[dict[str, object]]] = {}
    for row in rows:
        groups.setdefault(int(row["instances"]), []).append(row)
    return [groups[n] for n in sorted(groups)]


def write_report(
    rows: list[dict[str, object]], latest: RunState, out_dir: Path, command: str,
    target: float = GAP_TARGET, commit: str | None = None,
) -> Path:  # fmt: skip
    """Write ``generalist_public.csv`` and ``generalist_public.md``; returns the report's path.

    ``commit``: the report's commit line (default: :func:`commit_line` before the files are
    written, so that the report's own CSV does not count as an uncommitted change).
    """
    commit = commit_line() if commit is None else commit
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / CSV).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    gaps = mean_gaps(rows)
    files = sorted({str(r["file"]) for r in rows}, key=[r["file"] for r in rows].index)
    rates = training_rates(latest)
    more_last6 = instances_to_target(gaps, "gap", target, higher_is_better=False)
    more_all = instances_to_target(gaps, "gap", target, False, trend_points=len(gaps))
    folder = settings.STATE_DIR.relative_to(settings.REPO).as_posix()
    best = min(gaps, key=lambda g: g["gap"])
    per_state = markdown_table(
        ["commit", "training instances", "CPU h", *files, "mean gap %"],
        [[str(group[0]["commit"]), f"{int(group[0]['instances']):,}",
          f"{float(group[0]['cpu_hours']):.2f}",
          *[f"{float(r['gap_pct']):+.1f}" for r in group], f"{g['gap']:+.2f}"]
         for g, group in zip(gaps, by_state(rows))],
        align="lrr" + "r" * len(files) + "r",
    )  # fmt: skip
    outlook = markdown_table(
        ["trend over", "more instances", "CPU h", "GPU h"],
        [["the last 6 states", instances_cell(more_last6), *hours_cells(more_last6, rates)],
         [f"all {len(gaps)} states", instances_cell(more_all), *hours_cells(more_all, rates)]],
        align="lrrr",
    ) if len(gaps) > 1 else "One state so far: a trend needs two."  # fmt: skip
    rate_text = rates_text(rates)
    text = "\n".join([
        "# The generalist on public files along its training",
        "",
        f"- command: `{command}`",
        f"- {commit}; date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        textwrap.fill(
            "Dihedral x8 multistart greedy of every committed state of the generalist's run "
            f"(`{folder}/` in git history) on the files below, each one's gap to "
            "its best-known value; the target is a mean gap of at most "
            f"{target:g}%. The files never enter training or the run's validation.",
            width=100,
        ),
        "",
        per_state,
        "",
        f"Latest: {gaps[-1]['gap']:+.2f}% at {int(gaps[-1]['instances']):,} instances; best "
        f"{best['gap']:+.2f}% at {int(best['instances']):,}.",
        "",
        "## Still to go to the target",
        "",
        outlook,
        "",
        textwrap.fill(
            "A line in log(training instances) through the mean gaps, extended to the target "
            "(rough: a handful of noisy points extrapolated beyond their span). Hours: those "
            f"instances at the run's own rates ({rate_text}).",
            width=100,
        ),
        "",
    ])  # fmt: skip
    path = out_dir / REPORT
    path.write_text(text)
    return path
