"""Schneider & Löffler's large CLRP set: gaps to the published best-known values per budget.

Each file (``--files``: files, folders or glob patterns; default the 44 development files in
``$CLRP_BENCHMARKS_DIR/schneider/``) is solved at each budget (``--seconds``) with
:func:`clrp_rl4co.solve` in this process, one torch thread, one instance at a time, budgets
in ascending order. Each run appends one row to ``<out>/runs.csv``: the file, its kind (the
letter ending its name: ``c`` nearly free depots, ``e`` heterogeneous depots), customers,
depots, the budget, the wall seconds of the call (reading the file and loading a model
included), the method that ran, the objective, the best-known value, ``gap_pct = 100
(objective - bks) / bks``, the depots opened and the 1-minute load average at the start, with
the commit, machine and command. A rerun resumes: a (file, budget) already in ``runs.csv`` is
skipped, and earlier rows are never rewritten. ``<out>/README.md`` (mean gap per kind, size
and budget) and ``<out>/gap_by_size.png`` are then written from every row.

The best-known values (``--bks``, columns ``file,bks``) are the published ones (the
benchmarks folder's ``bks/schneider_dev_bks.csv``); a file without one is an error.

    CLRP_BENCHMARKS_DIR=/path/to/benchmarks python -m benchmarks.schneider \\
        --seconds 10 60 600 --method auto
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from clrp_rl4co.reporting import provenance
from clrp_rl4co.reporting.markdown import markdown_table

PROG = "python -m benchmarks.schneider"
OUT = Path("results/schneider")
BUDGETS = (10.0, 60.0, 600.0)
#: Columns of ``runs.csv``, in order.
COLUMNS = (
    "file", "kind", "customers", "depots", "seconds", "wall_seconds", "requested", "method",
    "objective", "bks", "gap_pct", "depots_opened", "load_avg", "status", "seed", "commit",
    "machine", "command",
)  # fmt: skip
#: A file name of the set: ``<customers>-<depots>-<number><kind>`` (e.g. ``600-30-4e``).
_NAME = re.compile(r"(\d+)-(\d+)-(\d+)([a-z])")


def parse_name(name: str) -> tuple[int, int, int, str]:
    """``(customers, depots, number, kind)`` of a file name of the set (``600-30-4e.json``:
    ``(600, 30, 4, "e")``).

    Raises:
        ValueError: the name (without its extension) is not of that form.
    """
    stem = Path(name).name.split(".")[0]
    match = _NAME.fullmatch(stem)
    if match is None:
        raise ValueError(
            f"{name}: not a file name of the set (<customers>-<depots>-<number><kind>, e.g. "
            "100-5-2c.json)"
        )
    customers, depots, number, kind = match.groups()
    return int(customers), int(depots), int(number), kind


def kind_of(name: str) -> str:
    """The kind of a file of the set: the letter ending its name (``100-5-2c.json``: ``c``)."""
    return parse_name(name)[3]


def gap_pct(objective: float | None, bks: float) -> float | None:
    """``100 (objective - bks) / bks`` in percent; None without an objective.

    Raises:
        ValueError: ``bks`` is not a positive finite number.
    """
    if not (math.isfinite(bks) and bks > 0):
        raise ValueError(f"bks: must be a positive number, got {bks!r}")
    return None if objective is None else 100.0 * (objective - bks) / bks


def read_bks(path: str | Path) -> dict[str, float]:
    """The best-known values of a CSV with columns ``file,bks`` (``file``: a file name), read
    as the command reads ``--bks`` (:meth:`clrp_rl4co.data.bks.BestKnown.read`).

    Raises:
        ValueError: a missing column, a value that is not a positive number or a file named
            twice (the message names the file, the line and the value).
        OSError: the file cannot be read.
    """
    from clrp_rl4co.data.bks import BestKnown

    return BestKnown.read(Path(path)).table


def read_runs(out: Path) -> list[dict[str, str]]:
    """The rows of ``out/runs.csv`` (none when it does not exist).

    Raises:
        ValueError: the file's columns are not :data:`COLUMNS` (it is then left alone).
    """
    path = out / "runs.csv"
    if not path.exists() or path.stat().st_size == 0:
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(
                f"{path}: columns {reader.fieldnames} are not this script's {list(COLUMNS)}; "
                "write to another --out"
            )
        return list(reader)


def done_runs(rows: Iterable[dict[str, str]]) -> set[tuple[str, float]]:
    """The (file name, budget in seconds) pairs that ``rows`` hold."""
    return {(row["file"], float(row["seconds"])) for row in rows}


def pending(
    files: Sequence[Path], budgets: Sequence[float], done: set[tuple[str, float]]
) -> list[tuple[Path, float]]:
    """The runs still to do: every (file, budget) not in ``done``, budgets ascending, files
    by (customers, depots, name) within a budget."""
    ordered = sorted(files, key=lambda p: (*parse_name(p.name)[:2], p.name))
    return [
        (path, float(budget))
        for budget in sorted(set(map(float, budgets)))
        for path in ordered
        if (path.name, float(budget)) not in done
    ]


def append_row(out: Path, row: dict) -> None:
    """Append ``row`` (the keys of :data:`COLUMNS`) to ``out/runs.csv``, writing the header
    first when the file is new; rows already there are kept as they are."""
    path = out / "runs.csv"
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow({key: row.get(key) for key in COLUMNS})


def _num(x: float) -> int | float:
    """``x`` as an ``int`` where integral (objectives of the set are integers)."""
    return int(x) if float(x).is_integer() else float(x)


def run_one(
    path: Path, seconds: float, method: str, seed: int, bks: float, command: str
) -> dict | None:
    """Solve ``path`` within ``seconds``; its row of ``runs.csv`` (None when the run was
    interrupted: it is not recorded)."""
    from clrp_rl4co import solve
    from clrp_rl4co.data.files import read_instance

    customers, depots, _, kind = parse_name(path.name)
    load = provenance.load_average()
    begin = time.perf_counter()
    result = solve(path, method=method, seconds=seconds, seed=seed)
    wall = time.perf_counter() - begin
    if result.interrupted:
        return None
    instance = read_instance(path)
    if (instance.num_customers, instance.num_depots) != (customers, depots):
        raise ValueError(
            f"{path}: holds {instance.num_customers} customers and {instance.num_depots} "
            f"depots, its name says {customers} and {depots}"
        )
    opened = None
    if result.solution is not None:
        result.solution.check(instance)  # a gap is only reported for a feasible solution
        opened = len(result.solution.open_depots)
    gap = gap_pct(result.objective, bks)
    return {
        "file": path.name, "kind": kind, "customers": customers, "depots": depots,
        "seconds": f"{seconds:g}", "wall_seconds": round(wall, 3), "requested": method,
        "method": result.method,
        "objective": None if result.objective is None else _num(result.objective),
        "bks": _num(bks), "gap_pct": None if gap is None else round(gap, 4),
        "depots_opened": opened, "load_avg": load, "status": result.status, "seed": seed,
        "commit": provenance.commit_line(), "machine": provenance.machine(), "command": command,
    }  # fmt: skip


def _float(text: str | None) -> float | None:
    return float(text) if text not in (None, "") else None


def gap_tables(rows: Sequence[dict[str, str]]) -> dict[str, str]:
    """Per kind, a Markdown table: a row per size (customers), a column per budget, cells the
    mean gap % over the files of that size with their count; a last row over all sizes."""
    budgets = sorted({float(r["seconds"]) for r in rows})
    tables = {}
    for kind in sorted({r["kind"] for r in rows}):
        of_kind = [r for r in rows if r["kind"] == kind]
        sizes = sorted({int(r["customers"]) for r in of_kind})
        body = []
        for size in [*sizes, None]:
            cells = [str(size) if size is not None else "all"]
            for budget in budgets:
                runs = [
                    r
                    for r in of_kind
                    if float(r["seconds"]) == budget
                    and (size is None or int(r["customers"]) == size)
                ]
                gaps = [g for r in runs if (g := _float(r["gap_pct"])) is not None]
                cells.append(f"{statistics.mean(gaps):.2f} ({len(gaps)})" if gaps else "")
            body.append(cells)
        header = ["customers", *(f"{b:g} s" for b in budgets)]
        tables[kind] = markdown_table(header, body, "r")
    return tables


def readme(rows: Sequence[dict[str, str]], bks_path: str) -> str:
    """The text of ``README.md`` from every row of ``runs.csv``."""
    lines = [
        "# Schneider & Löffler (2019) large CLRP set: gaps to the best-known values",
        "",
        "Written by `python -m benchmarks.schneider` from `runs.csv` (one row per file and "
        "budget). Cells: mean of `gap_pct = 100 (objective - bks) / bks` over the files of that "
        "kind and size, in %, with the number of files; `bks`: the published best-known values "
        f"(`{bks_path}`). Each run: `clrp_rl4co.solve` on one file, one torch thread, one "
        "instance at a time; the budget is the wall time of the call, reading the file and "
        "loading a model included. Kinds: `c` nearly free depots, `e` heterogeneous depots.",
        "",
    ]
    for kind, table in gap_tables(rows).items():
        ran = sorted({r["method"] for r in rows if r["kind"] == kind})
        asked = sorted({r["requested"] for r in rows if r["kind"] == kind})
        lines += [
            f"## Kind {kind}: mean gap % (files) per budget",
            "",
            f"Method asked: {', '.join(asked)}; ran: {', '.join(ran)}.",
            "",
            table,
            "",
        ]
    failed = [r for r in rows if _float(r["gap_pct"]) is None]
    if failed:
        lines += [
            "Runs without a solution (not in the means): "
            + ", ".join(f"{r['file']} at {r['seconds']} s ({r['status']})" for r in failed),
            "",
        ]
    walls = [float(r["wall_seconds"]) / float(r["seconds"]) for r in rows]
    loads = sorted(float(r["load_avg"]) for r in rows if r["load_avg"] not in ("", "n/a"))
    lines += ["![gap by size](gap_by_size.png)", "", "## Provenance", ""]
    if walls:
        lines.append(f"- wall seconds / budget: {min(walls):.3f} to {max(walls):.3f}")
    if loads:
        lines.append(f"- load average (1 min) at the start of a run: {loads[0]:g} to {loads[-1]:g}")
    lines += [f"- machine: {m}" for m in sorted({r["machine"] for r in rows})]
    lines += [f"- commit: {c}" for c in sorted({r["commit"] for r in rows})]
    lines += [f"- command: `{c}`" for c in dict.fromkeys(r["command"] for r in rows)]
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[dict[str, str]], path: Path) -> None:
    """``gap_by_size.png``: mean gap % against customers, one line per kind and budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    budgets = sorted({float(r["seconds"]) for r in rows})
    colours = plt.get_cmap("viridis")([k / max(len(budgets) - 1, 1) for k in range(len(budgets))])
    styles = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]  # per kind: line, marker
    for k, kind in enumerate(sorted({r["kind"] for r in rows})):
        for budget, colour in zip(budgets, colours):
            points: dict[int, list[float]] = {}
            for r in rows:
                gap = _float(r["gap_pct"])
                if r["kind"] == kind and float(r["seconds"]) == budget and gap is not None:
                    points.setdefault(int(r["customers"]), []).append(gap)
            if not points:
                continue
            sizes = sorted(points)
            line, marker = styles[k % len(styles)]
            ax.plot(sizes, [statistics.mean(points[s]) for s in sizes], marker=marker,
                    linestyle=line, color=colour,
                    label=f"kind {kind}, {budget:g} s")  # fmt: skip
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("customers")
    ax.set_ylabel("mean gap to the best-known value, %")
    ax.set_title("Schneider & Löffler set")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(out: Path, bks_path: str) -> str:
    """Write ``README.md`` and ``gap_by_size.png`` from ``out/runs.csv``; the README's text."""
    rows = read_runs(out)
    text = readme(rows, shown_path(bks_path))
    (out / "README.md").write_text(text)
    if rows:
        plot(rows, out / "gap_by_size.png")
    return text


