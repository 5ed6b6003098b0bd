"""The proofs of bad input: every bad input is one line and a documented exit code,
nothing lost, no crash loop. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import rule

BAD_INPUT = [
    rule(
        "advice: a ledger is said to be missing only from a real directory, a symlinked one said to be one",
        "        if os.path.isdir(directory) and not os.path.islink(directory):\n",
        "        if os.path.isdir(directory):\n",
        "test_a_symlinked_directory_is_refused_as_one_not_said_to_lack_a_ledger",
        "test_a_shadow_directory_that_is_a_symlink_is_said_to_be_one",
    ),
    rule(
        "advice: a ledger's directory that refuses the look is said to refuse it, not to lack a ledger",
        "    except PermissionError as refused:\n",
        "    except ZeroDivisionError as refused:\n",
        "test_a_directory_that_refuses_its_owner_the_look_is_said_to_refuse_it",
    ),
    rule(
        "advice: with no configuration to find, the way on is setup",
        'no configuration under {root}: run bin/connect setup (an existing one is named by "',
        'no configuration under {root}: give --account and --agent ("',
        "test_no_configuration_is_one_line_and_exit_3",
    ),
    rule(
        "bad input: an id on the command line is at most what the ledger can store",
        "    if value > MAX_ID:\n",
        "    if False:\n",
        "test_an_id_too_large_to_store_is_a_usage_error",
        "test_outbox_resolve_refuses_an_id_too_large_to_store",
    ),
    rule(
        "bad input: a time on the command line is at most a year",
        "    if value > MAX_DURATION.total_seconds():\n",
        "    if False:\n",
        "test_a_time_too_long_to_wait_for_is_a_usage_error",
    ),
    rule(
        "bad input: a configured duration is at most a year",
        "    if not 0 < milliseconds <= MAX_DURATION // timedelta(milliseconds=1):\n",
        "    if not 0 < milliseconds:\n",
        "test_a_duration_is_at_most_a_year_and_a_larger_one_never_overflows",
        "test_setup_refuses_a_duration_past_a_year_and_writes_nothing",
        "test_run_refuses_a_configured_deadline_past_a_year",
    ),
    rule(
        "bad input: a configured id is at most what the ledger can store",
        "    if not 0 < number <= MAX_ID:\n",
        "    if not 0 < number:\n",
        "test_an_id_is_at_most_what_the_ledger_can_store",
    ),
    rule(
        "bad input: a worker command with an unknown placeholder is one line and exit 3 at run",
        '            raise UserError(f"worker_command: {error}", EXIT_CONFIG) from None\n',
        "            raise\n",
        "test_run_refuses_an_unknown_placeholder_before_anything_starts",
    ),
    rule(
        "bad input: setup refuses a worker command with an unknown placeholder before it writes",
        "    try:\n        WorkerCommand.of(configuration)\n"
        "    except UserError as error:\n        problems.append(str(error))\n",
        "",
        "test_setup_refuses_an_unknown_placeholder_and_writes_nothing",
    ),
    rule(
        "bad input: a token file that is a directory is one line, not a traceback",
        '        private_files.check_file_status(os.fstat(descriptor), path, "token file", kind=FileKind.token)\n',
        "",
        "test_a_token_file_that_is_a_directory_is_one_line",
        also=(("    except OSError as error:\n        raise UserError(f\"cannot read token file {path}: "
               "{error.strerror}\", EXIT_CONFIG) from error\n    finally:\n",
               "    except ZeroDivisionError as error:\n        raise UserError(f\"cannot read token file {path}: "
               "{error.strerror}\", EXIT_CONFIG) from error\n    finally:\n"),),
    ),
    rule(
        "bad input: a token is ASCII: it goes in an HTTP header as it is",
        '        text = raw.decode("ascii")\n',
        '        text = raw.decode("utf-8")\n',
        "test_a_token_that_cannot_go_in_a_header_is_one_line",
    ),
    rule(
        "bad input: a token holds no control character",
        "    if isinstance(found, str) and not found.isprintable():\n",
        "    if False:\n",
        "test_a_token_that_cannot_go_in_a_header_is_one_line",
    ),
    rule(
        'bad input: run refuses a route to a missing directory before anything starts',
        '    if failing:  # its requests would end in a public "could not be started" notice (core.configuration)\n',
        '    if False:\n',
        'test_run_refuses_a_route_to_a_missing_directory_before_anything_starts',
    ),
    rule(
        "bad input: the owner's open runs quick_check: a ledger damaged in the middle is refused at start",
        "        check_integrity(connection, ledger_path)\n",
        "",
        "test_a_ledger_damaged_in_the_middle_is_refused_at_open_and_left_as_it_is",
        "test_a_ledger_damaged_in_the_middle_is_one_line_and_exit_3",
    ),
    rule(
        "bad input: what the disk says while a ledger is opened and migrated is a LedgerError naming it",
        "    except (sqlite3.Error, OSError) as error:\n        connection.close()\n"
        '        raise ledger_failure(error, ledger_path, "open and migrate the ledger") from error\n',
        "    except ZeroDivisionError as error:\n        connection.close()\n"
        '        raise ledger_failure(error, ledger_path, "open and migrate the ledger") from error\n',
        "test_a_full_disk_during_a_migration_is_no_space_and_loses_nothing",
    ),
    rule(
        "bad input: a full disk is said as no space, and that what was being written was rolled back",
        '    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and "write" in str(error).lower()):\n',
        "    if False:\n",
        "test_a_full_disk_during_a_migration_is_no_space_and_loses_nothing",
    ),
    rule(
        "bad input: run on a read-only state directory is one line and exit 3 at the lock",
        "    except OSError as error:  # the state directory's, in the ledger's words\n",
        "    except ZeroDivisionError as error:\n",
        "test_run_on_a_read_only_state_directory_is_one_line_and_exit_3",
    ),
    rule(
        "bad input: a ledger failure while the start settles is one line and exit 3",
        "    except OutboxLedgerError as error:\n        raise LedgerError(",
        "    except ZeroDivisionError as error:\n        raise LedgerError(",
        "test_a_ledger_that_fails_while_the_start_settles_is_one_line_and_exit_3",
        "test_an_outbox_failure_during_the_start_is_the_ledger_error_naming_the_outbox",
    ),
    rule(
        "bad input: no answer is read past MAX_ANSWER_BYTES",
        "            if size > MAX_ANSWER_BYTES:\n",
        "            if False:\n",
        "test_a_listing_answer_past_the_cap_is_a_failed_read",
        "test_a_create_answered_past_the_cap_is_uncertain",
    ),
    rule(
        "bad input: a listing whose Link leads back to a page it read fails at once",
        "            if following in read:\n",
        "            if False:\n",
        "test_a_link_that_loops_fails_the_listing_at_once",
    ),
    rule(
        "bad input: a feed whose next leads back to a page read this poll fails at once",
        "            if next_url in followed:\n",
        "            if False:\n",
        "test_a_next_that_loops_ends_the_poll_at_once",
    ),
    rule(
        "bad input: a feed failure carries its reason",
        'raise IntakeFailed(f"the feed could not be read: {type(error).__name__}: {error}") from None',
        'raise IntakeFailed(f"the feed could not be read: {type(error).__name__}") from None',
        "test_a_feed_failure_says_why",
    ),
    rule(
        "bad input: status says a disk nearly full in its summary",
        "    if status.disk is not None and status.disk.low:\n",
        "    if False:\n",
        "test_a_disk_nearly_full_is_in_the_summary_the_text_and_the_report",
    ),
    rule(
        "bad input: with --json an error is also one JSON object on stdout",
        "    if as_json:\n        said = {",
        "    if False:\n        said = {",
        "test_with_json_an_error_is_one_json_object",
        "test_outbox_resolve_with_json_says_its_errors_as_one_json_object",
    ),
    rule(
        "bad input: with --json a usage error is also one JSON object on stdout",
        "        raise SystemExit(bad_usage(bad.message, as_json=JSON_FLAG in arguments)) from None",
        "        raise SystemExit(bad_usage(bad.message, as_json=False)) from None",
        "test_with_json_a_usage_error_is_one_json_object",
        "test_bad_usage_with_json_is_the_documented_object",
    ),
    rule(
        "bad input: any arguments: the property test finds a time too long for the clock (run converts it first)",
        "    if value > MAX_DURATION.total_seconds():\n",
        "    if False:\n",
        "test_bin_connect_answers_any_arguments_in_the_documented_set",
    ),
    rule(
        "bad input: a token descriptor is a number the system can take",
        "    if not 0 <= value <= MAX_DESCRIPTOR:\n",
        "    if False:\n",
        "test_a_token_descriptor_the_system_cannot_take_is_a_usage_error",
    ),
    # the stand-in's 400s, a message's content, a worker command's placeholders
    rule(
        "stand-in: a request whose body it will not read is a 400 saying why",
        '            self._write(error_reply(400, "Bad Request", message=str(error)))\n',
        '            self._write(error_reply(400, "Bad Request"))\n',
        "test_a_body_over_1_mib_or_a_broken_length_is_a_400_saying_what_was_wrong",
    ),
    rule(
        "stand-in: a body over 1 MiB by its Content-Length is refused before it is read",
        "    if length > MAX_BODY_BYTES:\n",
        "    if False:\n",
        "test_a_body_over_1_mib_or_a_broken_length_is_a_400_saying_what_was_wrong",
    ),
    rule(
        "stand-in: a seeded message's content is a string",
        "        if not isinstance(content, str):\n            raise ValueError(f\"a message's content",
        "        if False:\n            raise ValueError(f\"a message's content",
        "test_a_seeded_message_whose_content_is_not_a_string_is_a_400_and_creates_nothing",
    ),
    rule(
        "bad input: a worker command's unclosed placeholder is refused",
        "            if (unclosed := _UNCLOSED.search(argument)) is not None:\n",
        "            if (unclosed := _UNCLOSED.search(argument)) is not None and False:\n",
        "test_setup_refuses_an_unclosed_placeholder_and_writes_nothing",
        "test_an_unknown_placeholder_is_refused_when_the_command_is_made",
    ),
]
