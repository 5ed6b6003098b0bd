"""The ledger's moves ask core.edges from the row's real state, never from a literal. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DECIDE: list[Mutation] = [
    rule(
        "marking an attempt running asks core.edges from the state it read, so a second is refused",
        "    running = asked(ATTEMPT_EDGES, AttemptState(found[0]), AttemptState.running, Actor.dispatcher)\n",
        "    running = asked(ATTEMPT_EDGES, AttemptState.launching, AttemptState.running, Actor.dispatcher)\n",
        "test_mark_running_records_the_process_once",
    ),
]