def shown_path(path: str | Path) -> str:
    """``path`` as a README shows it: under ``$CLRP_BENCHMARKS_DIR``, relative to it (no
    machine's folder in a results file); else as given."""
    root = os.environ.get("CLRP_BENCHMARKS_DIR")
    if root:
        try:
            return f"$CLRP_BENCHMARKS_DIR/{Path(path).resolve().relative_to(Path(root).resolve())}"
        except ValueError:
            pass
    return str(path)


def _default_files() -> list[str]:
    root = os.environ.get("CLRP_BENCHMARKS_DIR")
    return [str(Path(root) / "schneider" / "*.json")] if root else []


def _default_bks() -> str | None:
    root = os.environ.get("CLRP_BENCHMARKS_DIR")
    return str(Path(root) / "bks" / "schneider_dev_bks.csv") if root else None


def main(argv: list[str] | None = None) -> int:
    """Run what is missing, then write the report; 1 if a run failed, else 0."""
    import torch

    from clrp_rl4co.auto import METHODS
    from clrp_rl4co.data.files import find_instance_files

    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", nargs="+", default=_default_files(), metavar="GLOB",
                        help="files, folders or glob patterns (default: "
                        "$CLRP_BENCHMARKS_DIR/schneider/*.json)")  # fmt: skip
    parser.add_argument("--seconds", nargs="+", type=float, default=list(BUDGETS),
                        help="budgets per run, s")  # fmt: skip
    parser.add_argument("--method", default="auto", choices=METHODS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model-first-depots",
        type=int,
        default=None,
        metavar="N",
        help="a candidate ranking rule: solve the facility-location model first from N "
        "candidate depots (the package's RankingParams.model_first_depots otherwise)",
    )
    parser.add_argument(
        "--set-ranker",
        default=None,
        choices=["estimate", "learned"],
        help="the depot-set search's order of the sets to try (SetSearchParams.set_ranker; "
        "the package's default otherwise): learned = the shipped set model",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--bks", default=_default_bks(),
                        help="CSV file,bks (default: $CLRP_BENCHMARKS_DIR/bks/"
                        "schneider_dev_bks.csv)")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.files:
        parser.error("--files: none given and CLRP_BENCHMARKS_DIR is not set")
    if args.bks is None:
        parser.error("--bks: none given and CLRP_BENCHMARKS_DIR is not set")
    if any(not (math.isfinite(s) and s > 0) for s in args.seconds):
        parser.error(f"--seconds: every budget must be positive, got {args.seconds}")
    files, errors = find_instance_files(args.files)
    if errors:
        parser.error("; ".join(line for _, line in errors))
    try:
        bks = read_bks(args.bks)
        for path in files:
            parse_name(path.name)
        missing = [p.name for p in files if p.name not in bks]
        if missing:
            raise ValueError(f"{args.bks}: no best-known value for {', '.join(missing)}")
        args.out.mkdir(parents=True, exist_ok=True)
        rows = read_runs(args.out)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    asked = {r["requested"] for r in rows} - {args.method}
    if asked:
        parser.error(f"--out {args.out} holds runs of --method {', '.join(sorted(asked))}, "
                     f"not {args.method}: write to another --out")  # fmt: skip

    torch.set_num_threads(1)
    if args.model_first_depots is not None:
        import dataclasses

        from clrp_rl4co.solvers import set_estimate

        set_estimate.PARAMS = dataclasses.replace(
            set_estimate.PARAMS, model_first_depots=args.model_first_depots
        )
    if args.set_ranker is not None:
        import dataclasses

        from clrp_rl4co.solvers import set_search

        set_search.PARAMS = dataclasses.replace(set_search.PARAMS, set_ranker=args.set_ranker)
    command = provenance.command_line(argv, prog=PROG)
    todo = pending(files, args.seconds, done_runs(rows))
    print(f"{len(todo)} runs to do ({len(rows)} already in {args.out / 'runs.csv'}); "
          f"{provenance.machine()}", flush=True)  # fmt: skip
    failed = 0
    for k, (path, seconds) in enumerate(todo, start=1):
        try:
            row = run_one(path, seconds, args.method, args.seed, bks[path.name], command)
        except ValueError as exc:
            failed = 1
            print(f"[{k}/{len(todo)}] {path.name} {seconds:g} s: FAILED: {exc}", flush=True)
            continue
        if row is None:
            print(f"[{k}/{len(todo)}] {path.name} {seconds:g} s: interrupted, not recorded")
            break
        append_row(args.out, row)
        gap = "" if row["gap_pct"] is None else f"{row['gap_pct']:+.2f}%"
        print(f"[{k}/{len(todo)}] {path.name} {seconds:g} s: {row['method']} "
              f"{row['objective']} (bks {row['bks']}) {gap} in {row['wall_seconds']:.1f} s, "
              f"load {row['load_avg']}", flush=True)  # fmt: skip
    print(report(args.out, args.bks))
    return failed


if __name__ == "__main__":
    sys.exit(main())
