"""The proofs of a person's decisions (``redispatch`` and ``discard``). Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DECISIONS: list[Mutation] = [
    rule(
        "the ledger moves a completed record only under a decision made at its current revision",
        "'completed'\n       AND d.from_revision = OLD.revision\n",  # migration 0012's, the trigger that runs
        "'completed'\n",
        "test_the_ledger_moves_a_completed_record_only_under_a_decision_at_its_revision",
    ),
    rule(
        "the ledger moves a completed record only once no live task carries it",
        "(\n  OLD.state = 'completed'\n"
        "  AND NOT EXISTS (SELECT 1 FROM task_events WHERE event_id = NEW.id AND retired_at IS NULL)\n",
        "(\n  OLD.state = 'completed'\n",
        "test_the_ledger_refuses_a_decision_over_a_record_a_live_task_carries",
    ),
    rule(
        "the ledger moves a completed record only under a decision that states its real outcome",
        "\n       AND d.from_outcome = (SELECT outcome FROM task_events WHERE event_id = NEW.id\n"
        "                              ORDER BY task_id DESC LIMIT 1)))",
        "\n))",
        "test_the_ledger_refuses_a_decision_that_misstates_the_outcome",
    ),
    rule(
        "the ledger takes only the move the decision names",
        "\n       AND d.to_state = NEW.state\n",
        "\n",
        "test_the_ledger_moves_a_completed_record_only_under_a_decision_at_its_revision",
        also=(("\n             AND NEW.reason = 'by_operator' AND d.from_outcome = 'unknown')\n",
               "\n             AND NEW.reason = 'by_operator' AND d.from_outcome = 'unknown')"
               " OR d.action = 'discard'\n"),),
    ),
    rule(
        "a decision row never changes",
        "    SELECT RAISE(ABORT, 'a decision is a record of what a person decided: it never changes');\n",
        "    SELECT 1;\n",
        "test_a_decision_row_never_changes",
    ),
    rule(
        "a success is never run again",
        "        case _R.completed if facts.outcome == EventOutcome.succeeded:",
        "        case _R.completed if False:",
        "test_a_success_is_never_run_again",
        "test_a_failure_reported_by_the_worker_may_be_redispatched_a_success_may_not",
    ),
    rule(
        "a completed record a live task still carries is live: never decided over",
        "    if facts.state is _R.dispatched or (facts.carried and facts.state is _R.completed):",
        "    if facts.state is _R.dispatched:",
        "test_a_completed_record_its_task_still_carries_is_live",
        "test_a_completed_record_whose_task_still_runs_is_live_to_a_discard",
    ),
    rule(
        "a record already waiting to run is not redispatched",
        "    if action is Action.redispatch and facts.state in (_R.admitted, _R.queued):",
        "    if False:",
        "test_a_record_already_waiting_to_run_is_not_redispatched",
    ),
    rule(
        "a blocked record is offered back to admission, not before a throttled read's deadline",
        "    offer = now if facts.retry_at is None else max(now, facts.retry_at)",
        "    offer = now",
        "test_a_throttled_block_is_not_offered_before_the_server_deadline",
    ),
    rule(
        "only a completed record's unknown outcome is left for a discard to close",
        "        case _R.completed if facts.outcome != EventOutcome.unknown:",
        "        case _R.completed if False:",
        "test_only_an_unknown_outcome_is_left_to_close",
    ),
    rule(
        "a second discard by a person is already done, not a new decision",
        "        if facts.discarded_by_person:",
        "        if False:",
        "test_a_second_discard_by_a_person_is_already_done_not_an_error",
        "test_a_discard_cancels_the_pending_guard_and_says_who",
    ),
    rule(
        "a discard cancels the record's pending notices in its transaction",
        "    canceled, sending = _cancel_pending(connection, facts.event_id, now) if plan.cancel_pending else ((), ())",
        "    canceled, sending = (), ()",
        "test_a_discard_cancels_the_pending_guard_and_says_who",
        "test_a_discard_cancels_a_blocked_records_holding_reply",
        "test_a_discard_of_an_unknown_outcome_cancels_its_pending_completion_notice",
    ),
    rule(
        "a discard leaves a task's notice alone while the task carried a record not discarded",
        "                  WHERE other.task_id = te.task_id AND e.state <> 'discarded')))",
        "                  WHERE other.task_id = te.task_id AND 0)))",
        "test_a_completion_notice_naming_another_live_record_stays",
    ),
    rule(
        "a refused decision exits non-zero",
        "    print(f\"error: {result['summary']}\", file=sys.stderr)\n    return EXIT_REFUSED\n",
        "    print(f\"error: {result['summary']}\", file=sys.stderr)\n    return EXIT_OK\n",
        "test_the_redispatch_a_completion_notice_names_runs_the_record_again_beside_the_connector",
    ),
    rule(
        "a redispatch admits a record only in a project the configuration serves",
        "        case Success(plan) if _admits(plan) and not facts.served:",
        "        case Success(plan) if False:",
        "test_nothing_is_admitted_again_in_a_project_the_configuration_does_not_serve",
        "test_a_redispatch_never_admits_a_record_no_connector_with_this_configuration_will_start",
    ),
    rule(
        "the command tells the decision which projects the configuration serves",
        "        served=bucket_id in served,",
        "        served=True,",
        "test_a_redispatch_never_admits_a_record_no_connector_with_this_configuration_will_start",
    ),
    rule(
        "a follow-up no worker was handed may be discarded while its task runs",
        "    if action is Action.discard and facts.state is _R.dispatched and facts.unhanded:",
        "    if False:",
        "test_a_follow_up_no_worker_was_handed_may_be_discarded_but_not_redispatched",
        "test_a_person_can_stop_a_follow_up_no_worker_has_pulled_from_running",
    ),
    rule(
        "the ledger discards a dispatched record only if no worker was ever handed it",
        "    AND NOT EXISTS (SELECT 1 FROM task_events\n"
        "                     WHERE event_id = NEW.id AND (delivery <> 'admitted' OR pulled_at IS NOT NULL))\n",
        "",
        "test_the_ledger_discards_a_dispatched_record_only_if_no_worker_was_handed_it",
    ),
    rule(
        "a record moved to blocked or discarded keeps no content",
        "    UPDATE events SET snapshot = NULL WHERE id = NEW.id;\n",
        "    SELECT 1;\n",
        "test_a_record_a_person_discarded_keeps_no_content",
    ),
    rule(
        "a person's redispatch of a blocked record opens a fresh retry window",
        '        " blocked_at = CASE WHEN ? THEN ? END, next_retry_at = ?"',
        '        " blocked_at = CASE WHEN ? THEN blocked_at ELSE ? END, next_retry_at = ?"',
        "test_a_persons_redispatch_of_a_blocked_record_outlives_one_transient_failure",
    ),
    rule(
        "a worker whose group outlived SIGKILL is not settled: nothing starts beside what is left of it",
        "        if reason is None:\n            log.error(",
        "        if reason is None:\n            reason = StopReason.lost\n        if False:\n            log.error(",
        "test_a_worker_whose_group_outlived_sigkill_is_never_settled_around",
    ),
]
