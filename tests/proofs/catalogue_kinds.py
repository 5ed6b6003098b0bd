"""The kind table's rules: the kind table holds every part of every kind, and the outbox's claim,
its routing and the intents' keys are lookups of it. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

KIND_TABLE: list[Mutation] = [
    rule(
        "kinds: the completeness walk fails on a kind lacking a part (a row without its template)",
        "        completion_key, Where.reply, after_earlier_words, templates.completion),\n",
        "        completion_key, Where.reply, after_earlier_words, None),\n",
        "test_every_kind_has_a_row_with_every_part",
    ),
    rule(
        "kinds: the completeness walk fails on a kind lacking a part (a row without its label)",
        '    IntentKind.holding_reply: KindSpec("holding reply", 1, ClaimNeeds.event,\n',
        '    IntentKind.holding_reply: KindSpec("", 1, ClaimNeeds.event,\n',
        "test_every_kind_has_a_row_with_every_part",
    ),
    rule(
        "kinds: a claim is decided by its kind's row's claim rule",
        "    return KINDS[kind].claim(facts)\n",
        "    return Claim()\n",
        "test_a_guard_no_longer_called_for_is_canceled_at_claim",
        "test_a_holding_reply_stands_down_when_the_record_moved_on",
    ),
    rule(
        "kinds: the shell's claim reads the snapshot its kind's row names (routing is a lookup)",
        'match KINDS[row.kind].needs:',
        'match ClaimNeeds.words:',
        'test_a_due_guard_is_claimed_posted_once_and_receipted',
        'test_a_still_running_notice_is_posted_while_its_attempt_runs_with_work_outstanding',
    ),
    rule(
        "kinds: an intent's key is its kind's row's key",
        "key=spec.key(*key_parts), kind=kind,",
        "key=str(kind), kind=kind,",
        "test_a_verdict_calls_for_at_most_one_intent_and_only_as_the_rules_say",
    ),
    rule(
        "kinds: an added kind is in the claim's order without an edit there (urgency from the table)",
        'URGENCY = "CASE kind " + " ".join(f"WHEN \'{kind}\' THEN {spec.urgency}" for kind, spec in KINDS.items()) + " END"',
        'URGENCY = "CASE kind WHEN \'guard_ack\' THEN 0 WHEN \'worker_ack\' THEN 0 WHEN \'holding_reply\' THEN 1 WHEN \'worker_reply\' THEN 2 WHEN \'worker_note\' THEN 2 WHEN \'completion\' THEN 3 WHEN \'still_running\' THEN 4 END"',
        'test_adding_a_kind_touches_at_most_two_production_files_and_works',
    ),
]
