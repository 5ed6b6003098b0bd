"""Rules of one home for each OS safety primitive: signals only from
``shell/processes.py`` (SIGTERM, grace, SIGKILL written once), file privacy only from
``shell/private_files.py`` (one policy), file locks only from ``shell/state/flock.py``, the
task token's variable and hash only from ``core/task_token.py``; and the MCP server's one
conversion of a refusal into a value.
"""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

ONE_HOME: list[Mutation] = [
    rule(
        "one home: only shell/processes.py signals a process",
        "    present = processes.is_present(holder.pid)\n",
        "    present = os.kill(holder.pid, 0) is None\n",
        "test_only_shell_processes_signals_a_process",
    ),
    rule(
        "one home: SIGKILL follows the grace, for a recorded group and for the driver's own worker",
        '    if not _signal_group(pgid, signal.SIGKILL):\n        return TerminationResult(Termination.terminated, "ended just after the grace"',
        '    if True:\n        return TerminationResult(Termination.terminated, "ended just after the grace"',
        "test_at_the_deadline_a_worker_that_ignores_sigterm_is_killed_after_the_grace",
        "test_a_verified_group_that_ignores_sigterm_is_killed_after_the_grace",
    ),
    rule(
        "one home: only shell/private_files.py names a file mode, O_EXCL or chmod",
        '        private_files.ensure_directory(directory, "shadow directory")\n',
        "        directory.mkdir(mode=0o700, exist_ok=True)\n",
        "test_only_shell_private_files_names_modes_exclusive_creation_or_chmod",
    ),
    rule(
        "private files: every missing directory of a chain is created 0700, whatever the umask",
        "            make_directory(created)\n",
        "            os.mkdir(created)\n",
        "test_what_is_missing_is_created_owner_only_whatever_the_umask",
    ),
    rule(
        "private files: a loose lock file is refused and left as it is",
        "        check_file_status(os.fstat(descriptor), path, what)\n",
        "        os.fstat(descriptor)\n",
        "test_a_loose_lock_file_is_refused_and_left_as_it_is",
    ),
    rule(
        "one home: only shell/state/flock.py takes a file lock",
        "            flock.wait_for(descriptor)\n",
        '            __import__("fcntl").flock(descriptor, __import__("fcntl").LOCK_EX)\n',
        "test_only_shell_state_flock_takes_a_file_lock",
    ),
    rule(
        "one home: the task token's variable name is written once",
        "TOKEN_ENV = TASK_TOKEN_ENV\n",
        'TOKEN_ENV = "BASECAMP_CONNECT_TASK_TOKEN"  # noqa: S105\n',
        "test_the_variable_name_is_written_once",
    ),
    rule(
        "one home: the task token's hash is defined once",
        "(token_sha256(token), conversation,",
        "(hashlib.sha256(token.encode()).hexdigest(), conversation,",
        "test_the_hash_is_defined_once_and_nothing_else_in_the_ledger_hashes",
        also=(
            (
                "EventOutcome, RecordState, TaskState\nfrom core.task_token import token_sha256\nfrom core.timestamps import",
                "EventOutcome, RecordState, TaskState\nimport hashlib\n\nfrom core.timestamps import",
            ),
        ),
    ),
    rule(
        "mcp: the ledger's refusal is the tool's refusal, a value all the way, not a ledger failure",
        "                return given.read_ack_arguments(arguments).bind(tools.ack_dispatch).map(receipt)\n",
        "                return given.read_ack_arguments(arguments).map(lambda r: receipt(tools.ack_dispatch(r).unwrap()))\n",
        "test_refusals_are_tool_errors_the_worker_can_read",
    ),
]
