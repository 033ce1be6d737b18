"""Stopping early (clrp_rl4co.execution.interrupt): the first SIGINT inside ``catch_sigint``
requests a stop, the second raises KeyboardInterrupt, the previous handler comes back, and outside
the main thread nothing is installed."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from clrp_rl4co.execution import interrupt


@pytest.fixture(autouse=True)
def no_request():
    interrupt.clear()
    yield
    interrupt.clear()


def test_request_and_clear():
    assert not interrupt.requested()
    interrupt.request()
    assert interrupt.requested()
    interrupt.clear()
    assert not interrupt.requested()


def test_the_first_sigint_requests_a_stop_and_the_second_raises():
    before = signal.getsignal(signal.SIGINT)
    with interrupt.catch_sigint():
        assert signal.getsignal(signal.SIGINT) is not before
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pytest.fail("the first SIGINT raised; it should only request a stop")
        assert interrupt.requested()  # the run goes on to its unit's end
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before


def test_the_previous_handler_comes_back_after_an_exception():
    def own(signum, frame):  # noqa: ARG001
        pass

    before = signal.signal(signal.SIGINT, own)
    try:
        with pytest.raises(ValueError), interrupt.catch_sigint():
            raise ValueError("inside")
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, before)


def test_outside_the_main_thread_nothing_is_installed():
    seen = []

    def run():
        with interrupt.catch_sigint():
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [before]
