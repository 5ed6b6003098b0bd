"""The outbox's claim reads, folded into fewer statements for speed
(``bin/bench outbox``), still read all they must. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

PERF: list[Mutation] = [
    rule(
        "perf: with nothing due the hold is still asked, and a held flush says held",
        '        return DueNow(connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None, None)\n',
        "        return DueNow(False, None)\n",
        "test_a_flush_under_the_hold_with_nothing_due_says_held",
    ),
    rule(
        "perf: the claim's one statement reads the task rows of the guard's event beside its record",
        "    return _record(found[0]), [_task_event(values[9:]) for values in found if values[9] is not None]\n",
        "    return _record(found[0]), []\n",
        "test_a_guard_whose_event_a_worker_acknowledged_is_canceled_at_claim",
    ),
    rule(
        "perf: a crash test's pause step, read once from the environment the process started with, stops it",
        "    if step != _PAUSING_AT:\n        return\n",
        "    return\n",
        "test_outbox_kill.py",
    ),
    rule(
        "perf: a guard's claim asks its event's task rows again only when its snapshot holds an armed one",
        " and row.event_id is not None and any_armed(facts):\n",
        " and row.event_id is not None:\n",
        "test_a_guard_with_no_armed_task_row_is_claimed_without_asking_the_task_rows_again",
    ),
    rule(
        "perf: the claim's snapshot names an armed task row, so the guard's claim still fires it",
        "    return any(found.guard is GuardState.armed for found in facts.task_events)\n",
        "    return False\n",
        "test_a_guard_is_reported_fired_from_its_claim",
    ),
    rule(
        "perf: the claim's partial row still carries the start of a run of retries",
        "Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, stored_time(since),\n",
        "Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, None,\n",
        "test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person",
    ),
]
