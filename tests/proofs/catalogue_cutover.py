"""The proofs of cutting over from a shadow run (issue 11, point 2; reference spec 5.5, 5.6):
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
        "            locks.enter_context(_shadow_lock(shadow, ids, clock))\n",
        "            pass\n",
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
        "        for waiting in plan.revoke:  # rule 5\n",
        "        for waiting in ():  # rule 5\n",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "a task's end applies no redispatch a hold revoked (the trigger)",
        "                AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))\nBEGIN",
        "                )\nBEGIN",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "a redispatch a hold revoked may be made again after the release",
        '        "  AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))"\n',
        '        ")"\n',
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
    rule(
        "a revoked redispatch's record is tagged for review, even one its worker completed",
        "        review=(*tagged, *sorted({one.event_id for one in waiting} - set(tagged))),\n",
        "        review=tuple(tagged),\n",
        "test_a_hold_revokes_each_waiting_redispatch_and_tags_its_record_even_completed",
        "test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note",
    ),
]
