"""The dispatch rules' proofs: settlement, recovery, the dispatcher, the driver and
the dispatch tools. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DISPATCH: list[Mutation] = [
    rule(
        "an exposed, unreported instruction ends unknown: it never runs again automatically",
        "    return moved(Settlement.unknown, RecordState.completed)\n",
        "    return moved(Settlement.returned, RecordState.admitted)\n",
        "test_an_exposed_unreported_event_ends_unknown_and_the_task_is_superseded",
        "test_killed_while_a_worker_runs_the_restart_ends_it_and_settles_it_unknown",
    ),
    rule(
        "a pulled row is never returned to wait for another worker",
        "    if row.delivery == DeliveryState.admitted and not row.pulled:\n        return moved(",
        "    if row.delivery == DeliveryState.admitted:\n        return moved(",
        "test_nothing_a_worker_may_have_seen_goes_back_to_wait_for_another_worker",
    ),
    rule(
        "a reported outcome stands",
        "    if row.delivery == DeliveryState.completed:\n        return RowSettlement(row.event_id, Settlement.reported, None)\n",
        "    if False:\n        return RowSettlement(row.event_id, Settlement.reported, None)\n",
        "test_a_reported_outcome_stands",
        "test_a_reported_outcome_stands_through_settlement",
    ),
    rule(
        "a proven spawn failure is retried once, then blocked",
        "        if row.withdrawn_before:\n",
        "        if False:\n",
        "test_a_proven_spawn_failure_is_retried_once_then_blocked",
        "test_a_spawn_that_fails_is_retried_once_then_blocked_with_a_notice",
    ),
    rule(
        "exposure before hand-off: a launch exposes its event before the driver is asked",
        "        \"UPDATE task_events SET delivery = ?, exposed_at = ?, exposed_attempt_id = ?\"\n"
        "        \" WHERE task_id = ? AND event_id = ? AND delivery = 'admitted'\",\n"
        "        (str(exposed), stamp,",
        '        "UPDATE task_events SET exposed_at = ? , exposed_attempt_id = ?"\n'
        "        \" WHERE task_id = ? AND event_id = ? AND delivery = 'admitted'\",\n"
        "        (stamp,",
        "test_killed_while_a_worker_runs_the_restart_ends_it_and_settles_it_unknown",
    ),
    rule(
        "recovery holds an attempt left mid-launch and settles nothing around it",
        "    if not facts.recorded_process:\n        return RecoveryStep.mark_left\n",
        "",
        "test_recovery_holds_an_attempt_left_mid_launch_and_starts_nothing_there",
        also=(
            (
                '        assert attempt.pid is not None, "recovery_step ends only a recorded group"\n'
                '        assert attempt.pgid is not None, "recovery_step ends only a recorded group"\n',
                "        if attempt.pid is None or attempt.pgid is None:\n            return True\n",
            ),
        ),
    ),
    rule(
        "recovery never settles around a group it cannot verify",
        "    if not facts.group_gone:\n        return RecoveryStep.held\n",
        "",
        "test_recovery_never_settles_around_a_group_it_cannot_verify",
    ),
    rule(
        "recovery ends a crashed connector's worker before settling its attempt",
        "        result = processes.terminate_group(pgid, pid, process_started, self.grace_seconds, self.clock)\n",
        "        return True\n        result = processes.terminate_group(pgid, pid, process_started, self.grace_seconds, self.clock)\n",
        "test_killed_while_a_worker_runs_the_restart_ends_it_and_settles_it_unknown",
    ),
    rule(
        "core.dispatch: only the oldest open record of a conversation starts",
        "        free = key and key not in work.task_conversations and oldest[key] == record.event_id\n",
        "        free = key and key not in work.task_conversations\n",
        "test_only_the_oldest_waiting_record_of_a_free_conversation_starts",
        "test_what_starts_is_each_free_conversations_oldest_open_record_oldest_first",
    ),
    rule(
        "core.dispatch: an older open record holds its conversation (a new request there is queued)",
        "        record.conversation_key == conversation_key and record.event_id < event_id for record in work.records",
        "        False for record in work.records",
        "test_a_conversation_is_live_on_a_live_task_or_an_older_open_record",
    ),
    rule(
        "one live task per working directory: two workers never edit one checkout at once",
        "return conversation_key not in work.task_conversations and work_dir not in work.task_dirs",
        "return conversation_key not in work.task_conversations",
        "test_at_most_concurrency_workers_and_one_per_directory",
        "test_one_live_task_per_conversation_and_per_directory",
    ),
    rule(
        "the database holds one live task per directory too",
        "CREATE UNIQUE INDEX tasks_live_work_dir ON tasks (work_dir) WHERE ended_at IS NULL AND work_dir <> '';",
        "",
        "test_the_database_refuses_a_second_live_task_in_one_directory",
    ),
    rule(
        "a follow-up joins its conversation's live task",
        "joined = tasks.join_follow_ups(connection, task_id, now)",
        "joined = ()",
        "test_a_follow_up_mention_joins_the_live_task_and_is_answered_by_its_worker",
    ),
    rule(
        "get_dispatch cancels the guard, and its pending intent, in its own transaction",
        "        if serve.cancel_guard:\n",
        "        if False:\n",
        "test_get_dispatch_exposes_pulls_and_cancels_the_guard_and_its_pending_intent",
        "test_acknowledged_and_answered_the_connector_says_nothing",
    ),
    rule(
        "a guard that went out is reported to the worker as acknowledged",
        "guard_acknowledged=row.guard == GuardState.fired,",
        "guard_acknowledged=False,",
        "test_guard_acknowledged_when_the_guard_fired_before_the_pull",
        "test_slow_to_pull_the_guard_goes_out_after_thirty_seconds_and_the_worker_does_not_acknowledge",
    ),
    rule(
        "the token is re-checked inside every call's transaction",
        '"SELECT id FROM tasks WHERE token_sha256 = ? AND superseded_at IS NULL AND token_retired_at IS NULL"',
        '"SELECT id FROM tasks WHERE token_sha256 = ? AND token_retired_at IS NULL"',
        "test_a_superseded_token_is_refused_by_every_call_from_then_on",
    ),
    rule(
        "the worker gets only the allowlisted environment",
        "        chosen = {name: value for name, value in environ.items() if name in ALLOWLIST}",
        "        chosen = {name: value for name, value in environ.items() if True}",
        "test_a_secret_in_the_connectors_own_environment_does_not_reach_the_worker",
    ),
    rule(
        "the worker environment's allowlist names variables, never prefixes",
        "if name in ALLOWLIST}",
        'if name in ALLOWLIST or name.startswith(("LC_", "XDG_"))}',
        "test_the_allowlist_names_variables_and_passes_no_prefix",
    ),
    rule(
        "a variable setup --worker-env names reaches the worker",
        "return cls.claude_code(pass_env=pass_env, bash=allowed.bash, mcp_files=servers)",
        "return cls.claude_code(bash=allowed.bash, mcp_files=servers)",
        "test_a_variable_setup_names_with_worker_env_is_passed_as_it_is",
    ),
    rule(
        "setup --worker-env refuses a variable of the connector's own (the client secret, any BASECAMP_ name)",
        "    if name in CONNECTOR_SECRETS or name.startswith(CONNECTOR_PREFIX):\n",
        "    if name in CONNECTOR_SECRETS - {CLIENT_SECRET_ENV}:\n",
        "test_worker_env_never_names_a_variable_of_the_connectors_own",
        "test_setup_refuses_the_connectors_own_variables_and_the_loaders_one_line_each_and_changes_nothing",
    ),
    rule(
        "setup --worker-env refuses a variable of the dynamic loader's (LD_)",
        "    if name.startswith(LOADER_PREFIX):\n",
        "    if False:\n",
        "test_worker_env_never_names_a_variable_of_the_dynamic_loaders",
        "test_setup_refuses_the_connectors_own_variables_and_the_loaders_one_line_each_and_changes_nothing",
    ),
    rule(
        "the worker runs in a process group of its own",
        "            start_new_session=True,",
        "            start_new_session=False,",
        "test_the_worker_runs_in_the_routes_directory_in_a_group_of_its_own_with_stdin_closed",
    ),
    rule(
        "the start removes the session files a previous process left (they can hold a task token)",
        "        swept = sweep_sessions(parts.sessions)",
        "        swept = []",
        "test_connect_run.py",
    ),
    rule(
        "one connector per (account, agent): the instance lock refuses a second",
        "        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    except BlockingIOError:\n        os.close(descriptor)\n        return None\n",
        "        pass\n    except BlockingIOError:\n        os.close(descriptor)\n        return None\n",
        "test_a_second_connector_is_refused_naming_the_holder",
    ),
    rule(
        "a busy ledger is a ledger failure the outbox loop survives",
        "LEDGER_FAILURES = (sqlite3.Error, rows.IntentMoved, LedgerError)",
        "LEDGER_FAILURES = (sqlite3.Error, rows.IntentMoved)",
        "test_a_busy_ledger_does_not_end_the_outbox_loop",
    ),
    rule(
        "a tick rechecks shutdown before each launch",
        "            if self._shutdown.is_set():  # stop() may have run since this tick began\n                break\n",
        "",
        "test_nothing_is_launched_after_stop_reports_every_worker_settled",
    ),
    rule(
        "a worker that exists is supervised even if recording it as running fails",
        '            log.exception("dispatch attempt=%s: its process could not be recorded; supervising it anyway",\n'
        "                          launch.attempt_id, extra=_ids_of(launch))\n",
        "            raise\n",
        "test_a_spawned_worker_is_never_left_unsupervised_when_the_ledger_fails",
    ),
    rule(
        "urllib3's DEBUG request line carries no query string (a feed position is a credential)",
        '            record.msg, record.args = self._QUERY.sub("?<redacted>", message), ()',
        "            pass",
        "test_urllib3_debug_lines_do_not_carry_the_position",
    ),
    rule(
        "run reads the feed once during start, so nothing after the start is missed",
        "            self._poll()  # the first read fixes the feed position: nothing after the start is missed\n",
        "",
        "test_a_mention_made_once_the_start_is_over_is_seen_by_the_first_turn",
        "test_connect_run.py",
    ),
]
