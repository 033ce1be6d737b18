"""Reader of the JSON files of Schneider & Löffler's large CLRP set (2019), as published.

One instance per file (the set's ``readme.txt``; ``docs/formats.md``)::

    {
      "name": "100-5-2c", "type": "schneider",
      "vehicle_capacity": 70, "vehicle_costs": 1000,
      "depots": [{"index": 0, "x": 2, "y": 19, "capacity": 700, "costs": 44}],
      "customers": [{"index": 5, "x": 12, "y": 5, "demand": 11}]
    }

``index`` numbers every node, unique among depots and customers together; entries may be
listed in any order. The instance lists depots by ``index``, then customers by ``index`` (the
package's numbering: depots ``0..D-1``, customers ``0..N-1``, each in ascending ``index``). An
arc of Euclidean length ``d`` costs ``ceil(100 d)``; ``costs`` (a depot's opening cost) and
``vehicle_costs`` (per route) are in the same units, so objectives come out in the units of the
set's published best-known values (the Prins convention, ``rounded_costs=True``).

Errors name the file and the 1-based line of the value at fault (``path:LINE: ``), the field
by its JSON path and the value, as :mod:`.json_instance` does: list positions in the path count
from 0 in the file's order, and the message gives the entry's number counting from 1 and its
``index`` where it is known (``customers[3].demand: ... (customer 4, counting from 1, index
8)``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from .instance import CAPACITY_TOLERANCE, CLRPInstance, oversized_demand
from .json_instance import json_number, show_value
from .json_text import JsonScan, read_json_text

#: Fields of each depot and customer entry.
DEPOT_FIELDS = ("capacity", "costs", "index", "x", "y")
CUSTOMER_FIELDS = ("demand", "index", "x", "y")
#: Top-level fields: required, and optional (``name``, ``type``: strings).
REQUIRED = ("customers", "depots", "vehicle_capacity", "vehicle_costs")
OPTIONAL = ("name", "type")
#: Keys that only the project's own JSON format has (:mod:`.json_instance`).
PROJECT_ONLY = frozenset({"vehicle_fixed_cost", "rounding"})
#: Top-level keys that only this set's layout has.
SCHNEIDER_ONLY = frozenset({"vehicle_costs", "type"})


def is_schneider_layout(data: Any) -> bool:
    """Whether a parsed JSON value has this set's layout (a cheap look at its keys, no check).

    True for an object with none of the project format's own keys (``vehicle_fixed_cost``,
    ``rounding``) and one of this set's: ``vehicle_costs`` or ``type`` at the top, or
    ``index`` / ``costs`` in the first entry of ``depots`` or ``customers``. A file of this
    layout with a field missing or wrong is still of it, so its reader names what is wrong.
    """
    if not isinstance(data, dict) or not PROJECT_ONLY.isdisjoint(data):
        return False
    if not SCHNEIDER_ONLY.isdisjoint(data):
        return True
    for key in ("depots", "customers"):
        items = data.get(key)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            if "index" in items[0] or "costs" in items[0]:
                return True
    return False


def _position(key: str, k: int, index: int | None = None) -> str:
    """The note on a list position, as :mod:`.json_instance` words it: ``(customer 4,
    counting from 1, index 8)`` for ``customers[3]``."""
    where = f"{key[:-1]} {k + 1}, counting from 1"
    return f" ({where})" if index is None else f" ({where}, index {index})"


#: The JSON path at the start of an error message: ``customers[3].demand: ...``.
_LEADING_PATH = re.compile(r"^([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?: ")


def _path_of(message: str) -> tuple:
    """The JSON path an error message starts with (``("customers", 3, "demand")``), else
    ``()``."""
    match = _LEADING_PATH.match(message)
    if match is None:
        return ()
    key, k, field = match.groups()
    return tuple(p for p in (key, None if k is None else int(k), field) if p is not None)


def _index(value: Any, where: str) -> int:
    """An entry's ``index``: a non-negative integer (``7`` or ``7.0``)."""
    number = json_number(value, where)
    if not number.is_integer() or number < 0:
        raise ValueError(f"{where}: must be a non-negative integer, got {show_value(value)}")
    return int(number)


