"""The outbox's claim reads, folded into fewer statements for speed
(``bin/bench outbox``), still read all they must. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

PERF: list[Mutation] = [
    rule(
        'a flush with nothing due under the hold says held',
        'return SendResult.held if rows.held(connection) else SendResult.nothing_due',
        'return SendResult.nothing_due',
        'test_a_flush_under_the_hold_with_nothing_due_says_held',
    ),
    rule(
        "a guard's claim reads every task row of its event",
        'task_events=snapshots.task_events_of_event(connection, row.event_id),',
        'task_events=[],',
        'test_a_guard_whose_event_a_worker_acknowledged_is_canceled_at_claim',
    ),
    rule(
        "perf: a crash test's pause step, read once from the environment the process started with, stops it",
        "    if step != _PAUSING_AT:\n        return\n",
        "    return\n",
        "test_outbox_kill.py",
    ),
    rule(
        "a claimed guard's task rows are marked fired in the claim's transaction",
        '                        deliveries.fire_guard(connection, row.event_id)\n',
        '                        pass\n',
        'test_a_guard_is_reported_fired_from_its_claim',
    ),
    rule(
        'the claimed row carries the start of its run of retries',
        'retrying_since=stored_time(found["retrying_since"]),',
        'retrying_since=None,',
        'test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person',
    ),
]
