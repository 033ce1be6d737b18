"""Evaluate policies and solvers on a dataset: methods, per-instance records with a resumable
cache, and reports (mean with 95% CI, gaps, paired comparisons, Markdown / CSV)."""

from .methods import EvalData, Method, run_method, validated
from .records import InstanceResult, ResultCache, policy_fingerprint
from .report import MethodSummary, mean_ci95, paired, summarize, to_csv, to_markdown

__all__ = [
    "EvalData",
    "InstanceResult",
    "Method",
    "MethodSummary",
    "ResultCache",
    "mean_ci95",
    "paired",
    "policy_fingerprint",
    "run_method",
    "summarize",
    "to_csv",
    "to_markdown",
    "validated",
]
