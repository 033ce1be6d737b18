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
the order they are listed (``customers[0]`` is the first customer, as in solution files).

Every error of :func:`read_json_instance` names the file and a 1-based line (``path:LINE: ``;
a rule on the whole instance names the lines of the lists it reads instead), then the field
by its JSON path and the value. A path's list positions count from 0, as JSON's do; the
message then gives the entry's number counting from 1, as the Prodhon reader numbers
customers and depots::

    bad.json:14: customers[2].demand: must be positive, got -5 (customer 3, counting from 1)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .instance import FLOAT32_RANGE, CLRPInstance, outside_float32, oversized_demand
from .json_text import JsonScan, read_json_text

#: Values of the ``rounding`` field: arc costs ``ceil(100 d)`` or the distance ``d`` itself.
ROUNDING = {"ceil100": True, "none": False}


def show_value(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a whole list or a 4,000-digit number
    does not belong in a one-line message)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: must be a number, got {show_value(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond float's range
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{where}: must be finite, got {show_value(value)}")
    if outside_float32(number):
        raise ValueError(
            f"{where}: must be 0 or of magnitude {FLOAT32_RANGE}, got {show_value(value)}"
        )
    return number


class _FieldError(ValueError):
    """An error on one value of the instance object, with where it is.

    Attributes:
        path: the value's path (keys and 0-based list indices; ``()`` is the object itself).
        refs: ``(label, path)`` of other values the message names (the file's reader adds
            their lines).
        entries: ``(list key, 0-based index)`` of the entries the message names.
    """

    def __init__(self, message: str, path: tuple = (), refs=(), entries=()):
        self.message, self.path, self.refs = message, tuple(path), tuple(refs)
        self.entries = tuple(entries) or _entries_of(self.path)
        super().__init__(self.text())

    def text(self, lines: list[str] = ()) -> str:
        """The message, its entries' numbers counting from 1 and ``lines`` in parentheses."""
        notes = []
        if self.entries:
            named = " and ".join(f"{key[:-1]} {k + 1}" for key, k in self.entries)
            notes.append(f"{named}, counting from 1")
        notes += lines
        return f"{self.message} ({'; '.join(notes)})" if notes else self.message


def _entries_of(path: tuple) -> tuple:
    """``(("customers", 3),)`` for a path into the fourth customer, else ``()``."""
    if len(path) >= 2 and path[0] in ("depots", "customers") and isinstance(path[1], int):
        return ((path[0], path[1]),)
    return ()


def _name(path: tuple) -> str:
    """A value's JSON path as messages write it: ``customers[3].demand``; ``instance`` for
    the object itself."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "instance"


def _fail(path: tuple, problem: str, refs=(), entries=()) -> _FieldError:
    return _FieldError(f"{_name(path)}: {problem}", path, refs, entries)


def _number_at(value: Any, path: tuple) -> float:
    """:func:`json_number` of the value at ``path``; its error knows where the value is."""
    try:
        return json_number(value, _name(path))
    except ValueError as exc:
        raise _FieldError(str(exc), path) from None


def _num(x: float) -> int | float:
    """A value as the file writes it: an ``int`` where integral, else the float itself."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _field(entry: Any, key: str, path: tuple) -> Any:
    """``entry[key]`` of the object at ``path``."""
    if not isinstance(entry, dict):
        raise _fail(path, f"must be an object, got {show_value(entry)}")
    if key not in entry:
        raise _fail(path, f"missing field {key!r}")
    return entry[key]


def _entries(data: dict, key: str, fields: tuple[str, ...]) -> list[list[float]]:
    items = _field(data, key, ())
    if not isinstance(items, list) or not items:
        raise _fail((key,), f"must be a non-empty list, got {show_value(items)}")
    out = []
    for k, item in enumerate(items):
        row = [_number_at(_field(item, f, (key, k)), (key, k, f)) for f in fields]
        unknown = sorted(set(item) - set(fields))
        if unknown:  # at the first unknown field's line
            raise _FieldError(
                f"{key}[{k}]: unknown field(s) {unknown} (expected {list(fields)})",
                (key, k, unknown[0]),
            )
        out.append(row)
    return out


def _check_oversized(demand: np.ndarray, q: float, capacity: np.ndarray) -> None:
    """No customer's demand above the vehicle capacity or every depot's capacity."""
    oversized = oversized_demand(demand, q, capacity)
    if oversized is None:
        return
    j, which = oversized
    if which == "vehicle":
        limit = f"vehicle_capacity {_num(q)}"
        refs, entries = [("vehicle_capacity", ("vehicle_capacity",))], ()
    else:
        i = int(np.argmax(capacity))
        largest = _num(capacity[i])
        limit = f"every depot's capacity, the largest being depots[{i}].capacity {largest}"
        refs = [(f"depots[{i}].capacity", ("depots", i, "capacity"))]
        entries = (("customers", j), ("depots", i))
    problem = f"{_num(demand[j])} exceeds {limit}"
    raise _fail(("customers", j, "demand"), problem, refs, entries)


def instance_from_dict(data: Any, name: str = "") -> CLRPInstance:
    """Build an instance from the JSON object ``data`` (see the module doc).

    Raises:
        ValueError: a missing, unknown or malformed field, a negative or zero demand, a
            negative capacity or cost, or an instance the env rejects; the message names the
            field by its JSON path (``customers[3].demand``, positions from 0) and the value,
            and an entry also by its number counting from 1 (``customer 4, counting from
            1``).
    """
    if not isinstance(data, dict):
        raise _fail((), f"must be a JSON object, got {type(data).__name__}")
    known = {"name", "vehicle_capacity", "vehicle_fixed_cost", "rounding", "depots", "customers"}
    unknown = sorted(set(data) - known)
    if unknown:  # at the first unknown field's line
        raise _FieldError(
            f"instance: unknown field(s) {unknown} (expected {sorted(known)})", (unknown[0],)
        )
    depots = _entries(data, "depots", ("x", "y", "capacity", "opening_cost"))
    customers = _entries(data, "customers", ("x", "y", "demand"))
    q = _number_at(_field(data, "vehicle_capacity", ()), ("vehicle_capacity",))
    fixed = _number_at(_field(data, "vehicle_fixed_cost", ()), ("vehicle_fixed_cost",))
    rounding = _field(data, "rounding", ())
    if not isinstance(rounding, str) or rounding not in ROUNDING:
        raise _fail(("rounding",), f"must be one of {list(ROUNDING)}, got {show_value(rounding)}")
    if q <= 0:
        raise _fail(("vehicle_capacity",), f"must be positive, got {q:g}")
    if fixed < 0:
        raise _fail(("vehicle_fixed_cost",), f"must be non-negative, got {fixed:g}")
    for k, (_, _, capacity, opening) in enumerate(depots):
        if capacity < 0:
            raise _fail(("depots", k, "capacity"), f"must be non-negative, got {capacity:g}")
        if opening < 0:
            raise _fail(("depots", k, "opening_cost"), f"must be non-negative, got {opening:g}")
    for k, (_, _, demand) in enumerate(customers):
        if demand <= 0:
            raise _fail(("customers", k, "demand"), f"must be positive, got {demand:g}")
    label = data.get("name", name)
    if not isinstance(label, str):
        raise _fail(("name",), f"must be a string, got {show_value(label)}")
    depot_rows, customer_rows = np.array(depots), np.array(customers)
    _check_oversized(customer_rows[:, 2], q, depot_rows[:, 2])
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
        message = str(exc).removeprefix(f"{label or 'CLRPInstance'}: ")
        raise _WholeError(message.removeprefix("instance 0: ")) from None


class _WholeError(ValueError):
    """A rule on the whole instance (the env's); the file's reader names the lines of the
    lists it reads."""


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
        ValueError: the file is not JSON or a field is wrong. The message starts with the
            path and the 1-based line of the value at fault (``path:LINE: ``; where a JSON
            error is, for a file that is not JSON, with its 1-based column), then names the
            field as :func:`instance_from_dict` does; a rule on the whole instance names the
            1-based lines of the ``depots`` and ``customers`` lists instead (``path: ...
            (customers on lines 12-20, depots on lines 4-10)``).
        OSError: the file cannot be read.
    """
    path = Path(path)
    return instance_from_json_text(path, *read_json_text(path))


def instance_from_json_text(path: Path, text: str, data: Any) -> CLRPInstance:
    """:func:`instance_from_dict` of a file's parsed ``data``, errors located in its ``text``
    as :func:`read_json_instance` says (for a caller that has already parsed the file)."""
    try:
        return instance_from_dict(data, name=path.stem)
    except _FieldError as exc:
        scan = JsonScan(text)
        lines = [f"{label} on line {scan.line_of(ref)}" for label, ref in exc.refs]
        message = f"{path}:{scan.line_of(exc.path)}: {exc.text(lines)}"
    except _WholeError as exc:
        scan = JsonScan(text)
        where = ", ".join(f"{key} on {scan.lines_of((key,))}" for key in ("customers", "depots"))
        message = f"{path}: {exc} ({where})"
    except ValueError as exc:  # none is raised unlocated; kept so that every error names the file
        message = f"{path}: {exc}"
    raise ValueError(message)


def write_json_instance(instance: CLRPInstance, path: str | Path) -> None:
    """Write ``instance`` in the JSON format (:func:`read_json_instance` reads it back)."""
    Path(path).write_text(json.dumps(instance_to_dict(instance), indent=2) + "\n")
