"""Evaluation tables: published test sets, table rows, resumable runs, reports and plots."""

from .datasets import TEST_SEED, TEST_SET_SIZES, load_test_set
from .methods import Method, TableData, run_method
from .records import InstanceResult, ResultCache

__all__ = [
    "TEST_SEED",
    "TEST_SET_SIZES",
    "InstanceResult",
    "Method",
    "ResultCache",
    "TableData",
    "load_test_set",
    "run_method",
]
