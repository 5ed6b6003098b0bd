"""The proofs of bad input (second round) and of signals at the start and its
unwritable standard streams. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import rule

BAD = [
    rule(
        "ledger identity: a file that is not this connector's ledger is refused, untouched",
        "    found = application_id(connection)\n    if found == APPLICATION_ID:\n",
        "    found = application_id(connection)\n    if True:\n",
        "test_a_file_that_is_not_this_connectors_ledger_is_refused_untouched",
        "test_the_commands_refuse_a_foreign_ledger_with_3_and_leave_it_as_it_was",
    ),
    rule(
        "ledger identity: an older connector's ledger (schema_migrations, no application_id) is its own",
        "    if _has_migrations(connection):\n        return  # an older connector's ledger",
        "    if False:\n        return  # an older connector's ledger",
        "test_an_older_connectors_ledger_is_read_as_it_is_and_stamped_by_its_owner",
    ),
    rule(
        "ledger identity: the owner stamps an older connector's ledger once",
        "        stamped = application_id(connection) == APPLICATION_ID  # else an older connector's",
        "        stamped = True  # else an older connector's",
        "test_an_older_connectors_ledger_is_read_as_it_is_and_stamped_by_its_owner",
    ),
    rule(
        "ledger identity: user_version is the schema version, set with each migration",
        '            transaction.execute(f"PRAGMA user_version = {migration.version}")  # the identity\'s version\n',
        "",
        "test_a_new_ledger_carries_the_identity_and_its_schema_version",
    ),
    rule(
        "ledger identity: a new ledger file carries the identity from its first byte (never empty)",
        '        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")\n        return connection.serialize()',
        "        return connection.serialize()",
        "test_a_ledger_a_crash_left_before_its_first_migration_opens_and_migrates",
    ),
    rule(
        "usage: bad usage is one error: line naming the command and its --help, exit 2",
        '        raise BadUsage(f"{self.prog}: {message} (see `{self.prog} --help`)")  # escaped where said (_say)',
        "        super().error(message)",
        "test_bad_usage_is_one_error_line_and_2",
        "test_outbox_resolve_bad_usage_is_one_error_line_and_2",
    ),
    rule(
        "ids: an id is ASCII decimal digits alone",
        "    if not (text.isascii() and text.isdigit()):\n        return None\n    return int(text)",
        "    try:\n        return int(text)\n    except ValueError:\n        return None",
        "test_an_id_is_ascii_digits_alone",
    ),
    rule(
        "free text: --by and --reason with a control character are refused, never stored",
        '        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):\n',
        "        if False:\n",
        "test_a_reason_with_a_control_character_is_refused_and_nothing_is_held",
        "test_a_name_with_a_control_character_is_refused_never_stored",
    ),
    rule(
        "flags: --account and --agent come together or not at all (bad usage)",
        "    if (account is None) != (agent is None):\n",
        "    if False:\n",
        "test_an_account_alone_is_bad_usage_without_a_state_directory_too",
        "test_flags_that_contradict_each_other_are_bad_usage_and_change_nothing",
    ),
    rule(
        "flags: --account/--agent beside --state-dir must name the pair it serves",
        "            if (configured.account_id, configured.agent_id) != (int(account), int(agent or 0)):\n",
        "            if False:\n",
        "test_flags_that_contradict_each_other_are_bad_usage_and_change_nothing",
    ),
    rule(
        "signals: run's noting handler unblocks what the launcher blocked, so a pending stop is heard",
        "        signal.signal(signum, _note)\n    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*STOP_SIGNALS, HANGUP})\n",
        "        signal.signal(signum, _note)\n",
        "test_a_stop_at_any_moment_of_the_start_exits_0_with_one_line",
    ),
    rule(
        "signals: every other command unblocks what the launcher blocked, under the defaults",
        "    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a pending Ctrl-C ends it as it would have\n"
        "    signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_AT_START)\n",
        "    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a pending Ctrl-C ends it as it would have\n",
        "test_every_other_command_ends_on_sigterm_as_it_always_did",
    ),
    rule(
        "signals: a stop noted before the start ends run before its next step, touching nothing",
        "    configuration = load_config(paths.config)\n    if stop_asked():\n        return _stopped_before_start()\n",
        "    configuration = load_config(paths.config)\n",
        "test_a_stop_before_the_start_touches_nothing_and_says_so",
    ),
    rule(
        "signals: SIGHUP is ignored and said, never a stop",
        "    (HANGUPS if signum == HANGUP else STOPS).append(signum)  # only notes",
        "    STOPS.append(signum)  # only notes",
        "test_a_hangup_is_ignored_and_said_and_the_connector_goes_on",
    ),
    rule(
        "streams: a failed write to stdout is said as standard output, never an OSError",
        '    except OSError as error:\n        why = "it was closed"',
        '    except ZeroDivisionError as error:\n        why = "it was closed"',
        "test_status_with_stdout_on_a_full_device_says_standard_output",
        "test_run_with_stdout_on_a_full_device_refuses_naming_standard_output",
    ),
    rule(
        "streams: stdout is flushed inside the seam, where a failure can still be said",
        "        sys.stdout.flush()  # here, where a failure can still be said\n",
        "",
        "test_status_with_stdout_on_a_full_device_says_standard_output",
    ),
    rule(
        "streams: a closed standard descriptor is opened anew before anything runs",
        "    for descriptor, (device, flags) in _REOPENED.items():\n",
        "    for descriptor, (device, flags) in {}.items():\n",
        "test_a_closed_stdout_is_said_closed",
        "test_the_exit_code_survives_an_unwritable_stderr",
    ),
    rule(
        "streams: a failed write to stderr is dropped and the exit code stands",
        "        except OSError:  # nowhere left to say it\n            return len(text)",
        "        except ZeroDivisionError:  # nowhere left to say it\n            return len(text)",
        "test_the_exit_code_survives_an_unwritable_stderr",
    ),
    rule(
        "streams: what an encoding cannot hold is escaped as JSON's own escape, never a traceback",
        "sys.stdout = _Stdout(*_unwrapped(sys.stdout, 1, spooled), errors=ESCAPE,",
        'sys.stdout = _Stdout(*_unwrapped(sys.stdout, 1, spooled), errors="backslashreplace",',
        "test_an_ascii_only_stdout_escapes_what_it_cannot_hold",
    ),
    rule(
        "streams: an error whose JSON cannot reach stdout keeps its exit code",
        "        except StdoutUnwritable:\n            stop_writing()  # said on stderr already; the exit code stands",
        "        except ZeroDivisionError:\n            stop_writing()  # said on stderr already; the exit code stands",
        "test_an_error_whose_json_cannot_reach_stdout_keeps_its_exit_code",
    ),
    rule(
        "streams: a decision whose answer cannot be written says it was recorded",
        "        raise StdoutUnwritable(f\"{unwritable}; the decision was recorded: {result['summary']}\") from None",
        "        raise",
        "test_a_decision_whose_answer_cannot_be_written_says_it_was_recorded",
    ),
    rule(
        "bad disk: a person's decision on a full disk or a bounded file size says it was not recorded",
        '        raise type(error)(f"{error}; the decision was not recorded") from error',
        "        raise",
        "test_a_full_disk_is_one_line_and_records_nothing",
        "test_a_file_size_bound_is_one_line_naming_it_and_records_nothing",
        "test_outbox_resolves_decision_on_a_bad_disk_says_it_was_not_recorded",
    ),
    rule(
        "bad disk: the instance lock that cannot be taken is one line, never a traceback",
        "    except OSError as error:  # the state directory's, in the ledger's words\n",
        "    except ZeroDivisionError as error:  # the state directory's, in the ledger's words\n",
        "test_a_full_disk_is_one_line_and_records_nothing",
        "test_a_read_only_state_directory_is_one_line_and_records_nothing",
    ),
    rule(
        "bad disk: a configuration that cannot be written is one line, nothing written",
        "    except OSError as error:  # a full disk, a read-only directory: the old file stands\n",
        "    except ZeroDivisionError as error:  # a full disk, a read-only directory: the old file stands\n",
        "test_a_full_disk_is_one_line_and_records_nothing",
    ),
    rule(
        "bad disk: SQLite's bare disk I/O error is no space when the disk is full or ulimit -f bounds a file",
        '    if cannot_grow:  # SQLite\'s bare "disk I/O error"',
        '    if False:  # SQLite\'s bare "disk I/O error"',
        "test_a_file_size_bound_is_one_line_naming_it_and_records_nothing",
    ),
]
