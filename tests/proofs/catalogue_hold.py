"""The proofs of the hold and release, the way out of an attempt left
mid-launch, and a person's redispatch of a live task. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

HOLD: list[Mutation] = [
    rule(
        "the hold: nothing is startable while it stands",
        "    if not buckets or not may_launch(hold_marker.standing(connection)):\n",
        "    if not buckets:\n",
        "test_nothing_launches_while_the_hold_stands_and_records_admitted_after_it_run_on_release",
    ),
    rule(
        "the hold: a launch asked for under it is refused before any write",
        "    if not may_launch(hold_marker.standing(connection)):\n        raise NotStartable(",
        "    if False:\n        raise NotStartable(",
        "test_nothing_launches_while_the_hold_stands_and_records_admitted_after_it_run_on_release",
    ),
    rule(
        "the hold: the ledger refuses an attempt under it",
        "BEFORE INSERT ON attempts\nWHEN EXISTS (SELECT 1 FROM hold_marker)",
        "BEFORE INSERT ON attempts\nWHEN 0",
        "test_the_ledger_refuses_a_launch_and_a_first_exposure_under_the_hold",
    ),
    rule(
        "the hold: the ledger refuses a first exposure under it",
        "WHEN OLD.delivery = 'admitted' AND NEW.delivery = 'exposed' AND EXISTS (SELECT 1 FROM hold_marker)",
        "WHEN 0",
        "test_the_ledger_refuses_a_launch_and_a_first_exposure_under_the_hold",
    ),
    rule(
        "the hold: get_dispatch serves no first exposure or first pull under it",
        "    if held and (serve.expose or serve.pull):\n",
        "    if False and (serve.expose or serve.pull):\n",
        "test_under_a_hold_only_a_repeat_is_served",
    ),
    rule(
        "the hold: waiting records are held",
        "        to_hold=tuple(record for record in open_records if record.state in WAITING),",
        "        to_hold=(),",
        "test_a_hold_tags_every_open_record_and_holds_only_the_waiting_ones",
        "test_a_hold_holds_the_waiting_records_and_tags_every_open_one",
    ),
    rule(
        "the hold: every open record is tagged for review",
        "    tagged = [record.event_id for record in open_records]\n",
        "    tagged: list[int] = []\n",
        "test_a_hold_tags_every_open_record_and_holds_only_the_waiting_ones",
        "test_a_hold_holds_the_waiting_records_and_tags_every_open_one",
    ),
    rule(
        "the hold: a held record's pending guard is canceled with the note held",
        "                outbox.cancel(connection, guard, IntentState.pending, CANCELED_BY_HOLD, now)\n",
        "                pass\n",
        "test_a_hold_holds_the_waiting_records_and_tags_every_open_one",
    ),
    rule(
        "the hold: a standing hold keeps its first setter",
        "        marker_by=by if standing is None else standing.held_by,",
        "        marker_by=by,",
        "test_a_standing_hold_keeps_its_first_setter_and_time",
        "test_a_second_hold_is_a_new_generation_and_keeps_the_first_setter",
    ),
    rule(
        "the hold: release clears the marker",
        '            connection.execute("DELETE FROM hold_marker WHERE id = 1")\n',
        "            pass\n",
        "test_nothing_launches_while_the_hold_stands_and_records_admitted_after_it_run_on_release",
        "test_hold_then_release_as_a_person_types_them",
    ),
    rule(
        "the hold: run --hold sets it before the connector starts",
        "        if args.hold:  # before intake starts\n",
        "        if False:\n",
        "test_a_mention_made_under_the_hold_waits_and_is_answered_once_after_release",
    ),
    rule(
        "the hold: status shows why and the generation",
        '"held_at": hold.held_at, "cause": hold.cause,\n            "generation": hold.generation}',
        '"held_at": hold.held_at}',
        "test_a_hold_is_shown_and_summarized",
        "test_a_hold_is_reported",
    ),
    rule(
        "left mid-launch: recovery marks the attempt for a person",
        "                tasks.mark_left(connection, attempt.attempt_id, self.ledger.clock.now())\n",
        "                    pass\n",
        "test_an_attempt_left_mid_launch_is_marked_and_a_persons_settlement_moves_the_project_on",
    ),
    rule(
        "left mid-launch: only an attempt recovery marked is settled by a person",
        "    if not (facts.launching and facts.left):\n",
        "    if not facts.launching:\n",
        "test_a_launch_in_progress_is_never_settled_by_a_person",
    ),
    rule(
        "left mid-launch: did-not-run is refused once a worker pulled",
        "        if facts.pulled:\n",
        "        if False:\n",
        "test_did_not_run_is_refused_once_a_worker_pulled",
    ),
    rule(
        "left mid-launch: a launch no worker ran is withdrawn to run again",
        "return Success(LaunchSettlement(facts, claim, StopReason.failed, True, summary))",
        "return Success(LaunchSettlement(facts, claim, StopReason.lost, False, summary))",
        "test_an_attempt_left_mid_launch_is_marked_and_a_persons_settlement_moves_the_project_on",
    ),
    rule(
        "left mid-launch: status flags it as needing a person",
        "    return task.attempt is not None and task.attempt.left_at is not None\n",
        "    return False\n",
        "test_an_attempt_left_mid_launch_is_flagged_for_a_person_with_what_to_check",
    ),
    rule(
        "live redispatch: a record a live task carries is authorized pending on it",
        "        return _authorized_live(facts, facts.live_task)\n",
        "        pass\n",
        "test_a_record_a_live_task_carries_is_authorized_pending_on_that_task",
        "test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends",
    ),
    rule(
        "live redispatch: the same authorization twice is already taken",
        "    if facts.pending_on == task:\n",
        "    if False:\n",
        "test_the_same_live_redispatch_twice_is_already_taken",
        "test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends",
    ),
    rule(
        "live redispatch: the replaced task's token is retired",
        "        worker = tasks.retire_token(connection, plan.stop_task, now)\n",
        "        worker = tasks.RecordedWorker(None, None, None, '')\n",
        "test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends",
    ),
    rule(
        "live redispatch: a retired token is refused by the worker's tools",
        '"SELECT id FROM tasks WHERE token_sha256 = ? AND superseded_at IS NULL AND token_retired_at IS NULL"',
        '"SELECT id FROM tasks WHERE token_sha256 = ? AND superseded_at IS NULL"',
        "test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends",
    ),
    rule(
        "live redispatch: the task's end admits the record",
        "  UPDATE events SET state = 'admitted', reason = '', revision = revision + 1,\n",  # migration 0012's
        "  UPDATE events SET state = state, reason = '', revision = revision + 1,\n",
        "test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends",
    ),
    rule(
        "live redispatch: the task's end asks core.edges before the trigger admits the record",
        "        asked(RECORD_EDGES, RecordState(record_state), RecordState.admitted, Actor.person)  # the trigger's move\n",
        "        pass\n",
        "test_the_redispatch_a_task_end_applies_is_asked_of_core_before_the_task_ends",
    ),
    rule(
        "live redispatch: a success is never run again, pending or not",
        "IS NOT NULL\n AND NEW.outcome IN ('unknown', 'failed')\n",  # migration 0012's
        "IS NOT NULL\n",
        "test_a_pending_redispatch_lapses_when_the_worker_succeeds",
    ),
    rule(
        "live redispatch: the command stops the recorded worker",
        "        result = processes.terminate_group(worker.pgid, worker.pid, worker.process_started, grace)\n",
        "        result = processes.TerminationResult(processes.Termination.gone, 'not asked')\n",
        "test_a_redispatch_of_a_live_task_stops_its_worker_and_runs_the_record_again_once",
    ),
    rule(
        "live redispatch: what stopping found is the worker state",
        '    "terminated": WorkerState.stopped,\n',
        '    "terminated": WorkerState.gone,\n',
        "test_what_stopping_the_worker_found_is_its_worker_state",
        "test_a_redispatch_of_a_live_task_stops_its_worker_and_runs_the_record_again_once",
    ),
    rule(
        "live redispatch: no notice asks a person for the redispatch a person made",
        "    elif row.record_state == RecordState.admitted:\n        settlement = Settlement.redispatched\n",
        "",
        "test_a_row_whose_record_a_pending_redispatch_admitted_reads_back_redispatched_with_no_line",
        "test_a_redispatch_of_a_live_task_stops_its_worker_and_runs_the_record_again_once",
    ),
    rule(
        "the hold: a redispatch under it says nothing launches until release",
        "    if plan.action is Action.redispatch and done.held:\n",
        "    if False:\n",
        "test_a_redispatch_under_the_hold_says_nothing_launches_until_release",
    ),
    rule(
        "the hold: a guard whose claim fired its rows is never canceled by it",
        "    sql = (\"SELECT id FROM outbox WHERE intent_key = ? AND state = 'pending' AND NOT EXISTS\"\n"
        "           \" (SELECT 1 FROM task_events WHERE event_id = ? AND guard = 'fired')\")\n"
        "    found = connection.execute(sql, (guard_key(event_id), event_id)).fetchone()\n",
        "    sql = \"SELECT id FROM outbox WHERE intent_key = ? AND state = 'pending'\"\n"
        "    found = connection.execute(sql, (guard_key(event_id),)).fetchone()\n",
        "test_a_hold_leaves_a_guard_its_claim_fired_rows_for_pending_and_it_lands_after_the_release",
        "test_a_hold_never_cancels_a_guard_whose_claim_fired_its_rows",
    ),
]
