"""A progress bar over the seconds of one solver call (:func:`.hybrid.solve_hybrid`'s)."""

from __future__ import annotations

from collections.abc import Callable


class ProgressBar:
    """A tqdm bar over ``seconds`` on ``clock``, named ``name``, whose text is the phase shown
    last; a no-op unless ``enabled``."""

    def __init__(self, enabled: bool, seconds: float, name: str, clock: Callable[[], float]):
        self.bar = None
        self.clock = clock
        self.start = clock()
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=round(seconds, 1), desc=name or "hybrid", unit="s", leave=False)

    def update(self, phase: str) -> None:
        """Show ``phase`` and the seconds spent so far (never more than the budget)."""
        if self.bar is not None:
            elapsed = min(self.clock() - self.start, self.bar.total)
            self.bar.set_postfix_str(phase)
            self.bar.update(round(elapsed, 1) - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
