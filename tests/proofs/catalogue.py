"""Every rule with a proof: the source text that holds it, what it becomes without it, and the
tests that must go red then. Run by ``bin/prove``; the record is ``tests/PROOFS.md``.

An entry names no file: its ``find`` must occur exactly once in the whole tree, and its tests are
named by function (or module file) name (``tests.proofs.anchors``). Moving code or tests costs
the catalogue nothing; text that no longer occurs once makes the runner say the catalogue is
stale rather than prove nothing.
"""

from __future__ import annotations

from tests.proofs.catalogue_adopted_reply import ADOPTED_REPLY
from tests.proofs.catalogue_bad import BAD
from tests.proofs.catalogue_bad_input import BAD_INPUT
from tests.proofs.catalogue_cutover import CUTOVER
from tests.proofs.catalogue_decide import DECIDE, KINDS, TOKEN_FILE
from tests.proofs.catalogue_decisions import DECISIONS
from tests.proofs.catalogue_demo import DEMO
from tests.proofs.catalogue_dispatch import DISPATCH
from tests.proofs.catalogue_doctor import DOCTOR
from tests.proofs.catalogue_driver import DRIVER
from tests.proofs.catalogue_end_to_end import END_TO_END
from tests.proofs.catalogue_fid import FID
from tests.proofs.catalogue_foundations import FOUNDATIONS
from tests.proofs.catalogue_hold import HOLD
from tests.proofs.catalogue_inbox import INBOX
from tests.proofs.catalogue_kinds import KIND_TABLE
from tests.proofs.catalogue_lead import LEAD
from tests.proofs.catalogue_limits import LIMITS
from tests.proofs.catalogue_live import LIVE
from tests.proofs.catalogue_mcp import MCP
from tests.proofs.catalogue_metrics import METRICS
from tests.proofs.catalogue_names import NAMES
from tests.proofs.catalogue_not_created import NOT_CREATED
from tests.proofs.catalogue_one_home import ONE_HOME
from tests.proofs.catalogue_operating import OPERATING
from tests.proofs.catalogue_ops import OPS
from tests.proofs.catalogue_perf import PERF
from tests.proofs.catalogue_prose import PROSE
from tests.proofs.catalogue_receipt import RECEIPT
from tests.proofs.catalogue_routes import ROUTES
from tests.proofs.catalogue_schema import GENERATED_RULES
from tests.proofs.catalogue_sec import SEC
from tests.proofs.catalogue_shutdown import SHUTDOWN
from tests.proofs.catalogue_SIM import SIM
from tests.proofs.catalogue_status import STATUS
from tests.proofs.catalogue_tokens import TOKENS
from tests.proofs.catalogue_window import WINDOW
from tests.proofs.catalogue_words import WORDS
from tests.proofs.catalogue_world import WORLD
from tests.proofs.mutation import Mutation, rule

