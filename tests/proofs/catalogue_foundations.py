"""The foundations' rules with a proof: core (the decisions), the ledger (opening, transactions,
the migration's triggers and CHECKs) and the stand-in (its faithful refusals, paging, faults).

Imported by ``tests.proofs.catalogue`` (``MUTATIONS``); the same form as the entries there:
the rule, the exact text that holds it (once in the tree), what it becomes without the rule, and
the tests that must go red then. A mutation makes the program wrong in that rule's way only; it
never breaks everything at once.
"""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

_FIRST_EDGE = '    Edge(IntentState.pending, IntentState.sending, _AUTOMATIC, "the claim"),\n'


def _with_edge(edge: str) -> str:
    """The intent table with one more edge, after its first."""
    return f"{_FIRST_EDGE}    {edge},\n"


CORE_EDGES = [
    rule(
        "edges: sent is terminal (no edge leaves it, not even a person's)",
        _FIRST_EDGE,
        _with_edge('Edge(IntentState.sent, IntentState.pending, _PERSON, "a resend of a sent one")'),
        "test_sent_and_abandoned_are_terminal",
        "test_the_table_has_exactly_the_allowed_pairs",
    ),
    rule(
        "edges: a sending intent never goes back to pending by itself (no retry after doubt)",
        '        "a retry of a request that provably never reached Basecamp",\n        only_with_notes=NOT_CREATED_NOTES,\n',
        '        "a retry of a request that provably never reached Basecamp",\n        only_with_notes=None,\n',
        "test_every_pair_of_intent_states_by_every_actor",
        "test_a_sending_intent_without_a_cause_proving_nothing_was_created_never_goes_back",
    ),
    rule(
        "edges: nothing reaches sent from pending without its claim",
        _FIRST_EDGE,
        _with_edge('Edge(IntentState.pending, IntentState.sent, _AUTOMATIC, "a shortcut")'),
        "test_every_pair_of_intent_states_by_every_actor",
    ),
    rule(
        "edges: no state moves to itself",
        "    repeats_allowed: bool = False\n",
        "    repeats_allowed: bool = True\n",
        "test_no_state_moves_to_itself",
    ),
    rule(
        "edges: reconciliation may leave a sending intent indeterminate (an allowed edge)",
        '    Edge(IntentState.sending, IntentState.indeterminate, _AUTOMATIC, "reconciliation"),\n',
        "",
        "test_every_pair_of_intent_states_by_every_actor",
    ),
    rule(
        "edges: a resend of an indeterminate intent is a person's edge only",
        "Edge(IntentState.indeterminate, IntentState.pending, _PERSON,",
        "Edge(IntentState.indeterminate, IntentState.pending, _PERSON | _AUTOMATIC,",
        "test_the_connector_cannot_take_a_persons_edge",
    ),
    rule(
        "edges: an edge taken by the wrong actor is refused",
        "        if actor not in edge.actors:\n",
        "        if False:\n",
        "test_the_connector_cannot_take_a_persons_edge",
        "test_a_person_cannot_take_the_connectors_edge",
    ),
    rule(
        "edges: a canceled intent returns to pending only with the refused note (the table)",
        "only_with_notes=RESENDABLE_NOTES,",
        "only_with_notes=None,",
        "test_a_canceled_intent_nothing_refused_never_comes_back",
    ),
    rule(
        "edges: the refused-note condition is checked on the move",
        "        if edge.only_with_notes is not None and note not in edge.only_with_notes:\n",
        "        if False:\n",
        "test_a_canceled_intent_nothing_refused_never_comes_back",
    ),
]

CORE_TEMPLATES = [
    rule(
        "templates: the guard acknowledgement fits a boost (16 code points)",
        'GUARD_ACKNOWLEDGEMENT = "👀 received"',
        'GUARD_ACKNOWLEDGEMENT = "👀 received: a worker will answer soon"',
        "test_the_guard_fits_a_boost",
    ),
    rule(
        "templates: a boost over 16 code points is refused at rendering",
        "            if len(lines[0]) > BOOST_LIMIT:\n",
        "            if False:\n",
        "test_a_boost_of_seventeen_code_points_is_refused",
    ),
    rule(
        "templates: a failed event asks for a person",
        'return f"Event {identifier}: failed. {needs_a_person(identifier)}"',
        'return f"Event {identifier}: failed."',
        "test_failed_unknown_and_unstartable_ask_for_our_redispatch",
    ),
    rule(
        "templates: an unknown event asks for a person",
        'f"Event {identifier}: unknown, the worker did not report on it. "\n'
        '                f"{needs_a_person(identifier)}"',
        'f"Event {identifier}: unknown, the worker did not report on it."',
        "test_failed_unknown_and_unstartable_ask_for_our_redispatch",
    ),
    rule(
        "templates: an event that could not be started again asks for a person",
        'return f"Event {identifier}: the worker could not be started. {needs_a_person(identifier)}"',
        'return f"Event {identifier}: the worker could not be started."',
        "test_failed_unknown_and_unstartable_ask_for_our_redispatch",
    ),
    rule(
        "templates: a success without a reply is named and asks nothing",
        'return f"Event {identifier}: succeeded, with no reply reported."',
        'return f"Event {identifier}: succeeded, with no reply reported. {needs_a_person(identifier)}"',
        "test_a_success_without_a_reply_is_named_and_asks_nothing",
    ),
    rule(
        "templates: a success with a reply gets no line",
        "case EventOutcome.succeeded if event.reply_id is not None:",
        "case EventOutcome.succeeded if False:",
        "test_no_notice_when_every_event_succeeded_with_a_reply",
    ),
    rule(
        "templates: an event withdrawn for its retry gets no line",
        "        case Settlement.withdrawn | Settlement.returned | Settlement.redispatched:\n",
        "        case Settlement.returned | Settlement.redispatched:\n",
        "test_no_notice_for_events_withdrawn_or_returned",
    ),
    rule(
        "templates: an event returned unexposed gets no line",
        "        case Settlement.withdrawn | Settlement.returned | Settlement.redispatched:\n",
        "        case Settlement.withdrawn | Settlement.redispatched:\n",
        "test_no_notice_for_events_withdrawn_or_returned",
    ),
    rule(
        "templates: no completion notice when nothing needs a line",
        "    if not event_lines and not notice_in_flight:\n        return None\n",
        "",
        "test_no_notice_for_no_events",
        "test_no_notice_when_every_event_succeeded_with_a_reply",
    ),
    rule(
        "templates: a completion notice names its events in event-id order",
        "for event in sorted(events, key=lambda settled: settled.event_id)",
        "for event in events",
        "test_a_completion_notice_names_what_needs_a_person_in_event_order",
    ),
    rule(
        "templates: a comment's lines are HTML-escaped",
        '"<br>".join(html.escape(line, quote=False) for line in lines)',
        '"<br>".join(lines)',
        "test_a_comment_escapes_each_line",
    ),
    rule(
        "templates: a chat line is plain text, never escaped",
        '            return "\\n".join(lines)\n',
        '            return "\\n".join(html.escape(line, quote=False) for line in lines)\n',
        "test_a_chat_line_is_plain",
    ),
]