def _entries(data: dict, key: str, fields: tuple[str, ...], positive: str) -> list[dict]:
    """The checked entries of the list ``data[key]``: each a dict of ``fields`` as numbers
    (``index`` an int), ``positive`` (``capacity`` / ``demand``) above 0, the rest finite."""
    items = data[key]
    if not isinstance(items, list) or not items:
        raise ValueError(f"{key}: must be a non-empty list, got {show_value(items)}")
    out = []
    for k, item in enumerate(items):
        where = f"{key}[{k}]"
        if not isinstance(item, dict):
            raise ValueError(
                f"{where}: must be an object, got {show_value(item)}{_position(key, k)}"
            )
        index = None
        try:
            if "index" in item:
                index = _index(item["index"], f"{where}.index")
            missing = [f for f in fields if f not in item]
            if missing:
                raise ValueError(f"{where}: missing field(s) {missing} (expected {list(fields)})")
            unknown = sorted(set(item) - set(fields))
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {unknown} (expected {list(fields)})")
            row = {f: json_number(item[f], f"{where}.{f}") for f in fields if f != "index"}
            if row[positive] <= 0:
                raise ValueError(f"{where}.{positive}: must be positive, got {row[positive]:g}")
            if row.get("costs", 0.0) < 0:
                raise ValueError(f"{where}.costs: must be non-negative, got {row['costs']:g}")
        except ValueError as exc:
            raise ValueError(f"{exc}{_position(key, k, index)}") from None
        row["index"] = index
        out.append(row)
    return out


