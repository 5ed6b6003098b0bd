"""A listing a stop does not wait for: the one seam through which every listing the connector
makes before a settlement honours the shutdown's (or the start's) stop.

Rules:
1. ``unless_stopped(call, stop)`` makes ``call`` on a daemon thread and answers its answer, or
   None once ``stop`` is set first: none begins after the stop, and one under way is not waited
   for (it runs out within its own deadline, unread). ``stop`` is looked at every
   ``STOP_CHECK_SECONDS``.
2. What the call raises is raised again on the caller's thread.
3. Only a call that writes nothing goes through it (``shell.adopted_replies``', the outbox's
   reconciliation listing), so an abandoned one leaves nothing half done.
4. Without a stop (None) the call is made on the caller's thread, spending no thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

STOP_CHECK_SECONDS = 0.05
"""How often a call under way looks for the stop (rule 1)."""

T = TypeVar("T")


def unless_stopped(call: Callable[[], T], stop: threading.Event | None, name: str) -> T | None:
    """Rule 1: ``call``'s answer, or None once ``stop`` is set first; ``name`` names its thread."""
    if stop is None:
        return call()
    if stop.is_set():
        return None
    done = threading.Event()
    answer: list[T | BaseException] = []

    def calling() -> None:
        try:
            answer.append(call())
        except BaseException as error:  # raised again on the caller's thread (rule 2)
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
