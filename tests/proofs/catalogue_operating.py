"""The proofs of what an operator meets: values no command can use,
a reader that goes away, a worker program that is not there, and a read on a connection the server closed. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

OPERATING: list[Mutation] = [
    rule(
        "a time is finite and above zero",
        "    if not math.isfinite(value) or value <= 0:\n",
        "    if False:\n",
        "test_a_time_that_is_not_finite_and_above_zero_is_refused",
    ),
    rule(
        "a port is 0 to 65535",
        "    if not 0 <= value <= MAX_PORT:\n",
        "    if False:\n",
        "test_a_port_outside_0_to_65535_is_refused",
    ),
    rule(
        "a state directory that is not a directory is one line, not a traceback",
        "    except OSError as error:  # the state directory is a file, or cannot be searched\n",
        "    except ZeroDivisionError as error:\n",
        "test_a_state_directory_that_is_a_file_is_one_line",
    ),
    rule(
        "a reader that goes away ends the command quietly (SIGPIPE's exit, no traceback)",
        "    except BrokenPipeError:  # stop writing there, so the flush at exit cannot fail again\n        stop_writing()\n        return EXIT_BROKEN_PIPE\n",
        "",
        "test_a_reader_that_goes_away_ends_the_command_quietly",
    ),
    rule(
        "run refuses to start when the worker program is not there",
        "    if missing_program is not None:  # every request would fail to start, in public\n",
        "    if False:\n",
        "test_a_worker_program_that_is_not_there_is_one_line_before_anything_starts",
    ),
    rule(
        "setup says when the worker program is not there",
        "        return shutil.which(self.argv[0])\n",
        "        return self.argv[0]\n",
        "test_setup_says_when_the_worker_program_is_not_there",
        "test_doctor_says_when_the_worker_program_is_not_there",
    ),
    rule(
        "a read on a connection the server closed is asked once more on a fresh one",
        "        for fresh in (False, True):\n",
        "        for fresh in (True,):\n",
        "test_a_read_on_a_connection_the_server_closed_is_asked_again_on_a_fresh_one",
    ),
    rule(
        "an account or agent id that is not a positive whole number is a usage error",
        "    parser.add_argument(\"--account\", metavar=\"ID\", type=positive_integer,\n",
        "    parser.add_argument(\"--account\", metavar=\"ID\",\n",
        "test_a_value_no_command_can_use_is_a_usage_error",
    ),
    # shell/cli/seam.py: the one error seam of both command lines
    rule(
        "the seam: a UserError is one line on stderr and its own exit code",
        "        return _say(str(error), error.exit_code, as_json)\n",
        "        raise\n",
        "test_a_user_error_is_one_line_on_stderr_and_its_exit_code",
        "test_a_lock_held_past_the_busy_timeout_is_a_clear_busy_error_and_changes_nothing",
    ),
    rule(
        "the seam: Ctrl-C ends a command with 130, quietly",
        "    except KeyboardInterrupt:\n        return 130\n",
        "    except KeyboardInterrupt:\n        return 1\n",
        "test_ctrl_c_ends_a_command_with_130_and_says_nothing",
    ),
    rule(
        "the seam: a command line's own words come before the plain UserError line",
        "    except kinds as error:\n",
        "    except () as error:\n",
        "test_a_command_lines_own_words_come_before_the_plain_line",
        "test_a_lock_held_past_the_busy_timeout_is_a_clear_busy_error_and_changes_nothing",
    ),
    rule(
        "outbox-resolve: an unreadable ledger is a ledger problem (exit 3), not a traceback",
        '    OwnWords(sqlite3.DatabaseError, lambda error: f"the ledger could not be read: {error}", EXIT_CONFIG))',
        "    )",
        "test_outbox_resolve_says_an_unreadable_ledger_is_a_ledger_problem",
    ),
]