CORE_INTENTS = [
    rule(
        "intents: a trigger that asks for no acknowledgement arms no guard",
        "    if not record.acknowledge:\n        return ()\n",
        "",
        "test_a_trigger_that_asks_for_nothing_calls_for_nothing",
    ),
    rule(
        "intents: only an admitted or queued verdict arms the guard (not dispatched)",
        "GUARDED_VERDICTS = frozenset({RecordState.admitted, RecordState.queued})",
        "GUARDED_VERDICTS = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})",
        "test_no_guard_for_a_record_not_admitted_or_queued",
    ),
    rule(
        "intents: a queued verdict arms the guard too",
        "GUARDED_VERDICTS = frozenset({RecordState.admitted, RecordState.queued})",
        "GUARDED_VERDICTS = frozenset({RecordState.admitted})",
        "test_a_request_admitted_or_queued_arms_the_guard",
    ),
    rule(
        "intents: the guard is due the guard delay after the verdict",
        "IntentKind.guard_ack, record, (record.event_id,), (), decided_at + guard_delay,",
        "IntentKind.guard_ack, record, (record.event_id,), (), decided_at,",
        "test_the_guard_is_due_thirty_seconds_after_the_verdict",
    ),
    rule(
        "intents: the guard boosts the event's own recording",
        "return Destination(MessageKind.boost, record.bucket_id, record.recording_id)",
        "return Destination(MessageKind.boost, record.reply_bucket_id, max(record.reply_recording_id, 1))",
        "test_the_guard_boosts_the_events_own_recording_not_the_reply_destination",
    ),
    rule(
        "intents: a holding reply only for a block of reason no_route",
        "if record.state == RecordState.blocked and record.reason == NO_ROUTE:",
        "if record.state == RecordState.blocked:",
        "test_no_holding_reply_for_other_blocks",
    ),
    rule(
        "intents: a holding reply only while the record is blocked",
        "if record.state == RecordState.blocked and record.reason == NO_ROUTE:",
        "if record.reason == NO_ROUTE:",
        "test_nothing_for_a_discarded_record",
    ),
    rule(
        'intents: a holding reply only where the record has a reply destination',
        '    return record.reply_destination()\n\n\ndef label(',
        '    return record.reply_destination() or Destination(\n        MessageKind.comment, record.bucket_id, max(record.recording_id, 1)\n    )\n\n\ndef label(',
        'test_no_holding_reply_without_a_reply_destination',
    ),
    rule(
        "intents: the guard's key is guard_ack:event:<id> (the key the ledger's triggers match)",
        'return f"guard_ack:event:{event_id}"',
        'return f"guard_ack:{event_id}"',
        "test_keys_are_one_per_thing_answered_for",
    ),
    rule(
        "intents: a still-running key names its occurrence (one intent per tick)",
        'return f"still_running:attempt:{attempt_id}:{occurrence}"',
        'return f"still_running:attempt:{attempt_id}"',
        "test_keys_are_one_per_thing_answered_for",
        "test_a_live_attempt_gets_its_still_running_notice",
    ),
]

CORE_CLAIM = [
    rule(
        'claim: a guard whose record vanished is canceled',
        'if record is None or not record.acknowledge or record.state not in GUARD_STANDING_STATES:',
        'if record is not None and (not record.acknowledge or record.state not in GUARD_STANDING_STATES):',
        'test_a_guard_whose_record_vanished_is_canceled',
    ),
    rule(
        'claim: a guard for a record that asks for nothing is canceled',
        'if record is None or not record.acknowledge or record.state not in GUARD_STANDING_STATES:',
        'if record is None or record.state not in GUARD_STANDING_STATES:',
        'test_a_guard_for_a_record_that_asks_for_nothing_is_canceled',
    ),
    rule(
        'claim: a guard for a record that moved on is canceled',
        'if record is None or not record.acknowledge or record.state not in GUARD_STANDING_STATES:',
        'if record is None or not record.acknowledge:',
        'test_a_guard_for_a_record_that_moved_on_is_canceled',
    ),
    rule(
        "claim: a guard a worker canceled by get_dispatch is canceled",
        "row.guard in WORKER_ANSWERS or row.delivery in ACKNOWLEDGED_DELIVERIES",
        "row.delivery in ACKNOWLEDGED_DELIVERIES",
        "test_a_guard_a_worker_canceled_by_get_dispatch_is_canceled",
    ),
    rule(
        "claim: a guard for an event a worker acknowledged (on any row) is canceled",
        "row.guard in WORKER_ANSWERS or row.delivery in ACKNOWLEDGED_DELIVERIES",
        "row.guard in WORKER_ANSWERS",
        "test_a_guard_for_an_event_a_worker_acknowledged_is_canceled",
    ),
    rule(
        'claim: a claimed guard fires its task rows',
        '        return Cancel(notes.NO_LONGER_CALLED_FOR)\n    return Claim(fires_guard=True)\n',
        '        return Cancel(notes.NO_LONGER_CALLED_FOR)\n    return Claim()\n',
        'test_a_guard_still_called_for_is_claimed_and_fires_its_task_rows',
    ),
    rule(
        "claim: a holding reply stands down once the record is no longer blocked",
        "if record is None or record.state != RecordState.blocked or record.reason != NO_ROUTE:",
        "if record is None or record.reason != NO_ROUTE:",
        "test_a_holding_reply_stands_down_when_the_record_moved_on",
    ),
    rule(
        "claim: a holding reply stands down once the block is for another reason",
        "if record is None or record.state != RecordState.blocked or record.reason != NO_ROUTE:",
        "if record is None or record.state != RecordState.blocked:",
        "test_a_holding_reply_stands_down_when_the_record_moved_on",
    ),
    rule(
        'claim: a still-running notice is canceled once its attempt ended',
        'if facts.attempt is None or not facts.attempt.live:',
        'if facts.attempt is None:',
        'test_a_still_running_notice_is_not_posted_after_the_attempt_ended',
    ),
    rule(
        'claim: a still-running notice whose attempt vanished is canceled',
        'if facts.attempt is None or not facts.attempt.live:',
        'if facts.attempt is not None and not facts.attempt.live:',
        'test_a_still_running_notice_with_no_attempt_is_canceled',
    ),
]

