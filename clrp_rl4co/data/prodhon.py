"""Reader and writer for the Prodhon CLRP file format (Prins, Tuzun-Burke and Barreto sets).

The file is a stream of whitespace-separated tokens (see ``benchmarks/README.md`` of the shared
data): ``n``, ``m``, ``m`` depot ``x y``, ``n`` customer ``x y``, vehicle capacity, ``m`` depot
capacities, ``n`` demands, ``m`` opening costs, the fixed cost per route, and the cost-type flag
(0: integer arc costs ``ceil(100 d)``; 1: real Euclidean distances).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np

from .instance import FLOAT32_RANGE, CLRPInstance, outside_float32, oversized_demand

#: Environment variable naming the folder that holds ``prins/`` and ``bks/``.
BENCHMARKS_ENV_VAR = "CLRP_BENCHMARKS_DIR"


#: Line breaks of a Prodhon file (the public files use CRLF; LF and CR alone are read alike).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: What a value of the file must be: any finite number, or one that is also ``>= 0`` or ``> 0``.
_RULES = {"finite": lambda v: True, "non-negative": lambda v: v >= 0, "positive": lambda v: v > 0}


def _number(tok: str) -> float:
    """The number a token spells (``float``'s syntax), NaN if none."""
    try:
        return float(tok)
    except ValueError:
        return math.nan


class _Tokens:
    """The whitespace-separated tokens of one file, read in order, each with its 1-based line."""

    def __init__(self, text: str, path: Path):
        self.path = path
        self.items: list[tuple[str, int]] = []
        for lineno, line in enumerate(_LINE_BREAK.split(text), start=1):
            self.items.extend((tok, lineno) for tok in line.split())
        self.pos = 0

    def _next(self, what: str) -> tuple[str, int]:
        if self.pos >= len(self.items):
            if not self.items:
                raise ValueError(f"{self.path}:1: file ends before {what} (no values in it)")
            tok, lineno = self.items[-1]  # the line where the data runs out
            raise ValueError(
                f"{self.path}:{lineno}: file ends before {what} (the data ends on line "
                f"{lineno} with {tok!r}; truncated file?)"
            )
        self.pos += 1
        return self.items[self.pos - 1]

    def _error(self, what: str, rule: str, tok: str, lineno: int) -> ValueError:
        return ValueError(f"{self.path}:{lineno}: {what} must be {rule}, got {tok!r}")

    def number(self, what: str, rule: str = "finite") -> tuple[float, int]:
        """The next token as a number obeying ``rule`` (a key of :data:`_RULES`) and its line.

        Raises:
            ValueError: the file ends, or the token is not such a number (the message names
                the file, the line, ``what`` and the token).
        """
        tok, lineno = self._next(what)
        value = _number(tok)
        if not math.isfinite(value):
            raise self._error(what, "a finite number", tok, lineno)
        if outside_float32(value):
            raise self._error(what, f"0 or of magnitude {FLOAT32_RANGE}", tok, lineno)
        if not _RULES[rule](value):
            raise self._error(what, rule, tok, lineno)
        return value, lineno

    def flag(self, what: str) -> tuple[bool, int]:
        """The next token as a flag, exactly ``0`` or ``1`` (the format's only values)."""
        tok, lineno = self._next(what)
        if tok not in ("0", "1"):
            raise self._error(what, "0 or 1", tok, lineno)
        return tok == "1", lineno

    def count(self, what: str) -> tuple[int, int]:
        """The next token as a positive integer (``20`` and ``20.0`` alike) and its line."""
        tok, lineno = self._next(what)
        value = _number(tok)
        if not (math.isfinite(value) and value >= 1 and value.is_integer()):
            raise self._error(what, "a positive integer", tok, lineno)
        return int(value), lineno


def _format_number(x: float) -> str:
    """A value as the file writes it: integers without a decimal point, others in full."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _lines(values: list[tuple[float, int]]) -> str:
    """``line 7`` or ``lines 7-11``: where a block of values of the file is."""
    first, last = values[0][1], values[-1][1]
    return f"line {first}" if first == last else f"lines {first}-{last}"


def read_prodhon(path: str | Path, name: str | None = None) -> CLRPInstance:
    """Read one instance file in the Prodhon format (the module doc, ``docs/formats.md``).

    Args:
        path: the file.
        name: the instance's name; default: the file's stem (the format has no name field).

    Raises:
        ValueError: the file is malformed (it ends early, has tokens past the cost-type flag,
            a count that is not a positive integer, a value that is not a finite number, a
            cost-type flag other than the token ``0`` or ``1``), a value breaks its rule (a
            negative capacity or cost, a demand or vehicle capacity that is not positive, a
            demand that no route or no depot can hold) or the instance has no solution. The
            message starts with the file and a 1-based line (``path:LINE: ``): the value's,
            or for a file that ends early the line where its data ends (line 1 if it has
            none); then it names the field with 1-based customer and depot numbers
            (``customer 3 demand``) and the token or value. A rule on the whole instance
            names the 1-based lines of the blocks it reads instead (``demands on lines
            16-18``).
        OSError: the file cannot be read.
    """
    path = Path(path)
    tokens = _Tokens(path.read_text(errors="replace"), path)
    n, _ = tokens.count("number of customers")
    m, _ = tokens.count("number of depots")
    depot_xy = [[tokens.number(f"depot {i + 1} {ax}") for ax in "xy"] for i in range(m)]
    customer_xy = [[tokens.number(f"customer {j + 1} {ax}") for ax in "xy"] for j in range(n)]
    q, q_line = tokens.number("vehicle capacity", "positive")
    capacity = [tokens.number(f"depot {i + 1} capacity", "non-negative") for i in range(m)]
    demand = [tokens.number(f"customer {j + 1} demand", "positive") for j in range(n)]
    opening = [tokens.number(f"depot {i + 1} opening cost", "non-negative") for i in range(m)]
    fixed, _ = tokens.number("route fixed cost", "non-negative")
    real_costs, _ = tokens.flag("cost-type flag")
    if tokens.pos != len(tokens.items):
        tok, lineno = tokens.items[tokens.pos]
        raise ValueError(
            f"{path}:{lineno}: unexpected token {tok!r} after the cost-type flag "
            f"({len(tokens.items) - tokens.pos} extra tokens)"
        )
    demand_values = np.array([v for v, _ in demand])
    capacity_values = np.array([v for v, _ in capacity])
    oversized = oversized_demand(demand_values, q, capacity_values)
    if oversized is not None:
        j, which = oversized
        if which == "vehicle":
            limit = f"the vehicle capacity {_format_number(q)} (line {q_line})"
        else:
            i = int(np.argmax(capacity_values))
            largest, line = capacity[i]
            limit = (
                f"every depot capacity (the largest: depot {i + 1}, {_format_number(largest)}, "
                f"line {line})"
            )
        value, line = demand[j]
        raise ValueError(
            f"{path}:{line}: customer {j + 1} demand {_format_number(value)} exceeds {limit}"
        )
    label = name if name is not None else path.stem
    try:
        return CLRPInstance(
            depot_locs=np.array([[v for v, _ in xy] for xy in depot_xy]),
            customer_locs=np.array([[v for v, _ in xy] for xy in customer_xy]),
            depot_capacity=capacity_values,
            opening_cost=np.array([v for v, _ in opening]),
            demand=demand_values,
            vehicle_capacity=q,
            vehicle_fixed_cost=fixed,
            rounded_costs=not real_costs,
            name=label,
        )
    except ValueError as exc:  # a rule on the whole instance: the env's message, file terms
        detail = str(exc).removeprefix(f"{label or 'CLRPInstance'}: ").removeprefix("instance 0: ")
        raise ValueError(
            f"{path}: {detail} (demands on {_lines(demand)}, depot capacities on "
            f"{_lines(capacity)})"
        ) from None


def write_prodhon(instance: CLRPInstance, path: str | Path) -> None:
    """Write ``instance`` in the Prodhon format (values printed with ``repr`` precision)."""
    fmt = _format_number
    lines = [fmt(instance.num_customers), fmt(instance.num_depots), ""]
    lines += [f"{fmt(x)}\t{fmt(y)}" for x, y in instance.depot_locs] + [""]
    lines += [f"{fmt(x)}\t{fmt(y)}" for x, y in instance.customer_locs] + [""]
    lines += [fmt(instance.vehicle_capacity), ""]
    lines += [fmt(c) for c in instance.depot_capacity] + [""]
    lines += [fmt(d) for d in instance.demand] + [""]
    lines += [fmt(o) for o in instance.opening_cost] + [""]
    lines += [
        fmt(instance.vehicle_fixed_cost),
        "",
        "0" if instance.rounded_costs else "1",
    ]
    Path(path).write_text("\n".join(lines) + "\n")


def benchmarks_dir(required: bool = True) -> Path | None:
    """The folder named by ``$CLRP_BENCHMARKS_DIR`` (holding ``prins/``), or None if unset."""
    value = os.environ.get(BENCHMARKS_ENV_VAR)
    if not value:
        if required:
            raise FileNotFoundError(
                f"set {BENCHMARKS_ENV_VAR} to the folder that holds prins/ (see README.md)"
            )
        return None
    path = Path(value)
    if not (path / "prins").is_dir():
        raise FileNotFoundError(f"{BENCHMARKS_ENV_VAR}={value}: no prins/ folder there")
    return path


#: A Prins file name: ``coord<customers>-<depots>-<index>[b].dat`` (e.g. ``coord100-10-2b``).
_PRINS_NAME = re.compile(r"coord(\d+)-(\d+)-")


def prins_files(root: str | Path | None = None) -> list[Path]:
    """The ``coord*.dat`` instance files of a folder (the 30 Prins instances by default).

    Files named as in the Prins set (``coord<customers>-<depots>-...``) come first, sorted by
    (customers, depots, name); any other Prodhon-layout file (e.g. ``coordP111112.dat`` of the
    Tuzun-Burke set) follows, sorted by name.
    """
    root = Path(root) if root is not None else benchmarks_dir()
    folder = root / "prins" if (root / "prins").is_dir() else root
    files = list(folder.glob("coord*.dat"))
    if not files:
        raise FileNotFoundError(f"no coord*.dat files in {folder}")

    def key(p: Path):
        match = _PRINS_NAME.match(p.stem)
        if match is None:
            return (1, 0, 0, p.stem)
        return (0, int(match.group(1)), int(match.group(2)), p.stem)

    return sorted(files, key=key)
