"""Runs of ``benchmarks.schneider`` side by side: per file, the gap to the published best-known
value of each run folder at one budget, and each folder's paired difference from the first.

    python -m benchmarks.schneider_pairs --seconds 60 --kind e --min-customers 300 \\
        estimate=results/schneider-region-auto learned=results/schneider-60-learned

Prints a Markdown table (one row per file both runs hold; the mean, the largest gap and the
files above ``--above``) and, for every folder after the first, the paired difference of the
gaps (that folder minus the first, in points of %) with its 95% t interval and the files where
it is lower / equal / higher. The gaps are the ones the runs recorded (``gap_pct``, to the
published values); a file missing from a folder is left out of every comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clrp_rl4co.evaluation.report import mean_ci95
from clrp_rl4co.reporting.markdown import markdown_table

from .schneider import read_runs


def gaps(folder: Path, seconds: float, kind: str | None, min_customers: int) -> dict[str, float]:
    """``file -> gap_pct`` of ``folder``'s runs at ``seconds`` (of ``kind`` and at least
    ``min_customers`` customers)."""
    out = {}
    for row in read_runs(folder):
        if float(row["seconds"]) != seconds or int(row["customers"]) < min_customers:
            continue
        if kind is not None and row["kind"] != kind:
            continue
        if row["gap_pct"] not in ("", "nan"):
            out[row["file"]] = float(row["gap_pct"])
    return out


def side_by_side(runs: dict[str, dict[str, float]], above: float) -> tuple[str, list[str]]:
    """The table of ``runs`` (label -> file -> gap) on the files they all hold, and one line
    per paired comparison with the first run."""
    labels = list(runs)
    files = sorted(set.intersection(*(set(g) for g in runs.values())), key=_order)
    rows = [[f, *(f"{runs[k][f]:.2f}" for k in labels)] for f in files]
    columns = [[runs[k][f] for f in files] for k in labels]
    rows.append(["**mean**", *(f"**{sum(c) / len(c):.2f}**" for c in columns)])
    rows.append(["max", *(f"{max(c):.2f}" for c in columns)])
    rows.append([f"above {above:g}", *(str(sum(v > above for v in c)) for c in columns)])
    table = markdown_table(["file", *labels], rows, align=["l", *"r" * len(labels)])
    lines = []
    for label, column in zip(labels[1:], columns[1:]):
        diffs = [b - a for a, b in zip(columns[0], column)]
        mean, half = mean_ci95(diffs)
        lower, higher = sum(d < -1e-9 for d in diffs), sum(d > 1e-9 for d in diffs)
        lines.append(f"{label} minus {labels[0]}: {mean:+.2f} +- {half:.2f} points (95% t, "
                     f"{len(diffs)} files; lower / equal / higher {lower} / "
                     f"{len(diffs) - lower - higher} / {higher})")  # fmt: skip
    return table, lines


def _order(name: str) -> tuple:
    size, depots, rest = name.split("-", 2)
    return int(size), int(depots), rest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.schneider_pairs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", metavar="LABEL=FOLDER")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--kind", default=None, help="c or e (default: both)")
    parser.add_argument("--min-customers", type=int, default=0)
    parser.add_argument("--above", type=float, default=2.5, help="count the gaps above this")
    args = parser.parse_args(argv)
    runs = {}
    for spec in args.runs:
        label, sep, folder = spec.partition("=")
        if not sep or not label:
            parser.error(f"runs: expected LABEL=FOLDER, got {spec!r}")
        found = gaps(Path(folder), args.seconds, args.kind, args.min_customers)
        if not found:
            parser.error(f"runs: {folder} holds no run at {args.seconds:g} s of that selection")
        runs[label] = found
    table, lines = side_by_side(runs, args.above)
    print(table)
    print()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
