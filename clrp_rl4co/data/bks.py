"""Best-known objective values of the 30 Prins instances (ceil(100 d) convention).

:class:`BestKnown` adds a user's table (``file,bks`` CSV) in front of it.

Two columns ship with the package (``prins_bks.csv``): ``drlhq`` (the values the DRLHQ paper
compares with: older literature values) and ``current`` (the best known today). Gaps to both
should be reported.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .instance import CLRPInstance


@dataclass(frozen=True)
class PrinsBKS:
    instance: str  # paper name, e.g. "20-5-1a"
    file: str  # file name, e.g. "coord20-5-1.dat"
    num_customers: int
    num_depots: int
    vehicle_capacity: int
    drlhq: int
    current: int


def prins_bks() -> dict[str, PrinsBKS]:
    """Best-known values keyed by file stem (``"coord20-5-1"``)."""
    text = resources.files("clrp_rl4co.data").joinpath("prins_bks.csv").read_text()
    out = {}
    for row in csv.DictReader(text.splitlines()):
        entry = PrinsBKS(
            instance=row["instance"],
            file=row["file"],
            num_customers=int(row["n"]),
            num_depots=int(row["m"]),
            vehicle_capacity=int(row["vehicle_capacity"]),
            drlhq=int(row["bks_drlhq_table"]),
            current=int(row["bks_current"]),
        )
        out[PurePath(entry.file).stem] = entry
    return out


@dataclass(frozen=True)
class BestKnown:
    """Best-known objective values: a ``--bks`` CSV (columns ``file,bks``; ``file`` is a file
    name, a stem or an instance label such as ``data.npz[3]``), then the package's Prins table
    (column ``current``), used only when the file's sizes match the table's."""

    table: dict[str, float]

    @classmethod
    def read(cls, path: Path | None) -> BestKnown:
        """The values of ``path`` (None: the Prins table only).

        Raises:
            ValueError: the CSV lacks a column, holds a value that is not a positive number or
                names a file twice (the message names the file, the line and the value).
        """
        table: dict[str, float] = {}
        if path is None:
            return cls(table)
        with Path(path).open(newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("file", "bks") if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing} (need file,bks)")
            for lineno, row in enumerate(reader, start=2):
                try:
                    value = float(row["bks"])
                except (TypeError, ValueError):
                    value = math.nan
                if not (math.isfinite(value) and value > 0):
                    raise ValueError(
                        f"{path}:{lineno}: bks must be a positive number, got {row['bks']!r}"
                    )
                if row["file"] in table:
                    raise ValueError(f"{path}:{lineno}: {row['file']} is named twice")
                table[row["file"]] = value
        return cls(table)

    def lookup(self, source: Path, label: str, instance: CLRPInstance | None) -> float | None:
        """The best-known value of ``instance`` read from ``source`` (shown as ``label``):
        the CSV's by label, file name or stem, else the Prins table's ``current`` value for a
        file of the same stem, sizes and cost convention (ceil(100 d); never for a dataset
        row), else None."""
        for key in (label, source.name, source.stem):
            if key in self.table:
                return self.table[key]
        entry = prins_bks().get(source.stem)
        if (
            entry is not None
            and instance is not None
            and source.suffix.lower() != ".npz"
            and instance.num_customers == entry.num_customers
            and instance.num_depots == entry.num_depots
            and instance.rounded_costs
        ):
            return float(entry.current)
        return None
