"""A rerun of the hybrid benchmark against an earlier run of the same configuration.

``python -m benchmarks.hybrid.compare NEW.csv OLD.csv`` reads two per-instance CSVs of
``python -m benchmarks.hybrid`` (same set, same time per instance) and prints, per method of
the new file and on the instances both files have: the mean objective of each run, the paired
difference new minus old with its 95% t interval, the mean relative change in % and how often
the new run is lower / equal / higher. It is what a regression check reads: a code or model
change against the committed figures, instance by instance.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Sequence
from pathlib import Path

from clrp_rl4co.reporting.markdown import markdown_table

from .runs import COLUMNS, X8
from .summary import diff_cells, paired_difference


def read_rows(path: Path) -> dict[str, dict[int, dict[str, str]]]:
    """The time-limited rows of a benchmark CSV: method -> instance index -> row (x8 rows left
    out).

    Raises:
        ValueError: a missing column or a method with two rows for one instance (naming the
            file and the line).
    """
    out: dict[str, dict[int, dict[str, str]]] = {}
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing the columns {missing}")
        for line, row in enumerate(reader, start=2):
            if row["method"] == X8:
                continue
            rows = out.setdefault(row["method"], {})
            index = int(row["index"])
            if index in rows:
                raise ValueError(
                    f"{path}: line {line}: a second row for instance {index} of {row['method']}"
                )
            rows[index] = row
    return out


def compare(new: Path, old: Path) -> list[dict]:
    """Per method with instances in both files: ``method``, ``n``, the two means
    (``new_mean``, ``old_mean``), ``change_pct`` (mean of ``100 (new - old) / old``), the
    models of both runs and the paired statistics of :func:`.summary.paired_difference`
    (``stats``).

    Raises:
        ValueError: the files differ in an instance's name or time per instance (another set
            or configuration), naming both files, the instance and the two values.
    """
    new_rows, old_rows = read_rows(new), read_rows(old)
    found = []
    for method, rows in new_rows.items():
        common = sorted(set(rows) & set(old_rows.get(method, {})))
        if not common:
            continue
        for index in common:
            for column in ("instance", "budget_s"):
                a, b = rows[index][column], old_rows[method][index][column]
                if a != b:
                    raise ValueError(
                        f"{new} and {old}: instance {index} of {method}: {column} {a!r} vs "
                        f"{b!r}; compare runs of the same set and time per instance"
                    )
        first = {i: float(rows[i]["objective"]) for i in common}
        second = {i: float(old_rows[method][i]["objective"]) for i in common}
        change = [100.0 * (first[i] - second[i]) / second[i] for i in common]
        found.append(
            {
                "method": method,
                "n": len(common),
                "new_mean": math.fsum(first.values()) / len(common),
                "old_mean": math.fsum(second.values()) / len(common),
                "change_pct": math.fsum(change) / len(common),
                "new_models": sorted({rows[i]["model"] for i in common}),
                "old_models": sorted({old_rows[method][i]["model"] for i in common}),
                "stats": paired_difference(first, second),
            }
        )
    return found


def to_markdown(found: list[dict]) -> str:
    """The comparison as a Markdown table."""
    header = ["method", "new mean", "old mean", "mean change %", "instances",
              "new minus old ± 95% CI half-width [interval]", "lower", "equal", "higher",
              "models (new / old)"]  # fmt: skip
    rows = []
    for item in found:
        models = f"{', '.join(item['new_models'])} / {', '.join(item['old_models'])}"
        rows.append([item["method"], f"{item['new_mean']:.4f}", f"{item['old_mean']:.4f}",
                     f"{item['change_pct']:+.3f}", *diff_cells(item["stats"]), models])  # fmt: skip
    return markdown_table(header, rows, align="lrrrrrrrrl")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.hybrid.compare",
        description="A rerun of the hybrid benchmark against an earlier run, paired by instance.",
    )
    parser.add_argument("new", type=Path, help="the rerun's CSV")
    parser.add_argument("old", type=Path, help="the earlier run's CSV (same set and seconds)")
    args = parser.parse_args(argv)
    for path in (args.new, args.old):
        if not path.is_file():
            parser.error(f"{path}: no such file")
    print(to_markdown(compare(args.new, args.old)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
