"""The evaluation tables' files beyond the package's summaries (:mod:`.tables`): a summary CSV
read back, the per-instance CSV and the gap chart across tables.

Summaries, Markdown and the summary CSV itself are the package's
(:mod:`clrp_rl4co.evaluation.report`); costs are in instance units, gaps in percent.
"""

from __future__ import annotations

import csv
import math
from dataclasses import fields
from pathlib import Path

from clrp_rl4co.evaluation.records import InstanceResult
from clrp_rl4co.evaluation.report import MethodSummary, index_results


def read_csv(path: str | Path) -> list[tuple[MethodSummary, dict[str, str]]]:
    """The rows of a CSV written by :func:`~clrp_rl4co.evaluation.report.to_csv`: each
    :class:`MethodSummary` (floats read back exactly) with its extra columns as text."""
    kinds = {f.name: f.type for f in fields(MethodSummary)}
    out = []
    with Path(path).open(newline="") as f:
        for row in csv.DictReader(f):
            values = {}
            for name, kind in kinds.items():
                text = row[name]
                values[name] = (
                    text if kind == "str" else int(text) if kind == "int" else float(text)
                )
            extra = {k: v for k, v in row.items() if k not in kinds}
            out.append((MethodSummary(**values), extra))
    return out


def per_instance_csv(
    results: list[InstanceResult], path: str | Path, methods: list[str] | None = None
) -> Path:
    """Write one row per instance: one cost column per method, the best cost and its method.

    Columns: ``instance, name, <method>..., best, best_method``. A method's cell is blank when
    it did not run on the instance and ``inf`` when it failed; ``best_method`` lists the tied
    methods separated by ``;`` (blank, like ``best``, when every method failed). Rows are in
    instance order; costs are written at full precision (instance units). Returns the path.

    Args:
        results: every record of the table.
        path: the CSV file.
        methods: the cost columns, in order (default: every method, first-appearance order);
            ``best`` is taken over these methods.
    """
    by_method = index_results(results)
    if methods is None:
        methods = list(by_method)
    names: dict[int, str] = {}
    for m in methods:
        for i, r in by_method.get(m, {}).items():
            if not names.get(i):
                names[i] = r.name
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["instance", "name", *methods, "best", "best_method"])
        for i in sorted(names):
            costs: dict[str, float] = {}
            for m in methods:
                r = by_method.get(m, {}).get(i)
                if r is not None:
                    costs[m] = math.inf if r.failed else r.cost
            best = min(costs.values(), default=math.inf)
            winners = [m for m, c in costs.items() if c == best and math.isfinite(c)]
            writer.writerow(
                [
                    i,
                    names[i],
                    *(repr(costs[m]) if m in costs else "" for m in methods),
                    repr(best) if math.isfinite(best) else "",
                    ";".join(winners),
                ]
            )
    return path


def plot_gaps(
    tables: dict[str, list[MethodSummary]], path: str | Path, use_subset: bool = True
) -> Path:
    """Grouped bar chart (PNG) of the gaps to the best cost, one group per table.

    x: the tables (e.g. ``clrp10 ... clrp100``, labelled with their common-subset size when
    ``use_subset``); bars: the methods, one colour each (a method missing from a table, or
    without a gap there, has no bar); y: the mean gap in percent, on the common subset by
    default, else over each method's own instances with its 95% confidence interval as error
    bar. Returns the path.
    """
    import matplotlib
    from matplotlib.figure import Figure

    from clrp_rl4co.models.curves import save_png

    methods: list[str] = []
    for rows in tables.values():
        for s in rows:
            if s.method not in methods:
                methods.append(s.method)
    width = 0.8 / max(len(methods), 1)
    width_in = min(14.0, max(6.0, 0.3 * len(tables) * max(len(methods), 2)))
    fig = Figure(figsize=(width_in, 5.0))
    ax = fig.subplots()
    cmap = matplotlib.colormaps["tab10" if len(methods) <= 10 else "tab20"]
    for k, method in enumerate(methods):
        xs, ys, errs = [], [], []
        for g, rows in enumerate(tables.values()):
            row = next((s for s in rows if s.method == method), None)
            if row is None:
                continue
            value = row.subset_gap if use_subset else row.gap
            if not math.isfinite(value):
                continue
            xs.append(g - 0.4 + (k + 0.5) * width)
            ys.append(value)
            errs.append(0.0 if use_subset or not math.isfinite(row.gap_ci95) else row.gap_ci95)
        bars = ax.bar(
            xs,
            ys,
            width=width,
            label=method,
            color=cmap(k % cmap.N),
            yerr=None if use_subset else errs,
            capsize=2,
        )
        ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    labels = []
    for name, rows in tables.items():
        n = rows[0].subset_instances if rows else 0
        labels.append(f"{name}\n(n={n})" if use_subset else name)
    ax.set_xticks(range(len(tables)), labels)
    ax.set_xlabel("table")
    ax.set_ylabel("gap to best (%)" + (" on common subset" if use_subset else ", ±95% CI"))
    ax.set_title("Mean per-instance gap to the best method")
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.grid(axis="y", alpha=0.3)
    if methods:
        ax.legend(fontsize=8, ncol=1 + len(methods) // 8, loc="best")
    return save_png(fig, path)
