"""The real worker's rules' proofs: the Claude Code driver that
reads what Claude Code says, the default command that can work, and doctor knowing the real
worker. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DRIVER: list[Mutation] = [
    rule(
        "Claude Code's init: the connector's MCP server is connected, or the worker never began",
        '    if status != "connected":\n        return f"the {server} MCP server is',
        '    if False:\n        return f"the {server} MCP server is',
        "test_the_connectors_server_must_be_connected",
        "test_an_init_that_is_not_what_was_asked_ends_the_worker_at_once",
    ),
    rule(
        "Claude Code's init: every dispatch tool is listed, or the worker never began",
        "    if missing:\n        return f\"the {server} MCP server's tools",
        "    if False:\n        return f\"the {server} MCP server's tools",
        "test_every_dispatch_tool_must_be_listed",
    ),
    rule(
        "Claude Code's init: the permission mode is the one asked for, or the worker never began",
        "    if mode != permission_mode:",
        "    if False:",
        "test_the_permission_mode_must_be_the_one_asked_for",
        "test_a_permission_mode_other_than_asked_ends_the_worker_at_once",
    ),
    rule(
        "an init that is not what was asked ends the worker's group at once",
        "                return StopRequest.not_started, ticks\n",
        "                pass\n",
        "test_an_init_that_is_not_what_was_asked_ends_the_worker_at_once",
    ),
    rule(
        "once every turn given has its result the worker's stdin is closed: no further turn, and it exits",
        "            if not self.closed and answered >= self.given:",
        "            if False:",
        "test_the_prompt_is_a_user_message_on_stdin_and_stdin_closes_after_the_result",
    ),
    rule(
        "a worker that outlives its result has its group ended",
        "            if hang_after is not None and clock.monotonic() >= hang_after:",
        "            if False:",
        "test_a_worker_that_outlives_its_result_has_its_group_ended",
    ),
    rule(
        "a stream-json worker's prompt is one user message on its stdin",
        "    if turns is not None and send_prompt:\n        turns.give(prompt)\n",
        "",
        "test_the_prompt_is_a_user_message_on_stdin_and_stdin_closes_after_the_result",
    ),
    rule(
        "the result's error text carries no secret",
        '    clean = _SECRET.sub(REDACTED, " ".join(text.split()))',
        '    clean = " ".join(text.split())',
        "test_secrets_in_an_error_text_are_redacted",
    ),
    rule(
        "the result's error text is bounded",
        "    return clean if len(clean) <= limit else",
        "    return clean if True else",
        "test_an_error_text_is_bounded_whatever_it_says",
        "test_a_long_error_text_is_cut_with_an_ellipsis",
    ),
    rule(
        "a worker that could not reach its model never began its work, and says why",
        "    if result is not None and result.is_error and unanswered and not facts.connector_called:",
        "    if False:",
        "test_what_proves_a_worker_never_began_its_work",
        "test_a_worker_that_cannot_log_in_is_a_start_failure_retried_once_then_blocked",
    ),
    rule(
        "a worker that ended without pulling never began its work",
        '    if not facts.connector_called:\n        return "the worker ended without pulling',
        '    if False:\n        return "the worker ended without pulling',
        "test_what_proves_a_worker_never_began_its_work",
    ),
    rule(
        "a stop the dispatcher asked for is never a non-start",
        "    reason = None if cut_short else not_started(facts, permission_mode=permission_mode)",
        "    reason = not_started(facts, permission_mode=permission_mode)",
        "test_a_stop_the_dispatcher_asked_for_is_never_a_non_start",
    ),
    rule(
        "a worker that never began its work is a start failure: retried once, then blocked",
        "spawn_failed=bool(told.not_started), account=told)",
        "spawn_failed=False, account=told)",
        "test_a_worker_that_cannot_log_in_is_a_start_failure_retried_once_then_blocked",
    ),
    rule(
        "what the worker said of its end is recorded on its attempt",
        "    if account is not None:\n        _record_account(connection, attempt_id, account)\n",
        "",
        "test_a_mention_is_worked_by_the_real_claude_code_with_the_default_command",
        "test_a_worker_that_cannot_log_in_is_a_start_failure_retried_once_then_blocked",
    ),
    rule(
        "status shows why a worker never began its work",
        '        "not_started": dispatch.not_started,',
        '        "not_started": "",',
        "test_a_worker_that_cannot_log_in_is_a_start_failure_retried_once_then_blocked",
    ),
    rule(
        "the default worker may change files in its directory (acceptEdits)",
        'PERMISSION_MODE = "acceptEdits"',
        'PERMISSION_MODE = "default"',
        "test_claude_code_is_started_with_the_pinned_argv",
        "test_a_mention_is_worked_by_the_real_claude_code_with_the_default_command",
    ),
    rule(
        "the default worker has the pinned built-in tools only",
        "        tools = (*BUILT_IN_TOOLS, *([\"Bash\"] if patterns else []))",
        "        tools = (\"default\",)",
        "test_claude_code_is_started_with_the_pinned_argv",
        "test_a_mention_is_worked_by_the_real_claude_code_with_the_default_command",
    ),
    rule(
        "the default worker ignores the host's settings",
        '"--setting-sources", "", ',
        "",
        "test_claude_code_is_started_with_the_pinned_argv",
    ),
    rule(
        "the connector's server entry loads before Claude Code's first model request (alwaysLoad)",
        '                "alwaysLoad": True,',
        "",
        "test_the_mcp_config_names_the_connectors_server_with_the_token_in_its_env_only",
    ),
    rule(
        "the default worker waits for its MCP servers (MCP_CONNECTION_NONBLOCKING=0)",
        'BLOCKING_MCP_START = (("MCP_CONNECTION_NONBLOCKING", "0"),)',
        "BLOCKING_MCP_START: tuple[tuple[str, str], ...] = ()",
        "test_the_worker_gets_only_the_allowlisted_environment",
    ),
    rule(
        "doctor --deep's probe writes Claude Code no turn: it never reaches the model",
        "agent_id=agent_id, send_prompt=False)",
        "agent_id=agent_id)",
        "test_the_probe_writes_a_stream_json_worker_no_turn",
        "test_doctor_reads_claude_codes_version_and_login_and_deep_never_reaches_the_model",
    ),
    rule(
        "doctor refuses a Claude Code older than the driver supports",
        "    if version < OLDEST_SUPPORTED:",
        "    if False:",
        "test_a_supported_version_is_ok_and_an_older_one_is_refused",
    ),
    rule(
        "doctor fails a Claude Code that cannot authenticate",
        '    return _failing(name, f"Claude Code is not logged in',
        '    return Check(name, CheckStatus.ok, f"Claude Code is not logged in',
        "test_not_logged_in_is_failing_with_how_to_give_it_a_key_by_name",
        "test_doctor_reads_claude_codes_version_and_login_and_deep_never_reaches_the_model",
    ),
    rule(
        "an allowed Bash pattern gives the worker matching commands only",
        '            *(f"Bash({pattern})" for pattern in patterns),',
        '            *(["Bash"] if patterns else []),',
        "test_allowances_widen_the_default_command_by_name",
        "test_an_allowed_bash_pattern_runs_and_any_other_command_is_refused",
    ),
    rule(
        "a Bash pattern that allows every command is refused",
        '    if not pattern.replace("*", "").strip():',
        "    if False:",
        "test_a_bash_pattern_is_a_plain_rule_and_never_every_command",
    ),
    rule(
        "an MCP file naming the connector's own server is refused",
        "    if MCP_SERVER_NAME in servers:",
        "    if False:",
        "test_an_mcp_file_the_worker_cannot_use_is_refused_before_anything_starts",
    ),
    rule(
        "allowances widen the default worker only, never a configured command",
        "                if allowed.named():",
        "                if False:",
        "test_allowances_beside_a_configured_command_are_refused",
    ),
    rule(
        "a follow-up joining a live task is given to its running worker as a turn",
        "                self._follow_up(task_id, joined)\n",
        "",
        "test_a_follow_up_joins_the_running_worker_and_a_later_task_resumes_the_conversation",
    ),
    rule(
        "a worker's input stays open while a message given is unanswered",
        "            if not self.closed and answered >= self.given:",
        "            if not self.closed:",
        "test_a_turn_is_never_given_after_the_input_closed",
    ),
    rule(
        "no turn is given once the worker's input is closed",
        "            if self.closed or self._stdin is None:\n                return False\n",
        "",
        "test_a_turn_is_never_given_after_the_input_closed",
    ),
    rule(
        "a result answers the messages replayed before it",
        "results=facts.results + 1, answered=facts.replays)",
        "results=facts.results + 1, answered=facts.replays + 1)",
        "test_a_result_answers_the_messages_replayed_before_it",
    ),
    rule(
        "a later task on a conversation resumes its Claude Code session",
        "    resume = resume_session(connection, conversation)",
        '    resume = ""',
        "test_a_follow_up_joins_the_running_worker_and_a_later_task_resumes_the_conversation",
    ),
    rule(
        "a session is resumed only after a clean finish: never into an instruction it may have acted on",
        '    if latest is None or latest.not_started or latest.left_unknown:\n        return ""\n'
        "    finished = latest.stop_reason == StopReason.finished\n",
        '    if latest is None:\n        return ""\n    finished = True\n',
        "test_a_session_is_resumed_only_after_a_clean_finish",
    ),
    rule(
        "the worker's session is recorded on its attempt",
        "            account.session_id, attempt_id,\n",
        '            "", attempt_id,\n',
        "test_a_follow_up_joins_the_running_worker_and_a_later_task_resumes_the_conversation",
    ),
]
