"""``bin/connect setup``: write, check and show one (account, agent)'s configuration.

A setup keeps what it is not told to change (``core.setup_changes.merge``) and writes nothing unless
everything checks, every problem printed (``--help`` gives the exit codes): route directories must
exist (relative ones are written absolute), the token file must be owner-only, and unless
``--no-check`` the token must answer as ``--agent``. ``--force`` moves the record of the pair's one
state directory here. The token itself is never printed, in an error, in the configuration or in
argv: only its file's path. A connector running beside it serves new routes within
``core.configuration.RELOAD_EVERY``; anything else waits for its next start, and setup says so."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path
from typing import Any

from returns.result import Failure

from core.configuration import RELOAD_EVERY, Configuration, TrustMode, missing, route_problems, to_mapping
from core.setup_changes import Changes, merge
from core.timestamps import format_duration
from shell.basecamp.client import BasecampClient, Profile, check_identity
from shell.basecamp.tokens import tokens_from
from shell.cli.main import Subparsers, add_command
from shell.clock import SystemClock
from shell.errors import EXIT_CONFIG, EXIT_OK, UserError
from shell.state import pair_lock
from shell.state.config import (
    ConfigurationInvalid,
    StatePaths,
    configured_own_paths,
    load_config,
    locate_state,
    own_paths,
    read_config_mapping,
    read_token,
    route_facts,
    save_config,
)
from shell.state.lock import may_run
from shell.worker.allowances import allowances_told
from shell.worker.driver import WorkerCommand

USER_AGENT = "BasecampConnector setup (https://github.com/basecamp/basecamp-cli)"

DESCRIPTION = """\
Write the connector's configuration for one (account, agent), check that the token answers
as the agent, and say what is still missing, one line each.

The configuration lives at $XDG_STATE_HOME/basecamp-connector/ACCOUNT-AGENT/config.json
(owner-only), beside the ledger. The token stays in its own owner-only file (--token-file);
the configuration names that file and never holds the token.

A repeated setup keeps what it is not told to change. Durations read like 90m, 30s, 2h, 1h30m.
Examples:
  bin/connect setup --base-url https://3.basecampapi.com --account 999 --agent 42 \\
      --token-file ~/.config/basecamp/agent.token --operator 7 --route 1001=~/src/app
  bin/connect setup --account 999 --agent 42 --class 1001=backend --watch-completions 1001
  bin/connect setup --account 999 --agent 42 --show
  bin/connect setup --state-dir /srv/connector --account 999 --agent 42 --force

