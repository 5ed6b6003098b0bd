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
]
