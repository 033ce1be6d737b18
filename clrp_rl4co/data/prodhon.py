"""Reader and writer for the Prodhon CLRP file format (Prins, Tuzun-Burke and Barreto sets).

The file is a stream of whitespace-separated tokens (see ``benchmarks/README.md`` of the shared
data): ``n``, ``m``, ``m`` depot ``x y``, ``n`` customer ``x y``, vehicle capacity, ``m`` depot
capacities, ``n`` demands, ``m`` opening costs, the fixed cost per route, and the cost-type flag
(0: integer arc costs ``ceil(100 d)``; 1: real Euclidean distances).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from .instance import CLRPInstance

#: Environment variable naming the folder that holds ``prins/`` and ``bks/``.
BENCHMARKS_ENV_VAR = "CLRP_BENCHMARKS_DIR"


class _Tokens:
    def __init__(self, text: str, path: str):
        self.path = path
        self.items: list[tuple[str, int]] = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            self.items.extend((tok, lineno) for tok in line.split())
        self.pos = 0

    def take(self, what: str, kind=float):
        if self.pos >= len(self.items):
            raise ValueError(
                f"{self.path}: file ends before {what} (token {self.pos + 1}; truncated file?)"
            )
        tok, lineno = self.items[self.pos]
        self.pos += 1
        try:
            value = kind(tok)
        except ValueError:
            raise ValueError(
                f"{self.path}:{lineno}: {what} must be {kind.__name__}, got token {tok!r} "
                f"(token {self.pos})"
            ) from None
        return value


def read_prodhon(path: str | Path, name: str | None = None) -> CLRPInstance:
    """Read one instance file; raises ``ValueError`` naming the token and line on bad input."""
    path = Path(path)
    tokens = _Tokens(path.read_text(errors="replace"), str(path))

    def count(what):
        value = tokens.take(what, float)
        if value != int(value) or value < 1:
            raise ValueError(f"{path}: {what} must be a positive integer, got {value}")
        return int(value)

    n = count("number of customers")
    m = count("number of depots")
    depot_locs = [[tokens.take(f"depot {i + 1} {ax}") for ax in "xy"] for i in range(m)]
    customer_locs = [[tokens.take(f"customer {j + 1} {ax}") for ax in "xy"] for j in range(n)]
    q = tokens.take("vehicle capacity")
    capacity = [tokens.take(f"depot {i + 1} capacity") for i in range(m)]
    demand = [tokens.take(f"customer {j + 1} demand") for j in range(n)]
    opening = [tokens.take(f"depot {i + 1} opening cost") for i in range(m)]
    fixed = tokens.take("route fixed cost")
    flag = tokens.take("cost-type flag", float)
    if flag not in (0, 1):
        raise ValueError(f"{path}: cost-type flag must be 0 or 1, got {flag:g}")
    if tokens.pos != len(tokens.items):
        tok, lineno = tokens.items[tokens.pos]
        raise ValueError(
            f"{path}:{lineno}: unexpected token {tok!r} after the cost-type flag "
            f"({len(tokens.items) - tokens.pos} extra tokens)"
        )
    try:
        return CLRPInstance(
            depot_locs=np.array(depot_locs),
            customer_locs=np.array(customer_locs),
            depot_capacity=np.array(capacity),
            opening_cost=np.array(opening),
            demand=np.array(demand),
            vehicle_capacity=q,
            vehicle_fixed_cost=fixed,
            rounded_costs=flag == 0,
            name=name if name is not None else path.stem,
        )
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def write_prodhon(instance: CLRPInstance, path: str | Path) -> None:
    """Write ``instance`` in the Prodhon format (values printed with ``repr`` precision)."""

    def fmt(x):
        x = float(x)
        return str(int(x)) if x.is_integer() else repr(x)

    lines = [fmt(instance.num_customers), fmt(instance.num_depots), ""]
    lines += [f"{fmt(x)}\t{fmt(y)}" for x, y in instance.depot_locs] + [""]
    lines += [f"{fmt(x)}\t{fmt(y)}" for x, y in instance.customer_locs] + [""]
    lines += [fmt(instance.vehicle_capacity), ""]
    lines += [fmt(c) for c in instance.depot_capacity] + [""]
    lines += [fmt(d) for d in instance.demand] + [""]
    lines += [fmt(o) for o in instance.opening_cost] + [""]
    lines += [fmt(instance.vehicle_fixed_cost), "", "0" if instance.rounded_costs else "1"]
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