def _vehicle(data: Any) -> tuple[float, float]:
    """The checked top level of a file: an object of :data:`REQUIRED` and :data:`OPTIONAL`
    fields; returns ``(vehicle_capacity, vehicle_costs)``."""
    if not isinstance(data, dict):
        raise ValueError(f"instance: must be a JSON object, got {type(data).__name__}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ValueError(f"instance: missing field(s) {missing} (expected {list(REQUIRED)})")
    unknown = sorted(set(data) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        known = sorted(REQUIRED + OPTIONAL)
        raise ValueError(f"instance: unknown field(s) {unknown} (expected {known})")
    for key in OPTIONAL:
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"{key}: must be a string, got {show_value(data[key])}")
    q = json_number(data["vehicle_capacity"], "vehicle_capacity")
    if q <= 0:
        raise ValueError(f"vehicle_capacity: must be positive, got {q:g}")
    fixed = json_number(data["vehicle_costs"], "vehicle_costs")
    if fixed < 0:
        raise ValueError(f"vehicle_costs: must be non-negative, got {fixed:g}")
    return q, fixed


def _check_unique_indices(depots: list[dict], customers: list[dict]) -> None:
    """Every ``index`` used once among depots and customers."""
    seen: dict[int, str] = {}
    for key, entries in (("depots", depots), ("customers", customers)):
        for k, entry in enumerate(entries):
            where = f"{key}[{k}]"
            if entry["index"] in seen:
                raise ValueError(
                    f"{where}.index: {entry['index']} is also the index of {seen[entry['index']]}"
                    f" (indices must be unique among depots and customers; positions count "
                    f"from 0)"
                )
            seen[entry["index"]] = where


def _check_capacities(depots: list[dict], customers: list[dict], q: float) -> None:
    """Every demand fits a vehicle and some depot; the total demand fits the depots."""
    demand = np.array([c["demand"] for c in customers])
    capacity = np.array([d["capacity"] for d in depots])
    oversized = oversized_demand(demand, q, capacity)
    if oversized is not None:
        j, which = oversized
        if which == "vehicle":
            limit = f"vehicle_capacity {_num(q)}"
        else:
            i = int(np.argmax(capacity))
            limit = (
                f"every depot's capacity (the largest: depots[{i}].capacity "
                f"{_num(capacity[i])}, index {depots[i]['index']})"
            )
        raise ValueError(
            f"customers[{j}].demand: {_num(demand[j])} exceeds {limit}"
            f"{_position('customers', j, customers[j]['index'])}"
        )
    total_demand, total_capacity = math.fsum(demand), math.fsum(capacity)
    if total_demand > total_capacity + CAPACITY_TOLERANCE:
        raise ValueError(
            f"customers[*].demand: total demand {_num(total_demand)} exceeds the total depot "
            f"capacity {_num(total_capacity)} (the sum of depots[*].capacity)"
        )


def instance_from_schneider(data: Any, name: str = "") -> CLRPInstance:
    """Build an instance from a parsed file of the set (see the module doc).

    Args:
        data: the file's JSON value.
        name: the instance's name when the file has no ``name`` field.

    Returns:
        The instance: depots then customers each in ascending ``index``; coordinates as given;
        arc costs ``ceil(100 d)`` (``rounded_costs=True``); capacities, demands, opening costs
        (``costs``) and the cost per route (``vehicle_costs``) in the file's units.

    Raises:
        ValueError: a missing or unknown field; a value that is not a finite number; a
            capacity, demand or vehicle capacity that is not positive; a negative cost; an
            ``index`` that is not a non-negative integer or is used twice; an empty list; a
            demand above the vehicle capacity or every depot's capacity; a total demand above
            the total depot capacity; an instance the env rejects. The message names the field
            (``depots[3].capacity``, positions from 0) and the value, not the file.
    """
    q, fixed = _vehicle(data)
    depots = _entries(data, "depots", DEPOT_FIELDS, "capacity")
    customers = _entries(data, "customers", CUSTOMER_FIELDS, "demand")
    _check_unique_indices(depots, customers)
    _check_capacities(depots, customers, q)
    # positions in the file, kept for messages; the instance's order is by index
    depot_order = sorted(range(len(depots)), key=lambda k: depots[k]["index"])
    customer_order = sorted(range(len(customers)), key=lambda k: customers[k]["index"])
    label = data.get("name", name)
    try:
        return CLRPInstance(
            depot_locs=np.array([[depots[k]["x"], depots[k]["y"]] for k in depot_order]),
            customer_locs=np.array(
                [[customers[k]["x"], customers[k]["y"]] for k in customer_order]
            ),
            depot_capacity=np.array([depots[k]["capacity"] for k in depot_order]),
            opening_cost=np.array([depots[k]["costs"] for k in depot_order]),
            demand=np.array([customers[k]["demand"] for k in customer_order]),
            vehicle_capacity=q,
            vehicle_fixed_cost=fixed,
            rounded_costs=True,
            name=label,
        )
    except ValueError as exc:  # a rule on the whole instance: the env's message
        raise ValueError(
            str(exc).removeprefix(f"{label or 'CLRPInstance'}: ").removeprefix("instance 0: ")
        ) from None


def _num(x: float) -> int | float:
    """A value as the file writes it: an ``int`` where integral, else the float itself."""
    x = float(x)
    return int(x) if x.is_integer() else x


def read_schneider(path: str | Path) -> CLRPInstance:
    """Read one file of Schneider & Löffler's set (see the module doc).

    Args:
        path: the ``.json`` file (e.g. ``100-5-2c.json``).

    Returns:
        The instance, named by the file's ``name`` field, else the file's stem. Costs: each arc
        ``ceil(100 x Euclidean distance)``, the depots' ``costs`` and ``vehicle_costs`` as
        given, all in the units of the set's published best-known values.

    Raises:
        ValueError: the file is not JSON or not of this layout's rules
            (:func:`instance_from_schneider`); the message starts with the path, then names
            the field (``depots[3].capacity``, list positions from 0) and the value.
        OSError: the file cannot be read.
    """
    path = Path(path)
    return schneider_from_json_text(path, *read_json_text(path))


def schneider_from_json_text(path: Path, text: str, data: Any) -> CLRPInstance:
    """:func:`instance_from_schneider` of a file's parsed ``data``, errors located in its
    ``text`` as :func:`read_schneider` says (for a caller that has already parsed the file)."""
    try:
        return instance_from_schneider(data, name=path.stem)
    except ValueError as exc:
        line = JsonScan(text).line_of(_path_of(str(exc)))
        raise ValueError(f"{path}:{line}: {exc}") from None