CORE_ADOPTION = [
    rule(
        "adoption: a candidate's words must equal the body's",
        "        if message.text == words\n",
        "        if True\n",
        "test_the_body_matters",
    ),
    rule(
        "adoption: a candidate was created by the agent",
        "        and message.creator_id == agent_id\n",
        "",
        "test_another_persons_message_is_never_adopted",
    ),
    rule(
        "adoption: a candidate was created within the listing window (since)",
        "        and message.created_at >= since\n",
        "",
        "test_a_message_from_before_the_listing_window_is_never_adopted",
    ),
    rule(
        "adoption: a receipt another intent owns is not a candidate",
        "        and message.id not in owned_receipts\n",
        "",
        "test_a_match_another_intent_owns_is_not_a_candidate",
    ),
    rule(
        "adoption: a worker's own message is never a candidate",
        "        and message.id not in worker_messages\n",
        "",
        "test_a_workers_own_message_is_never_adopted",
    ),
    rule(
        "adoption: at a reply destination a worker's replies count as its messages too",
        "            row.ack_id, row.reply_id, row.adopted_reply_id,\n",
        "            row.ack_id,\n",
        "test_at_a_reply_destination_the_workers_messages_are_acknowledgements_and_replies",
    ),
    rule(
        "adoption: exactly one candidate, never the first of several",
        "    if len(candidates) != 1:\n",
        "    if not candidates:\n",
        "test_two_matches_are_indeterminate",
        also=(("    (receipt_id,) = candidates\n", "    receipt_id = min(candidates)\n"),),
    ),
    rule(
        "adoption: a rival with the same words makes it indeterminate",
        "        if rival.intent_id != intent_id and message_text(rival.body) == words:\n",
        "        if False:\n",
        "test_a_rival_with_the_same_words_makes_it_indeterminate",
    ),
    rule(
        "adoption: the intent is not its own rival",
        "        if rival.intent_id != intent_id and message_text(rival.body) == words:\n",
        "        if message_text(rival.body) == words:\n",
        "test_the_intent_is_not_its_own_rival",
    ),
    rule(
        "adoption: a body with no words never adopts",
        "    if not words:\n        return Indeterminate(notes.NO_WORDS)\n",
        "",
        "test_a_body_with_no_words_never_adopts",
    ),
]

CORE_RECONCILE = [
    rule(
        "reconcile: a listing reaches back the slack past the sending time",
        "return (sending_at if sending_at is not None else created_at) - RECONCILE_SLACK",
        "return sending_at if sending_at is not None else created_at",
        "test_a_listing_reaches_back_past_the_sending_time",
    ),
    rule(
        'reconcile: a young sending intent is left its minute to land',
        '"WHERE state = \'sending\' AND sending_at <= ? AND',
        '"WHERE state = \'sending\' AND ? IS NOT NULL AND',
        'test_a_young_sending_intent_is_left_to_land',
    ),
    rule(
        'reconcile: a backed-off intent waits for its reconcile_at',
        '(reconcile_at IS NULL OR reconcile_at <= ?)',
        '(? IS NOT NULL)',
        'test_a_backed_off_intent_waits_for_its_time',
    ),
    rule(
        'reconcile: the backoff starts at 30 s',
        'return min(BACKOFF_START * (1 << min(failures - 1, 32)), BACKOFF_MAX)',
        'return min(BACKOFF_START * (1 << min(failures, 32)), BACKOFF_MAX)',
        'test_the_first_failed_listing_backs_off_thirty_seconds',
    ),
    rule(
        'reconcile: the backoff doubles per failure',
        'BACKOFF_START * (1 << min(failures - 1, 32))',
        'BACKOFF_START * (1 + min(failures - 1, 32))',
        'test_each_failure_doubles_the_wait_up_to_thirty_minutes',
    ),
    rule(
        'reconcile: the backoff is capped at 30 min',
        'return min(BACKOFF_START * (1 << min(failures - 1, 32)), BACKOFF_MAX)',
        'return BACKOFF_START * (1 << min(failures - 1, 32))',
        'test_each_failure_doubles_the_wait_up_to_thirty_minutes',
        'test_the_ninth_failure_still_backs_off',
    ),
    rule(
        "reconcile: give up at the tenth failed listing",
        "if failures >= MAX_RECONCILE_FAILURES:",
        "if failures > MAX_RECONCILE_FAILURES:",
        "test_the_tenth_failure_gives_up_with_the_count_that_gave_up",
    ),
    rule(
        "reconcile: the give-up note says the count that gave up",
        "return GiveUp(notes.listing_failed(failures), failures)",
        "return GiveUp(notes.listing_failed(failures_before), failures)",
        "test_the_tenth_failure_gives_up_with_the_count_that_gave_up",
    ),
    rule(
        "reconcile: an unlistable destination gives up at once",
        "    if unlistable:\n        return GiveUp(notes.UNLISTABLE, failures)\n",
        "",
        "test_an_unlistable_destination_gives_up_at_once",
    ),
]

CORE_RESOLUTION = [
    rule(
        "resolution: a resolution records who decided (by required)",
        "    if not by:\n",
        "    if False:\n",
        "test_a_resolution_records_who_decided",
    ),
    rule(
        "resolution: who decided is one line",
        "    if len(by.splitlines()) != 1:\n",
        "    if False:\n",
        "test_who_decided_is_one_line",
    ),
    rule(
        "resolution: resolving sent needs a positive receipt id",
        "case Sent(receipt_id=receipt_id) if receipt_id <= 0:",
        "case Sent(receipt_id=receipt_id) if False:",
        "test_sent_needs_a_real_receipt",
    ),
    rule(
        "resolution: an indeterminate intent a person found may be resolved sent",
        "        case IntentState.indeterminate:\n            pass\n",
        "        case IntentState.indeterminate if not isinstance(resolution, Sent):\n            pass\n",
        "test_an_indeterminate_intent_a_person_found_is_sent_with_its_receipt",
    ),
    rule(
        "resolution: an indeterminate intent may be abandoned",
        "        case IntentState.indeterminate:\n            pass\n",
        "        case IntentState.indeterminate if not isinstance(resolution, Abandon):\n            pass\n",
        "test_an_indeterminate_intent_may_be_abandoned",
    ),
    rule(
        "resolution: an indeterminate intent may be resent",
        "        case IntentState.indeterminate:\n            pass\n",
        "        case IntentState.indeterminate if not isinstance(resolution, Resend):\n            pass\n",
        "test_a_resend_starts_the_request_and_its_reconciliation_afresh",
    ),
    rule(
        "resolution: a refused (canceled) intent may be resent",
        "        case IntentState.canceled if notes.resendable(note):\n            if not isinstance(resolution, Resend):",
        "        case IntentState.canceled if False:\n            if not isinstance(resolution, Resend):",
        "test_a_person_may_resend_a_refused_intent",
    ),
    rule(
        "resolution: a refused intent can only be resent, not marked sent or abandoned",
        "            if not isinstance(resolution, Resend):\n",
        "            if False:\n",
        "test_a_refused_intent_can_only_be_resent",
    ),
    rule(
        "resolution: a canceled intent nothing refused cannot be resolved",
        "        case IntentState.canceled:\n            return _refused(",
        "        case IntentState.canceled if False:\n            return _refused(",
        "test_a_canceled_intent_nothing_refused_cannot_be_resolved",
    ),
    rule(
        "resolution: a pending, sending, sent or abandoned intent cannot be resolved",
        "        case _:\n            return _refused(",
        "        case None:\n            return _refused(",
        "test_nothing_else_can_be_resolved_and_the_refusal_names_the_state",
    ),
    rule(
        "resolution: a resend resets the reconciliation counters",
        "reset_reconciliation=True, not_before=now)",
        "reset_reconciliation=False, not_before=now)",
        "test_a_resend_starts_the_request_and_its_reconciliation_afresh",
    ),
    rule(
        "resolution: a canceled intent Basecamp refused is offered a resend (resolve's own rule)",
        '        case IntentState.canceled if notes.resendable(note):\n            allowed = decision == "resend"\n',
        "",
        "test_an_indeterminate_intent_offers_every_decision_a_refused_one_only_resend",
        "test_what_is_offered_is_exactly_what_resolve_allows",
    ),
]

