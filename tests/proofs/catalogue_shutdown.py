"""The proofs of the shutdown bound: a flush with a deadline never outwaits it behind a request in
flight, the connector waits for its loops only until the bound, and a reply listing before a
settlement stops at the shutdown. Same form as ``tests.proofs.catalogue``."""

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
        "shutdown: the dispatcher gives its shutdown's event to the reply listing before a settlement",
        "        return self.list_replies(task_id, self._shutdown)",
        "        return self.list_replies(task_id, threading.Event())",
        "test_sigterm_during_a_reply_listing_settles_the_attempt_with_its_reason_within_the_bound",
    ),
    rule(
        "shutdown: a reply listing under way is not waited for once the stop comes",
        "        while not done.wait(STOP_CHECK_SECONDS):\n            if stop.is_set():\n                return None\n",
        "        done.wait()\n",
        "test_a_listing_under_way_is_not_waited_for_once_the_stop_comes",
        "test_sigterm_during_a_reply_listing_settles_the_attempt_with_its_reason_within_the_bound",
    ),
    rule(
        "shutdown: no reply destination is listed after the stop",
        "        if stop.is_set():\n            return None\n        done = threading.Event()\n",
        "        done = threading.Event()\n",
        "test_a_stop_ends_the_listing_between_destinations_and_keeps_what_was_listed_whole",
    ),
    rule(
        "shutdown: what a reply listing raises besides Basecamp's failures reaches the caller's thread",
        "        if isinstance(outcome, BaseException):\n            raise outcome\n",
        "        if isinstance(outcome, BaseException):\n            return []\n",
        "test_what_a_listing_raises_besides_basecamp_s_failures_is_raised_on_the_caller_s_thread",
    ),
    rule(
        "a stop asked for during the start is taken before any loop makes a turn",
        "        if requested():  # nothing launches or posts after a SIGTERM that came during the start\n",
        "        if False:\n",
        "test_a_stop_asked_for_during_the_start_launches_no_worker",
    ),
]
