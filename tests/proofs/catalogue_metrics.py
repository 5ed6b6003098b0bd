"""The metrics' proofs (``status --prometheus``, ``run --metrics-file``): the text format, the
figures, the ledger's read, the client's counts and the file. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

METRICS: list[Mutation] = [
    # core/presentation/prometheus_text.py
    rule(
        "metrics: a label value escapes backslash, double quote and newline",
        """    return value.replace("\\\\", "\\\\\\\\").replace('"', '\\\\"').replace("\\n", "\\\\n")""",
        "    return value",
        "test_any_label_value_and_help_text_reads_back_through_the_official_parser",
    ),
    rule(
        "metrics: help text is one line, as a reader strips it",
        """    return " ".join(text.split()).replace("\\\\", "\\\\\\\\")""",
        """    return text.replace("\\\\", "\\\\\\\\")""",
        "test_any_label_value_and_help_text_reads_back_through_the_official_parser",
    ),
    rule(
        "metrics: a value that is not finite is written +Inf or -Inf",
        '    if math.isinf(value):\n        return "+Inf" if value > 0 else "-Inf"\n',
        "",
        "test_a_counter_is_named_for_its_total_and_values_that_are_not_finite_are_written_as_prometheus_reads_them",
    ),
    rule(
        "metrics: a name outside Prometheus's alphabet is refused, never written",
        '        if not _NAME.match(family.name):\n            raise ValueError(f"not a metric name: {family.name!r}")\n',
        "",
        "test_a_name_outside_prometheuss_alphabet_is_refused_never_written",
    ),
    # core/metrics.py
    rule(
        "metrics: every sample carries the pair's labels",
        "    labelled = tuple(Sample(pair + labels, value) for labels, value in samples)",
        "    labelled = tuple(Sample(labels, value) for labels, value in samples)",
        "test_every_kind_and_state_is_a_sample_zero_included_and_the_indeterminate_are_counted_apart",
        "test_an_indeterminate_intent_and_the_oldest_pending_ones_age_are_shown",
    ),
    rule(
        "metrics: every intent kind is a sample, zero included",
        "    kinds = _known_first(list(IntentKind), {kind for _, kind in counted})",
        "    kinds = _known_first([], {kind for _, kind in counted})",
        "test_every_kind_and_state_is_a_sample_zero_included_and_the_indeterminate_are_counted_apart",
    ),
    rule(
        "metrics: the indeterminate intents are counted apart, of every kind",
        "if state == IntentState.indeterminate)",
        "if state == IntentState.pending)",
        "test_every_kind_and_state_is_a_sample_zero_included_and_the_indeterminate_are_counted_apart",
        "test_an_indeterminate_intent_and_the_oldest_pending_ones_age_are_shown",
    ),
    rule(
        "metrics: an age is never negative: an intent not yet due has waited 0 s",
        "    return 0.0 if since is None else max(0.0, (now - since).total_seconds())",
        "    return 0.0 if since is None else (now - since).total_seconds()",
        "test_the_oldest_pending_age_is_how_long_it_has_been_due_and_none_due_is_zero",
    ),
    rule(
        "metrics: a loop past its stall bound is not turning",
        '                [((("loop", name),), 0 if name in stalled else 1) for name in sorted(loops)]),',
        '                [((("loop", name),), 1) for name in sorted(loops)]),',
        "test_a_loop_past_its_stall_bound_is_not_turning_and_without_heartbeats_no_loop_is_shown",
        "test_a_stale_loop_of_the_running_connector_is_shown_not_turning",
    ),
    rule(
        "metrics: a token Basecamp refuses is shown failing",
        "[((), 0 if figures.token_failing_since is None else 1)]",
        "[((), 0)]",
        "test_records_by_state_the_oldest_waiting_attempts_by_stop_reason_the_hold_and_the_token",
    ),
    # shell/ledger/metrics.py
    rule(
        "metrics: a pending intent has been due since its first retry began",
        "MIN(COALESCE(retrying_since, not_before))",
        "MIN(not_before)",
        "test_a_message_retried_after_a_refused_connection_has_been_due_since_its_first_retry",
    ),
    # shell/cli/status.py
    rule(
        "metrics: status --prometheus never creates a ledger: it opens the read-only way",
        "        with open_ledger_read_only(paths.ledger) as read_only:",
        '        with __import__("shell.ledger.connection").ledger.connection.open_ledger(paths.ledger) as read_only:',
        "test_a_hold_is_shown_and_a_missing_ledger_is_exit_3_and_never_created",
    ),
    rule(
        "metrics: status --prometheus shows the loops only while a connector runs",
        "    running = holder is not None and bool(holder.pid_present)\n"
        "    beats = heartbeats.read(paths.ledger) if running else None\n",
        "    running = holder is not None and bool(holder.pid_present)\n    beats = heartbeats.read(paths.ledger)\n",
        "test_a_stale_loop_of_the_running_connector_is_shown_not_turning",
    ),
    # shell/basecamp/wire.py, shell/basecamp/client.py
    rule(
        "metrics: a read's answer is counted by its status",
        '            log.info("%s %s -> %d", method, path, response.status)\n            self._answered(response.status)\n',
        '            log.info("%s %s -> %d", method, path, response.status)\n',
        "test_every_answer_is_counted_by_status_a_creates_and_a_reads_429s_included",
        "test_a_running_connector_keeps_the_file_with_basecamps_answers_and_its_loops",
    ),
    rule(
        "metrics: a create's answer is counted by its status",
        "                response = connection.getresponse()\n                self._answered(response.status)\n",
        "                response = connection.getresponse()\n",
        "test_every_answer_is_counted_by_status_a_creates_and_a_reads_429s_included",
    ),
    rule(
        "metrics: the budget's use is the requests claimed in the window",
        "            return len(self._recent(self._clock.monotonic())), self._limit, self._window",
        "            return 0, self._limit, self._window",
        "test_every_answer_is_counted_by_status_a_creates_and_a_reads_429s_included",
        "test_a_running_connector_keeps_the_file_with_basecamps_answers_and_its_loops",
    ),
    # shell/metrics.py, shell/cli/run.py, shell/private_files.py
    rule(
        "metrics: a shadow run's series are its own, apart from the connector's",
        '    return (*pair, ("shadow", "true")) if shadow else pair',
        "    return pair",
        "test_a_shadow_runs_file_is_labelled_apart_from_the_connectors",
    ),
    rule(
        "metrics: run checks the metrics file's directory before the start",
        "    if args.metrics_file is not None:\n        metrics_file.check_metrics_path(args.metrics_file)\n",
        "",
        "test_a_metrics_file_in_a_missing_directory_is_one_line_and_exit_3_before_anything_is_asked",
    ),
    rule(
        "metrics: a directory the file cannot be made in is refused before the start",
        "        private_files.write_new_file(probe, b\"\")\n        probe.unlink()\n",
        "        pass\n",
        "test_a_directory_missing_not_a_directory_or_read_only_is_refused_before_the_start",
    ),
    rule(
        "metrics: a write that fails never stops the connector",
        "        except Exception as error:  # a broken metrics file never stops the connector",
        "        except ZeroDivisionError as error:  # a broken metrics file never stops the connector",
        "test_a_write_that_fails_is_warned_of_once_never_raised_and_said_again_once_it_works",
    ),
    rule(
        "metrics: a write that fails is warned of once until one succeeds",
        "            if not self._failing:\n                log.warning(\"metrics: %s could not be written",
        "            if True:\n                log.warning(\"metrics: %s could not be written",
        "test_a_write_that_fails_is_warned_of_once_never_raised_and_said_again_once_it_works",
    ),
    rule(
        "metrics: the stop writes the file once more, saying it no longer runs",
        "        self._thread.join()\n        self.write(running=False)\n",
        "        self._thread.join()\n",
        "test_the_file_is_replaced_whole_readable_by_the_collector_and_its_stop_says_it_no_longer_runs",
        "test_a_running_connector_keeps_the_file_with_basecamps_answers_and_its_loops",
    ),
    rule(
        "metrics: the file is readable by the collector's user",
        "    _write_whole(path, content, replace=True, mode=SHARED_FILE_MODE)",
        "    _write_whole(path, content, replace=True)",
        "test_the_file_is_replaced_whole_readable_by_the_collector_and_its_stop_says_it_no_longer_runs",
    ),
]
