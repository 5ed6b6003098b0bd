"""The ledger's moves ask core.edges from the row's real state, never from a
literal; the kind table is complete; a token file is read whole or refused. Same form as
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
    # decisions out of the shell: core decides, the ledger applies
    rule(
        "settlement plan: an unknown row's exposed or delivered delivery is completed, outcome unknown",
        "            complete_delivery=unknown and delivery in (DeliveryState.exposed, DeliveryState.delivered),\n",
        "            complete_delivery=False,\n",
        "test_a_settlement_plan_completes_an_unknown_row_before_the_supersession_and_withdraws_after",
        "test_a_settlement_plan_writes_what_the_settlement_decided_and_nothing_else",
        "test_an_exposed_unreported_event_ends_unknown_and_the_task_is_superseded",
    ),
    rule(
        "settlement plan: a row withdrawn or blocked again is withdrawn, so its retry is counted",
        "            withdraw=decision.settlement in (Settlement.withdrawn, Settlement.blocked_again),\n",
        "            withdraw=False,\n",
        "test_a_settlement_plan_writes_what_the_settlement_decided_and_nothing_else",
        "test_a_proven_spawn_failure_is_retried_once_then_blocked",
    ),
    rule(
        "settlement plan: end_attempt applies the plan's writes after the supersession",
        "    _apply(connection, task_id, plan.after, stamp)\n",
        "",
        "test_a_proven_spawn_failure_is_retried_once_then_blocked",
    ),
    rule(
        "waiting rule: a record on a live task row neither starts nor joins another task",
        "    return record.state in WAITING_STATES and record.has_snapshot and not record.on_live_task\n",
        "    return record.state in WAITING_STATES and record.has_snapshot\n",
        "test_a_task_takes_the_records_waiting_on_its_conversation_oldest_first",
    ),
    rule(
        "waiting rule: a task takes the records waiting on its own conversation only",
        "    on_it = [record for record in work.records if record.conversation_key == conversation_key]\n",
        "    on_it = list(work.records)\n",
        "test_a_task_takes_the_records_waiting_on_its_conversation_oldest_first",
        "test_what_starts_is_what_a_task_on_its_conversation_would_take_first",
    ),
    rule(
        "blocked reset: blocked again for its reason, a record keeps its first blocked time (its window ends)",
        "    since = before.blocked_at if kept and before.blocked_at is not None else now\n",
        "    since = now\n",
        "test_a_record_blocked_again_for_its_reason_keeps_its_window_and_another_reason_starts_one",
        "test_a_read_that_keeps_failing_stops_being_retried_when_its_window_closes",
    ),
    rule(
        "blocked reset: blocked for another reason, a record's window starts anew",
        "    kept = before.state is RecordState.blocked and before.reason == reason and before.blocked_at is not None\n",
        "    kept = before.state is RecordState.blocked and before.blocked_at is not None\n",
        "test_a_record_blocked_again_for_its_reason_keeps_its_window_and_another_reason_starts_one",
    ),
    rule(
        "recovery: a gone group's attempt is settled only after its replies are listed",
        "    if not facts.listed:\n        return RecoveryStep.list_replies\n",
        "",
        "test_recovery_marks_holds_or_settles_each_attempt_by_what_it_found",
        "test_recovery_walked_step_by_step_ends_a_group_only_when_recorded_and_settles_only_unstopped",
    ),
    rule(
        "route preflight: a route directory this user cannot write is refused by run, failed by doctor",
        '    if not route.writable:\n        return f"{where} is not writable by this user"\n',
        "",
        "test_run_refuses_a_route_directory_this_user_cannot_write",
        "test_the_route_preflight_names_a_directorys_first_problem_in_one_wording",
        "test_a_route_directory_missing_not_a_directory_or_not_writable_fails",
    ),
    rule(
        "route preflight: setup refuses, and its --show names, a route to a missing directory",
        "    problems.extend(route_problems(routes))\n",
        "",
        "test_setup_refuses_a_route_to_a_missing_directory",
        "test_show_prints_the_config_and_what_is_missing",
    ),
    rule(
        "route preflight: doctor's route check is the preflight's, in its words",
        "    problem = route_problem(route)\n",
        "    problem = None\n",
        "test_a_missing_route_directory_fails",
        "test_a_route_directory_missing_not_a_directory_or_not_writable_fails",
    ),
    rule(
        "asked from the row: the guard's firing asks core.edges from the guard read on each row",
        "        settled = asked(GUARD_EDGES, GuardState(guard), to, actor)\n",
        "        settled = asked(GUARD_EDGES, GuardState.armed, to, actor)\n",
        "test_no_move_in_the_ledger_is_asked_from_a_literal_state",
    ),
    rule(
        "asked from the row: the task's supersession asks core.edges from the task's state as read",
        "    asked(TASK_EDGES, TaskState(task_state), TaskState.superseded, Actor.dispatcher)\n",
        "    asked(TASK_EDGES, TaskState.live, TaskState.superseded, Actor.dispatcher)\n",
        "test_no_move_in_the_ledger_is_asked_from_a_literal_state",
    ),
]

KINDS: list[Mutation] = [
    rule(
        "kinds: a kind without a row in the kind table is an error at import, never at run time",
        '    raise ImportError(f"message kinds without a row in KINDS: {sorted(_missing)}")\n',
        "    pass\n",
        "test_a_kind_without_a_row_fails_at_import",
    ),
]

TOKEN_FILE: list[Mutation] = [
    rule(
        "a token file over 64 KiB is refused whole, never read cut as a token",
        "    if len(raw) > MAX_TOKEN_FILE_BYTES:  # cut, it would be read as a token it is not\n",
        "    if False:\n",
        "test_a_token_file_over_the_bound_is_refused_whole_never_read_cut",
    ),
]
