"""Best-known objective values of the 30 Prins instances (ceil(100 d) convention).

Two columns ship with the package (``prins_bks.csv``): ``drlhq`` (the values the DRLHQ paper
compares with: older literature values) and ``current`` (the best known today). Gaps to both
should be reported.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePath


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
