"""The proofs of the shutdown bound: a flush with a deadline never outwaits it behind a request in
flight, the connector waits for its loops only until the bound, a reply listing before a
settlement stops at the shutdown, and a stop during the start ends it there, leaving what it
had not settled as it was; the simulation's pinned seed holds the connector's own stop. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

SHUTDOWN: list[Mutation] = [
    rule(
        "shutdown: the connector's stop stops and settles its workers before the flush",
        "        settled = self.dispatcher.stop(",
        "        settled = True or self.dispatcher.stop(",
        "test_the_connectors_own_stop_settles_its_workers_and_sends_their_notices",
    ),
    rule(
        "shutdown: the connector's stop sends what is due within its bound",
        "            self.outbox.flush(deadline=deadline)\n",
        "            self.outbox.flush(deadline=deadline, limit=0)\n",
        "test_the_connectors_own_stop_settles_its_workers_and_sends_their_notices",
    ),
    rule(
        "a flush with a deadline waits for the outbox's lock no longer than the deadline",
        "        wait = -1.0 if deadline is None else max(0.0, deadline - self._clock.monotonic())",
        "        wait = -1.0",
        "test_a_flush_with_a_deadline_does_not_outwait_it_behind_a_request_in_flight",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "the connector waits for its loops only until the shutdown's bound",
        "            loop.join(timeout=None if remaining is None else max(0.0, remaining))",
        "            loop.join(timeout=30)",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "a signal only notes the stop; the main thread stops the connector",
        "        while not self._stop.wait(REQUEST_CHECK_SECONDS):\n            if requested() or self.ended_by",
        "        while not self._stop.wait(REQUEST_CHECK_SECONDS):\n            if self.ended_by",
        "test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it",
    ),
    rule(
        "SIGUSR1 writes every thread's stack and the connector goes on",
        "    with stack_dumps.on_sigusr1():  # from the first step of the start to `stopped`\n        return _run_checked(args)\n",
        "    return _run_checked(args)\n",
        "test_sigusr1_writes_every_threads_stack_and_the_connector_goes_on",
        "test_sigusr1_during_the_start_writes_the_stacks_and_the_start_goes_on",
    ),
    rule(
        "SIGUSR1 writes the stacks during the start too, not only once the loops run",
        "    with stack_dumps.on_sigusr1():  # from the first step of the start to `stopped`\n        return _run_checked(args)\n",
        "    return _run_checked(args)\n",
        "test_sigusr1_during_the_start_writes_the_stacks_and_the_start_goes_on",
        also=((
            "        _serve(connector, ledger_path, bound, label, metrics=metrics, service=service)\n",
            "        with stack_dumps.on_sigusr1():\n"
            "            _serve(connector, ledger_path, bound, label, metrics=metrics, service=service)\n",
        ),),
    ),
    rule(
        "stack dumps: SIGUSR1 is unblocked once they stand",
        "        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})  # one pending is dumped now\n",
        "",
        "test_a_stack_dump_asked_at_any_moment_of_the_start_is_written_and_the_connector_goes_on",
    ),
    rule(
        "every command but run unblocks SIGUSR1 under its default",
        "    signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_AT_START)",
        "    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*STOP_SIGNALS, HANGUP})",
        "test_every_other_command_has_sigusr1_back_as_it_always_was",
    ),
    rule(
        "stack dumps: signals that queue while a dump is written are one dump",
        "            if signal.SIGUSR1 in chunk:\n                head, _, rest = stacks(threading.get_ident()).partition(",
        "            for _ in range(chunk.count(signal.SIGUSR1)):\n"
        "                head, _, rest = stacks(threading.get_ident()).partition(",
        "test_signals_that_queue_while_a_dump_is_written_are_one_dump",
    ),
    rule(
        "stack dumps: the block's end waits for a dump under way no longer than its bound",
        "            dumper.join(JOIN_SECONDS)\n",
        "            dumper.join()\n",
        "test_the_blocks_end_waits_for_a_dump_stuck_on_a_full_pipe_no_longer_than_its_bound",
    ),
    rule(
        "stack dumps: SIGUSR1 interrupts no system call (SA_RESTART)",
        "        signal.siginterrupt(signal.SIGUSR1, False)  # SA_RESTART\n",
        "",
        "test_sigusr1_interrupts_no_system_call_in_c",
    ),
    rule(
        "stack dumps: never from faulthandler's handler, which dies of SIGSEGV while threads start and end",
        "        signal.signal(signal.SIGUSR1, _ignore)\n",
        '        __import__("faulthandler").register(signal.SIGUSR1, fd, all_threads=True)\n',
        "test_a_process_starting_and_ending_threads_lives_through_hundreds_of_dumps",
    ),
    rule(
        "stack dumps: the wakeup pipe carries SIGUSR1, so a main thread waiting in C gets its stack at once",
        "        signal.signal(signal.SIGUSR1, _ignore)\n",
        "        signal.signal(signal.SIGUSR1, lambda *_: os.write(writable, bytes([signal.SIGUSR1])))\n",
        "test_a_main_thread_waiting_in_c_on_a_locked_ledger_gets_its_stack_written_at_once",
        also=((
            "        earlier_wakeup = signal.set_wakeup_fd(writable, warn_on_full_buffer=False)\n",
            "        earlier_wakeup = signal.set_wakeup_fd(-1)\n",
        ),),
    ),
    rule(
        "stack dumps: another signal's number in the wakeup pipe writes no stacks",
        "            if signal.SIGUSR1 in chunk:\n",
        "            if chunk:\n",
        "test_another_signal_in_the_wakeup_pipe_writes_no_stacks",
    ),
    rule(
        "stack dumps: the thread that writes them is left out of them",
        "sys._current_frames().items() if ident != leave_out}",
        "sys._current_frames().items() if ident != -1}",
        "test_the_stacks_name_each_thread_and_its_calls_most_recent_first_and_leave_out_the_asker",
    ),
    rule(
        "stack dumps: a dump that cannot be written is dropped and the dumper goes on",
        "    with contextlib.suppress(OSError):\n        while data:\n",
        "    with contextlib.nullcontext():\n        while data:\n",
        "test_a_dump_that_cannot_be_written_is_dropped_and_the_dumper_goes_on",
    ),
    rule(
        "stack dumps: the block puts back the wakeup descriptor it found",
        "        signal.set_wakeup_fd(earlier_wakeup)\n",
        "        pass\n",
        "test_the_block_puts_back_the_handler_and_the_wakeup_it_found_and_its_thread_ends",
    ),
    rule(
        "stack dumps: the block puts back the SIGUSR1 handler it found",
        "        signal.signal(signal.SIGUSR1, signal.SIG_DFL if earlier_handler is None else earlier_handler)\n",
        "        pass\n",
        "test_the_block_puts_back_the_handler_and_the_wakeup_it_found_and_its_thread_ends",
    ),
    rule(
        "stack dumps: off the main thread nothing is installed",
        "    if threading.current_thread() is not threading.main_thread():\n",
        "    if False:\n",
        "test_off_the_main_thread_nothing_is_installed",
    ),
    rule(
        "a child that would not stop is asked for its last words before SIGKILL",
        "            signal_child(process, last_words)\n",
        "            pass\n",
        "test_a_child_that_ignores_sigterm_says_where_it_was_before_it_is_killed",
    ),
    rule(
        "shutdown: the dispatcher gives its shutdown's event to the reply listing before a settlement",
        "        replies = self._replies(launch.task_id, self._shutdown)",
        "        replies = self._replies(launch.task_id, None)",
        "test_sigterm_during_a_reply_listing_settles_the_attempt_with_its_reason_within_the_bound",
    ),
    rule(
        "shutdown: a reply listing under way is not waited for once the stop comes",
        "    while not done.wait(STOP_CHECK_SECONDS):\n        if stop.is_set():\n            return None\n",
        "    done.wait()\n",
        "test_a_listing_under_way_is_not_waited_for_once_the_stop_comes",
        "test_sigterm_during_a_reply_listing_settles_the_attempt_with_its_reason_within_the_bound",
    ),
    rule(
        "shutdown: no reply destination is listed after the stop",
        "    if stop.is_set():\n        return None\n    done = threading.Event()\n",
        "    done = threading.Event()\n",
        "test_a_stop_ends_the_listing_between_destinations_and_keeps_what_was_listed_whole",
    ),
    rule(
        "shutdown: what a reply listing raises besides Basecamp's failures reaches the caller's thread",
        "    if isinstance(outcome, BaseException):\n        raise outcome\n",
        "    if isinstance(outcome, BaseException):\n        return None\n",
        "test_what_a_listing_raises_besides_basecamp_s_failures_is_raised_on_the_caller_s_thread",
    ),
    rule(
        "a stop asked for during the start is taken before any loop makes a turn",
        "        if requested():  # nothing launches or posts after a SIGTERM that came during the start\n",
        "        if False:\n",
        "test_a_stop_asked_for_during_the_start_launches_no_worker",
    ),
    rule(
        "stop during start: a signal during the start sets the start's stop",
        "                if requested():\n                    self._stop.set()\n",
        "                if False:\n                    self._stop.set()\n",
        "test_sigterm_during_the_starts_reconciliation_listing_leaves_the_intent_sending_for_the_next_start",
        "test_sigterm_during_recoverys_reply_listing_leaves_the_attempt_live_for_the_next_start",
        "test_a_stop_during_the_starts_readmission_admits_no_further_record_and_reads_no_feed",
    ),
    rule(
        "stop during start: reconciliation's listing is made through the stop, not waited for after it",
        "            listed = unless_stopped(listing, stop, \"reconcile-listing\")\n",
        "            listed = unless_stopped(listing, None, \"reconcile-listing\")\n",
        "test_a_stop_during_the_starts_listing_ends_the_start_and_leaves_the_intent_as_it_was",
        "test_sigterm_during_the_starts_reconciliation_listing_leaves_the_intent_sending_for_the_next_start",
    ),
    rule(
        "stop during start: a reconciliation listing the stop cut short counts no failure",
        "        if listed is None:\n",
        "        if listed is None:\n            for row in group:\n"
        "                self._listing_failed(row, False, \"stopped\")\n",
        "test_a_stop_during_the_starts_listing_ends_the_start_and_leaves_the_intent_as_it_was",
        "test_sigterm_during_the_starts_reconciliation_listing_leaves_the_intent_sending_for_the_next_start",
    ),
    rule(
        "stop during start: no step begins after a stop during reconciliation",
        "    if _stopped(stop, \"reconcile\"):\n        return StartReport([], FlushSummary(), \"reconcile\")\n",
        "",
        "test_a_stop_during_the_starts_listing_ends_the_start_and_leaves_the_intent_as_it_was",
        "test_a_stop_before_the_start_lists_nothing_and_leaves_everything_as_it_was",
    ),
    rule(
        "stop during start: recovery is given the start's stop",
        "    held = [] if parts.recovery is None else parts.recovery.recover(stop)\n",
        "    held = [] if parts.recovery is None else parts.recovery.recover(None)\n",
        "test_sigterm_during_recoverys_reply_listing_leaves_the_attempt_live_for_the_next_start",
    ),
    rule(
        "stop during start: an attempt whose reply listing a stop may have cut short stays live",
        "    if facts.stopped:  # its listing may have been cut short\n",
        "    if False:\n",
        "test_a_stop_during_recoverys_reply_listing_leaves_the_attempts_live_for_the_next_start",
        "test_sigterm_during_recoverys_reply_listing_leaves_the_attempt_live_for_the_next_start",
    ),
    rule(
        "stop during start: recovery ends no group and settles nothing after the stop",
        "    if facts.group_gone is None and facts.stopped:  # nothing is done to it yet\n",
        "    if False:\n",
        "test_recovery_given_a_stop_already_set_ends_no_group_and_settles_nothing",
    ),
    rule(
        "stop during start: the send step claims nothing after the stop",
        "        while (limit is None or taken < limit) and not (stop is not None and stop.is_set()):\n",
        "        while limit is None or taken < limit:\n",
        "test_a_stop_during_the_starts_send_claims_nothing_more",
    ),
    rule(
        "stop during start: no seen record is admitted again after the stop",
        "                if self._stop.is_set():\n                    self.stopped_in = \"admit\"\n",
        "                if False:\n                    self.stopped_in = \"admit\"\n",
        "test_a_stop_during_the_starts_readmission_admits_no_further_record_and_reads_no_feed",
    ),
    rule(
        "stop during start: run is not called and running not printed; stderr says it stopped",
        "    if connector.stopped_in is not None:\n        stopped = (",
        "    if False:\n        stopped = (",
        "test_sigterm_during_the_starts_reconciliation_listing_leaves_the_intent_sending_for_the_next_start",
        "test_sigterm_during_recoverys_reply_listing_leaves_the_attempt_live_for_the_next_start",
    ),
    rule(
        "stop during start: a listing without a stop is made on the caller's thread, no thread spent",
        "    if stop is None:\n        return call()\n",
        "",
        "test_without_a_stop_the_call_is_made_on_the_callers_thread",
    ),
    rule(
        "run's output streams are written by threads of their own: a full pipe nobody reads never holds the stop",
        "guard(spooled=runs(sys.argv[1:]))\n",
        "guard(spooled=False)\n",
        "test_sigterm_ends_a_verbose_connector_whose_stderr_is_a_full_pipe_nobody_reads",
        "test_sigterm_ends_a_connector_whose_stdout_and_stderr_are_both_full_pipes",
    ),
    rule(
        "run's exit waits for output nobody reads no longer than its drain bound",
        "    for spool in _spools:\n        spool.drain(until)\n",
        "    for spool in _spools:\n        spool.drain(until + 3600)\n",
        "test_sigterm_ends_a_connector_whose_stdout_and_stderr_are_both_full_pipes",
    ),
    rule(
        "the stop's bound and the workers' grace agree: the connector gives its workers' shutdown its grace",
        "        settled = self.dispatcher.stop(timeout=shares.workers, grace=shares.grace)\n",
        "        settled = self.dispatcher.stop(timeout=shares.workers)\n",
        "test_sigterm_with_a_worker_that_ignores_it_leaves_no_worker_and_no_running_attempt",
    ),
    rule(
        "the stop's bound and the workers' grace agree: each grace is half the workers' share at most",
        "    return StopShares(workers, min(GRACE_SECONDS, workers / 2))\n",
        "    return StopShares(workers, GRACE_SECONDS)\n",
        "test_the_sigkill_comes_with_half_the_workers_share_left_to_settle_them",
        "test_the_default_bound_gives_each_worker_18_s_and_a_long_one_the_full_grace",
        "test_sigterm_with_a_worker_that_ignores_it_leaves_no_worker_and_no_running_attempt",
    ),
    rule(
        "the stop's bound and the workers' grace agree: the driver takes a shutdown's shorter grace",
        "    return grace_seconds if asked is None else min(grace_seconds, asked)\n",
        "    return grace_seconds\n",
        "test_a_shutdown_that_asks_for_a_shorter_grace_kills_a_worker_ignoring_sigterm_within_it",
        "test_sigterm_with_a_worker_that_ignores_it_leaves_no_worker_and_no_running_attempt",
    ),
    rule(
        "the stop's bound and the workers' grace agree: a shutdown never lengthens the driver's grace",
        "    return grace_seconds if asked is None else min(grace_seconds, asked)\n",
        "    return grace_seconds if asked is None else asked\n",
        "test_a_shutdown_never_lengthens_the_drivers_grace",
    ),
    rule(
        "the stop's bound and the workers' grace agree: a shutdown during a grace under way cuts it short",
        "            grace = partial(_grace, grace_seconds, stop_event)\n",
        "            grace = _grace(grace_seconds, stop_event)\n",
        "test_a_shutdown_that_begins_during_the_deadlines_grace_cuts_it_short",
    ),
]
