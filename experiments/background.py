"""What every resumable background job of the harness shares: stopping cleanly on a signal, and
its log lines on stdout."""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any

log = logging.getLogger(__name__)


class StopFlag:
    """Set by SIGTERM / SIGINT while the ``with`` block runs; the job checks :attr:`signal`
    between units of work and stops after the one in progress (the previous handlers come back
    on exit)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopFlag:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:  # noqa: ARG002 (signal handler signature)
        self.signal = signum
        log.info("signal %d: stopping after the work in progress", signum)

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def log_to_stdout() -> None:
    """INFO lines with time and module on stdout (the job's log file when redirected); RL4CO's
    own INFO lines (one per decoded batch) are left out."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stdout,
    )
    logging.getLogger("rl4co").setLevel(logging.WARNING)
