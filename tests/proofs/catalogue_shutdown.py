"""The proofs of the shutdown bound: a flush with a deadline never outwaits it behind a request in
flight, and the connector waits for its loops only until the bound. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

SHUTDOWN: list[Mutation] = [
    rule(
        "a flush with a deadline waits for the outbox's lock no longer than the deadline",
        "            acquired = self._lock.acquire(timeout=max(0.0, deadline - self._clock.monotonic()))",
        "            acquired = self._lock.acquire()",
        "test_a_flush_with_a_deadline_does_not_outwait_it_behind_a_request_in_flight",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "the connector waits for its loops only until the shutdown's bound",
        "            loop.join(timeout=None if bound is None else max(0.0, bound))",
        "            loop.join(timeout=30)",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
]
