"""The proofs of an operator's first week (no
writer over a file it does not own, advice only for the path named, a refusal Basecamp repeats
is exit 3, the stand-in refuses the impossible, what status and run say). Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

OPS: list[Mutation] = [
    # part 1: no command writes over a file it does not own
    rule(
        "login: a token path inside a state directory is refused before the sign-in",
        "    if is_state_directory(token_file.parent):\n",
        "    if False:\n",
        "test_a_new_path_inside_a_state_directory_is_refused",
    ),
    rule(
        "login: an existing file of another kind is refused before the sign-in",
        '    private_files.refuse_other_kind(token_file, "token file", FileKind.token)\n',
        "",
        "test_a_ledger_kept_outside_any_state_directory_is_refused_by_what_it_holds",
        "test_a_file_of_another_kind_is_refused",
    ),
    rule(
        "a token or configuration writer renames only over its own kind",
        '            if own is not None:\n                refuse_other_kind(path, own.value.removeprefix("a "), own)\n',
        "",
        "test_a_token_writer_renames_over_no_ledger_with_records",
        "test_save_config_refuses_a_config_json_that_holds_a_token_and_leaves_it",
    ),
    rule(
        "file kinds: an SQLite header is a ledger",
        "    if head.startswith(SQLITE_HEADER):\n        return FileKind.ledger\n",
        "",
        "test_each_kind_is_named_from_its_first_bytes",
    ),
    rule(
        "file kinds: a name a state directory reserves is refused to another kind's writer",
        "    if by_name is not None and by_name is not own:\n",
        "    if False:\n",
        "test_a_name_a_state_directory_reserves_is_refused_where_no_file_is_yet",
        "test_a_writer_replaces_only_its_own_kind_under_a_name_of_its_own",
    ),
    # part 3: advice only for the path named
    rule(
        "a missing ledger is said to be missing before its directory's mode",
        '            raise LedgerMissing(f"{ledger}: {_NO_LEDGER}") from None\n',
        "            pass\n",
        "test_a_mistyped_ledger_in_a_shared_directory_is_said_to_be_missing",
    ),
    rule(
        "no mode advice for a shared (sticky) directory or the root",
        "    if status.st_mode & stat.S_ISVTX or path.parent == path:\n        return False\n",
        "",
        "test_a_real_ledger_in_a_shared_directory_gets_no_mode_advice_for_that_directory",
    ),
    rule(
        "mode advice for a directory only when it holds a ledger or a configuration",
        "    return holds is None or any(_holds_kind(held) in _STATE_KINDS for held in holds)\n",
        "    return True\n",
        "test_doctor_gives_no_mode_advice_for_a_directory_that_holds_no_state",
        "test_a_stranger_file_named_as_the_ledger_gets_no_mode_advice_for_it_or_its_directory",
    ),
    rule(
        "mode advice for a file only when it holds the kind expected",
        "        made_here = kind is None or _holds_kind(path) in (kind, FileKind.empty)\n",
        "        made_here = True\n",
        "test_a_stranger_file_named_as_the_ledger_gets_no_mode_advice_for_it_or_its_directory",
    ),
    rule(
        "doctor: no chmod advice for a state directory the connector did not make",
        "    if problem is not None and not made_here:\n",
        "    if False:\n",
        "test_doctor_gives_no_mode_advice_for_a_directory_that_holds_no_state",
    ),
    # part 4: a refusal Basecamp will repeat is exit 3
    rule(
        "lasting refusal: every 4xx but those a retry can pass",
        "    return 400 <= status < 500 and status not in PASSING_4XX\n",
        "    return False\n",
        "test_every_4xx_but_those_a_retry_can_pass_is_lasting",
        "test_a_token_so_large_basecamp_answers_431_is_exit_3_saying_what_to_fix",
    ),
    rule(
        "lasting refusal: 408, 409, 423, 425 and 429 can pass on a later try",
        "PASSING_4XX = frozenset({401, 408, 409, 423, 425, 429})",
        "PASSING_4XX = frozenset({401})",
        "test_a_refusal_a_later_try_can_pass_is_still_exit_6",
    ),
    rule(
        "the identity request answered a lasting 4xx is LastingRefusal",
        "        if lasting(answer.status):\n            raise LastingRefusal(answer.status)\n",
        "",
        "test_a_token_so_large_basecamp_answers_431_is_exit_3_saying_what_to_fix",
        "test_an_identity_request_refused_for_good_is_exit_3",
    ),
    rule(
        "a lasting refusal at the identity check is exit 3 with what to fix",
        '        raise UserError(f"{fix}: {consequence}", EXIT_CONFIG) from error',
        '        raise UserError(f"{fix}: {consequence}", EXIT_UNAVAILABLE) from error',
        "test_a_token_so_large_basecamp_answers_431_is_exit_3_saying_what_to_fix",
    ),
    rule(
        "doctor fails a token Basecamp refuses for good",
        "        identity = doctor.LastingRefused(refused.status, fix)\n",
        "        identity = doctor.NotAsked(fix)\n",
        "test_doctor_fails_a_token_basecamp_answers_431",
    ),
    # part 5: the stand-in refuses the impossible
    rule(
        "stand-in bounds: a duration is finite and at most a day",
        "    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS or (positive and value == 0):\n",
        "    if value < 0 or (positive and value == 0):\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
        "test_a_rate_limit_and_a_feed_delay_on_the_command_line_are_bounded",
    ),
    rule(
        "stand-in bounds: a control body holds no NaN, Infinity or 1e400",
        "        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)\n",
        "        return json.loads(text)\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
    rule(
        "stand-in bounds: a control body nested too deep is a 400, never a dropped connection",
        "    if _depth(text) > MAX_DEPTH:\n",
        "    if False:\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
    rule(
        "stand-in bounds: an oversize fault's body is at most 64 MiB",
        "    if not math.isfinite(value) or not 0 < value <= MAX_OVERSIZE_MIB:\n",
        "    if not math.isfinite(value) or not 0 < value:\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
    rule(
        "stand-in bounds: a token lifetime is at most ten years",
        '            value["token_lifetime"], "token_lifetime (seconds)", low=1, high=MAX_TOKEN_LIFETIME_SECONDS\n',
        '            value["token_lifetime"], "token_lifetime (seconds)", low=1, high=10**30\n',
        "test_a_token_lifetime_past_ten_years_is_a_400_and_logins_go_on",
    ),
    rule(
        "stand-in bounds: a rate limit's window is finite, positive and at most a day",
        '        seconds(self.window, "a rate limit\'s window", positive=True)\n',
        "",
        "test_a_rate_limit_out_of_bounds_is_a_400_that_keeps_the_limit",
    ),
    rule(
        "stand-in: DELETE /__standin/faults removes every fault, a permanent one too",
        '                case ("DELETE", "faults"):\n                    return json_reply(200, {"removed": self._faults.clear()})\n',
        "",
        "test_delete_removes_every_fault_a_permanent_one_too",
    ),
    rule(
        "stand-in: the request log keeps no secret or code a form body carries",
        "_redacted_body(request.body), None, None, at",
        "request.body, None, None, at",
        "test_the_record_of_requests_keeps_no_client_secret_and_no_code",
    ),
    rule(
        "stand-in: the request log keeps no secret or code a query carries",
        "query = {name: REDACTED if name in SECRET_FIELDS else value for name, value in request.query.items()}",
        "query = dict(request.query)",
        "test_the_record_of_requests_keeps_no_client_secret_and_no_code",
    ),
    rule(
        "stand-in: a mention posted through the control API",
        '                case ("POST", "mentions"):\n                    return json_reply(201, self._mention(read_json(request.body)))\n',
        "",
        "test_a_mention_posted_through_the_control_api_is_the_operators_and_mentions_the_agent",
    ),
    rule(
        "stand-in: a world with an account id of its own",
        "    return dataclasses.replace(world, account_id=account_id)\n",
        "    return world\n",
        "test_a_world_with_an_account_id_of_its_own_serves_under_it_and_says_it_first",
    ),
    rule(
        "stand-in: the first line names the operator's id",
        "        f\"token {summary['token']} agent {summary['agent_id']} operator {summary['operator_id']} \"\n",
        "        f\"token {summary['token']} agent {summary['agent_id']} \"\n",
        "test_a_world_with_an_account_id_of_its_own_serves_under_it_and_says_it_first",
    ),
    # part 6: what status, run and demo --help say
    rule(
        "status: the outbox line says what a standing hold keeps back",
        "    if snapshot.hold is not None and pending:\n",
        "    if False:\n",
        "test_the_outbox_is_counted_and_a_guard_held_back_by_the_hold_shows",
    ),
    rule(
        "status: a record waiting under a hold waits for the hold, not a worker slot",
        "    if held:\n        return (\n",
        "    if False:\n        return (\n",
        "test_a_record_waiting_under_a_hold_waits_for_the_hold_and_no_refused_advice_is_given",
    ),
    rule(
        "status: a record waiting to run is offered only a discard",
        '    return ["redispatch", "discard"] if record.state == RecordState.blocked else ["discard"]\n',
        '    return ["redispatch", "discard"]\n',
        "test_a_record_waiting_under_a_hold_waits_for_the_hold_and_no_refused_advice_is_given",
        "test_records_not_yet_running_are_listed_by_id_with_what_moves_them",
    ),
    rule(
        "status: the advice never names a redispatch the rules refuse",
        '        parts.append(f"one waiting to run: bin/connect discard EVENT_ID to close it (else it runs {runs})")\n',
        '        parts.append("bin/connect redispatch EVENT_ID, or bin/connect discard EVENT_ID")\n',
        "test_a_record_waiting_under_a_hold_waits_for_the_hold_and_no_refused_advice_is_given",
    ),
    rule(
        "status: the records line explains seen",
        '    return f"records: {shown} (seen: read from the feed, no verdict yet)"\n',
        '    return f"records: {shown}"\n',
        "test_a_blocked_record_is_offered_redispatch_and_discard",
    ),
    rule(
        "status --shadow reads the shadow run's own ledger",
        "        return StatePaths.at(paths.directory / SHADOW_DIRECTORY), paths.config\n",
        "        return paths, paths.config\n",
        "test_status_reads_a_shadow_runs_state_directory",
    ),
    rule(
        "run: the first line names the launches left mid-launch and whether a hold stands",
        "    started = f\"running {running} mid_launch={','.join(held) or 'none'} hold={hold}\"\n",
        "    started = f\"running {running} held={','.join(held) or 'none'}\"\n",
        "test_the_running_line_names_the_launches_left_and_whether_a_hold_stands",
    ),
    rule(
        "demo --help names the demo's own guard delay",
        "timings shortened: guard delay {format_duration(GUARD_DELAY)}, reconcile after",
        "timings shortened: guard delay 4s, reconcile after",
        "test_help_names_the_demos_own_guard_delay_and_reconcile_time",
    ),
    # run --log-format json: one object a line on each stream, the ids as fields (shell.log_format)
    rule(
        "run --log-format json: run's own lines on stdout and stderr are objects too",
        "    _CHOSEN[:] = [log_format]\n",
        "    _CHOSEN[:] = [TEXT]\n",
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
        "test_an_error_of_a_json_run_is_one_object_on_stderr",
        "test_a_json_runs_note_of_writes_it_dropped_is_an_object_too",
    ),
    rule(
        "run --log-format json: a transition line carries its ids as fields",
        'said = log_format.line(transition.line, logger="connector.transition", fields=transition.fields)',
        'said = log_format.line(transition.line, logger="connector.transition")',
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
    ),
    rule(
        "run --log-format json: a log line carries the ids its call site gave",
        "        fields: Mapping[str, object] = getattr(record, _FIELDS, None) or {}",
        "        fields: Mapping[str, object] = {}",
        "test_a_json_line_carries_the_ids_its_call_site_gave",
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
    ),
    rule(
        "run --log-format json: a log line that names an id gives it as a field (the launching line)",
        "                 launch.task_id, launch.attempt_id, events, extra=_ids_of(launch))",
        "                 launch.task_id, launch.attempt_id, events)",
        "test_every_log_line_that_names_an_id_gives_it_as_a_field",
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
    ),
    rule(
        "run --log-format json: an error line is an object",
        '    print(log_format.line(f"error: {_LINES.join(lines)}", level="error"), file=sys.stderr)',
        '    print(f"error: {_LINES.join(lines)}", file=sys.stderr)',
        "test_an_error_of_a_json_run_is_one_object_on_stderr",
    ),
    rule(
        "run --log-format json: the SIGHUP notice is an object",
        '        print(log_format.line(said, level="warning"), file=sys.stderr, flush=True)',
        "        print(said, file=sys.stderr, flush=True)",
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
    ),
    rule(
        "run --log-format json: the note of writes dropped is an object",
        "                self._waiting.append(f\"{log_format.line(gap, level='warning')}\\n\".encode())",
        "                self._waiting.append(f\"{gap}\\n\".encode())",
        "test_a_json_runs_note_of_writes_it_dropped_is_an_object_too",
    ),
    rule(
        "run --log-format json: an uncaught exception and Python's warnings are objects",
        "        logging.captureWarnings(True)\n        sys.excepthook = _uncaught\n",
        "",
        "test_with_json_an_uncaught_exception_and_a_warning_are_objects_too",
    ),
    rule(
        "log lines: the text format stays TIME LOGGER MESSAGE",
        'TEXT_LAYOUT = "%(asctime)s %(name)s %(message)s"',
        'TEXT_LAYOUT = "%(asctime)s %(levelname)s %(name)s %(message)s"',
        "test_the_text_format_is_the_line_it_always_was",
    ),
    rule(
        "run --log-format json: a stack dump on SIGUSR1 is one object",
        '                said = log_format.line(head, level="warning", logger="connector.stacks", detail=rest)',
        '                said = f"{head}\\n{rest}"',
        "test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret",
    ),
]