One (account, agent) is served from one state directory on a machine: a setup into a second
one is refused naming the first; --force moves the pair here, and the first one's connector is
then refused at start. Exit codes: 0 written (or shown); 3 a problem with the configuration,
the token file, a route or another state directory serving the pair (one line each);
6 Basecamp could not be asked who the token is."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "setup", DESCRIPTION)
    parser.add_argument("--base-url", metavar="URL", help="Basecamp's origin, e.g. https://3.basecampapi.com")
    parser.add_argument("--account", metavar="ID", help="the Basecamp account id")
    parser.add_argument("--agent", metavar="ID", help="the agent's person id (the token must act as it)")
    parser.add_argument("--token-file", metavar="PATH", help="the owner-only file holding the agent's token")
    parser.add_argument("--operator", metavar="ID", help="the person the agent works for")
    parser.add_argument("--trust", choices=[mode.value for mode in TrustMode], help="whose mentions count")
    parser.add_argument("--allow", metavar="ID", action="append", default=[], help="trust this person too")
    parser.add_argument("--remove-allow", metavar="ID", action="append", default=[], help="trust no longer")
    parser.add_argument("--route", metavar="PROJECT=DIR", action="append", default=[],
                        help="run this project's work in DIR (an existing directory)")
    parser.add_argument("--remove-route", metavar="PROJECT", action="append", default=[])
    parser.add_argument("--class", dest="classes", metavar="PROJECT=NAME", action="append", default=[],
                        help="the class of a routed project")
    parser.add_argument("--watch-completions", metavar="PROJECT", action="append", default=[])
    parser.add_argument("--no-watch-completions", metavar="PROJECT", action="append", default=[])
    _add_worker_arguments(parser)
    parser.add_argument("--state-dir", metavar="DIR", help="the state directory (default: derived)")
    parser.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                        help="ask Basecamp who the token acts as before writing (default: on)")
    parser.add_argument("--force", action="store_true",
                        help="make this the pair's state directory although another one serves it: the "
                        "other's connector is then refused at start, and what its ledger still owes "
                        "(pending messages, running tasks) stays there, for a person")
    parser.add_argument("--show", action="store_true", help="print the configuration; write nothing")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def _add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--worker-command", metavar="'...'",
                        help="the worker's command line (placeholders {prompt} {mcp_config} {work_dir}); "
                        "'' for the default, Claude Code")
    parser.add_argument("--concurrency", metavar="N", help="workers at once (default 2)")
    parser.add_argument("--deadline", metavar="DURATION", help="a task's deadline (default 90m)")
    parser.add_argument("--guard-delay", metavar="DURATION", help="before the guard acknowledgement (30s)")
    parser.add_argument("--still-running", metavar="DURATION", help="between still-running notices (10m)")
    parser.add_argument("--reconcile-after", metavar="DURATION",
                        help="before a sending intent is reconciled (60s)")
    parser.add_argument("--unsafe-test-timings", action=argparse.BooleanOptionalAction, default=None,
                        help="UNSAFE: lift the timing floors (reconcile after >= 60s, guard delay >= 10s, "
                        "still-running >= 1m, deadline >= 1m, poll >= 1s), for a demo or a test only; "
                        "status shows it")
    parser.add_argument("--worker-env", metavar="NAME", action="append", default=[],
                        help="pass this variable from the connector's environment to the worker as it is "
                        "(recorded by name, never by value), e.g. --worker-env ANTHROPIC_API_KEY")
    parser.add_argument("--remove-worker-env", metavar="NAME", action="append", default=[])
    parser.add_argument("--worker-allow-bash", metavar="PATTERN", action="append", default=[],
                        help="let the default worker (Claude Code) run Bash commands matching PATTERN, "
                        "in Claude Code's rule form without Bash(...): e.g. --worker-allow-bash 'ls *'; one "
                        "allowing every command is refused, one running the repository's code (npm test *, "
                        "make *) is named as every command (recorded as written)")
    parser.add_argument("--remove-worker-allow-bash", metavar="PATTERN", action="append", default=[])
    parser.add_argument("--worker-mcp", metavar="FILE", action="append", default=[],
                        help="give the default worker the MCP servers of this config file "
                        '({"mcpServers": {...}}) beside the connector\'s, every tool of theirs allowed '
                        "(recorded by path; an owner-only file, read again at each worker start)")
    parser.add_argument("--remove-worker-mcp", metavar="FILE", action="append", default=[])


def run(args: argparse.Namespace) -> int:
    paths = locate_state(args.state_dir, args.account, args.agent, confirm_pair=False)
    if args.show:
        configuration = load_config(paths.config)
        _print(args.json, paths, configuration, written=False, agent=None)
        return EXIT_OK
    existing = read_config_mapping(paths.config)
    if existing is not None:
        load_config(paths.config)  # an invalid file is refused as it stands, not patched over
    changes = _changes(args)
    merged = merge(existing or {}, changes)
    if isinstance(merged, Failure):
        raise ConfigurationInvalid("setup", merged.failure() + _given_on_disk(paths, changes))
    configuration = merged.unwrap()
    _check_on_disk(paths, configuration, existing)
    _check_one_home(paths, configuration, force=args.force)
    agent: Profile | None = None
    if args.check:
        token_file = Path(configuration.token_file)
        tokens = tokens_from(token_file, SystemClock())  # a login's is refreshed
        client = BasecampClient(configuration.base_url, configuration.account_id, tokens, USER_AGENT)
        agent = check_identity(client, agent_id=configuration.agent_id, token_file=configuration.token_file,
                               base_url=configuration.base_url, consequence="nothing written",
                               unreachable_hint=" (--no-check to write without asking)")
    save_config(paths.config, configuration)
    pair_lock.record_home(configuration.account_id, configuration.agent_id, paths.directory)
    _print(args.json, paths, configuration, written=True, agent=agent)
    return EXIT_OK


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path)) if path.strip() else path


