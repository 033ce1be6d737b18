"""Rooms of one job each: outside ``envs/`` (RL4CO's files, kept in RL4CO's layout) no package
module is over 400 lines, no function body over 60 lines (its docstring not counted), and no
closure shares state by ``nonlocal``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clrp_rl4co"
MAX_MODULE_LINES = 400
MAX_BODY_LINES = 60


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "envs" not in p.relative_to(PACKAGE).parts)


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from a function's first statement after its docstring to its last."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str):
            body = body[1:]
    return 0 if not body else body[-1].end_lineno - body[0].lineno + 1


def test_the_measure_counts_statements_not_the_docstring():
    tree = ast.parse('def f():\n    """doc\n    more"""\n    a = 1\n\n    return a\n')
    assert body_lines(tree.body[0]) == 3
    assert body_lines(ast.parse("def g():\n    '''only a docstring'''\n").body[0]) == 0


def test_no_module_is_too_long():
    long = {}
    for path in _modules():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            long[str(path.relative_to(PACKAGE))] = lines
    assert long == {}


def test_no_function_body_is_too_long_and_no_closure_shares_state():
    long, shared = {}, []
    for path in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if body_lines(node) > MAX_BODY_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = body_lines(node)
            if isinstance(node, ast.Nonlocal):
                shared.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert long == {} and shared == []
