"""The proofs of issue 11's hold and release (spec 5.5) and of the way out of an attempt left
mid-launch. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

HOLD: list[Mutation] = [
    rule(
        "the hold: nothing is startable while it stands",
        "    if not buckets or not may_launch(hold.standing(connection)):\n",
        "    if not buckets:\n",
        "test_nothing_launches_while_the_hold_stands_and_records_admitted_after_it_run_on_release",
    ),
    rule(
        "the hold: a launch asked for under it is refused before any write",
        "    if not may_launch(hold.standing(connection)):\n        raise NotStartable(",
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
        "the hold: waiting records are held",
        "        to_hold=tuple(record for record in open_records if record.state in WAITING),",
        "        to_hold=(),",
        "test_a_hold_tags_every_open_record_and_holds_only_the_waiting_ones",
        "test_a_hold_holds_the_waiting_records_and_tags_every_open_one",
    ),
    rule(
        "the hold: every open record is tagged for review",
        "        review=tuple(record.event_id for record in open_records),",
        "        review=(),",
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
        "        if args.hold:  # before intake starts (rule 4)\n",
        "        if False:\n",
        "test_a_mention_made_under_the_hold_waits_and_is_answered_once_after_release",
    ),
    rule(
        "the hold: status shows why and the generation",
        '            "cause": snapshot.hold.cause,\n            "generation": snapshot.hold.generation,\n',
        "",
        "test_a_hold_is_shown_and_summarized",
        "test_a_hold_is_reported",
    ),
    rule(
        "left mid-launch: recovery marks the attempt for a person",
        "                    tasks.mark_left(connection, attempt.attempt_id, self.ledger.clock.now())\n",
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
        "return Success(Settle(facts, claim, StopReason.failed, True, summary))",
        "return Success(Settle(facts, claim, StopReason.lost, False, summary))",
        "test_an_attempt_left_mid_launch_is_marked_and_a_persons_settlement_moves_the_project_on",
    ),
    rule(
        "left mid-launch: status flags it as needing a person",
        "    return task.attempt is not None and task.attempt.left_at is not None\n",
        "    return False\n",
        "test_an_attempt_left_mid_launch_is_flagged_for_a_person_with_what_to_check",
    ),
]
