"""The agent's inbox lane's proofs: the stand-in's inbox and brakes, intake's inbox
lane, its budget, status and doctor. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

INBOX: list[Mutation] = [
    # shell/basecamp/standin/lanes.py
    rule(
        "inbox stand-in: a principal that is not an agent gets a bare 403",
        "            return Reply(403)  # the agent guard's bare head :forbidden\n",
        "            pass\n",
        "test_a_person_gets_a_bare_403",
        "test_the_official_sdk_sees_a_person_refused_and_a_410_it_can_resume_from",
    ),
    rule(
        "inbox stand-in: an item is never self-addressed",
        "            if person_id != event.performer_id:\n",
        "            if True:\n",
        "test_mentions_assignments_and_subscriptions_address_the_agent_each_its_own_item",
    ),
    rule(
        "inbox stand-in: an item is kept 30 days",
        "            kept = [item for item in mine if item.addressed_at >= retained]\n",
        "            kept = mine\n",
        "test_retention_keeps_30_days_and_a_position_behind_it_is_410_resuming_at_since_0",
    ),
    rule(
        "inbox stand-in: a position behind the retention window is its own 410",
        "            if position is not None and any(behind):\n",
        "            if False:\n",
        "test_retention_keeps_30_days_and_a_position_behind_it_is_410_resuming_at_since_0",
        "test_the_official_sdk_sees_a_person_refused_and_a_410_it_can_resume_from",
    ),
    rule(
        "inbox stand-in: a braked event is absent from the feed",
        "if event.id > after and event.id not in self._braked]",
        "if event.id > after]",
        "test_a_braked_event_is_absent_from_the_feed_and_present_in_the_inbox",
        "test_a_braked_mention_is_heard_from_the_inbox_and_answered_once",
    ),
    # core/feed.py (the inbox)
    rule(
        "inbox: intake asks only for the reasons that map onto a trigger",
        "ASKED_REASONS: tuple[str, ...] = tuple(sorted(r for r, trigger in REASON_TRIGGERS.items() if trigger))",
        "ASKED_REASONS: tuple[str, ...] = tuple(sorted(REASON_TRIGGERS))",
        "test_it_asks_only_for_the_reasons_that_map_onto_a_trigger",
        "test_each_reason_maps_onto_a_trigger_the_matrix_has_or_none",
    ),
    rule(
        "inbox: a page's addressing ids are strictly increasing",
        "    if any(key(later) <= key(earlier) for earlier, later in itertools.pairwise(items)):\n"
        '        return Failure(PageRejected(f"{what}\'s {ids} are not strictly increasing"))\n',
        "",
        "test_a_page_that_breaks_a_rule_is_refused",
    ),
    rule(
        "inbox: events at or below the floor are never recorded from the inbox",
        "        if item.event.id > floor and item.event.id > 0:\n",
        "        if item.event.id > 0:\n",
        "test_the_events_of_a_page_are_each_once_in_item_order_above_the_floor",
        "test_the_first_read_after_the_feed_served_replays_from_0_above_the_feeds_last_event",
    ),
    # shell/basecamp/client.py
    rule(
        "inbox: its read waits its turn in the one request budget",
        "            answer = self.read(url, deadline, yielding=True)\n",
        "            answer = self.read(url, deadline)\n",
        "test_the_inbox_read_waits_its_turn_in_the_one_budget_and_yields_like_a_feed_poll",
    ),
    # shell/intake/inbox_lane.py
    rule(
        "inbox lane: a 403 is recorded once and not asked again",
        "        if self.refused:\n            return False\n",
        "",
        "test_a_principal_without_an_inbox_is_recorded_once_and_not_asked_again",
        "test_a_principal_without_an_inbox_runs_as_today_and_status_says_so",
    ),
    rule(
        "inbox lane: its first read replays from 0 above the feed's last served event",
        '            position, since, last = "", (0 if floor else None), 0\n',
        '            position, since, last = "", None, 0\n',
        "test_the_first_read_after_the_feed_served_replays_from_0_above_the_feeds_last_event",
    ),
    rule(
        "inbox lane: a first read that failed keeps its floor",
        "            floor = kept or max(0, self._account_floor())\n",
        "            floor = max(0, self._account_floor())\n",
        "test_a_first_read_that_fails_keeps_its_floor_so_what_was_braked_meanwhile_is_heard",
        also=(("    last, floor = (0, floor_id) if found is None", "    last, floor = (0, 0) if found is None"),),
    ),
    rule(
        "inbox lane: its own 410 starts again at since=0",
        '                return "", 0, 0\n',
        '                raise self._failing("gone")\n',
        "test_the_inboxs_own_410_starts_again_at_since_0_and_the_records_dedupe",
    ),
    rule(
        "inbox lane: a refused position resumes after the last item",
        '                return "", last, last\n',
        '                raise self._failing("refused")\n',
        "test_a_refused_position_resumes_after_the_last_item",
    ),
    rule(
        "inbox lane: read every sixth turn",
        "        if self._asked or self._turns >= self._every:\n",
        "        if self._asked:\n",
        "test_due_every_sixth_turn_and_at_once_when_asked",
        "test_the_inbox_is_read_every_sixth_turn",
    ),
    # shell/connector.py
    rule(
        "inbox lane: the connector reads it",
        "        if not self.inbox.due():\n            return\n",
        "        if True:\n            return\n",
        "test_a_braked_mention_is_heard_from_the_inbox_and_answered_once",
        "test_the_account_lanes_410_asks_the_inbox_in_the_same_turn",
    ),
    rule(
        "inbox lane: the account lane's 410 asks the inbox in the same turn",
        "            self.inbox.ask_now()  # what was addressed while the position went stale\n",
        "            pass\n",
        "test_the_account_lanes_410_asks_the_inbox_in_the_same_turn",
    ),
    # shell/ledger/migrations/0016_inbox_lane.sql, shell/ledger/records.py
    rule(
        'inbox lane: the events table accepts the inbox lane (the vocabulary is core.intake_status.LANES)',
        '        ("events", "lane", tuple(LANES)),\n',
        '        ("events", "lane", tuple(LANES)[:3]),\n',
        'test_a_first_read_with_nothing_served_enters_now_and_then_records_what_is_addressed',
    ),
    rule(
        "status: each lane's news is written with its events rows",
        "    if fresh:\n        connection.execute(\n"
        '            "INSERT INTO lane_news',
        "    if False:\n        connection.execute(\n"
        '            "INSERT INTO lane_news',
        "test_each_lane_says_when_it_last_brought_what_no_other_had",
    ),
    # core/intake_status.py, core/doctor.py, shell/doctor/remote.py
    rule(
        "status: a principal without an inbox is said, with what may go unheard",
        "                f\"inbox lane: not for this principal since {since} ({status.why}); intake hears by the feed\"\n",
        "                f\"inbox lane: available ({where})\"\n",
        "test_the_inbox_lines_for_each_verdict",
        "test_a_principal_without_an_inbox_runs_as_today_and_status_says_so",
    ),
    rule(
        "doctor: a principal without an inbox is a warning",
        "            return doctor.inbox_check(InboxVerdict.not_for_principal)\n",
        "            return doctor.inbox_check(InboxVerdict.available)\n",
        "test_a_principal_without_an_inbox_is_a_warning_not_a_failure",
    ),
    # positions bounded
    rule(
        "positions: a page whose position is over 4 KiB is unreadable",
        "    if len(position.encode()) > MAX_POSITION_BYTES:\n",
        "    if False:\n",
        "test_a_position_over_a_few_kib_makes_the_page_unreadable",
        "test_a_page_whose_position_is_over_the_bound_is_unreadable_and_saves_nothing",
        "test_an_inbox_page_with_a_1_mib_position_is_unreadable_and_keeps_nothing",
    ),
    rule(
        "positions: a position's bound is in bytes, not characters",
        "    if len(position.encode()) > MAX_POSITION_BYTES:\n",
        "    if len(position) > MAX_POSITION_BYTES:\n",
        "test_a_position_over_a_few_kib_makes_the_page_unreadable",
    ),
    rule(
        "positions: the feed's 414 or 431 is the position's refusal",
        "        case 414 | 431:\n            return InvalidPosition()\n",
        "",
        "test_a_position_too_long_to_send_back_is_refused_as_an_invalid_one",
        "test_a_position_too_long_to_send_back_is_dropped_as_an_invalid_one",
    ),
    rule(
        "positions: the client hands the feed's 414 and 431 to intake as refusals",
        "FEED_REFUSALS = frozenset({400, 409, 410, *POSITION_TOO_LONG})\n",
        "FEED_REFUSALS = frozenset({400, 409, 410})\n",
        "test_a_position_too_long_to_send_back_is_refused_as_an_invalid_one",
        "test_a_position_too_long_to_send_back_is_dropped_as_an_invalid_one",
    ),
    rule(
        "positions: the inbox's 414 or 431 is the position's refusal",
        "        case 414 | 431:\n            return PositionRefused()\n",
        "",
        "test_the_refusals",
        "test_a_position_too_long_to_send_back_resumes_after_the_last_item",
    ),
    rule(
        "positions: the client hands the inbox's 414 and 431 to the lane as refusals",
        "INBOX_REFUSALS = frozenset({400, 403, 409, 410, *POSITION_TOO_LONG})\n",
        "INBOX_REFUSALS = frozenset({400, 403, 409, 410})\n",
        "test_the_refusals",
        "test_a_position_too_long_to_send_back_resumes_after_the_last_item",
    ),
    rule(
        "stand-in: a long_position fault serves a 1 MiB position",
        '            shown["position"] = "p" * LONG_POSITION_BYTES\n',
        "            pass\n",
        "test_a_page_whose_position_is_over_the_bound_is_unreadable_and_saves_nothing",
        "test_an_inbox_page_with_a_1_mib_position_is_unreadable_and_keeps_nothing",
    ),
]
