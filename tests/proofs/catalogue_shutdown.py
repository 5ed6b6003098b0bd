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
        "            loop.join(timeout=None if remaining is None else max(0.0, remaining))",
        "            loop.join(timeout=30)",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "a signal only notes the stop; the main thread stops the connector",
        "            if requested():\n",
        "            if False:\n",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "SIGUSR1 writes every thread's stack and the connector goes on",
        "        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)\n",
        "\n",
        "test_sigusr1_writes_every_threads_stack_and_the_connector_goes_on",
    ),
    rule(
        "a child that would not stop is asked for its last words before SIGKILL",
        "            signal_child(process, last_words)\n",
        "            pass\n",
        "test_a_child_that_ignores_sigterm_says_where_it_was_before_it_is_killed",
    ),
    rule(
        "a stop asked for during the start is taken before any loop makes a turn",
        "        if requested():  # nothing launches or posts after a SIGTERM that came during the start\n",
        "        if False:\n",
        "test_a_stop_asked_for_during_the_start_launches_no_worker",
    ),
]
