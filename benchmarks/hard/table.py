"""The hard benchmark's gap table: every run's objective above the best reference and above the
lower bound, per instance and on average per (family, size), as Markdown
(:func:`clrp_rl4co.reporting.markdown.markdown_table`).

Gaps are ``100 (objective - x) / x`` in %, with ``x`` the reference (the best valid objective of
the reference runs on the instance) or the lower bound. A run without a valid solution on an
instance counts as missing there (its cell is empty, and the counts say how many are in a mean).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from clrp_rl4co.evaluation import InstanceResult
from clrp_rl4co.reporting.markdown import markdown_table

from .runs import Entry, RunSpec

#: The issue's target: every instance within this gap (%) to the reference, and on average
#: within ``TARGET_MEAN``, at these sizes.
TARGET_MAX = 2.0
TARGET_MEAN = 0.5
TARGET_SIZES = (300, 400, 500, 600)


def gap(value: float | None, base: float | None) -> float | None:
    """``100 (value - base) / base``, or None when either is missing or not finite."""
    if value is None or base is None or not (math.isfinite(value) and math.isfinite(base)):
        return None
    return 100.0 * (value - base) / base


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _cell(value: float | None, digits: int = 2, sign: bool = True) -> str:
    if value is None:
        return ""
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


@dataclass
class Table:
    """What the benchmark measured on a selection of instances.

    Attributes:
        entries: the instances.
        specs: the runs (evaluation runs first, then the references).
        results: cached rows by run key, then instance index.
        bounds: the lower bound by instance index.
        lines: provenance lines written under the title.
    """

    entries: Sequence[Entry]
    specs: Sequence[RunSpec]
    results: dict[str, dict[int, InstanceResult]]
    bounds: dict[int, float]
    lines: list[str] = field(default_factory=list)

    def objective(self, spec: RunSpec, index: int) -> float | None:
        """The valid objective of ``spec`` on instance ``index`` (None when missing)."""
        row = self.results.get(spec.key, {}).get(index)
        return None if row is None or row.failed else row.cost

    def reference(self, index: int) -> tuple[float | None, str]:
        """The best valid objective of the reference runs on ``index`` and the run's label."""
        found = [(self.objective(s, index), s.label) for s in self.specs if s.reference]
        found = [(value, label) for value, label in found if value is not None]
        return min(found) if found else (None, "")

    def gaps(self, spec: RunSpec, index: int) -> tuple[float | None, float | None]:
        """``spec``'s gap to the reference and to the bound on ``index`` (%)."""
        value = self.objective(spec, index)
        return gap(value, self.reference(index)[0]), gap(value, self.bounds.get(index))


def provenance_lines(rows: Iterable[InstanceResult]) -> list[str]:
    """Where the rows were computed: their machines and commits (each with its number of
    rows) and the range of the load averages when they finished."""
    rows = list(rows)
    if not rows:
        return []
    lines = []
    for what in ("machine", "commit"):
        counts = Counter(str(r.extra.get(what, "not recorded")) for r in rows)
        listed = "; ".join(f"{value} ({n} rows)" for value, n in counts.most_common())
        lines.append(f"- {what} of the runs: {listed}")
    loads = []
    for r in rows:
        try:
            loads.append(float(r.extra.get("load", "")))
        except ValueError:
            continue
    if loads:
        lines.append(f"- load average (1 min) as the runs finished: min {min(loads):.1f}, mean "
                     f"{math.fsum(loads) / len(loads):.1f}, max {max(loads):.1f}")  # fmt: skip
    return lines


def _ran(row: InstanceResult) -> str:
    """What ran: the resolved method and its model (``auto``'s choice)."""
    method, model = row.extra.get("method") or "", row.extra.get("model")
    return f"{method} ({model})" if model else method


def summary_rows(table: Table) -> list[list[str]]:
    """Per (family, size) and run: instances with a result, mean objective, mean and max gap
    to the reference, mean gap to the bound, mean seconds."""
    groups: dict[tuple[str, int], list[Entry]] = {}
    for e in table.entries:
        groups.setdefault((e.family, e.size), []).append(e)
    rows = []
    for (family, size), group in groups.items():
        for spec in table.specs:
            got = [e for e in group if table.objective(spec, e.index) is not None]
            if not got:
                continue
            to_ref = [g for e in got if (g := table.gaps(spec, e.index)[0]) is not None]
            to_lb = [g for e in got if (g := table.gaps(spec, e.index)[1]) is not None]
            seconds = [table.results[spec.key][e.index].seconds for e in got]
            rows.append([
                family, str(size), spec.label + (" (ref.)" if spec.reference else ""),
                f"{len(got)} / {len(group)}",
                _cell(_mean([table.objective(spec, e.index) for e in got]), 0, False),
                _cell(_mean(to_ref)), _cell(max(to_ref) if to_ref else None),
                _cell(_mean(to_lb)), _cell(_mean(seconds), 1, False),
            ])  # fmt: skip
    return rows


