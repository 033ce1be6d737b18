"""The argument checks of :func:`clrp_rl4co.solve` and :func:`clrp_rl4co.solve_many`: each bad
argument is an error before any solving, naming the parameter and the value (TypeError: its
type, ValueError: its value).

Importing this module is light (no torch, no NumPy).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping, Set

from .auto import METHODS

#: Largest ``seed``: PyVRP takes unsigned 32-bit seeds and the solvers add offsets to it.
MAX_SEED = 2**31 - 1


def _got(value: object) -> str:
    """``str 'abc'``: the type and (cut) value of a bad argument, for a message."""
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _check_budget(seconds: float) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"seconds: must be a number of seconds, got {_got(seconds)}")
    seconds = float(seconds)
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"seconds: must be a positive number of seconds, got {seconds!r}")
    return seconds


def check_solve_arguments(method, seconds, model, seed, progress) -> tuple[float, str | None, int]:
    """Check the arguments that :func:`~clrp_rl4co.solve` and :func:`~clrp_rl4co.solve_many`
    share: ``method`` one of :data:`~clrp_rl4co.auto.METHODS`, ``seconds`` a positive finite
    number, ``model`` a name, a path or None, ``seed`` an int from 0 to :data:`MAX_SEED`,
    ``progress`` a bool.

    Returns:
        ``seconds`` as a float, ``model`` as a str (a path-like model as its path) or None,
        ``seed`` as an int (a NumPy integer as Python's).

    Raises:
        TypeError / ValueError: a bad argument (the message names the parameter and the value).
    """
    if not isinstance(method, str):
        raise TypeError(f"method: must be a str, one of {list(METHODS)}, got {_got(method)}")
    if method not in METHODS:
        raise ValueError(f"method: must be one of {list(METHODS)}, got {method!r}")
    seconds = _check_budget(seconds)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if model is not None and not isinstance(model, str):
        raise TypeError(
            f"model: must be a model name, a checkpoint path or None, got {_got(model)}"
        )
    if model is not None and not model.strip():
        raise ValueError(f"model: must be a model name or a checkpoint path, got {model!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed: must be an int, got {_got(seed)}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed: must be from 0 to {MAX_SEED} (2**31 - 1), got {int(seed)}")
    if not isinstance(progress, bool):
        raise TypeError(f"progress: must be a bool, got {_got(progress)}")
    return seconds, model, int(seed)


def check_iterations(iterations) -> int | None:
    """``iterations`` of the repeatable mode as an int (None stays None: the time budget).

    Raises:
        TypeError / ValueError: not None and not an int >= 1.
    """
    if iterations is None:
        return None
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral):
        raise TypeError(f"iterations: must be an int or None, got {_got(iterations)}")
    if iterations < 1:
        raise ValueError(f"iterations: must be >= 1, got {int(iterations)}")
    return int(iterations)


def check_many_arguments(workers, executor, on_result) -> None:
    """Check the arguments only :func:`~clrp_rl4co.solve_many` has: ``workers`` an int >= 1,
    ``executor`` None or something with a ``submit`` method, ``on_result`` None or callable.

    Raises:
        TypeError / ValueError: a bad argument (the message names the parameter and the value).
    """
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers: must be an int, got {_got(workers)}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {int(workers)}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor: must be a concurrent.futures.Executor or None, got {_got(executor)}"
        )
    if on_result is not None and not callable(on_result):
        raise TypeError(f"on_result: must be callable or None, got {_got(on_result)}")


def check_instances(instances) -> list:
    """``instances`` of :func:`~clrp_rl4co.solve_many` as a list: one instance or path (a
    ``str`` or ``os.PathLike``) is a list of one; an iterable is listed, each item checked.

    Raises:
        TypeError: ``instances`` is not an instance, a path or an ordered iterable of them
            (the message names ``instances``, or the item as ``instances[k]``, 0-based like
            the ``index`` of ``on_result``).
    """
    from .data.instance import CLRPInstance

    if isinstance(instances, str | os.PathLike | CLRPInstance):
        return [instances]
    if isinstance(instances, bytes | bytearray | Mapping | Set) or not isinstance(
        instances, Iterable
    ):
        raise TypeError(
            "instances: must be a list (or another ordered iterable) of CLRPInstances or file "
            f"paths, or one of them, got {_got(instances)}"
        )
    items = list(instances)
    for k, item in enumerate(items):
        if not isinstance(item, str | os.PathLike | CLRPInstance):
            raise TypeError(
                f"instances[{k}]: must be a CLRPInstance or a file path, got {_got(item)} "
                f"(item {k + 1} of {len(items)})"
            )
    return items


__all__ = [
    "MAX_SEED",
    "check_instances",
    "check_iterations",
    "check_many_arguments",
    "check_solve_arguments",
]