CORE_SMALL = [
    rule(
        "text: <br> becomes a space",
        r'_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|h[1-6]|blockquote|pre)\s*>", re.IGNORECASE)',
        r'_BREAK = re.compile(r"</(?:div|p|li|h[1-6]|blockquote|pre)\s*>", re.IGNORECASE)',
        "test_message_text_keeps_the_words",
    ),
    rule(
        "text: a block's closing tag becomes a space",
        r'_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|h[1-6]|blockquote|pre)\s*>", re.IGNORECASE)',
        r'_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)',
        "test_message_text_keeps_the_words",
    ),
    rule(
        "text: every other tag is dropped",
        '    untagged = _TAG.sub("", spaced)\n',
        "    untagged = spaced\n",
        "test_message_text_keeps_the_words",
    ),
    rule(
        "text: entities are decoded after tags are dropped (an escaped tag stays text)",
        '    spaced = _BREAK.sub(" ", content)\n',
        '    spaced = _BREAK.sub(" ", html.unescape(content))\n',
        "test_an_escaped_tag_stays_text",
    ),
    rule(
        "links: only the rel=next entry is followed",
        'if "next" in rel.group(1).lower().split():',
        "if True:",
        "test_next_link_reads_rel_next_only",
    ),
    rule(
        "links: same origin compares the port (the default made explicit)",
        "        port = parts.port or _DEFAULT_PORTS[scheme]\n",
        "        port = parts.port or 0\n",
        "test_same_origin_compares_scheme_host_and_port",
    ),
    rule(
        "links: plain http only to a loopback host",
        'return scheme == "https" or is_loopback_host(host)',
        'return scheme in ("https", "http")',
        "test_plain_http_only_to_loopback",
    ),
    rule(
        "pacing: at the limit the next request waits for the oldest to leave the window",
        "    if len(recent) >= limit:\n",
        "    if False:\n",
        "test_at_the_limit_the_next_waits_until_the_oldest_leaves_the_window",
    ),
    rule(
        "pacing: a 429 holds every request until its Retry-After",
        "    wait = max(0.0, held_until - now)\n",
        "    wait = 0.0\n",
        "test_a_429_holds_every_request_until_its_retry_after",
    ),
    rule(
        "posting: a 2xx with a positive integer id is a receipt",
        "if isinstance(created, int) and not isinstance(created, bool) and created > 0:",
        "if False:",
        "test_a_2xx_with_an_id_is_a_receipt",
    ),
    rule(
        "posting: a 2xx without a usable id (0, negative, a bool) is uncertain",
        "if isinstance(created, int) and not isinstance(created, bool) and created > 0:",
        "if isinstance(created, int):",
        "test_a_2xx_without_a_usable_id_is_uncertain",
    ),
    rule(
        "posting: a 4xx is refused (nothing was created)",
        "    if 400 <= status < 500:\n",
        "    if False:\n",
        "test_a_4xx_is_refused_and_nothing_was_created",
    ),
    rule(
        "posting: only a 429's refusal carries its Retry-After",
        "retry_after_seconds if status == 429 else None,",
        "retry_after_seconds,",
        "test_a_429_refusal_carries_its_retry_after_and_others_do_not",
    ),
    rule(
        "posting: a 5xx is uncertain, never refused",
        'return Uncertain(UncertainCause.server_error, status, f"Basecamp answered HTTP {status}")',
        'return Refused(RefusalCause.answered, status, f"Basecamp answered HTTP {status}")',
        "test_a_5xx_is_uncertain",
    ),
    rule(
        "posting: any other status (1xx, 3xx) is uncertain",
        'return Uncertain(UncertainCause.no_id, status, f"unexpected HTTP {status}")',
        'return Refused(RefusalCause.answered, status, f"unexpected HTTP {status}")',
        "test_anything_else_is_uncertain",
    ),
    rule(
        "settlement: a row withdrawn for its retry reads back withdrawn",
        "    elif row.withdrawn:\n",
        "    elif False:\n",
        "test_a_row_withdrawn_for_its_retry_reads_back_withdrawn",
    ),
    rule(
        "settlement: a row never exposed reads back returned",
        "        settlement = Settlement.withdrawn\n    elif row.delivery == DeliveryState.admitted:\n",
        "        settlement = Settlement.withdrawn\n    elif False:\n",
        "test_a_row_never_exposed_reads_back_returned",
    ),
    rule(
        "settlement: a reported success or failure stands",
        "    elif row.outcome in (EventOutcome.succeeded, EventOutcome.failed):\n",
        "    elif row.outcome == EventOutcome.failed:\n",
        "test_a_reported_outcome_reads_back_as_reported",
    ),
    rule(
        "settlement: anything else exposed reads back unknown, whatever the row says",
        "    outcome = row.outcome if settlement is Settlement.reported else EventOutcome.unknown\n",
        "    outcome = row.outcome\n",
        "test_an_exposed_unreported_row_reads_back_unknown",
    ),
    rule(
        "timestamps: a stored time has nine fractional digits (fixed width)",
        'isoformat(timespec="microseconds")[:26] + "000Z"',
        'isoformat(timespec="microseconds")[:26] + "Z"',
        "test_stored_time_round_trips_and_is_fixed_width",
    ),
    rule(
        "timestamps: a stored time is UTC",
        '    utc = moment.astimezone(UTC)\n    return utc.isoformat(',
        '    utc = moment\n    return utc.isoformat(',
        "test_other_zones_are_stored_as_utc_and_basecamp_times_parse",
    ),
    rule(
        "timestamps: a naive time is refused",
        '        raise ValueError("a naive datetime has no zone; the ledger stores UTC")\n',
        "        pass\n",
        "test_a_naive_time_is_refused",
    ),
    rule(
        "timestamps: a notice's HH:MM is UTC whatever the zone given",
        'return moment.astimezone(UTC).strftime("%H:%M UTC")',
        'return moment.strftime("%H:%M UTC")',
        "test_other_zones_are_stored_as_utc_and_basecamp_times_parse",
        "test_still_running_times_are_utc_whatever_the_zone_given",
    ),
]