def target_rows(table: Table) -> list[list[str]]:
    """Per evaluation run over the instances of :data:`TARGET_SIZES`: how many have a gap to
    their reference, its mean and max, and how many are above :data:`TARGET_MAX`."""
    rows = []
    chosen = [e for e in table.entries if e.size in TARGET_SIZES]
    for spec in table.specs:
        if spec.reference:
            continue
        gaps = [g for e in chosen if (g := table.gaps(spec, e.index)[0]) is not None]
        if not gaps:
            continue
        over = sum(g > TARGET_MAX for g in gaps)
        rows.append([spec.label, f"{len(gaps)} / {len(chosen)}", _cell(_mean(gaps)),
                     _cell(max(gaps)), str(over)])  # fmt: skip
    return rows


def instance_rows(table: Table) -> list[list[str]]:
    """Per instance: size, depots, lower bound, reference (and which run), the reference's gap
    to the bound."""
    rows = []
    for e in table.entries:
        value, label = table.reference(e.index)
        bound = table.bounds.get(e.index)
        rows.append([e.name, str(e.instance.num_customers), str(e.instance.num_depots),
                     _cell(bound, 0, False), _cell(value, 0, False), label,
                     _cell(gap(value, bound))])  # fmt: skip
    return rows


def run_rows(table: Table) -> list[list[str]]:
    """Per instance and run: objective, gap to the reference and to the bound, seconds, and
    what ran."""
    rows = []
    for e in table.entries:
        for spec in table.specs:
            row = table.results.get(spec.key, {}).get(e.index)
            if row is None:
                continue
            to_ref, to_lb = table.gaps(spec, e.index)
            objective = "no valid solution" if row.failed else _cell(row.cost, 0, False)
            rows.append([e.name, spec.label + (" (ref.)" if spec.reference else ""), objective,
                         _cell(to_ref), _cell(to_lb), _cell(row.seconds, 1, False),
                         _ran(row)])  # fmt: skip
    return rows


def _table(header: Sequence[str], rows: list[list[str]], align: str, empty: str) -> str:
    """The Markdown table, or ``empty`` when there is no row."""
    return markdown_table(header, rows, align=align) if rows else empty


def to_markdown(table: Table, title: str) -> str:
    """The whole file: title, provenance, the target view, the (family, size) means, the
    instances and every run on every instance."""
    target = ["run", "instances", "mean gap to reference %", "max gap %",
              f"instances above {TARGET_MAX:g}%"]  # fmt: skip
    summary = ["family", "N", "run", "instances", "mean objective", "mean gap to reference %",
               "max gap to reference %", "mean gap to bound %", "mean seconds"]  # fmt: skip
    instances = ["instance", "N", "D", "lower bound", "reference", "from",
                 "reference gap to bound %"]  # fmt: skip
    runs = ["instance", "run", "objective", "gap to reference %", "gap to bound %", "seconds",
            "ran"]  # fmt: skip
    parts = [
        f"# {title}", "", *table.lines, "",
        f"## Target view: {', '.join(map(str, TARGET_SIZES))} customers, every family", "",
        f"The issue's target for `solve --time 60`: every instance within {TARGET_MAX:g}% of "
        f"its reference, the mean within {TARGET_MEAN:g}%.", "",
        _table(target, target_rows(table), "lrrrr", "No evaluation result at these sizes yet."),
        "", "## Per family and size", "",
        _table(summary, summary_rows(table), "lrlrrrrrr", "No run yet."),
        "", "## Instances", "",
        "The reference is the best of the reference runs; the bound is the lower bound of "
        "`benchmarks/hard/bound.py`.", "",
        _table(instances, instance_rows(table), "lrrrrlr", "No instance."),
        "", "## Every run", "",
        _table(runs, run_rows(table), "llrrrrl", "No run yet."),
    ]  # fmt: skip
    return "\n".join(parts) + "\n"
