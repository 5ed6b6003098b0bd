"""The proofs of cutting over from a shadow run:
`shadow promote`'s steps and locks, `import`'s one transaction, and a hold's revoking of waiting
redispatches. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

CUTOVER: list[Mutation] = [
    rule(
        "promote knows its own hold by its cause, not any hold the shadow ledger stands under",
        "        if disk.shadow_hold != marker.cause:\n",
        "        if disk.shadow_hold is None:\n",
        "test_a_hold_the_shadow_ledger_held_before_promote_is_not_promote_s_own",
    ),
    rule(
        "promote sets the connector's old ledger aside before it moves the shadow's into place",
        "        if marker.aside is not None and disk.ledger and not disk.aside:\n",
        "        if False:\n",
        "test_the_walk_from_an_untouched_shadow_to_finished_takes_each_step_once",
        "test_promote_holds_the_shadow_ledger_and_moves_it_into_place",
    ),
    rule(
        "promote finishes only on a ledger its own hold holds",
        "    if disk.ledger and disk.ledger_hold == marker.cause:\n",
        "    if disk.ledger:\n",
        "test_what_promote_cannot_make_sense_of_is_stuck_with_words",
    ),
    rule(
        "the connector's old ledger is sealed into one file before it is set aside",
        "        ledgers.seal(ledger)\n        _rename(",
        "        _rename(",
        "test_an_old_ledger_a_killed_connector_left_with_its_log_is_set_aside_whole",
    ),
    rule(
        "promote takes the connector's instance lock",
        "        locks.enter_context(acquire(paths.directory, *ids, clock.now()))\n",
        "        pass\n",
        "test_promote_refuses_while_either_connector_runs_naming_it",
    ),
    rule(
        "promote takes the shadow connector's instance lock",
        "                locks.enter_context(acquire(shadow, *ids, clock.now()))\n",
        "                pass\n",
        "test_promote_refuses_while_either_connector_runs_naming_it",
    ),
    rule(
        "neither connector runs while a promote is unfinished",
        "    if marker_path(state).exists():\n",
        "    if False:\n",
        "test_run_refuses_while_a_promote_is_unfinished",
    ),
    rule(
        "a hold revokes each redispatch waiting on a live task",
        "        for waiting in plan.revoke:\n",
        "        for waiting in ():\n",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "a task's end applies no redispatch a hold revoked (the trigger)",
        "                AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))\nBEGIN",
        "                )\nBEGIN",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "hold --json names each redispatch it revoked",
        "for one in done.plan.revoke]",
        "for one in ()]",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "a redispatch a hold revoked may be made again after the release",
        '        "  AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))"\n',
        '        ")"\n',
        "test_a_redispatch_the_hold_revoked_is_authorized_again_after_release_while_its_task_runs",
    ),
    rule(
        "a revoked redispatch's record is tagged for review, even one its worker completed",
        "        review=(*tagged, *sorted({one.event_id for one in waiting} - set(tagged))),\n",
        "        review=tuple(tagged),\n",
        "test_a_hold_revokes_each_waiting_redispatch_and_tags_its_record_even_completed",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "import: a decision that is not a string is named as a bad entry, never raised",
        "    if not isinstance(decision, str) or decision not in _DECISIONS:\n",
        "    if decision not in _DECISIONS:\n",
        "test_a_bad_entry_is_named_by_its_index",
    ),
    rule(
        "import: a record never seen, decided done, gets a tombstone",
        "            (tombstones if entry.decision is Decision.done else unknown_held).append(entry.event_id)\n",
        "            unknown_held.append(entry.event_id)\n",
        "test_done_closes_what_waits_or_settled_badly_tombstones_the_unseen_and_tags_the_rest",
        "test_a_good_file_tombstones_what_is_done_and_tags_the_rest_in_one_go",
    ),
    rule(
        "import: done cannot close what a live task carries",
        "    if record.carried or state is _R.dispatched:\n",
        "    if False:\n",
        "test_done_cannot_close_what_a_task_carries_or_admission_has_not_decided",
    ),
    rule(
        "import: done closes only what a person's discard may close (core.edges)",
        "    if isinstance(RECORD_EDGES.step(state, _R.discarded, Actor.operator), Failure):\n",
        "    if False:\n",
        "test_done_cannot_close_what_a_task_carries_or_admission_has_not_decided",
        "test_a_file_that_cannot_be_applied_changes_nothing_and_says_why",
    ),
    rule(
        "import: an event named twice is an entry that cannot be applied",
        "                if found.event_id in first_at:\n",
        "                if False:\n",
        "test_a_bad_entry_is_named_by_its_index",
        "test_a_file_that_cannot_be_applied_changes_nothing_and_says_why",
    ),
    rule(
        "import: only version 1 is read",
        "    if type(version) is not int or version != VERSION:\n",
        "    if False:\n",
        "test_what_is_not_a_version_1_file_says_why",
        "test_a_file_that_cannot_be_applied_changes_nothing_and_says_why",
    ),
    rule(
        "import: a file over 16 MB is refused before it is read whole",
        "            if size > MAX_BYTES:  # said before a byte is read",
        "            if False:  # said before a byte is read",
        "test_a_file_that_cannot_be_applied_changes_nothing_and_says_why",
    ),
    rule(
        "import: every other open record is tagged for review",
        "        review=tuple(event_id for event_id in open_ids if event_id not in closed),\n",
        "        review=(),\n",
        "test_done_closes_what_waits_or_settled_badly_tombstones_the_unseen_and_tags_the_rest",
        "test_a_good_file_tombstones_what_is_done_and_tags_the_rest_in_one_go",
    ),
    rule(
        "import: the ledger lets an import close a completed record only as unknown or failed (trigger)",
        "             AND NEW.reason = 'imported_done' AND d.from_outcome IN ('unknown', 'failed')))\n",
        "             AND NEW.reason = 'imported_done' AND 0))\n",
        "test_a_good_file_tombstones_what_is_done_and_tags_the_rest_in_one_go",
    ),
    rule(
        "import takes the connector's instance lock",
        "    with acquire(paths.directory, configuration.account_id, configuration.agent_id, clock.now()):\n"
        "        match import_file.parse(",
        "    if True:\n        match import_file.parse(",
        "test_import_refuses_while_the_connector_runs",
    ),
    rule(
        "promote never sets aside a connector ledger with something in flight",
        "        if disk.shadow_ledger and disk.ledger and disk.ledger_unsettled:\n",
        "        if False:\n",
        "test_a_connector_ledger_with_something_in_flight_is_never_set_aside",
        "test_an_old_ledger_with_a_message_in_flight_is_not_set_aside_and_nothing_changes",
    ),
    rule(
        "promote reads what the connector's ledger has in flight before it begins",
        "        ledger_unsettled=ledgers.unsettled(ledger),\n",
        "        ledger_unsettled=None,\n",
        "test_an_old_ledger_with_a_message_in_flight_is_not_set_aside_and_nothing_changes",
    ),
    rule(
        "promote never sets aside a connector ledger that has something in flight again after begin",
        "            if disk.ledger_unsettled:  # again: something may have changed it since begin\n",
        "            if False:\n",
        "test_a_ledger_that_has_something_in_flight_again_after_begin_is_not_set_aside",
    ),
]
