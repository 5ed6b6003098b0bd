"""The status command's proofs (``bin/connect status``): the report, the ledger snapshot and the
command. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

STATUS: list[Mutation] = [
    # core/presentation/status_report.py
    rule(
        "status: queue depths name every record state, zero included, in the lifecycle's order",
        "    return {str(state): counts.get(str(state), 0) for state in RecordState}",
        "    return dict(counts)",
        "test_queue_depths_name_every_record_state_zero_included_in_the_lifecycles_order",
        "test_an_idle_ledger_with_no_connector_says_not_running",
    ),
    rule(
        "status: running is said only when the lock file's pid is present",
        'PidStatus.absent: "no"}',
        'PidStatus.absent: "yes"}',
        "test_running_is_said_only_when_the_lock_files_pid_is_present",
        "test_a_lock_file_left_by_a_dead_connector_names_an_absent_pid",
    ),
    rule(
        "status: a pid whose presence cannot be told is unknown, not absent",
        "    if present is None:\n        return PidStatus.unknown\n",
        "",
        "test_a_pid_whose_presence_cannot_be_told_is_unknown_not_absent",
    ),
    rule(
        "status: the lock file's metadata is marked diagnostic",
        '        "diagnostic": True,\n',
        "",
        "test_the_lock_file_is_marked_diagnostic_whether_or_not_there_is_one",
    ),
    rule(
        "status: refused messages are counted apart from indeterminate ones",
        "    indeterminate = sum(1 for intent in snapshot.waiting if not intent.refused)",
        "    indeterminate = len(snapshot.waiting)",
        "test_refused_messages_wait_for_a_person_too_and_are_counted_apart",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: a live attempt has no stop reason (null, not '')",
        '        "stop_reason": dispatch.stop_reason or None,',
        '        "stop_reason": dispatch.stop_reason,',
        "test_a_live_dispatch_has_no_stop_reason_and_an_unreported_event_no_outcome",
    ),
    rule(
        "status: an event not yet reported or settled has no outcome (null, not '')",
        '                "outcome": event.outcome or None,',
        '                "outcome": event.outcome,',
        "test_a_live_dispatch_has_no_stop_reason_and_an_unreported_event_no_outcome",
    ),
    rule(
        "status: held records are listed in the text when there are any",
        '    if snapshot.held:\n        out.append(f"held records',
        '    if False:\n        out.append(f"held records',
        "test_held_records_are_listed_only_when_there_are_some",
    ),
    rule(
        "status: the text starts with the one-line summary",
        '    out = [\n        summary(status),\n        "",\n',
        '    out = [\n        "",\n',
        "test_the_summary_comes_first_and_reads_like_the_issue_says",
    ),
    rule(
        "status: the last twenty dispatches, not more",
        "LAST_DISPATCHES = 20\n",
        "LAST_DISPATCHES = 25\n",
        "test_the_last_twenty_dispatches_are_shown_newest_first",
    ),
    # shell/ledger_status.py
    rule(
        "status: one read transaction, so the numbers agree beside a connector committing",
        "    with ledger.read() as connection:\n        blocked = _blocked(connection)\n",
        '    with __import__("contextlib").nullcontext(ledger._connection) as connection:\n'
        "        blocked = _blocked(connection)\n",
        "test_the_numbers_agree_while_a_connector_commits_beside_the_read",
    ),
    rule(
        "status: a feed position is read only as whether one is kept, never its text",
        "\"SELECT position <> '', last_served_id, updated_at FROM checkpoints ORDER BY filter_digest\"",
        '"SELECT position, last_served_id, updated_at FROM checkpoints ORDER BY filter_digest"',
        "test_neither_the_feed_position_nor_the_token_is_ever_shown",
        also=(("FeedCheckpoint(bool(has_position), ", "FeedCheckpoint(has_position, "),),
    ),
    rule(
        "status: refused intents wait for a person too",
        "\" FROM outbox WHERE state = 'indeterminate' OR (state = 'canceled' AND note IN\"",
        "\" FROM outbox WHERE state = 'indeterminate' OR (0 AND note IN\"",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: blocked records are counted by reason",
        "WHERE state = 'blocked' GROUP BY reason ORDER BY reason",
        "WHERE state = 'blocked' GROUP BY state ORDER BY reason",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: live tasks are the tasks not yet ended",
        '" WHERE t.ended_at IS NULL ORDER BY t.id"',
        '" WHERE 1 ORDER BY t.id"',
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: a live task shows its worker's pid",
        '" a.id, a.state, a.pid, a.launched_at, a.left_at"',
        '" a.id, a.state, NULL, a.launched_at, a.left_at"',
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: dispatches are the newest first",
        '" FROM attempts ORDER BY launched_at DESC, rowid DESC LIMIT ?"',
        '" FROM attempts ORDER BY launched_at, rowid LIMIT ?"',
        "test_the_last_twenty_dispatches_are_shown_newest_first",
    ),
    rule(
        "status: each dispatch shows each event's outcome",
        '"SELECT te.event_id, te.delivery, te.outcome, te.withdrawn_at IS NOT NULL, e.state, te.guard,"',
        "\"SELECT te.event_id, te.delivery, '', te.withdrawn_at IS NOT NULL, e.state, te.guard,\"",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: held records are read",
        "FROM events WHERE state = 'held' ORDER BY id",
        "FROM events WHERE state = 'none' ORDER BY id",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status: a hold is read",
        '"SELECT held_by, held_at, cause, generation FROM hold_marker WHERE id = 1"',
        '"SELECT held_by, held_at, cause, generation FROM hold_marker WHERE id = 0"',
        "test_a_hold_is_reported",
    ),
    # shell/commands/status.py
    rule(
        "status never creates a ledger: it opens the read-only way",
        "        with open_ledger_read_only(paths.ledger) as ledger:\n            lane, losses = ",
        '        with __import__("shell.ledger.connection").ledger.connection.open_ledger(paths.ledger) as ledger:\n'
        "            lane, losses = ",
        "test_a_missing_state_directory_configuration_or_ledger_is_one_line_and_nothing_is_created",
    ),
    rule(
        "status takes no lock: it works while a connector holds it",
        "    holder = peek(paths.directory, configuration.account_id, configuration.agent_id)\n    try:\n",
        '    __import__("shell.state.lock").state.lock.acquire(paths.directory, configuration.account_id,'
        ' configuration.agent_id, __import__("datetime").datetime.now(__import__("datetime").UTC))\n'
        "    holder = peek(paths.directory, configuration.account_id, configuration.agent_id)\n    try:\n",
        "test_status_takes_no_lock_and_names_the_holder_the_lock_file_names",
    ),
    rule(
        "status: the lock file's pid is checked for presence",
        "values.pid_status(holder.pid_present)",
        "values.pid_status(True)",
        "test_a_lock_file_left_by_a_dead_connector_names_an_absent_pid",
    ),
    rule(
        "status: a missing state directory is one line that names it",
        '    if not paths.directory.is_dir():\n        raise UserError(f"no state directory at {paths.directory}: run '
        'bin/connect setup, then',
        '    if False:\n        raise UserError(f"no state directory at {paths.directory}: run bin/connect setup, then',
        "test_a_missing_state_directory_configuration_or_ledger_is_one_line_and_nothing_is_created",
    ),
    rule(
        "status: a ledger that cannot be read is one line, not a traceback",
        "            snapshot = read_snapshot(ledger)\n    except sqlite3.DatabaseError as error:\n",
        "            snapshot = read_snapshot(ledger)\n    except LookupError as error:\n",
        "test_a_ledger_that_cannot_be_read_is_one_line_not_a_traceback",
    ),
    rule(
        "status: the token is never shown (a report that carried it is caught)",
        "state_dir=str(paths.directory),",
        'state_dir=str(paths.directory) + __import__("shell.state.config").state.config.read_token('
        '__import__("pathlib").Path(configuration.token_file)),',
        "test_neither_the_feed_position_nor_the_token_is_ever_shown",
    ),
    # shell/ledger.py (the read-only opener status relies on)
    rule(
        "status: a ledger from a newer program is refused by the read-only opener",
        "        refuse_too_new(version, ledger_path)\n        if version < SCHEMA_VERSION:",
        "        if version < SCHEMA_VERSION:",
        "test_a_ledger_from_a_newer_program_is_refused_in_one_line",
    ),
    rule(
        "status lists records not yet running by id: blocked, admitted and queued",
        "            \" WHERE state IN ('blocked', 'admitted', 'queued') ORDER BY id LIMIT ?\",",
        "            \" WHERE state IN ('admitted', 'queued') ORDER BY id LIMIT ?\",",
        "test_the_report_counts_what_the_ledger_holds",
    ),
    rule(
        "status's text names each record not yet running and what moves it",
        "    if snapshot.not_running:\n",
        "    if False:\n",
        "test_records_not_yet_running_are_listed_by_id_with_what_moves_them",
    ),
    # the running connector's failed writes (shell/ledger/write_failures.py, connection.py)
    rule(
        "failed writes: a write whose storage failed is recorded where status reads it",
        "        if self._records and failures is not None and is_storage_failure(error):\n"
        "            failures.failed(error, self._ledger.clock.now())\n",
        "        pass\n",
        "test_status_shows_the_connectors_failed_write_until_its_next_good_one",
    ),
    rule(
        "failed writes: the next write that commits clears the record",
        "        elif self._records and ledger.write_failures is not None:\n            ledger.write_failures.succeeded()\n",
        "        elif self._records and ledger.write_failures is not None:\n            pass\n",
        "test_status_shows_the_connectors_failed_write_until_its_next_good_one",
    ),
    rule(
        "failed writes: a clear takes its turn, so a failure recorded meanwhile is kept",
        "            with self._turn:\n                if not self._recorded:\n",
        "            if True:\n                if not self._recorded:\n",
        "test_a_failure_recorded_while_a_clear_is_under_way_is_kept",
    ),
    rule(
        "failed writes: recording a failure takes its turn, never inside a clear",
        "            with self._turn:\n                _write_slot(self._descriptor, slot)\n",
        "            if True:\n                _write_slot(self._descriptor, slot)\n",
        "test_a_failure_recorded_while_a_clear_is_under_way_is_kept",
    ),
    rule(
        "failed writes: a refused move is no failed write",
        "    return code in _STORAGE_CODES\n",
        "    return True\n",
        "test_a_refused_move_is_no_failed_write",
    ),
    rule(
        "failed writes: bin/connect run keeps the record for its ledger",
        "        watch_write_failures(ledger)  # status shows this connector's failed writes\n",
        "",
        "test_status_beside_a_running_connector_then_beside_none",
    ),
    rule(
        "failed writes: status reads the record",
        "        write_failure=read_write_failure(paths.ledger))",
        "        )",
        "test_status_shows_the_connectors_failed_write_until_its_next_good_one",
    ),
    rule(
        "failed writes: the summary says the connector's writes are failing",
        "    if status.write_failure is not None:\n        parts.append(",
        "    if False:\n        parts.append(",
        "test_the_connectors_failed_write_is_in_the_summary_the_text_and_the_report",
        "test_status_shows_the_connectors_failed_write_until_its_next_good_one",
    ),
    # bin/connect show EVENT_ID: core/presentation/event_history.py, shell/ledger/history.py, shell/cli/show.py
    rule(
        "show: the story is told in time order, whichever row holds each moment",
        "    return tuple(sorted(told, key=lambda moment: moment.at))",
        "    return tuple(told)",
        "test_the_story_is_told_in_time_order_whichever_row_holds_each_moment",
        "test_any_order_of_rows_tells_the_same_story",
    ),
    rule(
        "show: a message reconciliation found by listing is told adopted, not posted",
        '    if intent.note == notes.ADOPTED:\n        return "adopted"\n',
        "",
        "test_a_sent_message_is_told_posted_adopted_or_marked_sent_by_a_person",
    ),
    rule(
        "show: a message a person marked sent is told marked sent, not posted",
        '    if intent.note in (notes.RESOLVED_SENT_CHECKED, notes.RESOLVED_SENT_UNCHECKED):\n'
        '        return "marked_sent"\n',
        "",
        "test_a_sent_message_is_told_posted_adopted_or_marked_sent_by_a_person",
    ),
    rule(
        "show: the event's ack_id and reply_id are its latest task row's",
        "    latest = max(history.tasks, key=lambda task: task.task_id)",
        "    latest = history.tasks[0]",
        "test_the_events_ack_id_and_reply_id_are_its_latest_task_rows",
    ),
    rule(
        "show: every person's decision on the event is in its story",
        "    for decision in history.decisions:\n        told += _decision_moments(decision)\n",
        "",
        "test_every_persons_decision_on_the_event_is_in_its_story",
        "test_a_persons_decision_is_read_with_the_record_as_it_was",
    ),
    rule(
        "show: the ledger's decisions on the event are read",
        '           " WHERE d.event_id = ? ORDER BY d.id")',
        '           " WHERE d.event_id = -? ORDER BY d.id")',
        "test_a_persons_decision_is_read_with_the_record_as_it_was",
    ),
    rule(
        "show: an event's history holds its tasks' attempts' notices (a completion has no event of its own)",
        "    attempt_ids = [attempt.attempt_id for task in tasks for attempt in task.attempts]",
        "    attempt_ids: list[str] = []",
        "test_an_events_history_holds_its_attempts_notice_and_none_of_another_events_rows",
    ),
    rule(
        "show: an id the ledger holds no record of is no such event (exit 4), one line",
        '        raise UserError(f"the ledger holds no event {args.event_id}", EXIT_NOT_FOUND)\n    if args.json:',
        '        raise UserError(f"the ledger holds no event {args.event_id}", EXIT_CONFIG)\n    if args.json:',
        "test_show_on_a_ledger_tells_it_and_an_unknown_id_is_one_line",
    ),
    rule(
        "show: the ledger is opened read-only, so show never makes one",
        "        with open_ledger_read_only(paths.ledger) as ledger:\n            history = read_history(",
        '        with __import__("shell.ledger.connection", fromlist=["x"]).open_ledger(paths.ledger) as ledger:\n'
        "            history = read_history(",
        "test_show_creates_no_ledger_where_there_is_none",
    ),
    rule(
        "status --json: a dispatched event carries the worker's ack_id and reply_id",
        '                    "ack_id": event.ack_id, "reply_id": event.reply_id,\n',
        "",
        "test_the_report_counts_what_the_ledger_holds",
        "test_a_withdrawn_event_says_its_worker_could_not_be_started",
    ),
    rule(
        "status: a dispatched event's ack_id and reply_id are read from its task row",
        '            " te.ack_id, te.reply_id"',
        '            " NULL, NULL"',
        "test_the_report_counts_what_the_ledger_holds",
    ),
]