def _changes(args: argparse.Namespace) -> Changes:
    routes = []
    for text in args.route:
        project, sign, directory = text.partition("=")
        routes.append(f"{project}={_absolute(directory)}" if sign and directory else text)
    worker = None
    if args.worker_command is not None:
        try:
            worker = tuple(shlex.split(args.worker_command))
        except ValueError as error:
            raise ConfigurationInvalid("setup", (f"--worker-command: {error}",)) from error
    return Changes(
        account_id=args.account, base_url=args.base_url, agent_id=args.agent, operator_id=args.operator,
        token_file=_absolute(args.token_file) if args.token_file is not None else None, trust_mode=args.trust,
        allow=tuple(args.allow), remove_allow=tuple(args.remove_allow), routes=tuple(routes),
        remove_routes=tuple(args.remove_route), classes=tuple(args.classes), worker_command=worker,
        watch_completions=tuple(args.watch_completions), concurrency=args.concurrency,
        no_watch_completions=tuple(args.no_watch_completions), task_deadline=args.deadline,
        guard_delay=args.guard_delay, still_running=args.still_running, reconcile_after=args.reconcile_after,
        unsafe_test_timings=args.unsafe_test_timings, worker_env=tuple(args.worker_env),
        remove_worker_env=tuple(args.remove_worker_env), worker_bash=tuple(args.worker_allow_bash),
        remove_worker_bash=tuple(args.remove_worker_allow_bash),
        worker_mcp=tuple(os.path.abspath(path) for path in args.worker_mcp),
        remove_worker_mcp=tuple(os.path.abspath(path) for path in args.remove_worker_mcp))  # fmt: skip


def _given_on_disk(paths: StatePaths, changes: Changes) -> tuple[str, ...]:
    """The file-system problems of the paths given, for a setup refused for other reasons too."""
    problems: list[str] = []
    own = own_paths(paths.directory, changes.token_file, changes.worker_mcp)
    for text in changes.routes:
        project, sign, directory = text.partition("=")
        if sign and directory and project.strip().isdigit():  # a bad project is a problem of its own
            problems.extend(route_problems([route_facts(int(project), directory, own)]))
    if changes.token_file:
        try:
            read_token(Path(changes.token_file))
        except UserError as error:
            problems.append(f"token_file: {error}")
    return tuple(problems)


def _disk_problems(paths: StatePaths, configuration: Configuration) -> list[str]:
    """What the file system says of the routes, the token file and the worker's placeholders, a line each."""
    problems = []
    try:
        WorkerCommand.of(configuration)
    except UserError as error:
        problems.append(str(error))
    own = configured_own_paths(paths, configuration)
    routes = [route_facts(route.project_id, route.directory, own) for route in configuration.routes]
    problems.extend(route_problems(routes))
    token_path = Path(configuration.token_file)
    if os.path.abspath(token_path) == os.path.abspath(paths.config):
        problems.append("token_file: the token cannot live in the configuration file itself")
    else:
        try:
            read_token(token_path)
        except UserError as error:
            problems.append(f"token_file: {error}")
    return problems


def _check_on_disk(paths: StatePaths, configuration: Configuration, old: dict[str, object] | None) -> None:
    problems = _disk_problems(paths, configuration)
    if old is not None:
        before = (old.get("account_id"), old.get("agent_id"))
        if before != (configuration.account_id, configuration.agent_id):
            problems.append(f"{paths.directory} holds account {before[0]} agent {before[1]}; "
                            "a different account or agent needs a state directory of its own")
    if problems:
        raise ConfigurationInvalid("setup", tuple(problems))