LEDGER = [
    rule(
        "ledger open: an in-memory name is refused",
        'if text == ":memory:" or text.startswith("file::memory:"):',
        "if False:",
        "test_an_in_memory_name_is_refused_even_where_a_file_of_that_name_could_be_made",
        "test_the_in_memory_refusal_says_why",
        "test_an_empty_in_memory_or_uri_name_is_refused",
    ),
    rule(
        "ledger open: a path holding ?, # or % is refused",
        '_URI_CHARACTERS = ("?", "#", "%")',
        "_URI_CHARACTERS = ()",
        "test_a_path_holding_a_uri_character_is_refused",
    ),
    rule(
        "ledger open: a file others can read is refused, not tightened",
        "        _exposure(status, what, path, FILE_MODE, reason, made_here=made_here)\n",
        "        pass\n",
        "test_a_file_others_can_read_is_refused_not_tightened",
    ),
    rule(
        "ledger open: a directory that is not 0700 is refused, not tightened",
        "    _exposure(status, what, path, DIRECTORY_MODE, reason, made_here=directory_made_here(path, holds))\n",
        "",
        "test_a_directory_others_can_list_is_refused_not_tightened",
        "test_a_loose_directory_is_refused_never_tightened",
        "test_a_loose_private_directory_is_refused_not_tightened",
        "test_the_owner_does_not_create_a_file_in_a_loose_directory",
    ),
    rule(
        "ledger open: a symlink is refused (the file is vetted without following links)",
        "    status = os.lstat(path)\n    check_file_status(status, path, what, reason, kind)\n",
        "    status = os.stat(path)\n    check_file_status(status, path, what, reason, kind)\n",
        "test_a_symlinked_ledger_is_refused",
    ),
    rule(
        "ledger open: a ledger newer than the program is refused",
        "    if version > SCHEMA_VERSION:\n",
        "    if False:\n",
        "test_a_ledger_newer_than_the_program_is_refused",
    ),
    rule(
        "ledger open: a worker or status never opens a ledger not yet migrated",
        "        if version < SCHEMA_VERSION:\n",
        "        if False:\n",
        "test_a_ledger_not_yet_migrated_is_refused_without_migrating",
    ),
    rule(
        "ledger open: a missing file is an error for open_existing and read-only, never created",
        "    check_private_directory(ledger_path)\n    identity = checked_file(ledger_path)\n",
        "    create_private_file(ledger_path, blank_ledger())\n    check_private_directory(ledger_path)\n"
        "    identity = checked_file(ledger_path)\n",
        "test_a_missing_ledger_is_an_error_and_nothing_is_created",
    ),
    rule(
        "ledger open: a missing directory is an error for open_existing and read-only, never created",
        "    ledger_path = checked_path(path)\n    check_private_directory(ledger_path)\n",
        "    ledger_path = checked_path(path)\n    ensure_private_directory(ledger_path)\n",
        "test_a_missing_directory_is_an_error_and_is_not_created",
    ),
    rule(
        "ledger pragmas: the owner puts the ledger in WAL mode",
        "        _switch_to_wal(connection, ledger_path, busy_timeout)\n        migrate(",
        "        migrate(",
        "test_the_pragmas_are_in_force_on_every_way_in",
    ),
    rule(
        "ledger pragmas: synchronous is FULL",
        '"PRAGMA synchronous = FULL"',
        '"PRAGMA synchronous = NORMAL"',
        "test_the_pragmas_are_in_force_on_every_way_in",
    ),
    rule(
        "ledger pragmas: synchronous is OFF only when unsynced is asked for (the simulation)",
        '"PRAGMA synchronous = OFF" if unsynced else',
        '"PRAGMA synchronous = OFF" if True else',
        "test_only_an_explicit_option_leaves_the_ledger_unsynced",
    ),
    rule(
        'ledger migration: an up-to-date ledger costs one read, no write transaction',
        'rules.in_force(connection):\n            return  # nothing to do\n',
        'rules.in_force(connection):\n            pass  # nothing to do\n',
        'test_an_up_to_date_ledger_opens_while_another_process_writes',
        'test_a_ledger_with_the_rules_in_force_reopens_without_a_write',
    ),
    rule(
        "ledger pragmas: foreign keys are enforced",
        '"PRAGMA foreign_keys = ON"',
        '"PRAGMA foreign_keys = OFF"',
        "test_the_pragmas_are_in_force_on_every_way_in",
        "test_an_intent_must_name_a_real_event",
    ),
    rule(
        "ledger pragmas: the busy timeout is the one asked for",
        'f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}"',
        '"PRAGMA busy_timeout = 0"',
        "test_the_pragmas_are_in_force_on_every_way_in",
    ),
    rule(
        "ledger pragmas: the read-only way in is query_only",
        '            connection.execute("PRAGMA query_only = ON")\n',
        "            pass\n",
        "test_the_pragmas_are_in_force_on_every_way_in",
    ),
    rule(
        "ledger transactions: a write is BEGIN IMMEDIATE (the write lock at once)",
        'self._write = _Transaction(self, "BEGIN IMMEDIATE", records=True)',
        'self._write = _Transaction(self, "BEGIN DEFERRED", records=True)',
        "test_a_write_takes_the_write_lock_when_it_begins",
    ),
    rule(
        "ledger transactions: an exception rolls the write back",
        '                connection.execute("ROLLBACK")  # the block failed\n',
        '                connection.execute("COMMIT")  # the block failed\n',
        "test_an_exception_rolls_the_write_back_and_is_raised",
        "test_a_refused_statement_rolls_back_the_whole_write",
    ),
    rule(
        "ledger transactions: the exception is raised again after the rollback",
        "        return False  # the block's exception is raised again, after the rollback\n",
        "        return True\n",
        "test_an_exception_rolls_the_write_back_and_is_raised",
    ),
    rule(
        "ledger migration: each migration re-reads the version inside its own transaction",
        "            recorded = schema_version(transaction)  # re-read inside: another may have applied it\n",
        "            recorded = read_at_open\n",
        "test_two_processes_migrating_a_fresh_ledger_apply_each_migration_once",
        also=(
            (
                "def migrate(ledger: Ledger) -> None:",
                "def migrate(ledger: Ledger, read_at_open: int) -> None:",
            ),
            (
                "        refuse_too_new(_readable(lambda: schema_version(connection), ledger_path, busy_timeout), ledger_path)\n"
                "        check_integrity(connection, ledger_path)\n"
                "        _switch_to_wal(connection, ledger_path, busy_timeout)\n"
                "        migrate(Ledger(connection, ledger_path, read_only=False, clock=clock, busy_timeout=busy_timeout))\n",
                "        read_at_open = _readable(lambda: schema_version(connection), ledger_path, busy_timeout)\n"
                "        refuse_too_new(read_at_open, ledger_path)\n"
                "        check_integrity(connection, ledger_path)\n"
                "        _switch_to_wal(connection, ledger_path, busy_timeout)\n"
                "        migrate(Ledger(connection, ledger_path, read_only=False, clock=clock, busy_timeout=busy_timeout),"
                " read_at_open)\n",
            ),
        ),
    ),
]

