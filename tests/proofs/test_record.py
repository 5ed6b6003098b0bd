"""The record in tests/PROOFS.md, as ``bin/prove --record`` writes it and ``--unrecorded`` reads it."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule
from tests.proofs.record import Row, fingerprint, rewritten, rows, unproven

GUARD = rule("invariant 9: a guard | fired from its claim", "x = 1", "x = 2", "test_guard")
RETRY = rule("a retry waits", "y = 1", "y = 2", "test_retry")


def proven(mutation: Mutation, seen: str = "red: FAILED test_guard") -> Row:
    return Row(mutation.rule, mutation.tests, seen, fingerprint(mutation))


def test_a_rule_named_with_a_colon_and_a_bar_is_read_back_whole_and_proven() -> None:
    text = rewritten("# Proofs\n", [GUARD, RETRY], {GUARD.rule: proven(GUARD)})
    assert rows(text)[GUARD.rule].red
    assert unproven(text, [GUARD, RETRY]) == {RETRY.rule: "never proven (bin/prove --unrecorded --record)"}


def test_a_changed_mutation_or_a_green_one_is_unproven_and_another_run_keeps_the_first_rows() -> None:
    text = rewritten("# Proofs\n", [GUARD, RETRY], {GUARD.rule: proven(GUARD), RETRY.rule: proven(RETRY, "**GREEN**")})
    changed = rule(GUARD.rule, "x = 1", "x = 3", "test_guard")
    assert set(unproven(text, [changed, RETRY])) == {GUARD.rule, RETRY.rule}
    again = rewritten(text, [GUARD, RETRY], {RETRY.rule: proven(RETRY)})
    assert unproven(again, [GUARD, RETRY]) == {}
    assert GUARD.rule not in rows(rewritten(again, [RETRY], {}))
