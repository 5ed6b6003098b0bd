"""The proofs of the claim-to-request window's fixes: a still-running notice stands down once its
work was reported, and start leaves still-running notices to recovery."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

WINDOW: list[Mutation] = [
    rule(
        'a still-running notice stands down once every instruction of its task was reported',
        'if all(row.delivery == DeliveryState.completed for row in facts.task_events):',
        'if False:',
        'test_a_still_running_notice_stands_down_once_every_instruction_was_reported',
        'test_a_still_running_notice_stands_down_when_its_work_was_reported_before_the_claim',
    ),
    rule(
        "the claim reads the still-running notice's task rows",
        "    return ClaimFacts(attempt=found, task_events=task_rows)",
        "    return ClaimFacts(attempt=found, task_events=[])",
        "test_a_still_running_notice_is_posted_while_its_attempt_runs_with_work_outstanding",
    ),
    rule(
        "start passes over still-running notices: recovery decides whether their attempt runs",
        "    leaving = frozenset({IntentKind.still_running}) if parts.recovery is None else frozenset()",
        "    leaving = frozenset()",
        "test_a_restart_does_not_post_still_running_for_an_attempt_recovery_is_about_to_end",
    ),
    rule(
        "a start with recovery reads still-running notices in its own send, recovery having run",
        "    leaving = frozenset({IntentKind.still_running}) if parts.recovery is None else frozenset()",
        "    leaving = frozenset({IntentKind.still_running})",
        "test_a_start_with_recovery_recovers_first_so_its_send_cancels_the_notice_of_an_ended_attempt",
    ),
    rule(
        'the outbox reads past the kinds a flush leaves pending',
        '    if leaving:\n        condition +=',
        '    if False:\n        condition +=',
        'test_a_restart_does_not_post_still_running_for_an_attempt_recovery_is_about_to_end',
    ),
    rule(
        "a follow-up a person discarded is not work outstanding for a still-running notice",
        "        \" WHERE te.task_id = ? AND te.retired_at IS NULL AND e.state <> 'discarded'\",",
        "        \" WHERE te.task_id = ? AND te.retired_at IS NULL\",",
        "test_a_follow_up_a_person_discarded_is_not_work_outstanding",
    ),
]