SCHEMA = [
    rule(
        'schema: an outbox intent moves only along its edges (generated rule)',
        '    when = f"NOT ({changed}) AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        '    when = f"0 AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        'test_every_pair_of_outbox_states_against_the_edge_trigger',
    ),
    rule(
        'schema: a canceled intent returns to pending only with a resendable note (generated rule)',
        '                f"({pair} = {_quote(f\'{edge.source}>{edge.target}\')} AND {_one_of(note, sorted(edge.only_with_notes))})"\n',
        '                f"({pair} = {_quote(f\'{edge.source}>{edge.target}\')})"\n',
        'test_every_pair_of_outbox_states_against_the_edge_trigger',
    ),
    rule(
        "schema: an outbox receipt is final (trigger)",
        "WHEN OLD.receipt_id IS NOT NULL AND NEW.receipt_id IS NOT OLD.receipt_id",
        "WHEN 0",
        "test_a_receipt_never_changes",
    ),
    rule(
        "schema: a receipt belongs to one intent (unique index)",
        "CREATE UNIQUE INDEX outbox_receipt ON outbox (message_kind, receipt_id)",
        "CREATE INDEX outbox_receipt ON outbox (message_kind, receipt_id)",
        "test_a_receipt_belongs_to_one_intent_per_message_kind",
    ),
    rule(
        "schema: a receipt is unique per message kind (ids are scoped by kind)",
        "CREATE UNIQUE INDEX outbox_receipt ON outbox (message_kind, receipt_id)",
        "CREATE UNIQUE INDEX outbox_receipt ON outbox (receipt_id)",
        "test_a_receipt_belongs_to_one_intent_per_message_kind",
    ),
    rule(
        "schema: one intent per key (unique)",
        "intent_key         TEXT    NOT NULL UNIQUE CHECK (intent_key <> ''),",
        "intent_key         TEXT    NOT NULL CHECK (intent_key <> ''),",
        "test_a_second_intent_for_a_key_is_refused",
    ),
    rule(
        "schema: get_dispatch cancels the pending guard (trigger)",
        "       AND state = 'pending';\n",
        "       AND 0;\n",
        "test_get_dispatch_cancels_the_pending_guard",
    ),
    rule(
        "schema: get_dispatch never cancels a guard already in flight",
        "       AND state = 'pending';\n",
        "       AND state IN ('pending', 'sending');\n",
        "test_get_dispatch_leaves_a_guard_that_is_no_longer_pending",
    ),
    rule(
        "schema: get_dispatch cancels only its own event's guard",
        "     WHERE intent_key = 'guard_ack:event:' || NEW.event_id\n       AND state = 'pending';\n",
        "     WHERE intent_key LIKE 'guard_ack:event:%'\n       AND state = 'pending';\n",
        "test_get_dispatch_cancels_the_pending_guard",
    ),
    rule(
        "schema: a task created after the guard went out is told it fired (trigger)",
        "       AND state IN ('sending', 'sent', 'indeterminate', 'abandoned'))",
        "       AND 0)",
        "test_a_task_created_after_the_guard_went_out_is_told_it_fired",
    ),
    rule(
        "schema: a guard still pending or canceled leaves a new task's guard armed",
        "       AND state IN ('sending', 'sent', 'indeterminate', 'abandoned'))",
        "       AND state IN ('pending', 'canceled', 'sending', 'sent', 'indeterminate', 'abandoned'))",
        "test_a_task_created_after_the_guard_went_out_is_told_it_fired",
    ),
    rule(
        "schema: nothing moves to sending under a hold (trigger)",
        "WHEN NEW.state = 'sending' AND OLD.state <> 'sending' AND EXISTS (SELECT 1 FROM hold_marker)",
        "WHEN 0",
        "test_nothing_moves_to_sending_under_a_hold",
    ),
    rule(
        "schema: a hold stops only the move to sending",
        "WHEN NEW.state = 'sending' AND OLD.state <> 'sending' AND EXISTS (SELECT 1 FROM hold_marker)",
        "WHEN NEW.state <> OLD.state AND EXISTS (SELECT 1 FROM hold_marker)",
        "test_a_hold_stops_only_the_move_to_sending",
    ),
    rule(
        "schema: an outbox intent is never deleted (trigger)",
        "BEFORE DELETE ON outbox\nBEGIN",
        "BEFORE DELETE ON outbox\nWHEN 0\nBEGIN",
        "test_an_intent_is_never_deleted",
    ),
    rule(
        "schema: a guard is written empty or armed (trigger)",
        "WHEN NEW.guard NOT IN ('', 'armed')",
        "WHEN 0",
        "test_a_guard_is_written_empty_or_armed",
    ),
    rule(
        'schema: a guard settles once, armed to canceled or fired (generated rule)',
        '    when = f"NOT ({changed}) AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        '    when = f"0 AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        'test_every_pair_of_guards_against_the_settles_once_trigger',
    ),
    rule(
        "schema: a task event is never deleted (trigger)",
        "BEFORE DELETE ON task_events\nBEGIN",
        "BEFORE DELETE ON task_events\nWHEN 0\nBEGIN",
        "test_a_task_event_is_never_deleted",
    ),
    rule(
        "schema: a superseded task stays superseded (trigger)",
        "WHEN OLD.superseded_at IS NOT NULL AND NEW.superseded_at IS NOT OLD.superseded_at",
        "WHEN 0",
        "test_supersession_is_final",
    ),
    rule(
        'schema: an attempt moves forward only (generated rule)',
        '    when = f"NOT ({changed}) AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        '    when = f"0 AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
        'test_every_pair_of_attempt_states_against_the_forward_trigger',
    ),
    rule(
        'schema: an ended attempt keeps its stop reason (generated rule: a companion changes only along an edge)',
        '    changed = " AND ".join(f"NEW.{name} = OLD.{name}" for name in (column, *lifecycle.companions))\n',
        '    changed = " AND ".join(f"NEW.{name} = OLD.{name}" for name in (column,))\n',
        'test_an_ended_attempt_keeps_its_stop_reason',
    ),
    rule(
        'schema: an outbox state is one of the six (generated vocabulary)',
        '        ("outbox", "state", values(IntentState)),\n',
        '        ("outbox", "state", (*values(IntentState), "bogus")),\n',
        'test_an_intent_the_checks_refuse',
        'test_the_generated_vocabularies_are_the_migrations_lists',
    ),
    rule(
        "schema: an intent is sent exactly when it has a receipt (CHECK)",
        "    CHECK ((state = 'sent') = (receipt_id IS NOT NULL)),\n",
        "    CHECK (1),\n",
        "test_an_intent_the_checks_refuse",
    ),
    rule(
        "schema: an intent past pending or canceled has a sending time (CHECK)",
        "    CHECK (state IN ('pending', 'canceled') OR sending_at IS NOT NULL)\n",
        "    CHECK (1)\n",
        "test_an_intent_the_checks_refuse",
    ),
    rule(
        "schema: a record's state is one of its eight (generated vocabulary)",
        '        ("events", "state", values(RecordState)),\n',
        '        ("events", "state", (*values(RecordState), "bogus")),\n',
        'test_a_record_the_checks_refuse',
        'test_the_generated_vocabularies_are_the_migrations_lists',
    ),
    rule(
        "schema: an attempt is ended exactly when it has a stop reason (CHECK)",
        "    CHECK ((state = 'ended') = (stop_reason <> ''))\n",
        "    CHECK (1)\n",
        "test_an_attempt_the_checks_refuse",
    ),
    rule(
        "schema: a task event's delivery is one of its four (generated vocabulary)",
        '        ("task_events", "delivery", values(DeliveryState)),\n',
        '        ("task_events", "delivery", (*values(DeliveryState), "bogus")),\n',
        'test_a_task_event_the_checks_refuse',
        'test_the_generated_vocabularies_are_the_migrations_lists',
    ),
    # migration 14: the CHECKs' lists of three or more values as comparisons joined by OR
    rule(
        "schema: a vocabulary is a value found whole in its one list (no IN list's b-tree, no OR chain to parse), and only those",
        "    return f\"(instr({_quote(listed)}, '|' || {expression} || '|') > 0 AND {expression} NOT GLOB '*|*')\"\n",
        "    return f\"(1 OR instr({_quote(listed)}, '|' || {expression} || '|') > 0 AND {expression} NOT GLOB '*|*')\"\n",
        "test_a_record_the_checks_refuse",
        "test_every_vocabulary_refuses_exactly_what_core_does_not_name",
    ),
    rule(
        "schema: a value holding the lists' separator is never taken for the values it joins",
        "    return f\"(instr({_quote(listed)}, '|' || {expression} || '|') > 0 AND {expression} NOT GLOB '*|*')\"\n",
        "    return f\"(instr({_quote(listed)}, '|' || {expression} || '|') > 0)\"\n",
        "test_every_vocabulary_refuses_exactly_what_core_does_not_name",
        "test_every_outbox_pair_with_every_note_has_main_s_outcome",
    ),
    rule(
        "schema: a loss's state is one of its three (generated vocabulary)",
        '        ("losses", "state", values(LossState)),\n',
        '        ("losses", "state", (*values(LossState), "forgotten")),\n',
        'test_the_checks_no_other_test_writes_against_still_refuse',
    ),
    rule(
        "schema: no table CHECK names a list of three or more values (a vocabulary's CHECK is removed on open)",
        '            sql = _vocabulary_check(column).sub("", sql)\n',
        '            sql = sql\n',
        'test_no_table_check_names_a_list_of_three_or_more_values',
        'test_no_vocabulary_is_a_check_any_longer',
        'test_a_ledger_main_made_at_any_version_is_brought_up_to_date_on_open',
    ),
    rule(
        "schema: removing a vocabulary's CHECK ends with the schema unwritable (writable_schema RESET)",
        '            connection.execute("PRAGMA writable_schema = RESET")\n',
        '            connection.execute("PRAGMA writable_schema = ON")\n',
        'test_the_migration_leaves_the_schema_unwritable',
    ),
    rule(
        "schema: a task ends only once superseded (CHECK)",
        "    CHECK (ended_at IS NULL OR superseded_at IS NOT NULL)\n",
        "    CHECK (1)\n",
        "test_a_task_ends_only_once_superseded",
    ),
    rule(
        "schema: one live task per event (unique partial index)",
        "CREATE UNIQUE INDEX task_events_one_live_task ON task_events (event_id)",
        "CREATE INDEX task_events_one_live_task ON task_events (event_id)",
        "test_one_live_task_per_event",
    ),
    rule(
        "schema: one live attempt per task (unique partial index)",
        "CREATE UNIQUE INDEX attempts_live_per_task ON attempts (task_id) WHERE state <> 'ended';",
        "CREATE INDEX attempts_live_per_task ON attempts (task_id) WHERE state <> 'ended';",
        "test_one_live_attempt_per_task_and_one_number_per_attempt",
    ),
]