CLIENT = [
    rule(
        "a create whose connection could not open is refused: it never left",
        "return Refused(RefusalCause.not_connected, None,",
        "return Uncertain(UncertainCause.connection_lost, None,",
        "test_no_connection_is_refused_because_the_request_never_left",
    ),
    rule(
        "a create that timed out after it was written is uncertain",
        'return Uncertain(UncertainCause.timeout, None, f"no answer in time',
        'return Refused(RefusalCause.answered, None, f"no answer in time',
        "test_a_timeout_is_uncertain_sent_once_and_bounded_by_the_deadline",
        also=(
            (
                'return Uncertain(UncertainCause.timeout, None, "no whole answer before the deadline")',
                'return Refused(RefusalCause.answered, None, "no whole answer before the deadline")',
            ),
        ),
    ),
    rule(
        "a create is exactly one request: never retried after doubt",
        'outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, token)',
        'outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, token)\n'
        "        if isinstance(outcome, Uncertain):\n"
        '            outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, token)',
        "test_a_5xx_is_sent_once_and_uncertain",
        "test_created_then_dropped_is_uncertain_sent_once_and_exists",
    ),
    rule(
        "a 429 holds every later request until its Retry-After",
        "            self._pacer.hold_for(told if told is not None else 1.0)\n",
        "            pass\n",
        "test_a_429_is_sent_once_refused_and_holds_every_later_request",
    ),
    rule(
        "the client paces itself under Basecamp's rate limit",
        "wait_before_next(recent, now, self._held_until, self._limit, self._window),",
        "max(0.0, self._held_until - now),",
        "test_the_client_paces_itself_under_the_rate_limit",
    ),
    rule(
        "pacing: a wait reaches the window's edge once rounded",
        "    while now + wait < moment:\n        wait = math.nextafter(wait, math.inf)\n",
        "",
        "test_tickets_minted_whenever_allowed_never_pass_their_share_in_any_window",
    ),
    rule(
        "a next page is followed only to the same origin",
        "if not same_origin(following, url):",
        "if False:",
        "test_a_bad_link_fails_the_listing_instead_of_answering_short",
    ),
    rule(
        "a 403 or 404 listing is unlistable, never retried",
        "if answer.status in (403, 404):",
        "if answer.status in ():",
        "test_a_forbidden_or_missing_destination_is_unlistable",
    ),
    rule(
        "more pages than the limit is unlistable, never a shorter answer",
        '        raise Unlistable(f"{destination.describe()} {reach}")\n',
        "        return list(found.values())\n",
        "test_more_than_the_page_limit_is_unlistable_not_short",
    ),
    rule(
        "Campfire lines are read newest first and the walk stops at the first older line",
        "(newest_first and reached_back)",
        "False",
        "test_campfire_lines_are_read_newest_first_and_stop_at_the_first_older_line",
    ),
    rule(
        "a listing keeps only the agent's messages",
        "elif message.creator_id == creator_id:",
        "else:",
        "test_a_listing_walks_every_page_and_keeps_only_the_agents_since",
    ),
    rule(
        "a read retry that would pass the deadline is not waited",
        "if self._clock.monotonic() + seconds >= deadline:",
        "if False:",
        "test_a_retry_that_would_pass_the_deadline_is_not_waited",
    ),
    rule(
        "reads are tried at most three times",
        "if status not in RETRIED_STATUSES or attempts_made >= MAX_READ_ATTEMPTS:",
        "if status not in RETRIED_STATUSES:",
        "test_three_503s_fail_the_listing",
        "test_read_retry.py",
    ),
    rule(
        "a valid Retry-After replaces the backoff",
        "    told = parse_retry_after(retry_after, now)\n",
        "    told = None\n",
        "test_a_429_waits_out_its_retry_after",
        "test_read_retry.py",
    ),
    rule(
        "the token never appears in a log line",
        'log.info("%s %s -> %d", method, path, response.status)',
        'log.info("%s %s -> %d %s", method, path, response.status, self.headers(token))',
        "test_the_token_never_appears_in_a_log_a_repr_or_an_error",
    ),
    rule(
        "https is required except to a loopback host",
        "if not transport_allowed(origin):",
        "if False:",
        "test_https_is_required_except_to_loopback",
    ),
]

