"""Summaries of evaluation results: per-method rows, paired comparisons, Markdown / CSV output.

The results of an evaluation (e.g. generated instances or the 30 Prins instances) are a list of
:class:`~clrp_rl4co.evaluation.records.InstanceResult`, one per (method, instance); ``method``
is whatever names the method here (a key, or a display label the caller substituted).
Slow methods may have run on a subset of the instances only, so each row reports its quantities
twice: over the method's own instances, and over the *common subset* (the instances on which
every listed method ran), where rows are comparable.

Conventions:

* Costs are in the instance's units (opening + vehicle + routing cost) and must be positive.
* A record *failed* when the method found no valid solution: ``cost`` is not finite (``inf``)
  or ``valid`` is False. A failed record counts in ``instances`` and ``seconds``, makes the mean
  objective ``nan`` and is left out of every gap mean (the row's ``failures`` says how many).
* ``best_i`` of instance ``i`` is the lowest non-failed cost over *all* methods in the results
  that ran on ``i`` (also methods not listed as rows), and the gap of a method on ``i`` is
  ``100 * (cost_i - best_i) / best_i`` (percent). The row's gap is the mean of these per-instance
  gaps, which is not the gap of the mean cost.
* 95% confidence intervals are half-widths ``t(0.975, n - 1) * sd / sqrt(n)`` with the sample
  standard deviation ``sd``; ``nan`` when fewer than two values.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..reporting.markdown import markdown_table
from .records import InstanceResult

#: Two-sided confidence level of the ``ci95`` fields.
CONFIDENCE = 0.95


# --------------------------------------------------------------------------- Student's t
def t_quantile(p: float, dof: int) -> float:
    """The ``p``-quantile of Student's t distribution with ``dof`` degrees of freedom.

    ``scipy.stats.t.ppf``; for example ``t_quantile(0.975, 9)`` is 2.2622 (the 95% two-sided
    value for 10 samples).

    Args:
        p: probability, in (0, 1).
        dof: degrees of freedom, a positive integer.
    """
    from scipy import stats  # imported here: scipy.stats takes a while to import

    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile: p must be in (0, 1), got {p}")
    if dof < 1 or int(dof) != dof:
        raise ValueError(f"t_quantile: dof must be a positive integer, got {dof}")
    return float(stats.t.ppf(p, int(dof)))


def mean_ci95(values: Iterable[float]) -> tuple[float, float]:
    """Mean of ``values`` and the half-width of its 95% t confidence interval.

    Returns ``(nan, nan)`` for no values and ``(mean, nan)`` for a single value.
    """
    values = list(values)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = math.fsum(values) / n
    if n == 1:
        return mean, math.nan
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, t_quantile(0.5 + CONFIDENCE / 2, n - 1) * sd / math.sqrt(n)


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return math.fsum(values) / len(values) if values else math.nan


# --------------------------------------------------------------------------- summary rows
@dataclass
class MethodSummary:
    """One method's row of an evaluation table (see the module doc for the conventions).

    Attributes:
        method: the method's label.
        instances: number of instances the method ran on.
        valid: number of its records with a valid solution.
        failures: number of its failed records (no valid solution, cost ``inf``).
        objective: mean cost over its instances (instance units); ``nan`` if any failed.
        ci95: half-width of the 95% confidence interval of ``objective`` (instance units).
        gap: mean per-instance gap to the best cost over all methods (percent), failures left
            out.
        gap_ci95: half-width of the 95% confidence interval of ``gap`` (percentage points).
        subset_instances: size of the common subset (instances every listed method ran on).
        subset_failures: number of failed records on the common subset.
        subset_objective: mean cost on the common subset; ``nan`` if any failed or it is empty.
        subset_gap: mean per-instance gap on the common subset (percent), failures left out.
        seconds: mean wall-clock seconds per instance over its instances.
        optimal: number of its records proven optimal.
        ref_gap: mean gap to the reference values (percent) over its non-failed instances that
            have one; ``nan`` without reference values.
        ref_instances: number of instances that entered ``ref_gap``.
    """

    method: str
    instances: int
    valid: int
    failures: int
    objective: float
    ci95: float
    gap: float
    gap_ci95: float
    subset_instances: int
    subset_failures: int
    subset_objective: float
    subset_gap: float
    seconds: float
    optimal: int
    ref_gap: float = math.nan
    ref_instances: int = 0


def index_results(results: Iterable[InstanceResult]) -> dict[str, dict[int, InstanceResult]]:
    """Records by method (first-appearance order) and instance.

    Identical repeated records are merged; raises ``ValueError`` naming the method and instance
    when a method has two different records for one instance.
    """
    by_method: dict[str, dict[int, InstanceResult]] = {}
    for r in results:
        rows = by_method.setdefault(r.method, {})
        previous = rows.get(r.instance)
        if previous is not None and previous != r:
            raise ValueError(
                f"method {r.method!r} has two different records for instance {r.instance} "
                f"({previous.name!r}: cost {previous.cost}, {r.name!r}: cost {r.cost})"
            )
        rows[r.instance] = r
    return by_method


def best_costs(by_method: dict[str, dict[int, InstanceResult]]) -> dict[int, float]:
    """Lowest non-failed cost of each instance over all methods; ``inf`` if all failed."""
    best: dict[int, float] = {}
    for rows in by_method.values():
        for i, r in rows.items():
            cost = math.inf if r.failed else r.cost
            best[i] = min(best.get(i, math.inf), cost)
    return best


def _gap(cost: float, reference: float, what: str) -> float:
    """Percent gap of ``cost`` to a positive ``reference``."""
    if not reference > 0:
        raise ValueError(f"gap needs a positive reference cost, got {reference} ({what})")
    return 100.0 * (cost - reference) / reference


def summarize(
    results: list[InstanceResult],
    methods: list[str] | None = None,
    reference: dict[int, float] | None = None,
) -> list[MethodSummary]:
    """One :class:`MethodSummary` per method of an evaluation table.

    Args:
        results: every record of the table (all methods, one per method and instance).
        methods: the rows, in order (default: every method, in first-appearance order). The
            common subset is taken over these methods; the per-instance best over all methods
            in ``results``.
        reference: instance -> reference cost (e.g. best-known values, instance units); fills
            ``ref_gap``.

    Raises:
        ValueError: a method has two different records for one instance, a listed method has
            no record, or a gap reference cost is not positive.
    """
    by_method = index_results(results)
    if methods is None:
        methods = list(by_method)
    missing = [m for m in methods if m not in by_method]
    if missing:
        raise ValueError(f"no results for method(s) {missing}; present: {list(by_method)}")
    if len(set(methods)) != len(methods):
        raise ValueError(f"methods listed twice: {methods}")
    best = best_costs(by_method)
    subset: set[int] = set.intersection(*(set(by_method[m]) for m in methods)) if methods else set()

    summaries = []
    for method in methods:
        rows = by_method[method]
        ok = {i: r for i, r in rows.items() if not r.failed}
        gaps = {i: _gap(r.cost, best[i], f"instance {i}") for i, r in ok.items()}
        failures = len(rows) - len(ok)
        objective, ci95 = mean_ci95(r.cost for r in rows.values())
        if failures:
            objective, ci95 = math.nan, math.nan
        gap, gap_ci95 = mean_ci95(gaps.values())
        subset_failures = sum(1 for i in subset if i not in ok)
        subset_objective = _mean(rows[i].cost for i in subset) if not subset_failures else math.nan
        ref_gap, ref_instances = math.nan, 0
        if reference is not None:
            ref_gaps = [
                _gap(r.cost, reference[i], f"reference of instance {i}")
                for i, r in ok.items()
                if i in reference
            ]
            ref_gap, ref_instances = _mean(ref_gaps), len(ref_gaps)
        summaries.append(
            MethodSummary(
                method=method,
                instances=len(rows),
                valid=sum(1 for r in rows.values() if r.valid),
                failures=failures,
                objective=objective,
                ci95=ci95,
                gap=gap,
                gap_ci95=gap_ci95,
                subset_instances=len(subset),
                subset_failures=subset_failures,
                subset_objective=subset_objective,
                subset_gap=_mean(gaps[i] for i in subset if i in gaps),
                seconds=_mean(r.seconds for r in rows.values()),
                optimal=sum(1 for r in rows.values() if r.optimal),
                ref_gap=ref_gap,
                ref_instances=ref_instances,
            )
        )
    return summaries


def paired(results: list[InstanceResult], first: str, second: str) -> dict | None:
    """Paired comparison of two methods on the instances both solved (None when there are
    none): ``n``, ``mean_diff`` (mean of ``first - second``, instance units) with its 95% CI
    half-width ``ci95``, and ``wins`` / ``ties`` / ``losses`` of ``first`` (lower / equal /
    higher cost, up to 1e-9)."""
    a = {r.instance: r.cost for r in results if r.method == first and not r.failed}
    b = {r.instance: r.cost for r in results if r.method == second and not r.failed}
    common = sorted(set(a) & set(b))
    if not common:
        return None
    diffs = [a[i] - b[i] for i in common]
    mean, ci = mean_ci95(diffs)
    tol = 1e-9
    return {
        "n": len(common),
        "mean_diff": mean,
        "ci95": ci,
        "wins": sum(d < -tol for d in diffs),
        "ties": sum(abs(d) <= tol for d in diffs),
        "losses": sum(d > tol for d in diffs),
    }


# --------------------------------------------------------------------------- text output
_MISSING = "n/a"


def _format_objective(value: float, scale: float | None = None) -> str:
    """4 decimals below 1000 (judged on ``scale``, default ``value``), else 1 decimal."""
    if not math.isfinite(value):
        return _MISSING
    scale = value if scale is None else scale
    return f"{value:.4f}" if abs(scale) < 1000 else f"{value:.1f}"


def _format_gap(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else _MISSING


def _format_significant(value: float, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant digits, without an exponent."""
    if not math.isfinite(value):
        return _MISSING
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = digits - 1 - magnitude
    rounded = round(value, decimals)
    return f"{rounded:.{max(decimals, 0)}f}"


