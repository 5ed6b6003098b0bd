"""The proofs of one connector per (account, agent) per
machine, the timing floors, and the task token's and the worker's environment's security.
Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

WORLD: list[Mutation] = [
    rule(
        "one connector per (account, agent) per machine: the pair lock is exclusive",
        "        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    except BlockingIOError:\n        os.close(descriptor)\n        return None\n",
        "        pass\n    except BlockingIOError:\n        os.close(descriptor)\n        return None\n",
        "test_a_second_state_directory_of_one_pair_is_refused_naming_the_first_and_its_pid",
        "test_two_connectors_with_two_state_directories_of_one_pair_cannot_both_run",
    ),
    rule(
        "the pair lock lives in one machine-wide place, not in the state directory",
        '    return Path("/tmp") / f"basecamp-connector-{os.geteuid()}"',
        '    return Path(os.environ.get("XDG_STATE_HOME", "/tmp")) / f"basecamp-connector-{os.geteuid()}"',
        "test_the_pair_lock_lives_in_one_owner_only_place_whatever_the_state_home",
    ),
    rule(
        "setup refuses a second state directory for a pair another one serves",
        "    if other is not None and not force:",
        "    if False:",
        "test_two_connectors_with_two_state_directories_of_one_pair_cannot_both_run",
    ),
    rule(
        "run serves a pair only from the state directory its record names",
        "    other = serving_elsewhere(account_id, agent_id, state_dir)\n    if other is not None:",
        "    other = serving_elsewhere(account_id, agent_id, state_dir)\n    if False:",
        "test_two_connectors_with_two_state_directories_of_one_pair_cannot_both_run",
    ),
    rule(
        "a recorded home whose directory no longer holds the pair is stale",
        "    return recorded if same else None",
        "    return recorded",
        "test_a_recorded_home_names_another_directory_only_while_it_holds_the_pair",
    ),
    rule(
        "timings below the reference's floors are refused",
        "    if unsafe or value >= floor:",
        "    if True:",
        "test_timings_below_the_reference_floors_are_refused_unless_the_unsafe_option_lifts_them",
        "test_setup_refuses_timings_below_the_floors_unless_told_they_are_unsafe",
    ),
    rule(
        "only --unsafe-test-timings lifts the floors",
        "        line = below_floor(where, value, unsafe=unsafe)",
        "        line = below_floor(where, value, unsafe=False)",
        "test_timings_below_the_reference_floors_are_refused_unless_the_unsafe_option_lifts_them",
        "test_setup_refuses_timings_below_the_floors_unless_told_they_are_unsafe",
    ),
    rule(
        "status shows unsafe test timings",
        "    if status.unsafe_test_timings:\n        out.append(UNSAFE_LINE)",
        "    if False:\n        out.append(UNSAFE_LINE)",
        "test_status_says_the_timing_floors_are_lifted",
    ),
    rule(
        "run's feed interval has a floor too",
        "    if poll_floor is not None:\n        raise UserError(poll_floor, EXIT_CONFIG)",
        "    if False:\n        raise UserError(poll_floor, EXIT_CONFIG)",
        "test_run_refuses_a_feed_interval_below_its_floor_without_the_unsafe_option",
    ),
    rule(
        "setup records a worker-env name",
        "    data[\"worker_env\"] = [name for index, name in enumerate(names) if name not in names[:index]]",
        "    data[\"worker_env\"] = []",
        "test_setup_records_a_worker_env_name_never_its_value",
    ),
    rule(
        "a task token given in the environment does not stay in the MCP server's environment",
        "    if args.token_fd is None and not process_secrets.erase_environment(names, token.encode(\"utf-8\")):",
        "    if False:",
        "test_a_token_given_in_the_environment_is_not_in_the_servers_environment_while_it_serves",
        "test_where_the_environment_block_cannot_be_erased_the_server_refuses_to_start_with_exit_3",
    ),
    rule(
        "the MCP server refuses to start, exit 3, where the environment block cannot be erased",
        "        raise UserError(NOT_ERASED, EXIT_CONFIG)\n",
        "        pass\n",
        "test_where_the_environment_block_cannot_be_erased_the_server_refuses_to_start_with_exit_3",
        "test_where_the_block_cannot_be_erased_the_entry_refuses_to_start_as_bin_connect_mcp_does",
    ),
    rule(
        "the lean MCP entry moves an environment token to a pipe before importing the server",
        "    sys.exit(run(token_on_a_pipe(sys.argv[1:])))",
        "    sys.exit(run(sys.argv[1:]))",
        "test_launched_with_a_token_in_the_environment_it_is_erased_before_the_server_is_imported",
    ),
    rule(
        "the lean MCP entry erases the token where it stands before it hands it over on a pipe",
        "    if not process_secrets.erase_environment((name, TASK_TOKEN_ENV), token):\n",
        "    if process_secrets.erase_environment((name, TASK_TOKEN_ENV), token) or True:\n",
        "test_a_token_in_the_environment_moves_to_a_pipe_before_the_server_is_imported",
        "test_launched_with_a_token_in_the_environment_one_interpreter_serves",
    ),
    rule(
        "the lean MCP entry puts the token back where the environment block cannot be erased, for the server to refuse",
        "        os.environ.update(taken)  # put back",
        "        pass  # put back",
        "test_where_the_block_cannot_be_erased_the_entry_refuses_to_start_as_bin_connect_mcp_does",
        "test_where_the_environment_block_cannot_be_erased_the_server_refuses_to_start_with_exit_3",
    ),
    rule(
        "the lean MCP entry's move takes the token out of the environment it passes on",
        "    taken = {key: os.environ.pop(key) for key in (name, TASK_TOKEN_ENV) if key in os.environ}",
        "    taken = {key: os.environ[key] for key in (name, TASK_TOKEN_ENV) if key in os.environ}",
        "test_a_token_in_the_environment_moves_to_a_pipe_before_the_server_is_imported",
        "test_a_named_variable_moves_and_anything_else_is_left_to_the_server",
    ),
    rule(
        "the environment block's named strings are overwritten",
        "                if memory.write(bytes(length)) != length:\n",
        "                if memory.write(bytes(0)) != 0:\n",
        "test_the_named_variable_is_gone_from_the_block_and_every_other_string_is_as_it_was",
    ),
    rule(
        "the environment block erases only whole strings that begin with the name",
        "        if string.startswith(prefixes):\n",
        "        if any(prefix in string for prefix in prefixes):\n",
        "test_only_a_whole_string_that_begins_with_the_name_is_erased_never_a_value_that_contains_it",
    ),
    rule(
        "the environment block's erasure answers True only when a second read shows it done",
        "    return not _strings_named(left, prefixes) and secret not in left\n",
        "    return True\n",
        "test_an_erasure_it_cannot_see_done_is_answered_false",
        "test_the_secret_left_under_another_name_is_no_erasure",
    ),
    rule(
        "the environment block's erasure is none while the secret is left under another name",
        "prefixes) and secret not in left",
        "prefixes)",
        "test_the_secret_left_under_another_name_is_no_erasure",
    ),
    rule(
        "the environment block's erasure is none after a short write",
        "!= length:\n                    return False\n",
        "!= length:\n                    pass\n",
        "test_a_short_write_is_answered_false",
    ),
    rule(
        "the environment block's bounds are read after the program's name, which may hold ')'",
        'line.rindex(b")")',
        'line.index(b")")',
        "test_the_blocks_bounds_are_read_after_the_programs_name_or_refused",
    ),
    rule(
        "the environment block refuses a stat line without env_start and env_end",
        "    if len(fields) <= first + 1:\n",
        "    if False:\n",
        "test_the_blocks_bounds_are_read_after_the_programs_name_or_refused",
    ),
    rule(
        "the environment block refuses a process without a block",
        "    if not 0 < start < end:\n",
        "    if False:\n",
        "test_the_blocks_bounds_are_read_after_the_programs_name_or_refused",
    ),
    rule(
        "the lean MCP entry writes at most one byte past a token into the pipe it reads itself",
        "token[: MAX_TOKEN_BYTES + 1]",
        "token",
        "test_a_token_larger_than_a_pipe_holds_is_refused_not_waited_on",
    ),
    rule(
        "the environment block's erasure answers a failure False, never raises",
        "    except (OSError, ValueError):\n        return False\n",
        "    except ValueError:\n        return False\n",
        "test_a_block_it_cannot_write_is_answered_false_never_raised",
    ),
    rule(
        "the lean MCP entry leaves any argument shape but the connector's to the server",
        "        if option not in _VALUED:\n            return None\n",
        "        if option not in _VALUED:\n            continue\n",
        "test_a_named_variable_moves_and_anything_else_is_left_to_the_server",
    ),
    rule(
        "the MCP server refuses a token whose attempt recorded another process group",
        "            if group is not None and int(group[0]) != self._process_group:",
        "            if False:",
        "test_a_token_read_from_another_attempts_session_is_refused_outside_its_process_group",
    ),
    rule(
        "bin/connect mcp checks the token against its own process group",
        "process_group=os.getpgrp())",
        "process_group=None)",
        "test_a_token_read_from_another_attempts_session_is_refused_outside_its_process_group",
    ),
]
