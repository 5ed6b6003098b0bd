"""The live lane's proofs: the stand-in's cable and intake's live lane. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

LIVE: list[Mutation] = [
    # shell/basecamp/standin/lanes.py
    rule(
        "live stand-in: a ticket expires by the stand-in's clock",
        "        if self._now().timestamp() >= expiry:\n",
        "        if False:\n",
        "test_a_ticket_expires_by_the_standins_clock",
    ),
    rule(
        "live stand-in: the subscription honours the feed's filters",
        "            if not subscription.filters.admit(event, agent_id):\n",
        "            if False:\n",
        "test_the_subscription_honours_the_feeds_filters",
    ),
    rule(
        "live stand-in: a skipped stretch ends with an overflow frame",
        "                        self.send({\"identifier\": subscription.identifier, \"message\": overflow})\n",
        "                        pass\n",
        "test_fault_skip_drops_events_then_says_overflow",
        "test_an_overflow_is_counted_and_the_connection_kept",
    ),
    rule(
        "live stand-in: a drop cuts the socket, with no close frame",
        "                    cut(self._connection.socket)\n                    return False\n",
        "                    self._connection.close()\n                    return False\n",
        "test_fault_drop_cuts_the_connection_instead_of_sending_the_event",
    ),
    # shell/basecamp/standin/lanes.py
    rule(
        "live stand-in: the live lane hears an event the moment it is recorded",
        "            self._recorded.notify_all()\n",
        "",
        "test_an_event_arrives_at_once_while_the_poll_lane_still_holds_it_back",
    ),
    # core/feed.py (the live lane)
    rule(
        "live lane: the reconnect backoff is jittered (half of it drawn)",
        "    return ceiling / 2 + ceiling / 2 * min(max(draw, 0.0), 1.0)",
        "    return ceiling",
        "test_the_backoff_doubles_to_its_cap_with_half_of_it_drawn",
    ),
    rule(
        "live lane: a ticket never prints",
        "    ticket: str = field(repr=False)\n    expires_in: int\n",
        "    ticket: str\n    expires_in: int\n",
        "test_a_ticket_is_read_and_never_printed",
    ),
    rule(
        "live lane: a URL is logged without its query",
        '    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))',
        '    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))',
        "test_a_url_is_shown_without_its_query",
        "test_no_log_line_carries_the_ticket_or_the_urls_query",
    ),
    # shell/intake/live_lane.py
    rule(
        "live lane: websockets' own debug lines (ticket and all) are held back",
        "_WIRE.setLevel(logging.WARNING)\n",
        "_WIRE.setLevel(logging.DEBUG)\n",
        "test_no_log_line_carries_the_ticket_or_the_urls_query",
    ),
    rule(
        "live lane: every connection gets a fresh ticket",
        "        ticket = self._mint()\n",
        '        ticket = getattr(self, "_kept", None) or self.__dict__.setdefault("_kept", self._mint())\n',
        "test_a_dropped_socket_reconnects_with_a_fresh_ticket",
    ),
    rule(
        "live lane: a stalled connection is given up",
        "                if self._clock.monotonic() - quiet_since >= self._stale_after:\n",
        "                if False:\n",
        "test_a_stalled_connection_is_given_up_and_reopened",
    ),
    rule(
        "live lane: a connection proven healthy ends the backoff",
        "        if self.failures and healthy:\n            self.failures = 0\n",
        "        if False:\n            self.failures = 0\n",
        "test_a_refused_upgrade_is_down_with_its_reason_then_retried",
        "test_a_cable_that_garbles_every_subscription_backs_off_further_each_time",
    ),
    rule(
        "live lane: only the ids it newly recorded are handed on",
        "        for event_id in fresh:\n            self._on_new(event_id)\n",
        "        for event_id in [event.id for event in events]:\n            self._on_new(event_id)\n",
        "test_the_live_lane_hands_on_nothing_the_poll_lane_recorded_first",
    ),
    rule(
        "live lane: the down state is written with its reason",
        "                self._write_state(LaneState.down, str(down))\n",
        "                self._write_state(LaneState.connecting, str(down))\n",
        "test_the_lane_down_is_in_the_ledger_with_why_and_since",
    ),
    # shell/ledger/lanes.py
    rule(
        "lanes: the record names the lane that heard it",
        "created_at, now, now, lane.value),",
        "created_at, now, now, Lane.poll.value),",
        "test_an_event_heard_live_is_recorded_and_handed_on_the_position_untouched",
    ),
    rule(
        "lanes: an overflow is counted",
        "    overflows = 1 if overflow else 0\n",
        "    overflows = 0\n",
        "test_an_overflow_is_counted_and_the_connection_kept",
    ),
    # shell/connector.py, shell/cli/status.py
    rule(
        "live lane: the connector admits what the live lane recorded, at once",
        'partial(self._heard, "live")',
        'lambda event_id: self.on_event(transition("seen", event=event_id, lane="live"))',
        "test_a_mention_is_heard_live_and_status_tells_the_lane",
    ),
    rule(
        "status: the live lane's state is shown",
        "intake_status.lane_line(lane, short_time, now=judged),\n                    ",
        "",
        "test_a_mention_is_heard_live_and_status_tells_the_lane",
    ),
    # losses and gaps: shell/intake/live_lane.py, shell/intake/repair.py, shell/ledger/losses.py, core/intake_status.py
    rule(
        "repair: an overflow is recorded as a loss",
        '                self._losses.lost("overflow", after_id)\n',
        "",
        "test_an_overflow_is_a_loss_the_repair_walk_recovers",
    ),
    rule(
        "repair: a confirmed connection that drops is a loss",
        '                    self._losses.lost("dropped", None)  # what it did not hear meanwhile\n',
        "                    pass\n",
        "test_a_dropped_connection_is_a_loss_from_the_newest_record",
    ),
    rule(
        "repair: the event heard next bounds a loss",
        "                    self._losses.heard(events[0].id)\n",
        "                    pass\n",
        "test_an_overflow_is_a_loss_the_repair_walk_recovers",
    ),
    rule(
        "repair: the walk records what it finds under lane repair",
        "            fresh = records.insert_seen(connection, rows, intake.Lane.repair, now)\n",
        "            fresh = records.insert_seen(connection, rows, intake.Lane.poll, now)\n",
        "test_an_overflow_is_a_loss_the_repair_walk_recovers",
    ),
    rule(
        "repair: a loss not repaired within its window is unrecovered",
        "    return LossState.unrecovered if now >= loss.window_ends_at else LossState.open",
        "    return LossState.open",
        "test_a_loss_the_feed_does_not_serve_within_its_window_is_unrecovered",
    ),
    rule(
        "repair: a bounded walk is done only past its bound",
        "    return read_through > loss.through_id",
        "    return True",
        "test_a_loss_stays_open_while_its_window_lasts",
    ),
    rule(
        "repair: one stretch is one loss",
        "    if covering is not None:\n        return None\n",
        "",
        "test_one_stretch_is_one_loss_and_the_next_event_right_after_leaves_nothing_lost",
    ),
    rule(
        "gaps: a 410 is recorded as a gap",
        "                    intake.record_gap(connection, gap_after, checkpoint.last_served_id, now)\n",
        "                    pass\n",
        "test_a_410_is_recorded_as_a_gap",
    ),
    rule(
        "status: losses and gaps are shown",
        ", intake_status.losses_line(losses)]",
        "]",
        "test_a_mention_is_heard_live_and_status_tells_the_lane",
    ),
    # backlog: core/intake_status.py, shell/intake/backlog.py, shell/intake/live_lane.py, shell/connector.py
    rule(
        "backlog: at its pause limit intake pauses",
        "    if depth >= limits.pause:\n",
        "    if False:\n",
        "test_the_limits_pause_at_and_above_and_warn_below",
        "test_the_check_pauses_at_the_limit_and_reads_on_below_it_saying_so_once",
        "test_past_the_limit_intake_reads_nothing_and_below_it_reads_on_losing_nothing",
    ),
    rule(
        "backlog: the poll lane does not read while intake pauses",
        "        if self.backlog.check() is None:\n",
        "        if self.backlog.check() is None or True:\n",
        "test_past_the_limit_intake_reads_nothing_and_below_it_reads_on_losing_nothing",
    ),
    rule(
        "backlog: the live lane hangs up while intake pauses",
        "            if self._paused() is not None:\n                raise _HungUp\n",
        "",
        "test_the_live_lane_hangs_up_while_paused_records_no_loss_and_comes_back",
        "test_past_the_limit_intake_reads_nothing_and_below_it_reads_on_losing_nothing",
    ),
    rule(
        "backlog: a pause on purpose is no loss and no failure",
        "            if self._paused() is not None:\n                raise _HungUp\n",
        '            if self._paused() is not None:\n                raise _Down("paused")\n',
        "test_the_live_lane_hangs_up_while_paused_records_no_loss_and_comes_back",
    ),
    rule(
        "backlog: the live lane is down with the pause's reason",
        "                self._write_state(LaneState.down, why)\n",
        "                pass\n",
        "test_the_live_lane_hangs_up_while_paused_records_no_loss_and_comes_back",
        "test_past_the_limit_intake_reads_nothing_and_below_it_reads_on_losing_nothing",
    ),
    rule(
        "backlog: crossings are logged once",
        "        if found is not None and self._reason is None:\n",
        "        if found is not None:\n",
        "test_the_check_pauses_at_the_limit_and_reads_on_below_it_saying_so_once",
    ),
    rule(
        "run --no-live polls alone",
        "            live=not args.no_live,\n",
        "            live=True,\n",
        "test_no_live_polls_alone_and_status_says_so",
    ),
    # membership: shell/basecamp/standin/lanes.py; shell/intake/membership.py, live_lane.py, connector.py
    rule(
        "membership: the stand-in's cable snapshots the agent's projects when it subscribes",
        "            if event.bucket_id not in subscription.buckets:\n",
        "            if False:\n",
        "test_a_project_granted_later_is_heard_on_a_new_subscription_only",
        "test_a_withheld_project_is_neither_listed_nor_served_nor_sent",
    ),
    rule(
        "membership: the stand-in's events.json serves only the caller's projects",
        " and event.bucket_id in visible]",
        "]",
        "test_a_withheld_project_is_neither_listed_nor_served_nor_sent",
    ),
    rule(
        "membership: a re-read answers the projects granted since the last",
        "        granted = frozenset() if self._known is None else now - self._known\n",
        "        granted: frozenset[int] = frozenset()\n",
        "test_the_first_read_takes_note_and_later_ones_answer_what_was_granted",
        "test_a_granted_project_is_heard_live_after_the_connector_rereads_its_projects",
    ),
    rule(
        "membership: a granted project makes the live lane subscribe again",
        "            self.live_lane.resubscribe()\n",
        "            pass\n",
        "test_a_granted_project_is_heard_live_after_the_connector_rereads_its_projects",
    ),
    rule(
        "membership: the live lane hangs up to subscribe again",
        "            if self._resubscribe.is_set():  # cleared as the next session begins\n",
        "            if False:\n",
        "test_a_granted_project_is_heard_live_after_the_connector_rereads_its_projects",
    ),
    rule(
        "membership: the live lane is connecting, not connected, while it subscribes again",
        "                self._write_state(LaneState.connecting, RESUBSCRIBING)  # not heard until confirmed\n",
        "                pass\n",
        "test_subscribing_again_is_connecting_until_confirmed_so_a_refused_upgrade_then_is_no_loss",
    ),
    rule(
        "membership: the live lane's connecting while it subscribes again is written for status",
        "                self._write_state(LaneState.connecting, RESUBSCRIBING)  # not heard until confirmed\n",
        "                self.state = LaneState.connecting\n",
        "test_subscribing_again_is_connecting_until_confirmed_so_a_refused_upgrade_then_is_no_loss",
    ),
    rule(
        "membership: the live lane's next subscription answers every resubscribe asked before it",
        "        self._resubscribe.clear()  # this subscription is made with the projects as they are now\n",
        "        pass\n",
        "test_subscribing_again_is_connecting_until_confirmed_so_a_refused_upgrade_then_is_no_loss",
    ),
    rule(
        "stand-in: a refused upgrade waits the fault's delay",
        "            self.stopping.wait(fault.delay)\n",
        "            pass\n",
        "test_subscribing_again_is_connecting_until_confirmed_so_a_refused_upgrade_then_is_no_loss",
    ),
    # a hostile cable backs the lane off, and costs only the tickets' share of the budget
    rule(
        "live lane: a confirmation alone does not end the backoff",
        "    return confirmed_for is not None and (events_heard > 0 or confirmed_for >= after)\n",
        "    return confirmed_for is not None\n",
        "test_a_connection_is_healthy_after_its_first_event_or_a_ping_interval_confirmed_never_at_once",
        "test_a_cable_that_garbles_every_subscription_backs_off_further_each_time",
        "test_a_refused_upgrade_is_down_with_its_reason_then_retried",
    ),
    rule(
        "live lane: its first event proves a connection healthy",
        "(events_heard > 0 or confirmed_for >= after)",
        "(confirmed_for >= after)",
        "test_a_connection_is_healthy_after_its_first_event_or_a_ping_interval_confirmed_never_at_once",
        "test_a_cable_that_garbles_every_subscription_backs_off_further_each_time",
    ),
    rule(
        "live lane: a ping interval up proves a connection healthy",
        " or confirmed_for >= after)\n",
        ")\n",
        "test_a_connection_is_healthy_after_its_first_event_or_a_ping_interval_confirmed_never_at_once",
        "test_a_refused_upgrade_is_down_with_its_reason_then_retried",
    ),
    rule(
        "live lane: it waits for a stream ticket's turn rather than be refused one",
        "            if self._wait_while_paused(stop) or self._wait_for_ticket(stop):\n",
        "            if self._wait_while_paused(stop):\n",
        "test_a_hostile_cable_gets_stream_tickets_only_up_to_their_share_of_the_budget",
    ),
    rule(
        "live lane: stream tickets take at most their share of the request budget",
        "    return wait_before_next(minted_at, now, 0.0, ticket_allowance(limit), window)\n",
        "    return 0.0\n",
        "test_tickets_minted_whenever_allowed_never_pass_their_share_in_any_window",
        "test_a_stream_ticket_past_its_share_of_the_budget_is_not_asked",
        "test_a_hostile_cable_gets_stream_tickets_only_up_to_their_share_of_the_budget",
    ),
    rule(
        "live lane: the tickets' share is 5% of the budget, at least one a window",
        "    return max(1, int(limit * TICKET_SHARE))\n",
        "    return max(1, int(limit * 0.5))\n",
        "test_stream_tickets_get_two_of_the_budgets_47_and_at_least_one_of_any_budget",
        "test_a_stream_ticket_past_its_share_of_the_budget_is_not_asked",
        "test_a_hostile_cable_gets_stream_tickets_only_up_to_their_share_of_the_budget",
    ),
    rule(
        "live lane: the client asks no stream ticket past its share",
        "            if self._ticket_wait(now) > 0:\n                return False\n",
        "            if False:\n                return False\n",
        "test_a_stream_ticket_past_its_share_of_the_budget_is_not_asked",
    ),
    rule(
        "live stand-in: a garble fault sends an unreadable frame after the confirmation",
        '            self._connection.send("garbled {")  # not JSON\n',
        "            pass\n",
        "test_fault_garble_sends_an_unreadable_frame_after_every_confirmation_it_lasts_for",
        "test_a_cable_that_garbles_every_subscription_backs_off_further_each_time",
    ),
    rule(
        "live stand-in: a live fault with times null lasts for ever",
        "    if times is not None and (isinstance(times, bool) or not isinstance(times, int)):\n",
        "    if isinstance(times, bool) or not isinstance(times, int):\n",
        "test_fault_garble_sends_an_unreadable_frame_after_every_confirmation_it_lasts_for",
    ),
]
