"""The hybrid's progress bar (:class:`clrp_rl4co.solvers.progress.ProgressBar`) from its
definition: a bar over the seconds of one solver call, on a fake clock, showing the seconds
spent (to a tenth) and never more than the budget; a bar within one instance, gone once closed."""

from __future__ import annotations

import pytest
from clocks import FakeClock

from clrp_rl4co.solvers.progress import ProgressBar


def test_the_bar_counts_seconds_to_a_tenth_and_fills_exactly_at_the_budget():
    clock = FakeClock()
    bar = ProgressBar(True, 2.26, "corner", clock)
    assert bar.bar.unit == "s"
    assert bar.bar.total == pytest.approx(2.26, abs=0.05)  # the budget, to a tenth
    clock.now += 1.46
    bar.update("decode")
    assert bar.bar.n == pytest.approx(1.46, abs=0.05)  # the seconds spent, to a tenth
    clock.now += 30.0
    bar.update("done")
    assert bar.bar.n == bar.bar.total  # past the budget: full, not more and not less
    bar.close()


def test_the_bar_within_one_call_is_cleared_when_closed(capsys):
    clock = FakeClock()
    bar = ProgressBar(True, 10.0, "corner", clock)
    clock.now += 3.0
    bar.update("refine")
    bar.close()
    err = capsys.readouterr().err
    assert "corner" in err and err.endswith("\r")  # the line is cleared, no new line left