def _check_one_home(paths: StatePaths, configuration: Configuration, *, force: bool) -> None:
    other = pair_lock.serving_elsewhere(configuration.account_id, configuration.agent_id, paths.directory)
    if other is not None and not force:
        raise UserError(
            f"account {configuration.account_id} agent {configuration.agent_id} is already served from "
            f"{other}; two state directories for one pair would post its messages twice. Change that "
            f"one (--state-dir {other}), or --force to move the pair here: the connector of {other} "
            "is then refused at start, and what its ledger still owes stays there", EXIT_CONFIG)


def _print(as_json: bool, paths: StatePaths, configuration: Configuration, *, written: bool,
           agent: Profile | None) -> None:
    still_missing = list(missing(configuration))
    if not written:
        still_missing += _disk_problems(paths, configuration)
    try:
        program = WorkerCommand.of(configuration).program_missing()
    except UserError as error:
        program = str(error)
    still_missing += [] if program is None or program in still_missing else [program]
    running = written and may_run(paths.directory, configuration.account_id, configuration.agent_id)
    if as_json:
        summary: dict[str, Any] = {
            "written": written, "state_dir": str(paths.directory), "config_path": str(paths.config),
            "ledger_path": str(paths.ledger), "checked": agent is not None,
            "agent": None if agent is None else {"id": agent.id, "name": agent.name},
            "config": to_mapping(configuration), "missing": still_missing,
            "connector_running": running}  # fmt: skip
        print(json.dumps(summary, indent=2))
        return
    print("\n".join(_describe(paths, configuration, written=written, agent=agent)))
    if running:
        print(f"note: a connector is running (lock file, diagnostic): it serves these routes within "
              f"{RELOAD_EVERY.total_seconds():g} s; a change to anything else takes effect at its next start")
    for line in still_missing:
        print(f"missing: {line}")


def _allowed_tools(configuration: Configuration) -> list[str]:
    """The default worker's exact ``--allowed-tools``; a command that cannot be built is said as missing."""
    try:
        tools = WorkerCommand.of(configuration).allowed_tools
    except UserError:
        return []
    return [] if tools is None else [f"  worker --allowed-tools {tools} (what Claude Code is given, exactly)"]


def _describe(paths: StatePaths, configuration: Configuration, *, written: bool,
              agent: Profile | None) -> list[str]:
    trust = configuration.trust
    checked = f" ({agent.name}: the token answers as the agent)" if agent else " (token not checked)"
    lines = [
        f"{'wrote' if written else 'configuration at'} {paths.config} (owner-only)",
        f"  account {configuration.account_id} at {configuration.base_url}",
        f"  agent {configuration.agent_id}{checked if written else ''}",
        f"  token file {configuration.token_file} (the token itself is never shown)",
        f"  trust {trust.mode.value}; operator {trust.operator_id or 'none'}"
        + (f"; allowed {', '.join(map(str, trust.allow))}" if trust.allow else ""),
    ]
    for route in configuration.routes:
        details = [f"class {route.work_class}"] if route.work_class else []
        details.append("completions watched" if route.watch_completions else "completions not watched")
        lines.append(f"  route {route.project_id} -> {route.directory} ({', '.join(details)})")
    command = configuration.worker_command
    worker = shlex.join(command) if command else "Claude Code (default)"
    timings = configuration.timings
    lines += [
        f"  worker {worker}; concurrency {configuration.concurrency}; "
        f"task deadline {format_duration(configuration.task_deadline)}",
        f"  guard delay {format_duration(timings.guard_delay)}; "
        f"still-running every {format_duration(timings.still_running)}; "
        f"reconcile after {format_duration(timings.reconcile_after)}"
        + ("; UNSAFE TEST TIMINGS (the floors are lifted)" if configuration.unsafe_test_timings else ""),
        f"  worker environment adds {', '.join(configuration.worker_env) or 'nothing'} (by name)",
        f"  worker allowed beyond its defaults: {'; '.join(allowances_told(configuration)) or 'nothing'}",
        *_allowed_tools(configuration),
        f"  ledger {paths.ledger}",
    ]
    return lines
