"""The proofs of the shutdown bound: a flush with a deadline never outwaits it behind a request in
flight, and the connector waits for its loops only until the bound. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

RUN = "tests/process/test_connect_run.py"

SHUTDOWN: list[Mutation] = [
    rule(
        "a flush with a deadline waits for the outbox's lock no longer than the deadline",
        "shell/outbox.py",
        "            acquired = self._lock.acquire(timeout=max(0.0, deadline - self._clock.monotonic()))",
        "            acquired = self._lock.acquire()",
        "tests/outbox/test_outbox_sending.py::test_a_flush_with_a_deadline_does_not_outwait_it_behind_a_request_in_flight",
        f"{RUN}::test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "the connector waits for its loops only until the shutdown's bound",
        "shell/connector.py",
        "            loop.join(timeout=None if bound is None else max(0.0, bound))",
        "            loop.join(timeout=30)",
        f"{RUN}::test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
]
