"""A listing a stop does not wait for: the one seam through which every listing the connector makes
before a settlement honours the shutdown's (or the start's) stop. ``unless_stopped`` makes the call
on a daemon thread and answers its answer, or None once the stop is set first: none begins after the
stop, and one under way is not waited for (it runs out within its own deadline, unread). What the
call raises is raised again on the caller's thread; without a stop the call is made on the caller's
thread. Only a call that writes nothing goes through it (the reply listing, the outbox's
reconciliation listing), so an abandoned one leaves nothing half done."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

STOP_CHECK_SECONDS = 0.05  # how often a call under way looks for the stop

T = TypeVar("T")


def unless_stopped(call: Callable[[], T], stop: threading.Event | None, name: str) -> T | None:
    if stop is None:
        return call()
    if stop.is_set():
        return None
    done = threading.Event()
    answer: list[T | BaseException] = []

    def calling() -> None:
        try:
            answer.append(call())
        except BaseException as error:  # raised again on the caller's thread
            answer.append(error)
        finally:
            done.set()

    threading.Thread(target=calling, name=name, daemon=True).start()
    while not done.wait(STOP_CHECK_SECONDS):
        if stop.is_set():
            return None
    (outcome,) = answer
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome
