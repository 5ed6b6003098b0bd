"""A listing a stop does not wait for: the one seam through which every listing the connector
makes before a settlement honours the shutdown's (or the start's) stop.

Rules:
1. ``unless_stopped(call, stop)`` makes ``call`` on a daemon thread of its own and answers what it
   answered, or None once ``stop`` is set first: none is begun after the stop, and one under way
   is not waited for (its request runs out on its thread, within its own deadline, its answer
   unread). ``stop`` is looked at every ``STOP_CHECK_SECONDS``.
2. What the call raises is raised again on the caller's thread.
3. Only a call that writes nothing goes through it (the reply listing of
   ``shell.adopted_replies``, the reconciliation listing of ``shell.outbox``): an abandoned call
   leaves nothing half done, and its caller writes only from what was answered whole.
4. Without a stop (None) the call is made on the caller's thread: nothing can cut it short, so
   no thread is spent on it (the simulation, the tests that drive one turn).
"""

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