OUTBOX = [
    rule(
        "invariant 3: nothing is sent without a durable sending row",
        "                        rows.claim(connection, row.id, now)\n",
        "                        pass\n",
        "test_nothing_is_sent_without_a_durable_sending_row",
    ),
    rule(
        "invariant 9: a guard is reported fired from its claim, in the claim's transaction",
        "deliveries.fire_guard(connection, row.event_id)",
        "pass",
        "test_a_guard_is_reported_fired_from_its_claim",
    ),
    rule(
        'at claim time an intent no longer called for is canceled, not sent',
        'decision = decide_claim(row.kind, rows.claim_snapshot(connection, row))',
        'decision = Claim()',
        'test_a_guard_no_longer_called_for_is_canceled_at_claim',
        'test_a_holding_reply_stands_down_when_the_route_arrives',
        'test_a_still_running_notice_is_never_posted_after_its_attempt_ended',
    ),
    rule(
        "a refusal cancels with the refused note and is never listed",
        "rows.cancel(connection, row.id, IntentState.sending, note, now)",
        "rows.defer(connection, row.id, now + self._options.reconcile_after)",
        "test_a_refused_request_is_canceled_with_the_note_and_never_listed",
    ),
    rule(
        'a failed post is given its minute counted from the failure, not the claim',
        'rows.defer(connection, row.id, self._clock.now() + self._options.reconcile_after)',
        'rows.defer(connection, row.id, now + self._options.reconcile_after)',
        'test_a_failed_post_is_given_its_minute_from_the_failure_not_the_claim',
    ),
    rule(
        'one flush never claims an intent twice',
        'row = rows.next_due(connection, now, passed_over, leaving)',
        'row = rows.next_due(connection, now, (), leaving)',
        'test_one_flush_never_claims_an_intent_twice_even_after_a_resend_mid_flush',
    ),
    rule(
        "an outcome is recorded only on the row it claimed (compare-and-set)",
        '    if cursor.rowcount != 1:\n        raise IntentMoved(f"intent {intent_id} is no longer {expected}")\n',
        "",
        "test_an_outcome_is_recorded_only_on_the_row_it_claimed",
    ),
    rule(
        "the hold pauses sending (before the database's trigger refuses it)",
        'f"WHERE NOT EXISTS (SELECT 1 FROM hold_marker) AND id = coalesce("',
        'f"WHERE id = coalesce("',
        'test_the_hold_pauses_sending_and_reconciliation_goes_on',
    ),
    rule(
        "after a failed connection nothing is claimed until a read succeeds",
        "self._needs_a_read = True",
        "pass",
        "test_after_a_failed_connection_nothing_is_claimed_until_a_read_succeeds",
    ),
    rule(
        "while a 429's wait runs nothing is claimed",
        "if self._poster.rate_limited_for() > 0:",
        "if False:",
        "test_while_a_429_wait_runs_nothing_is_claimed",
    ),
    rule(
        'with under five seconds left nothing is claimed',
        'if not may_claim(now, self._wall(deadline), self._options.post_timeout):',
        'if False:',
        'test_a_flush_claims_nothing_with_under_five_seconds_left',
    ),
    rule(
        "a request is capped at the flush's deadline",
        "timeout = request_timeout(self._clock.now(), self._wall(deadline), self._options.post_timeout)",
        "timeout = self._options.post_timeout",
        "test_a_request_is_capped_at_the_flush_deadline",
    ),
    rule(
        "a young sending intent is left its minute to land before it is listed",
        "wait = self._options.reconcile_after if age is None else age",
        "wait = timedelta(0)",
        "test_a_restart_leaves_a_young_sending_intent_its_minute_to_land",
    ),
    rule(
        "invariant 5: a match another intent owns is not a candidate",
        "owned_receipts=rows.receipts_owned_by_others(",
        "owned_receipts=frozenset() or set() and rows.receipts_owned_by_others(",
        "test_reconciliation_passes_over_a_match_another_intent_owns",
    ),
    rule(
        "invariant 5: a worker's own message is never adopted",
        "worker_messages=worker_message_ids(kind, worker_rows),",
        "worker_messages=frozenset(),",
        "test_a_workers_own_acknowledgement_is_never_adopted",
    ),
    rule(
        "invariant 5: no rival at the destination could claim the same message",
        "rivals=rivals(current.id, rows.without_receipt_at(connection, current)),",
        "rivals=(),",
        "test_a_pending_rival_that_could_claim_the_same_message_makes_it_indeterminate",
        "test_indeterminate_and_abandoned_rivals_block_adoption",
    ),
    rule(
        "indeterminate and abandoned intents are rivals too",
        'RIVAL_STATES = ("pending", "sending", "indeterminate", "abandoned")',
        'RIVAL_STATES = ("pending", "sending")',
        "test_indeterminate_and_abandoned_rivals_block_adoption",
    ),
    rule(
        "a failing listing backs off before it is tried again",
        "rows.defer(connection, current.id, reconcile_at, failures)",
        "rows.defer(connection, current.id, now, failures)",
        "test_a_failed_listing_settles_nothing_and_backs_off_doubling_until_it_gives_up",
    ),
    rule(
        "invariant 10: a running outbox lists at most one destination a tick",
        "self.reconcile(limit=self._options.run_reconcile_batch, stop=stop)",
        "self.reconcile(stop=stop)",
        "test_a_running_outbox_sends_a_batch_then_lists_at_most_one_destination",
    ),
    rule(
        "start reconciles what a previous process left before it sends",
        "    parts.outbox.reconcile(deadline=deadline, stop=stop)\n",
        "",
        "test_start_settles_what_a_previous_process_left_before_sending",
        also=(
            (
                "    sent = parts.outbox.flush(deadline=deadline, stop_when_uncertain=True, leaving=leaving, stop=stop)\n",
                "    sent = parts.outbox.flush(deadline=deadline, stop_when_uncertain=True, leaving=leaving, stop=stop)\n"
                "    parts.outbox.reconcile(deadline=deadline, stop=stop)\n",
            ),
        ),
    ),
    rule(
        "one start path: the production start settles what a previous process left",
        "                started = settle_previous(parts, deadline, stop, self.heartbeats.starting)\n",
        "                started = StartReport([], FlushSummary())\n",
        "test_the_production_start_reconciles_and_sweeps_what_a_previous_process_left",
    ),
    rule(
        "the start reconciles: without it a previous process's sending intent is never listed",
        "    parts.outbox.reconcile(deadline=deadline, stop=stop)\n",
        "",
        "test_start_runs_every_step_once_in_the_designs_order",
        "test_the_production_start_reconciles_and_sweeps_what_a_previous_process_left",
    ),
    rule(
        "the start sweeps session files before recovery runs",
        "    _begin(\"sweep\")\n    if parts.sessions is not None:\n",
        "    _begin(\"sweep\")\n    if False:\n",
        "test_start_runs_every_step_once_in_the_designs_order",
        also=(
            (
                "    _begin(\"send\")\n",
                "    if parts.sessions is not None:\n        sweep_sessions(parts.sessions)\n    _begin(\"send\")\n",
            ),
        ),
    ),
    rule(
        "the start recovers before it sends",
        "    held = [] if parts.recovery is None else parts.recovery.recover(stop)\n",
        "",
        "test_start_runs_every_step_once_in_the_designs_order",
        also=(
            (
                "    return StartReport(held, sent, \"send\" if _stopped(stop, \"send\") else None)\n",
                "    held = [] if parts.recovery is None else parts.recovery.recover(stop)\n"
                "    return StartReport(held, sent, \"send\" if _stopped(stop, \"send\") else None)\n",
            ),
        ),
    ),
    rule(
        "a reconciliation listing ends within its own bound, not only the caller's deadline",
        "        bound = self._clock.monotonic() + self._options.listing_timeout.total_seconds()\n",
        "        bound = self._clock.monotonic() + 10**9\n",
        "test_a_stalled_listing_ends_within_its_own_bound_not_the_starts",
    ),
    rule(
        "the sender's moves ask core.edges before any SQL",
        'columns = {"state": str(asked(INTENT_EDGES, expected, to, Actor.automatic, edge_note)), **columns}',
        'columns = {"state": str(to), **columns}',
        'test_an_illegal_intent_move_is_refused_by_core_before_sql',
    ),
    rule(
        "the dispatcher's record moves ask core.edges: its actor rule, which no trigger holds",
        "            moved = asked(RECORD_EDGES, RecordState(record_state), step.record_to, Actor.dispatcher)\n",
        "            moved = step.record_to\n",
        "test_the_dispatcher_may_not_discard_a_record_core_refuses_before_sql",
    ),
    rule(
        "a move core refuses raises before the ledger writes it",
        "        raise MoveRefused(stepped.failure())\n",
        "        return target\n",
        "test_moves_ask_core.py",
    ),
    rule(
        'start stops sending at the first send that may not have landed',
        'if result in ENDS_A_FLUSH or (stop_when_uncertain and result is SendResult.uncertain):',
        'if result in ENDS_A_FLUSH:',
        'test_start_stops_sending_at_the_first_send_that_may_not_have_landed',
    ),
    rule(
        'invariant 4 across a crash: a restart never posts a sending intent again (SIGKILL)',
        'condition = "state = \'pending\' AND not_before <= ?"',
        'condition = "state IN (\'pending\', \'sending\') AND not_before <= ?"',
        'test_a_restart_inside_the_reconcile_wait_leaves_the_sending_intent_alone',
        'test_outbox_kill.py',
        also=(
            ('_move(connection, intent_id, IntentState.pending, IntentState.sending, sending_at=format_timestamp(now))', '_move(connection, intent_id, IntentState(connection.execute("SELECT state FROM outbox WHERE id = ?", (intent_id,)).fetchone()[0]), None, state="sending", sending_at=format_timestamp(now))'),
        ),
    ),
]

