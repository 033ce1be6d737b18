"""The hybrid benchmark's summary: means, paired differences with their 95% t interval, the
paper's DRLHQ-SGBS figure corrected for the subset, gaps to best-known values, and the run's
provenance, as Markdown (:func:`clrp_rl4co.reporting.markdown.markdown_table`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from clrp_rl4co.evaluation import InstanceResult, mean_ci95, paired
from clrp_rl4co.reporting.markdown import markdown_table

#: The paper's row that the benchmark's targets compare with.
PAPER_ROW = "DRLHQ SGBS"


def corrected_paper_figure(paper: float, x8_subset: Sequence[float], x8_all: Sequence[float]):
    """The paper's mean over its whole test set scaled to a subset of it: ``paper x (our x8
    mean on the subset / our x8 mean on the whole set)`` (the subset's relative hardness,
    measured by our x8, carried over to the paper's method)."""
    if not x8_subset or not x8_all:
        raise ValueError("x8: need our x8 on the subset and on the whole set")
    return paper * (math.fsum(x8_subset) / len(x8_subset)) / (math.fsum(x8_all) / len(x8_all))


def paired_difference(first: dict[int, float], second: dict[int, float]) -> dict | None:
    """``first`` minus ``second`` on the instances both have: ``n``, ``mean_diff``, ``ci95``
    (half-width of the 95% t interval), ``wins`` / ``ties`` / ``losses`` of ``first``."""

    def results(name: str, costs: dict[int, float]) -> list[InstanceResult]:
        return [InstanceResult(name, i, str(i), c, 0.0, True) for i, c in costs.items()]

    return paired(results("first", first) + results("second", second), "first", "second")


def mean_gap(costs: dict[int, float], names: dict[int, str], bks: dict[str, float]) -> float:
    """Mean gap in % of ``costs`` to the best-known values ``bks`` (by instance name)."""
    gaps = [100.0 * (c - bks[names[i]]) / bks[names[i]] for i, c in costs.items()]
    return math.fsum(gaps) / len(gaps) if gaps else math.nan


@dataclass
class Report:
    """What one run measured, ready to be written.

    Attributes:
        title: the run in words (set, instances, time per instance, model, seed).
        methods: the time-limited methods, hybrid first.
        costs: objective by instance index, per method and for ``x8``, on the instances every
            time-limited method finished.
        seconds: mean wall seconds per instance, per method.
        names: instance names by index.
        bks: best-known values by instance name (Prins), else empty.
        paper: ``(figure, seconds)`` of the paper's DRLHQ-SGBS on the set (paper sets), else None.
        x8_all: our x8 on the whole set (or its first ``--x8-all``) and the set's size.
        loads: the load averages at each instance's start.
        lines: provenance lines (machine, commit, command).
    """

    title: str
    methods: Sequence[str]
    costs: dict[str, dict[int, float]]
    seconds: dict[str, float]
    names: dict[int, str]
    bks: dict[str, float] = field(default_factory=dict)
    paper: tuple[float, float] | None = None
    x8_all: tuple[list[float], int] | None = None
    loads: list[float] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def diff_cells(stats: dict | None) -> list[str]:
    """The paired-difference cells of a summary row: instances, mean ± 95% CI half-width
    [interval], lower, equal, higher (of :func:`paired_difference`'s ``stats``; None: none)."""
    if stats is None:
        return ["0", "", "", "", ""]
    ci = "n/a" if math.isnan(stats["ci95"]) else f"{stats['ci95']:.4f}"
    low, high = stats["mean_diff"] - stats["ci95"], stats["mean_diff"] + stats["ci95"]
    interval = "" if math.isnan(stats["ci95"]) else f" [{low:+.4f}, {high:+.4f}]"
    return [str(stats["n"]), f"{stats['mean_diff']:+.4f} ± {ci}{interval}",
            str(stats["wins"]), str(stats["ties"]), str(stats["losses"])]  # fmt: skip


def to_markdown(report: Report) -> str:
    """The summary as Markdown: the means, the paired differences, the paper's figure
    corrected for the subset (paper sets), the load average and the provenance lines."""
    n = len(report.costs.get(report.methods[0], {}))
    parts = [f"# {report.title}", ""]
    if n == 0:
        return "\n".join([*parts, "No instance finished yet.", "", *report.lines]) + "\n"
    header = ["method", "instances", "mean objective ± 95% CI", "mean seconds"]
    if report.bks:
        header.insert(3, "mean gap to BKS %")
    rows = []
    for method in [*report.methods, "x8"]:
        costs = report.costs.get(method, {})
        if not costs:
            continue
        mean, ci = mean_ci95(costs.values())
        row = [method + (" (untimed)" if method == "x8" else ""), str(len(costs)),
               f"{mean:.4f} ± {ci:.4f}" if not math.isnan(ci) else f"{mean:.4f}",
               f"{report.seconds.get(method, math.nan):.2f}"]  # fmt: skip
        if report.bks:
            row.insert(3, f"{mean_gap(costs, report.names, report.bks):.2f}")
        rows.append(row)
    paper_lines = []
    if report.paper is not None and report.x8_all is not None and report.costs.get("x8"):
        figure, paper_seconds = report.paper
        x8_all, total = report.x8_all
        corrected = corrected_paper_figure(figure, list(report.costs["x8"].values()), x8_all)
        row = [f"paper {PAPER_ROW}, corrected for the subset", str(n), f"{corrected:.4f}",
               f"{paper_seconds:.2f} (RTX 4090)"]  # fmt: skip
        rows.append(row + ([""] if report.bks else []))
        x8_sub = math.fsum(report.costs["x8"].values()) / n
        x8_mean = math.fsum(x8_all) / len(x8_all)
        which = "all" if len(x8_all) == total else f"the first {len(x8_all)}"
        hybrid = math.fsum(report.costs[report.methods[0]].values()) / n
        paper_lines = [
            f"Paper {PAPER_ROW} {figure:.4f} (whole test set of {total}, {paper_seconds:.2f} s "
            f"per instance) x (our x8 on these {n} instances {x8_sub:.4f} / our x8 on {which} of "
            f"the {total} instances {x8_mean:.4f}) = {corrected:.4f}; {report.methods[0]} minus "
            f"it: {hybrid - corrected:+.4f} ({100 * (hybrid / corrected - 1):+.2f}%).",
            "",
        ]
    parts += [markdown_table(header, rows, align="lrrr" + ("r" if report.bks else "")), ""]
    parts += paper_lines
    pairs = [(m, "pyvrp") for m in report.methods if m != "pyvrp"]
    pairs += [(report.methods[0], m) for m in report.methods[1:] if m != "pyvrp"]
    if pairs:
        head = ["paired difference", "instances", "mean ± 95% CI half-width [interval]",
                "lower", "equal", "higher"]  # fmt: skip
        table = [
            [f"{a} minus {b}", *diff_cells(paired_difference(report.costs[a], report.costs[b]))]
            for a, b in pairs
        ]
        parts += [markdown_table(head, table, align="lrrrrr"), ""]
    if report.loads:
        low, high = min(report.loads), max(report.loads)
        mean = math.fsum(report.loads) / len(report.loads)
        parts += [f"Load average (1 min) at the instances' starts: min {low:.1f}, mean "
                  f"{mean:.1f}, max {high:.1f}.", ""]  # fmt: skip
    return "\n".join([*parts, *report.lines]) + "\n"