STANDIN = [
    rule(
        "stand-in: a token of nobody in the world is 401",
        "return self.world.person_with_token(token.strip())",
        "return self.world.person_with_token(token.strip()) or self.world.agent",
        "test_a_missing_or_wrong_bearer_token_is_unauthorized",
    ),
    rule(
        "stand-in: a request without a User-Agent is 400",
        '        if not request.headers.get("user-agent", "").strip():\n',
        "        if False:\n",
        "test_a_missing_user_agent_is_a_bad_request_in_plain_text",
    ),
    rule(
        "stand-in: the missing-User-Agent 400 is text/plain, no JSON",
        "            return text_reply(400, MISSING_USER_AGENT)\n",
        '            return error_reply(400, "Bad Request")\n',
        "test_a_missing_user_agent_is_a_bad_request_in_plain_text",
    ),
    rule(
        "stand-in: a POST that is not application/json is 415",
        '        if media_type != "application/json":\n',
        "        if False:\n",
        "test_a_post_without_a_json_content_type_is_unsupported",
    ),
    rule(
        "stand-in: blank content is 422",
        "if not isinstance(content, str) or not content.strip():",
        "if not isinstance(content, str):",
        "test_missing_or_blank_content_is_unprocessable",
    ),
    rule(
        "stand-in: a boost over 16 code points is 422",
        "if kind is Kind.boost and self._enforce_boost_length and len(content) > BOOST_MAX_LENGTH:",
        "if False:",
        "test_a_boost_over_sixteen_code_points_is_unprocessable",
    ),
    rule(
        "stand-in: listing an unknown recording is 404, not an empty list",
        "            if destination is None:\n                return not_found()\n            messages = ",
        "            if destination is None:\n                return json_reply(200, [])\n            messages = ",
        "test_an_unknown_recording_or_chat_is_not_found",
    ),
    rule(
        "stand-in: a legacy path naming another bucket is 404",
        "if recording is None or route.bucket_id not in (None, recording.bucket_id):",
        "if recording is None:",
        "test_posting_to_an_unknown_or_wrong_place_is_not_found",
    ),
    rule(
        "stand-in: a kind posted where it cannot be (a comment on a Campfire) is 404",
        "return recording if recording is not None and kind.accepts(recording) else None",
        "return recording",
        "test_posting_to_an_unknown_or_wrong_place_is_not_found",
    ),
    rule(
        "stand-in: pages are geared (15, 30, 50, then 100)",
        "    start = sum(sizes[:before]) + max(0, before - len(sizes)) * sizes[-1]\n"
        "    end = start + sizes[min(before, len(sizes) - 1)]\n",
        "    start = before * sizes[0]\n    end = start + sizes[0]\n",
        "test_basecamps_gears_are_15_30_50_then_100",
        "test_a_listing_is_paged_with_an_absolute_same_origin_link_while_more_remain",
    ),
    rule(
        "stand-in: a Link only while more remain",
        "    if page.has_next:\n",
        "    if page.has_next or page.number == 1:\n",
        "test_a_single_page_has_no_link_and_past_the_end_is_empty",
        "test_an_empty_listing_has_a_total_of_zero",
    ),
    rule(
        "stand-in: the Link is absolute, on the stand-in's own origin",
        'return f"<{origin}{path}?{urlencode(',
        'return f"<{path}?{urlencode(',
        "test_a_listing_is_paged_with_an_absolute_same_origin_link_while_more_remain",
    ),
    rule(
        "stand-in: X-Total-Count counts the whole listing, not the page",
        'headers = [("X-Total-Count", str(page.total))]',
        'headers = [("X-Total-Count", str(len(page.items)))]',
        "test_a_listing_is_paged_with_an_absolute_same_origin_link_while_more_remain",
    ),
    rule(
        "stand-in: listings are oldest first",
        "return sorted(found, key=lambda message: (message.created_at, message.id))",
        "return found",
        "test_comments_are_listed_oldest_first_whatever_order_they_were_placed_in",
    ),
    rule(
        "stand-in: Campfire lines honour direction=desc",
        'if kind is Kind.chat_line and request.query.get("direction") == "desc":',
        "if False:",
        "test_lines_default_to_oldest_first_and_honour_sort_and_direction",
    ),
    rule(
        "stand-in: what a token creates is that person's",
        "kind, destination, person.id, content,",
        "kind, destination, self.world.agent.id, content,",
        "test_what_a_token_creates_is_that_persons",
    ),
    rule(
        "stand-in fault: refuse creates nothing",
        "        case FaultAction.refuse:\n            return _error(fault.status or 403)\n",
        "        case FaultAction.refuse:\n            answer(0.0)\n            return _error(fault.status or 403)\n",
        "test_refuse_answers_its_status_and_creates_nothing",
    ),
    rule(
        "stand-in fault: a fault is used up after its times",
        "                if remaining <= 1:\n",
        "                if remaining < 1:\n",
        "test_refuse_answers_its_status_and_creates_nothing",
    ),
    rule(
        "stand-in fault: server_error creates nothing",
        "        case FaultAction.server_error:\n            return _error(fault.status or 500)\n",
        "        case FaultAction.server_error:\n            answer(0.0)\n            return _error(fault.status or 500)\n",
        "test_server_error_answers_its_status_and_creates_nothing",
    ),
    rule(
        "stand-in fault: rate_limit sends Retry-After 1 unless told otherwise",
        'return rate_limited_reply("1" if fault.retry_after is None else fault.retry_after)',
        'return rate_limited_reply(fault.retry_after or "")',
        "test_rate_limit_answers_429_with_retry_after_and_creates_nothing",
    ),
    rule(
        "stand-in fault: drop_without_create creates nothing",
        "        case FaultAction.drop_without_create:\n            return None\n",
        "        case FaultAction.drop_without_create:\n            answer(0.0)\n            return None\n",
        "test_drop_without_create_closes_without_an_answer_and_creates_nothing",
    ),
    rule(
        "stand-in fault: create_then_drop creates",
        "        case FaultAction.create_then_drop:\n            answer(0.0)\n",
        "        case FaultAction.create_then_drop:\n",
        "test_create_then_drop_creates_the_message_and_closes_without_an_answer",
    ),
    rule(
        "stand-in fault: create_then_delay answers only after its delay",
        "return reply if wait(fault.delay) else None",
        "return reply",
        "test_create_then_delay_creates_at_once_and_answers_late",
    ),
    rule(
        "stand-in fault: hang waits before it answers",
        "return answer(0.0) if wait(fault.delay) else None",
        "return answer(0.0)",
        "test_hang_waits_then_answers_normally",
        "test_a_hanging_listing_times_a_client_out",
    ),
    rule(
        "stand-in fault: lag hides what a POST creates from listings",
        "            return answer(fault.delay)\n",
        "            return answer(0.0)\n",
        "test_lag_hides_a_created_message_from_listings_until_the_clock_passes",
    ),
    rule(
        "stand-in fault: bad_link links to another origin",
        "return _with_link(answer(0.0), link)",
        "return answer(0.0)",
        "test_bad_link_points_the_next_page_at_another_origin",
    ),
    rule(
        "stand-in fault: no_id answers without the id",
        '            del shown["id"]\n',
        "",
        "test_no_id_creates_the_message_and_answers_without_its_id",
    ),
    rule(
        "stand-in record: every request is recorded before its fault applies",
        "        number = standin._log.record(request, standin._now())\n"
        "        limited = standin.limiter.admit(self.client_address[0])\n",
        "        limited = standin.limiter.admit(self.client_address[0])\n",
        "test_post_count_counts_every_post_that_reached_the_server_whatever_its_fate",
        "test_drop_without_create_closes_without_an_answer_and_creates_nothing",
        also=(
            ("                standin._log.note(number, fault=fault.action)\n", ""),
            (
                "        if reply is None:\n            LOGGER.info(",
                "        if reply is not None:\n"
                "            number = standin._log.record(request, standin._now())\n"
                "            if fault is not None:\n"
                "                standin._log.note(number, fault=fault.action)\n"
                "        if reply is None:\n            LOGGER.info(",
            ),
        ),
    ),
    rule(
        "stand-in record: the Authorization header is never kept",
        'SECRET_HEADERS = frozenset({"authorization", "x-standin-secret"})',
        'SECRET_HEADERS = frozenset({"x-standin-secret"})',
        "test_every_request_is_recorded_with_its_answer_and_the_token_redacted",
    ),
]

