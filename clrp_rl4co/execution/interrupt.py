"""Stopping a run early and keeping what it found: Ctrl-C (SIGINT) sets a flag that the solvers
read between their units of work (PyVRP's stopping criterion, the decoder's units), so a run
returns its best solution so far instead of losing it to an exception.

Only :func:`catch_sigint` installs the handler (the command does, around its runs); a library
caller who wants the same uses it too, or calls :func:`request`. A second Ctrl-C raises
``KeyboardInterrupt`` at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_REQUESTED = threading.Event()


def requested() -> bool:
    """Whether a stop was requested (the solvers check this between units of work)."""
    return _REQUESTED.is_set()


def request() -> None:
    """Ask every run of this process to stop after its unit of work in progress."""
    _REQUESTED.set()


def clear() -> None:
    """Forget a stop request."""
    _REQUESTED.clear()


@contextmanager
def catch_sigint() -> Iterator[None]:
    """While the block runs, the first SIGINT requests a stop; the second raises
    ``KeyboardInterrupt``. The previous handler comes back at the end (from the main thread
    only; elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame) -> None:  # noqa: ARG001 (signal handler signature)
        if _REQUESTED.is_set():
            raise KeyboardInterrupt
        _REQUESTED.set()

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
