"""The proofs of ``bin/connect doctor``: each verdict that fails or warns,
the exit code, the read-only ledger, the lock's holder, and ``--deep``'s probe. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DOCTOR: list[Mutation] = [
    rule(
        "doctor: a configuration that does not load fails",
        "    if problem is not None:\n        return _failing(name, problem, SETUP_ADVICE)\n",
        "",
        "test_a_configuration_open_to_others_fails",
        "test_a_configuration_that_does_not_load_or_names_other_ids_fails",
    ),
    rule(
        "doctor: a configuration naming another pair than asked fails",
        "    if asked[0] is not None and asked[1] is not None and (account, agent) != asked:\n",
        "    if False:\n",
        "test_a_configuration_naming_another_pair_than_asked_fails",
    ),
    rule(
        "doctor: a route directory that is not there fails",
        "    return [_route_check(route) for route in routes]\n",
        '    return [_ok(f"route {route.project_id}", route.directory) for route in routes]\n',
        "test_a_missing_route_directory_fails",
        "test_a_route_directory_missing_not_a_directory_or_not_writable_fails",
    ),
    rule(
        "doctor: a worker program that is not found fails",
        "    if found_at is None:\n",
        "    if False:\n",
        "test_a_worker_program_not_found_fails",
        "test_a_worker_program_that_is_not_there_fails",
    ),
    rule(
        "doctor: a token acting as someone else fails",
        "        case AnsweredAs(person_id, person_name) if person_id != agent_id:\n",
        "        case AnsweredAs(person_id, person_name) if False:\n",
        "test_a_token_that_acts_as_someone_else_fails",
        "test_a_token_refused_or_acting_as_someone_else_fails",
    ),
    rule(
        "doctor: a token Basecamp refuses fails unless it is a login token past its expiry",
        "        case TokenRefused() if expired and token.expires_at is not None:\n",
        "        case TokenRefused() if token.expires_at is not None:\n",
        "test_a_token_refused_or_acting_as_someone_else_fails",
    ),
    rule(
        "doctor: a bare token is a warning (Launchpad's expire after two weeks)",
        '                return _warning(name, f"{acts}; a bare token, never refreshed',
        '                return Check(name, CheckStatus.ok, f"{acts}; a bare token, never refreshed',
        "test_a_token_that_acts_as_the_agent_is_ok_with_its_days_left_and_a_bare_one_warns",
        "test_a_state_directory_fresh_from_setup_passes_with_one_warning_for_its_bare_token",
    ),
    rule(
        "doctor: Basecamp not answering fails",
        "    if not reach.answered:\n",
        "    if False:\n",
        "test_basecamp_not_answering_fails",
        "test_basecamp_down_fails_and_the_token_is_not_asked",
    ),
    rule(
        "doctor: a clock more than a minute off Basecamp's Date is a warning",
        "    if abs(skew) > SKEW_WARNING.total_seconds():\n",
        "    if False:\n",
        "test_a_clock_skew_beyond_a_minute_either_way_is_a_warning",
        "test_a_clock_two_minutes_off_basecamps_date_is_a_warning",
    ),
    rule(
        "doctor: the clock is compared with the Date of Basecamp's answer",
        '            self.last_answer = (answer.status, answer.headers.get("date", ""))\n',
        '            self.last_answer = (answer.status, "")\n',
        "test_a_clock_two_minutes_off_basecamps_date_is_a_warning",
    ),
    rule(
        "doctor: free disk below status's nearly-full fails",
        "    if free_bytes < LOW_DISK_BYTES:\n",
        "    if False:\n",
        "test_free_disk_below_the_thresholds_warns_then_fails",
    ),
    rule(
        "doctor: a damaged ledger fails",
        "    if facts.problems:\n",
        "    if False:\n",
        "test_the_ledger_absent_is_ok_behind_a_warning_and_damaged_or_too_new_fails",
    ),
    rule(
        "doctor opens the ledger read-only: it never migrates one",
        "        with open_ledger_read_only(path) as opened:\n",
        "        with open_ledger(path) as opened:\n",
        "test_a_ledger_a_migration_behind_is_a_warning_and_doctor_never_migrates_it",
        also=(("LedgerError, open_ledger_read_only, read_health\n",
               "LedgerError, open_ledger, open_ledger_read_only, read_health\n"),),
    ),
    rule(
        "doctor names the running connector that holds the lock",
        "    holder = peek(paths.directory, loaded.account_id, loaded.agent_id) or peek_only(paths.directory)\n",
        "    holder = None\n",
        "test_beside_a_running_connector_doctor_names_it_and_disturbs_nothing",
    ),
    rule(
        "doctor: a pair served from another state directory fails",
        "    if elsewhere is not None:\n        return _failing(\n",
        "    if False:\n        return _failing(\n",
        "test_a_pair_served_from_another_state_directory_fails",
    ),
    rule(
        "doctor exits 1 when a check fails",
        "    return EXIT_OK if passed(checks) else EXIT_FAILURE\n",
        "    return EXIT_OK\n",
        "test_a_missing_route_directory_fails",
        "test_a_worker_that_ends_before_the_handshake_fails",
    ),
    rule(
        "doctor: a warning never fails the report",
        "    return all(check.status != CheckStatus.failing for check in checks)\n",
        "    return all(check.status == CheckStatus.ok for check in checks)\n",
        "test_the_report_fails_on_a_failing_check_and_never_on_a_warning",
        "test_a_state_directory_fresh_from_setup_passes_with_one_warning_for_its_bare_token",
    ),
    rule(
        "doctor --deep: the probe's server marks the completed handshake",
        "            if self._on_initialized is not None:\n                self._on_initialized()\n",
        "            pass\n",
        "test_the_bundled_demo_worker_completes_the_handshake_and_its_group_is_ended",
        "test_a_probe_token_opens_no_ledger_marks_the_handshake_and_refuses_every_tool",
    ),
    rule(
        "doctor --deep: a probe token opens no ledger and serves the handshake alone",
        "    if is_probe(token):  # doctor --deep's: the handshake and nothing else\n",
        "    if False:\n",
        "test_a_probe_token_opens_no_ledger_marks_the_handshake_and_refuses_every_tool",
        "test_the_bundled_demo_worker_completes_the_handshake_and_its_group_is_ended",
    ),
    rule(
        "doctor --deep: the worker is ended once the handshake is seen, not at the deadline",
        "        if self.after is None and self._marker.exists():\n",
        "        if False:\n",
        "test_a_worker_that_stays_after_the_handshake_is_ended_with_its_whole_group",
    ),
    rule(
        "doctor --deep: a worker that ends before the handshake fails",
        "    if not facts.initialized:\n",
        "    if False:\n",
        "test_the_handshake_is_ok_only_when_it_completed",
        "test_a_worker_that_ends_before_the_handshake_fails",
    ),
    rule(
        "no task token is ever a probe token: the prefix holds a character URL-safe base64 never does",
        'PROBE_PREFIX = "doctor-probe:"\n',
        'PROBE_PREFIX = "doctor-probe-"\n',
        "test_no_task_token_is_ever_a_probe_token",
    ),
]