def _with_ci(value: str, ci: float, formatted_ci: str) -> str:
    return value if value == _MISSING or not math.isfinite(ci) else f"{value} ± {formatted_ci}"


def _objective_cell(s: MethodSummary) -> str:
    if s.failures:
        return f"{_MISSING} ({s.failures} failed)"
    cell = _format_objective(s.objective)
    return _with_ci(cell, s.ci95, _format_objective(s.ci95, scale=s.objective))


def _subset_objective_cell(s: MethodSummary) -> str:
    if s.subset_failures:
        return f"{_MISSING} ({s.subset_failures} failed)"
    return _format_objective(s.subset_objective)


#: Markdown columns: key -> (header, cell of a row). ``{ref}`` is the reference label.
_COLUMNS: dict[str, tuple[str, Any]] = {
    "method": ("method", lambda s: s.method.replace("|", "\\|")),
    "instances": ("n", lambda s: str(s.instances)),
    "valid": ("valid", lambda s: str(s.valid)),
    "failures": ("failed", lambda s: str(s.failures)),
    "objective": ("objective (±95% CI)", _objective_cell),
    "gap": (
        "gap % (±95% CI)",
        lambda s: _with_ci(_format_gap(s.gap), s.gap_ci95, _format_gap(s.gap_ci95)),
    ),
    "subset_instances": ("common subset n", lambda s: str(s.subset_instances)),
    "subset_objective": ("objective on subset", _subset_objective_cell),
    "subset_gap": ("gap % on subset", lambda s: _format_gap(s.subset_gap)),
    "seconds": ("time / inst (s)", lambda s: _format_significant(s.seconds)),
    "optimal": ("optimal", lambda s: str(s.optimal)),
    "ref_gap": ("gap to {ref} %", lambda s: _format_gap(s.ref_gap)),
}

