"""``shell.stoppable``, the one seam for a listing a stop cuts short, on its own (its listings'
own tests: ``tests/dispatch/test_reply_listing_stop.py``, ``tests/outbox/test_outbox_start.py``)."""

from __future__ import annotations

import threading
import time

from shell.stoppable import unless_stopped


def test_without_a_stop_the_call_is_made_on_the_callers_thread() -> None:
    assert unless_stopped(threading.current_thread, None, "listing") is threading.current_thread()


def test_with_a_stop_the_call_is_made_on_a_thread_of_its_own_and_its_answer_returned() -> None:
    thread = unless_stopped(threading.current_thread, threading.Event(), "listing")
    assert thread is not None
    assert (thread.name, thread.daemon) == ("listing", True)


def test_a_call_under_way_is_not_waited_for_once_the_stop_comes() -> None:
    stop, release = threading.Event(), threading.Event()
    threading.Timer(0.2, stop.set).start()
    began = time.monotonic()
    try:
        assert unless_stopped(lambda: release.wait(30), stop, "listing") is None
    finally:
        release.set()
    assert time.monotonic() - began < 5
