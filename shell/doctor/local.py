"""What doctor measures on this machine: the state directory and its configuration, the
ledger (read-only), the free disk, the lock's metadata, the pair's record, the routes'
directories and the worker program; a stream-json worker is Claude Code, asked its version and
login by its own commands (no model call), with the worker's environment, each within
``CLAUDE_CODE_SECONDS`` or judged as having said nothing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import tempfile

from core import doctor
from core.configuration import Configuration
from core.posting import TokenOutage
from shell import private_files
from shell.errors import UserError
from shell.ledger import connection as ledger_connection
from shell.ledger.connection import SCHEMA_VERSION, LedgerError, open_ledger_read_only, read_health
from shell.ledger.status import token_outage as read_token_outage
from shell.state import config, pair_lock
from shell.state.config import StatePaths, configured_own_paths, load_config, route_facts, state_files
from shell.state.lock import peek, peek_only
from shell.worker.allowances import allowances_told
from shell.worker.command import CLAUDE_CONFIG_ENV, WorkerCommand

CLAUDE_CODE_SECONDS = 20.0


def state_directory(paths: StatePaths) -> doctor.Check:
    directory = paths.directory
    problem = None
    try:
        config.check_private_directory(directory)
    except FileNotFoundError:
        return doctor.state_directory_check(str(directory), exists=False, problem=None, writable=False)
    except (UserError, OSError) as error:
        problem = str(error)
    made_here = private_files.directory_made_here(directory, state_files(directory))
    writable = os.access(directory, config.WRITABLE)
    return doctor.state_directory_check(str(directory), True, problem, writable, made_here=made_here)


def configuration(paths: StatePaths,
                  asked: tuple[int | None, int | None]) -> tuple[doctor.Check, Configuration | None]:
    """The configuration's check, and the configuration when it loads."""
    try:
        loaded = load_config(paths.config)
    except config.ConfigurationInvalid as error:
        return doctor.configuration_check(str(paths.config), "; ".join(error.problems), (0, 0), asked), None
    except UserError as error:
        return doctor.configuration_check(str(paths.config), str(error), (0, 0), asked), None
    named = (loaded.account_id, loaded.agent_id)
    return doctor.configuration_check(str(paths.config), None, named, asked), loaded


def routes(paths: StatePaths, loaded: Configuration) -> list[doctor.Check]:
    own = configured_own_paths(paths, loaded)
    return doctor.route_checks([route_facts(route.project_id, route.directory, own)
                                for route in loaded.routes])


def worker(loaded: Configuration) -> tuple[doctor.Check, WorkerCommand | None]:
    """The worker program's check, and its command when the program is found."""
    try:
        command = WorkerCommand.of(loaded)
    except UserError as error:
        return doctor.worker_check("", None, str(error)), None
    found = command.program_path()
    return doctor.worker_check(command.argv[0], found, None), command if found is not None else None


def ledger(paths: StatePaths, *, full: bool) -> doctor.Check:
    path = paths.ledger
    if not os.path.lexists(path):
        return doctor.ledger_check(str(path), doctor.LedgerFacts(exists=False))
    try:
        with open_ledger_read_only(path) as opened:
            health = read_health(opened, full=full)
    except LedgerError as error:
        return doctor.ledger_check(str(path), doctor.LedgerFacts(True, _trouble(error), str(error)))
    except sqlite3.DatabaseError as error:  # damage the opening did not reach
        damaged = doctor.LedgerFacts(True, doctor.LedgerTrouble.damaged, f"{path} is damaged: {error}")
        return doctor.ledger_check(str(path), damaged)
    facts = doctor.LedgerFacts(True, None, "", health.version, SCHEMA_VERSION, health.problems, full)
    return doctor.ledger_check(str(path), facts)


def token_outage(paths: StatePaths) -> TokenOutage | None:
    """The ledger's word that the running connector's creates wait on a refused token (read-only,
    as ``status`` reads it); None when they do not, or the ledger cannot say (its check will)."""
    if not os.path.lexists(paths.ledger):
        return None
    try:
        with open_ledger_read_only(paths.ledger) as opened, opened.read() as connection:
            return read_token_outage(connection)
    except (LedgerError, sqlite3.DatabaseError):
        return None


def _trouble(error: LedgerError) -> doctor.LedgerTrouble:
    kinds = {ledger_connection.LedgerOutOfDate: "out_of_date", ledger_connection.LedgerTooNew: "too_new",
             ledger_connection.LedgerBusy: "busy", ledger_connection.LedgerCorrupt: "damaged"}
    found = next((trouble for kind, trouble in kinds.items() if isinstance(error, kind)), "unusable")
    return doctor.LedgerTrouble(found)


def disk(paths: StatePaths) -> doctor.Check:
    return doctor.disk_check(str(paths.directory), ledger_connection.disk_space(paths.directory))


def lock(paths: StatePaths, loaded: Configuration) -> doctor.Check:
    """Who the instance lock's metadata names (never taking the lock)."""
    holder = peek(paths.directory, loaded.account_id, loaded.agent_id) or peek_only(paths.directory)
    found = None if holder is None else doctor.LockHolder(holder.pid, holder.started_at, holder.pid_present,
                                                          holder.configuration_problem)
    return doctor.lock_check(found)


def pair(paths: StatePaths, loaded: Configuration) -> doctor.Check:
    """Whether the pair's machine-wide record names another state directory (``run`` refuses)."""
    ids = (loaded.account_id, loaded.agent_id)
    try:
        elsewhere = pair_lock.serving_elsewhere(*ids, paths.directory)
    except (UserError, OSError) as error:
        return doctor.pair_check(ids, str(paths.directory), None, str(error))
    return doctor.pair_check(ids, str(paths.directory), None if elsewhere is None else str(elsewhere), None)


def claude_code(command: WorkerCommand) -> list[doctor.Check]:
    """The version and login checks."""
    if not command.speaks_stream_json:
        return []
    return [doctor.version_check(*_ask(command, "--version")),
            doctor.auth_check(*_ask(command, "auth", "status"))]


def allowances(loaded: Configuration) -> list[doctor.Check]:
    """The default worker's allowances and its exact ``--allowed-tools``; a command that cannot be
    built is the worker check's to say."""
    try:
        tools = WorkerCommand.of(loaded).allowed_tools
    except UserError:
        return []
    return [] if tools is None else [doctor.allowances_check(allowances_told(loaded), tools)]


def _ask(command: WorkerCommand, *arguments: str) -> tuple[str, int | None]:
    """Claude Code's answer as a worker would get it: in an empty configuration directory of its
    own, so a login kept in ``~/.claude`` counts for nothing, as it does for the worker."""
    try:
        with tempfile.TemporaryDirectory(prefix="doctor-claude-") as scratch:
            environment = {**command.environment(os.environ), CLAUDE_CONFIG_ENV: scratch}
            answer = subprocess.run([command.argv[0], *arguments], env=environment, stdin=subprocess.DEVNULL,
                                    capture_output=True, timeout=CLAUDE_CODE_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return "", None
    except OSError as error:
        return str(error.strerror or error), None
    return answer.stdout.decode("utf-8", "replace"), answer.returncode