#: Default Markdown columns (``failures`` is added when a row has failures, ``ref_gap`` when a
#: row has a reference gap).
DEFAULT_COLUMNS = [
    "method",
    "instances",
    "objective",
    "gap",
    "subset_instances",
    "subset_objective",
    "subset_gap",
    "seconds",
    "optimal",
]


def to_markdown(
    summaries: list[MethodSummary],
    title: str | None = None,
    columns: list[str] | None = None,
    reference_label: str = "BKS",
) -> str:
    """A Markdown table of the rows ``summaries`` (from :func:`summarize`).

    Objectives (instance units) get 4 decimals below 1000, else 1; gaps (percent) 2 decimals;
    times (seconds per instance) 3 significant digits; ``n/a`` marks missing values.

    Args:
        summaries: the rows, in order.
        title: a ``###`` heading above the table.
        columns: column keys among ``method, instances, valid, failures, objective, gap,
            subset_instances, subset_objective, subset_gap, seconds, optimal, ref_gap``
            (default :data:`DEFAULT_COLUMNS`, plus ``failures`` and ``ref_gap`` when needed).
        reference_label: name of the reference values in the ``ref_gap`` header.
    """
    if columns is None:
        columns = list(DEFAULT_COLUMNS)
        if any(s.failures for s in summaries):
            columns.insert(columns.index("objective"), "failures")
        if any(math.isfinite(s.ref_gap) for s in summaries):
            columns.insert(columns.index("seconds"), "ref_gap")
    unknown = [c for c in columns if c not in _COLUMNS]
    if unknown:
        raise ValueError(f"unknown column(s) {unknown}; known: {list(_COLUMNS)}")
    headers = [_COLUMNS[c][0].format(ref=reference_label) for c in columns]
    lines = []
    if title:
        lines += [f"### {title}", ""]
    align = ["l" if c == "method" else "r" for c in columns]
    rows = [[_COLUMNS[c][1](s) for c in columns] for s in summaries]
    lines.append(markdown_table(headers, rows, align))
    return "\n".join(lines) + "\n"


def to_csv(
    summaries: list[MethodSummary],
    path: str | Path,
    extra: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Write every field of ``summaries`` to a CSV file at full precision; returns the path.

    Floats are written with :func:`repr` (``float()`` reads them back exactly, ``nan``/``inf``
    included). ``extra`` adds columns after the fields: ``{method: {column: value}}`` (e.g. a
    method's identity); a column missing for a method is left blank.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [f.name for f in fields(MethodSummary)]
    extra = extra or {}
    added: list[str] = []
    for columns in extra.values():
        added += [c for c in columns if c not in added and c not in names]
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names + added)
        for s in summaries:
            row = list(asdict(s).values()) + [extra.get(s.method, {}).get(c, "") for c in added]
            writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                             for v in row])  # fmt: skip
    return path