LEDGER_HOME = [
    rule(
        "only shell/ledger executes SQL: a query anywhere else is found",
        "            seen = records.seen_ids(connection)\n",
        "            seen = [row[0] for row in connection.execute(\"SELECT id FROM events WHERE state = 'seen'\")]\n",
        "test_only_the_ledger_executes_sql",
    ),
    rule(
        "each table has one writing module: a second writer of outbox is found",
        "        outbox.cancel(connection, intent_id, IntentState.pending, DISCARDED_BY_PERSON, now)\n",
        "        connection.execute(\n"
        "            \"UPDATE outbox SET state = 'canceled', note = ?, finished_at = ? WHERE id = ? AND state = 'pending'\",\n"
        "            (DISCARDED_BY_PERSON, format_timestamp(now), intent_id),\n"
        "        )\n",
        "test_each_table_has_one_writing_module",
        "test_every_table_of_the_map_is_written_where_the_map_says",
    ),
]

FOUNDATIONS: list[Mutation] = [
    *CORE_EDGES,
    *CORE_TEMPLATES,
    *CORE_INTENTS,
    *CORE_CLAIM,
    *CORE_ADOPTION,
    *CORE_RECONCILE,
    *CORE_RESOLUTION,
    *CORE_SMALL,
    *LEDGER,
    *LEDGER_HOME,
    *SCHEMA,
    *STANDIN,
]