TRANSITION_INTENTS = [
    rule(
        "invariant 2: one intent per key (a second write for a key writes nothing)",
        ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (intent_key) DO NOTHING",',
        ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",',
        "test_a_request_admitted_or_queued_gets_one_guard_due_thirty_seconds_after_the_verdict",
        "test_a_request_blocked_for_want_of_a_route_gets_one_holding_reply_at_its_reply_destination",
    ),
    rule(
        "a completion read for an attempt not ended raises, rolling its transition back",
        '        raise TransitionRefused(f"attempt {attempt_id} has not ended")\n',
        "        return None\n",
        "test_a_completion_read_for_an_attempt_not_ended_raises_rolling_its_transition_back",
    ),
    rule(
        "still-running is counted only for a live attempt",
        "UPDATE attempts SET still_running = still_running + 1 WHERE id = ? AND state <> 'ended'",
        "UPDATE attempts SET still_running = still_running + 1 WHERE id = ?",
        "test_still_running_is_one_intent_per_attempt_and_occurrence_and_none_once_ended",
    ),
    rule(
        "the completion notice reads a second failed start back from the record",
        "if row.record_state == RecordState.blocked and row.record_reason == SPAWN_FAILED:",
        "if False:",
        "test_a_record_blocked_again_for_a_failed_start_is_read_from_the_record",
    ),
]

MUTATIONS: list[Mutation] = [*CLIENT, *OUTBOX, *TRANSITION_INTENTS, *FOUNDATIONS, *DISPATCH, *DECISIONS, *WINDOW, *STATUS, *DEMO, *SHUTDOWN, *END_TO_END, *OPERATING, *ONE_HOME, *LIMITS, *LIVE, *ROUTES, *TOKENS, *WORLD, *BAD_INPUT, *NOT_CREATED, *ADOPTED_REPLY, *HOLD, *RECEIPT, *CUTOVER, *DOCTOR, *OPS, *WORDS, *INBOX, *SIM, *SEC, *FID, *DRIVER, *BAD, *LEAD, *PROSE, *DECIDE, *KINDS, *TOKEN_FILE, *KIND_TABLE, *MCP, *NAMES, *GENERATED_RULES, *PERF, *METRICS]
