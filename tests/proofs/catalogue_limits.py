"""The proofs of the rules for working under Basecamp's limits: the stand-in's rate
limit, the client's one budget, the outbox's urgency. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

LIMITS: list[Mutation] = [
    rule(
        "limit: the stand-in answers a request over the limit 429 instead of serving it",
        "            if len(admitted) < limit.requests:\n",
        "            if True:\n",
        "test_the_request_over_the_limit_is_answered_429_with_retry_after_and_creates_nothing",
        "test_the_window_slides_and_a_refusal_does_not_count",
    ),
    rule(
        "limit: the stand-in's window slides: a request older than the window no longer counts",
        "            while admitted and admitted[0] <= now - limit.window:\n",
        "            while False:\n",
        "test_the_window_slides_and_a_refusal_does_not_count",
    ),
    rule(
        "limit: a request the stand-in refused does not count in its window",
        "            wait = admitted[0] + limit.window - now\n",
        "            admitted.append(now)\n            wait = admitted[0] + limit.window - now\n",
        "test_the_window_slides_and_a_refusal_does_not_count",
    ),
    rule(
        "limit: the stand-in's Retry-After is whole seconds, rounded up, at least one",
        "return rate_limited_reply(str(max(1, math.ceil(wait))))",
        "return rate_limited_reply(str(int(wait)))",
        "test_retry_after_is_whole_seconds_rounded_up_and_at_least_one",
    ),
    rule(
        "limit: the stand-in keeps one window per client address",
        "admitted = self._admitted.setdefault(address, deque())",
        'admitted = self._admitted.setdefault("everyone", deque())',
        "test_each_client_address_has_its_own_window",
    ),
    rule(
        "limit: a rate-limited request takes no scripted fault",
        "fault = None if limited is not None else standin._faults.take(request.method, request.path)",
        "fault = standin._faults.take(request.method, request.path)",
        "test_a_rate_limited_request_takes_no_fault",
    ),
    rule(
        "limit: the stand-in enforces Basecamp's limit unless told otherwise",
        "self.limiter = faults.Limiter(faults.RateLimit() if rate_limit is None else rate_limit)",
        "self.limiter = faults.Limiter(faults.RateLimit.off() if rate_limit is None else rate_limit)",
        "test_a_stand_in_enforces_basecamps_limit_unless_told_otherwise",
    ),
]
LIMITS += [
    rule(
        "limit: a feed poll yields its turn to a backlog",
        "        if yielding:\n            self._yield(deadline)\n",
        "        if False:\n            self._yield(deadline)\n",
        "test_a_poll_waits_for_headroom_where_any_other_request_goes_at_once",
        "test_a_poll_yields_within_its_bound_and_half_its_deadline",
    ),
    rule(
        "limit: a feed poll yields no longer than its bound",
        "    if waited >= bound:\n        return True\n",
        "    if False:\n        return True\n",
        "test_a_poll_never_yields_longer_than_its_bound",
        "test_a_poll_yields_within_its_bound_and_half_its_deadline",
    ),
    rule(
        "limit: a feed poll's yield stays within half of what is left to its deadline",
        "else min(POLL_YIELD_BOUND, (deadline - started) / 2)",
        "else POLL_YIELD_BOUND",
        "test_a_poll_yields_within_its_bound_and_half_its_deadline",
    ),
    rule(
        "limit: the client's feed polls are the requests that yield",
        "answer = self.read(url, deadline, yielding=True)",  # shell/basecamp/client.py
        "answer = self.read(url, deadline, yielding=False)",
        "test_the_clients_feed_poll_yields_where_its_reads_do_not",
    ),
]
LIMITS += [
    rule(
        'limit: urgency orders the due intents by kind: guard, holding reply, completion, still-running',
        'f" ORDER BY {URGENCY}, not_before, id LIMIT 1))"',
        'f" ORDER BY not_before, id LIMIT 1))"',
        'test_without_a_starving_intent_the_most_urgent_kind_goes_oldest_first',
        'test_the_outbox_takes_a_due_guard_before_older_holding_replies_and_notices',
    ),
    rule(
        'limit: urgency never starves a kind: an intent due past the bound goes first',
        'f"(SELECT id FROM outbox WHERE {condition} ORDER BY not_before, id LIMIT 1),"',
        'f"(SELECT NULL WHERE {condition}),"',
        'test_a_starving_intent_of_any_kind_goes_before_the_rest_oldest_first',
        'test_a_still_running_notice_waits_behind_a_stream_of_guards_no_longer_than_the_bound',
        'test_the_outbox_takes_a_starving_notice_before_a_fresh_guard',
    ),
]
LIMITS += [
    rule(
        "limit: after a full batch the running outbox goes on at once; otherwise it waits its tick",
        "    return timedelta(0) if claims >= batch else tick",
        "    return tick",
        "test_a_full_batch_goes_on_at_once_and_a_partial_one_waits_its_tick",
        "test_the_running_outbox_drains_a_backlog_of_several_batches_without_waiting_a_tick_between",
    ),
    rule(
        "limit: the running outbox asks how long to wait after each batch",
        "                wait = wait_after_batch(claims, self._options.run_batch, self._options.tick)\n",
        "                wait = self._options.tick\n",
        "test_the_running_outbox_drains_a_backlog_of_several_batches_without_waiting_a_tick_between",
    ),
]
LIMITS += [
    rule(
        "limit: reconciliation lists a destination once for every intent in doubt there",
        "        groups.setdefault(row.destination, []).append(row)\n",
        "        groups.setdefault(row, []).append(row)\n",
        "test_a_restart_lists_each_destination_once_and_adopts_every_intent",
        "test_grouping_keeps_first_come_order_within_and_between_destinations",
    ),
    rule(
        "limit: one listing reaches back to the earliest intent of its destination",
        "        since = min(listing_since(row.sending_at, row.created_at) for row in group)\n",
        "        since = max(listing_since(row.sending_at, row.created_at) for row in group)\n",
        "test_one_listing_reaches_back_to_the_earliest_intent_of_its_destination",
    ),
    rule(
        "limit: a failed listing backs off every intent at its destination",
        "            for row in group:\n                self._listing_failed(",
        "            for row in group[:1]:\n                self._listing_failed(",
        "test_a_failed_listing_backs_off_every_intent_at_that_destination",
    ),
]
LIMITS += [
    rule(
        "limit: with half the window spent, the client's turns are evenly spaced",
        "    if not recent or len(recent) * 2 < limit:\n        return 0.0\n",
        "    if True:\n        return 0.0\n",
        "test_with_half_the_window_spent_turns_are_evenly_spaced",
        "test_a_drain_goes_evenly_so_an_urgent_turn_waits_at_most_one_spacing",
    ),
    rule(
        "limit: the pacer spaces its turns",
        "spacing_wait(recent, now, self._limit, self._window))",
        "0.0)",
        "test_a_drain_goes_evenly_so_an_urgent_turn_waits_at_most_one_spacing",
    ),
]
LIMITS += [
    rule(
        "mcp start: the collector is on again once the server's imports are done",
        "    gc.freeze()\n    gc.enable()\n",
        "    gc.freeze()\n",
        "test_the_collector_is_on_while_the_server_serves_and_its_imports_are_frozen",
    ),
    rule(
        "mcp start: the server's imports are frozen out of every collection's way",
        "    gc.freeze()\n    gc.enable()\n",
        "    gc.enable()\n",
        "test_the_collector_is_on_while_the_server_serves_and_its_imports_are_frozen",
    ),
    rule(
        "mcp start: a one-command entry point imports only that command's module",
        "        if name in commands:  # only these are imported: a one-command start is faster",
        "        if name in COMMANDS:  # only these are imported: a one-command start is faster",
        "test_the_entry_imports_no_other_command",
    ),
    rule(
        "mcp start: the worker's MCP configuration launches this interpreter on the lean entry",
        '    args = ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path)]',
        '    args = ["mcp", "--ledger", str(ledger_path)]',
        "test_the_mcp_config_names_the_connectors_server_with_the_token_in_its_env_only",
        "test_the_agents_person_id_is_handed_to_the_mcp_server_when_known",
    ),
]
LIMITS += [  # bin/connect's start, and status at 100k records
    rule(
        "scale: bin/connect start: only the chosen subcommand's module is imported",
        "    parser = build_parser(tuple(name for name in commands if name == chosen(arguments)), listed=commands,",
        "    parser = build_parser(commands, listed=commands,",
        "test_a_command_imports_its_own_module_and_no_other",
    ),
    rule(
        "scale: bin/connect start: the subcommand chosen is the first argument that is not an option",
        '    return next((argument for argument in argv if not argument.startswith("-")), None)',
        "    return argv[0] if argv else None",
        "test_the_quick_choice_is_the_subcommand_argparse_takes",
    ),
    rule(
        "scale: bin/connect --help: the commands not imported are listed by their summary",
        "            subparsers.add_parser(name, help=SUMMARIES[name], add_help=False)",
        "            pass",
        "test_help_lists_every_command_with_its_summary_and_imports_none",
    ),
    rule(
        "scale: status reads the hold marker without the hold's writing side",
        "from core.timestamps import format_timestamp\nfrom shell.ledger.connection import Ledger\n",
        "from core.timestamps import format_timestamp\nfrom shell.ledger import records\nfrom shell.ledger.connection import Ledger\n",
        "test_a_command_imports_its_own_module_and_no_other",
    ),
    rule(
        "scale: migration 13: the blocked records' reasons are indexed",
        "CREATE INDEX events_blocked_reason ON events (state, reason) WHERE state = 'blocked';",
        "CREATE INDEX events_blocked_reason ON events (state, id);",
        "test_every_query_of_status_reads_a_growing_table_through_an_index",
    ),
    rule(
        "scale: migration 13: the newest dispatches come from an index on their launch",
        "CREATE INDEX attempts_launched ON attempts (launched_at);",
        "SELECT 1;",
        "test_every_query_of_status_reads_a_growing_table_through_an_index",
    ),
    rule(
        "scale: status reads its configuration without importing returns",
        "from core.worker_allowances import WorkerAllowances, variable_name_problem\n",
        "from core.worker_allowances import WorkerAllowances, variable_name_problem\nfrom returns.result import Result\n",
        "test_a_command_imports_its_own_module_and_no_other",
    ),
    rule(
        "scale: status reads the hold marker's value without the edge tables",
        "from core.states import RecordState\n\n_R = RecordState\n",
        "from core.edges import RecordState\n\n_R = RecordState\n",
        "test_a_command_imports_its_own_module_and_no_other",
    ),
    rule(
        "scale: the ledger's migrations are found by path, without importlib.resources",
        'MIGRATIONS_DIRECTORY = Path(__file__).with_name("migrations")\n',
        'MIGRATIONS_DIRECTORY = __import__("importlib.resources").resources.files("shell.ledger.migrations")\n',
        "test_a_command_imports_its_own_module_and_no_other",
    ),
    rule(
        "scale: status counts records by state around the blocked ones, never the whole index",
        "            \"SELECT state, COUNT(*) FROM events WHERE state < 'blocked' GROUP BY state UNION ALL\"\n"
        "            \" SELECT state, COUNT(*) FROM events WHERE state > 'blocked' GROUP BY state\"\n",
        "            \"SELECT state, COUNT(*) FROM events WHERE state <> 'blocked' GROUP BY state\"\n",
        "test_status_never_steps_over_the_whole_events_index",
    ),
    rule(
        "scale: status's blocked count by state is the sum of its counts by reason",
        "        counts.append((str(RecordState.blocked), sum(count for _, count in blocked)))\n",
        "        pass\n",
        "test_the_counts_by_state_hold_every_state_on_either_side_of_blocked",
        "test_the_numbers_agree_while_a_connector_commits_beside_the_read",
    ),
    rule(
        "scale: status's read-only connection keeps a bounded page cache",
        '            connection.execute(f"PRAGMA cache_size = -{READ_ONLY_CACHE_KIB}")',
        "            pass",
        "test_the_read_only_connection_keeps_a_bounded_page_cache",
    ),
]
LIMITS += [  # the MCP server's start imports only what its tools use
    rule(
        "mcp start: the server's ledger writes import none of the dispatcher's modules",
        "        from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call\n\n        now = self._ledger.timestamp()\n"
        "        key = (task_id",
        "        from shell.ledger import tasks, worker_moves  # noqa: PLC0415 -- at the first call\n\n"
        "        now = self._ledger.timestamp()\n        key = (task_id",
        "test_the_server_imports_only_what_its_tools_use",
    ),
    rule(
        "mcp start: the ledger's write-failure file imports no status presentation",
        "from core.timestamps import format_timestamp, parse_timestamp\nfrom shell import private_files\n",
        "from core.timestamps import format_timestamp, parse_timestamp\n"
        "from core.presentation.status_values import WriteFailure\nfrom shell import private_files\n",
        "test_the_server_imports_only_what_its_tools_use",
    ),
    rule(
        "mcp start: the command line's argument types import no configuration parser",
        'from core.ids import MAX_ID\nfrom core.timestamps import MAX_DURATION, parse_duration\n',
        'from core.configuration import MAX_ID\nfrom core.timestamps import MAX_DURATION, parse_duration\n',
        'test_the_server_imports_only_what_its_tools_use',
    ),
    rule(
        "mcp start: an event's outcome is a state, imported without the snapshots' values",
        "from core.states import DeliveryState, EventOutcome, GuardState, RecordState\n\nif TYPE_CHECKING:\n",
        "from core.snapshots import EventOutcome\nfrom core.states import DeliveryState, GuardState, RecordState\n\nif TYPE_CHECKING:\n",
        "test_the_server_imports_only_what_its_tools_use",
    ),
    rule(
        "mcp start: the worker's moves hold a worker's statements only",
        "\"UPDATE attempts SET progress_at = ? WHERE task_id = ? AND state <> 'ended'\"",
        "\"UPDATE attempts SET ended_at = NULL, progress_at = ? WHERE task_id = ? AND state <> 'ended'\"",
        "test_the_worker_moves_are_the_workers_statements_only",
    ),
]

LIMITS += [  # every read bounded by its deadline, the whole exchange (shell/basecamp/wire.py)
    rule(
        "reads: a pooled read's whole exchange is under its watchdog",
        "        _exchange.watchdog = watchdog\n",
        "        _exchange.watchdog = None\n",
        "test_every_client_call_returns_by_its_deadline_when_the_answer_trickles",
        "test_a_read_timeout_bounds_the_whole_exchange_too",
        "test_a_trickling_feed_lets_run_start_and_another_lane_hear_the_mention",
    ),
    rule(
        "reads: Launchpad's exchange is under its watchdog",
        "    watchdog.watch(connection)  # before it connects: a TLS handshake is within the bound too\n",
        "",
        "test_a_trickled_launchpad_answer_ends_by_its_bound",
    ),
    rule(
        "reads: a watchdog never shuts a connection a later exchange took",
        "                if self._connection is not None and _WATCHED.get(self._connection) is self:\n",
        "                if self._connection is not None:\n",
        "test_a_watchdog_never_shuts_a_connection_a_later_exchange_took",
    ),
    rule(
        "reads: the stop cuts a read under way short",
        "            if time.monotonic() < self._ends and not (self._halt is not None and self._halt.is_set()):\n",
        "            if time.monotonic() < self._ends:\n",
        "test_the_stop_cuts_a_read_short_and_no_later_read_is_sent",
    ),
    rule(
        "reads: no read is sent once the stop stands",
        "        if self._halt is not None and self._halt.is_set():\n            raise ListingFailed(",
        "        if False:\n            raise ListingFailed(",
        "test_the_stop_cuts_a_read_short_and_no_later_read_is_sent",
    ),
    rule(
        "reads: the stop ends a wait for a turn under the rate limit",
        "            if not self._halt.pause(wait):\n                return False\n",
        "            self._clock.sleep(wait)\n",
        "test_the_stop_ends_a_wait_for_a_turn_under_the_rate_limit",
    ),
    rule(
        "reads: the stop ends the wait before a read's retry",
        "                    if not self._halt.pause(seconds):\n",
        "                    if self._clock.sleep(seconds):\n",
        "test_the_stop_ends_the_wait_before_a_reads_retry",
    ),
    rule(
        "reads: a create never gives way to the stop",
        "            watchdog = Watchdog(timeout)\n            watchdog.watch(connection)\n            try:\n",
        "            watchdog = Watchdog(timeout, self._halt)\n            watchdog.watch(connection)\n            try:\n",
        "test_a_create_goes_on_through_the_stop",
    ),
    rule(
        "start: its reads give way to its stop",
        "        with self._watching(requested) as stop, self._reads_halted(stop):\n",
        "        with self._watching(requested) as stop:\n",
        "test_sigterm_during_the_starts_trickled_feed_read_stops_it_at_once",
    ),
    rule(
        "start: a stop during its first feed read ends it there, naming the step",
        "                self.stopped_in = \"feed\"\n",
        "                pass\n",
        "test_sigterm_during_the_starts_trickled_feed_read_stops_it_at_once",
    ),
    rule(
        "stand-in: a trickle fault sends its body a byte at a time",
        "            return dataclasses.replace(answer(0.0), trickle=fault.delay or TRICKLE_SECONDS)\n",
        "            return answer(0.0)\n",
        "test_trickle_sends_the_headers_at_once_then_the_body_a_byte_at_a_time",
    ),
    rule(
        "live lane: a subscription never confirmed is down within its bound",
        "            if unconfirmed and self.state is not LaneState.connected:\n",
        "            if False:\n",
        "test_a_subscription_never_confirmed_is_down_within_its_bound",
    ),
    rule(
        "status: a running connector's lane connecting past CONNECT_WITHIN is stuck",
        "        return now - parse_timestamp(status.since) > CONNECT_WITHIN\n",
        "        return False\n",
        "test_a_lane_connecting_longer_than_a_connect_takes_is_stuck_only_while_judged",
        "test_status_names_a_start_that_never_finished_and_a_lane_stuck_connecting",
    ),
    rule(
        "status: a start step older than STALL_AFTER never finished",
        "    return beats.start is not None and now - beats.start.since > STALL_AFTER\n",
        "    return False\n",
        "test_a_start_step_older_than_the_stall_bound_never_finished",
        "test_status_names_a_start_that_never_finished_and_a_lane_stuck_connecting",
    ),
    rule(
        "start: the feed step is written for status as it begins",
        "            self.heartbeats.starting(\"feed\")\n",
        "",
        "test_sigterm_during_the_starts_trickled_feed_read_stops_it_at_once",
    ),
    rule(
        "start: once over, status shows the loops, not the start",
        "        self.heartbeats.starting(None)\n",
        "",
        "test_a_trickling_feed_lets_run_start_and_another_lane_hear_the_mention",
    ),
]
