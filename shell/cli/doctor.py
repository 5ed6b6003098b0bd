"""``bin/connect doctor``: what would stop the connector, found before a request fails in public.

Each check is one line (``core.doctor`` judges, ``shell.doctor`` measures; ``--help`` lists them
and the exit codes); ``--json`` prints ``core.doctor.report``. Even a state directory that cannot
be found is a failing check, not an error line, so the answer keeps one shape."""

from __future__ import annotations

import argparse
import json

from core.doctor import Check, configuration_check, handshake_check, passed, report
from core.presentation.doctor_text import lines
from shell.cli.arguments import add_state_arguments, positive_seconds
from shell.cli.main import Subparsers, add_command
from shell.clock import Clock, SystemClock
from shell.doctor import local, remote
from shell.doctor.handshake import probe
from shell.errors import EXIT_FAILURE, EXIT_OK, UserError
from shell.state.config import locate_state

DEEP_SECONDS = 30.0

DESCRIPTION = """\
Check what the connector needs, one line each: ok, warning or failing, what was found, and
what to do. Safe beside a running connector: it takes no lock, opens the ledger read-only,
never refreshes or writes the token, and asks Basecamp one question.

  state directory    exists, owner-only, writable
  configuration      loads (owner-only, parses) and names the account and agent asked for
  token              owner-only; acts as the agent (asked of Basecamp); days until it expires
  basecamp           answers; this machine's clock against its Date (warning past 60 s)
  route PROJECT      each route's directory exists, reaches none of the connector's own paths
                     (state, token, runtime directory, checkout, venv, MCP files), is writable
  worker             the worker program is found (on PATH, or at its path)
  worker version     Claude Code: `claude --version` is 2.1.0 or later (the default worker only)
  worker login       Claude Code: `claude auth status`, with the worker's environment, holds a
                     credential (no model is asked; give it a key: setup --worker-env NAME)
  worker allowances  Claude Code: what setup allowed it beyond its defaults, by name, and the
                     exact --allowed-tools it is given
  worker handshake   --deep: the worker, spawned as the dispatcher spawns it, completes the MCP
                     handshake with bin/connect mcp; then its process group is ended (Claude
                     Code is given no turn: its model is never asked)
  ledger             schema current; SQLite's quick_check (--deep: integrity_check)
  disk               free space where the ledger lives (failing under 64 MiB, warning 512 MiB)
  lock               free, or which connector holds it (pid, since when)
  pair               this state directory is the one that serves its account and agent

The state directory is found as `run` finds it: --state-dir, or --account and --agent, or the
only one configured.

Examples:
  bin/connect doctor
  bin/connect doctor --account 999 --agent 42 --deep
  bin/connect doctor --state-dir ~/.local/state/basecamp-connector/999-42 --json

exit codes: 0 nothing failing (warnings allowed); 1 at least one check failing; 2 usage."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "doctor", DESCRIPTION)
    add_state_arguments(parser)
    parser.add_argument("--deep", action="store_true", help="also spawn the worker and wait for its MCP "
                        "handshake; integrity_check the ledger")
    parser.add_argument("--deep-seconds", type=positive_seconds, default=DEEP_SECONDS, metavar="SECONDS",
                        help=f"with --deep, how long the worker has to complete the handshake "
                        f"(default {DEEP_SECONDS:g})")
    parser.add_argument("--json", action="store_true", help="print one JSON object: {checks: [...], ok}")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    checks = examine(args, SystemClock())
    print(json.dumps(report(checks), ensure_ascii=False, indent=2) if args.json else "\n".join(lines(checks)))
    return EXIT_OK if passed(checks) else EXIT_FAILURE


def examine(args: argparse.Namespace, clock: Clock) -> list[Check]:
    """Every check, in the order they are fixed: where the state is, what it says, reaches, runs, keeps."""
    asked = (args.account, args.agent)
    try:
        paths = locate_state(args.state_dir, args.account, args.agent, confirm_pair=False)
    except UserError as error:
        return [configuration_check("", str(error), (0, 0), asked)]
    checks = [local.state_directory(paths)]
    found, loaded = local.configuration(paths, asked)
    checks.append(found)
    if loaded is None:
        return checks
    checks += remote.token_and_basecamp(loaded, clock, local.token_outage(paths))
    checks += local.routes(paths, loaded)
    worker, command = local.worker(loaded)
    checks.append(worker)
    if command is not None:
        checks += local.claude_code(command)
    checks += local.allowances(loaded)
    if args.deep and command is not None:
        checks.append(handshake_check(probe(command, ledger=paths.ledger, agent_id=loaded.agent_id,
                                            seconds=args.deep_seconds, clock=clock)))
    checks += [local.ledger(paths, full=args.deep), local.disk(paths), local.lock(paths, loaded),
               local.pair(paths, loaded)]
    return checks
