"""Progress of ``clrp-rl4co solve``: a tqdm bar on a terminal; elsewhere (a file, a pipe, a CI
log) one plain line per finished instance, with no carriage returns or escape codes."""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    """Reports finished instances on ``stream`` (default ``sys.stderr``).

    Args:
        total: instances to solve.
        quiet: report nothing.
        stream: where to write.
        terminal: draw a bar (default: whether ``stream`` is a terminal).
    """

    def __init__(
        self,
        total: int,
        quiet: bool = False,
        stream: TextIO | None = None,
        terminal: bool | None = None,
    ):
        self.total = total
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.done = 0
        self._bar = None
        if not quiet and self.terminal:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc="instances", unit="inst", file=self.stream)

    def finished(self, label: str, text: str) -> None:
        """One instance is done: ``text`` says how (objective and method, or the error)."""
        self.done += 1
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.update(1)
        else:
            print(f"[{self.done}/{self.total}] {label}: {text}", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
