"""The JSON instance format: one CLRP instance as a JSON object (documented in
``docs/formats.md``).

.. code-block:: json

    {
      "name": "example",
      "vehicle_capacity": 70,
      "vehicle_fixed_cost": 1000,
      "rounding": "ceil100",
      "depots": [{"x": 6, "y": 7, "capacity": 140, "opening_cost": 10841}],
      "customers": [{"x": 20, "y": 35, "demand": 17}]
    }

``rounding`` is the arc cost convention: ``"ceil100"`` (each arc costs ``ceil(100 x
distance)``, Prodhon flag 0) or ``"none"`` (the Euclidean distance itself, Prodhon flag 1).
``name`` is optional (default: the file's stem). Depots and customers are numbered from 0 in
the order they are listed. Every error names the file, the field and the value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .instance import FLOAT32_RANGE, CLRPInstance, outside_float32, oversized_demand

#: Values of the ``rounding`` field: arc costs ``ceil(100 d)`` or the distance ``d`` itself.
ROUNDING = {"ceil100": True, "none": False}


def _show(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a whole list or a 4,000-digit number
    does not belong in a one-line message)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: must be a number, got {_show(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float's range
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{where}: must be finite, got {_show(value)}")
    if outside_float32(number):
        raise ValueError(f"{where}: must be 0 or of magnitude {FLOAT32_RANGE}, got {_show(value)}")
    return number


def _num(x: float) -> int | float:
    """A value as the file writes it: an ``int`` where integral, else the float itself."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _field(entry: Any, key: str, where: str) -> Any:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: must be an object, got {_show(entry)}")
    if key not in entry:
        raise ValueError(f"{where}: missing field {key!r}")
    return entry[key]


def _entries(data: dict, key: str, fields: tuple[str, ...]) -> list[list[float]]:
    items = _field(data, key, "instance")
    if not isinstance(items, list) or not items:
        raise ValueError(f"{key}: must be a non-empty list, got {_show(items)}")
    out = []
    for k, item in enumerate(items):
        where = f"{key}[{k}]"
        row = [_number(_field(item, f, where), f"{where}.{f}") for f in fields]
        unknown = sorted(set(item) - set(fields))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown} (expected {list(fields)})")
        out.append(row)
    return out


def instance_from_dict(data: Any, name: str = "") -> CLRPInstance:
    """Build an instance from the JSON object ``data`` (see the module doc).

    Raises:
        ValueError: a missing, unknown or malformed field, a negative or zero demand, a
            negative capacity or cost, or an instance the env rejects; the message names the
            field (``customers[3].demand``) and the value.
    """
    if not isinstance(data, dict):
        raise ValueError(f"instance: must be a JSON object, got {type(data).__name__}")
    known = {"name", "vehicle_capacity", "vehicle_fixed_cost", "rounding", "depots", "customers"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"instance: unknown field(s) {unknown} (expected {sorted(known)})")
    depots = _entries(data, "depots", ("x", "y", "capacity", "opening_cost"))
    customers = _entries(data, "customers", ("x", "y", "demand"))
    q = _number(_field(data, "vehicle_capacity", "instance"), "vehicle_capacity")
    fixed = _number(_field(data, "vehicle_fixed_cost", "instance"), "vehicle_fixed_cost")
    rounding = _field(data, "rounding", "instance")
    if not isinstance(rounding, str) or rounding not in ROUNDING:
        raise ValueError(f"rounding: must be one of {list(ROUNDING)}, got {_show(rounding)}")
    if q <= 0:
        raise ValueError(f"vehicle_capacity: must be positive, got {q:g}")
    if fixed < 0:
        raise ValueError(f"vehicle_fixed_cost: must be non-negative, got {fixed:g}")
    for k, (_, _, capacity, opening) in enumerate(depots):
        if capacity < 0:
            raise ValueError(f"depots[{k}].capacity: must be non-negative, got {capacity:g}")
        if opening < 0:
            raise ValueError(f"depots[{k}].opening_cost: must be non-negative, got {opening:g}")
    for k, (_, _, demand) in enumerate(customers):
        if demand <= 0:
            raise ValueError(f"customers[{k}].demand: must be positive, got {demand:g}")
    label = data.get("name", name)
    if not isinstance(label, str):
        raise ValueError(f"name: must be a string, got {_show(label)}")
    depot_rows, customer_rows = np.array(depots), np.array(customers)
    oversized = oversized_demand(customer_rows[:, 2], q, depot_rows[:, 2])
    if oversized is not None:
        j, which = oversized
        if which == "vehicle":
            limit = f"vehicle_capacity {_num(q)}"
        else:
            i = int(np.argmax(depot_rows[:, 2]))
            largest = _num(depot_rows[i, 2])
            limit = f"every depot's capacity (the largest: depots[{i}].capacity {largest})"
        raise ValueError(f"customers[{j}].demand: {_num(customer_rows[j, 2])} exceeds {limit}")
    try:
        return CLRPInstance(
            depot_locs=depot_rows[:, :2],
            customer_locs=customer_rows[:, :2],
            depot_capacity=depot_rows[:, 2],
            opening_cost=depot_rows[:, 3],
            demand=customer_rows[:, 2],
            vehicle_capacity=q,
            vehicle_fixed_cost=fixed,
            rounded_costs=ROUNDING[rounding],
            name=label,
        )
    except ValueError as exc:  # a rule on the whole instance: the env's message
        raise ValueError(
            str(exc).removeprefix(f"{label or 'CLRPInstance'}: ").removeprefix("instance 0: ")
        ) from None


def instance_to_dict(instance: CLRPInstance) -> dict:
    """The JSON object of ``instance`` (numbers as Python floats, integers where integral)."""
    num = _num
    return {
        "name": instance.name,
        "vehicle_capacity": num(instance.vehicle_capacity),
        "vehicle_fixed_cost": num(instance.vehicle_fixed_cost),
        "rounding": "ceil100" if instance.rounded_costs else "none",
        "depots": [
            {"x": num(x), "y": num(y), "capacity": num(c), "opening_cost": num(o)}
            for (x, y), c, o in zip(
                instance.depot_locs, instance.depot_capacity, instance.opening_cost
            )
        ],
        "customers": [
            {"x": num(x), "y": num(y), "demand": num(d)}
            for (x, y), d in zip(instance.customer_locs, instance.demand)
        ],
    }


def read_json_instance(path: str | Path) -> CLRPInstance:
    """Read an instance file in the JSON format; the name defaults to the file's stem.

    Raises:
        ValueError: the file is not JSON or a field is wrong; the message starts with the path.
        OSError: the file cannot be read.
    """
    path = Path(path)
    text = path.read_bytes()
    try:
        data = json.loads(text.decode())
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # JSONDecodeError, or an integer literal too long to convert
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    try:
        return instance_from_dict(data, name=path.stem)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def write_json_instance(instance: CLRPInstance, path: str | Path) -> None:
    """Write ``instance`` in the JSON format (:func:`read_json_instance` reads it back)."""
    Path(path).write_text(json.dumps(instance_to_dict(instance), indent=2) + "\n")
