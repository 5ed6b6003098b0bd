"""``bin/connect unit``: a systemd unit for one configuration, printed on stdout (``core.unit`` writes
it). The configuration is read as ``run`` reads it; one that does not load is its one line and exit 3.
The unit runs this program: the clone's ``bin/connect``, else the installed ``basecamp-connect``."""

from __future__ import annotations

import argparse
import os
import pwd
import re
import shutil
import sys

from core.unit import UnitPlan, unit_problem, unit_text
from shell.cli.__main__ import INSTALLED_PROG
from shell.cli.arguments import add_state_arguments
from shell.cli.main import Subparsers, add_command
from shell.code_root import CODE_ROOT
from shell.connector import STOP_WITHIN
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_USAGE, NO_RESTART, UserError
from shell.state.config import load_config, locate_state
from shell.state.pair_lock import RUNTIME_ENV, runtime_directory

_USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")

DESCRIPTION = """\
Print a systemd unit that runs this configuration's connector (`bin/connect run`) as a service:
Type=notify (READY=1 once the start settled, the watchdog pinged while every loop turns),
Restart=on-failure but never on exit 2 or 3, SIGTERM with a stop timeout above the shutdown
bound, NoNewPrivileges and a read-only file system but for the state directory, the token
file's directory, the routes' directories, the runtime directory (and the home directory for
Claude Code). The worker's variables (setup --worker-env) are named; their values go in the
state directory's `environment` file. A --user unit (the default) stops at logout unless
`loginctl enable-linger` keeps the user's manager running."""

EPILOG = """\
examples:
  bin/connect unit > ~/.config/systemd/user/basecamp-connector-999999999-1049715901.service
  systemctl --user daemon-reload && systemctl --user enable --now basecamp-connector-999999999-1049715901
  loginctl enable-linger "$USER"       # or the unit stops when you log out
  bin/connect unit --system --user-name connector | sudo tee /etc/systemd/system/basecamp-connector-...

exit codes: 0 printed; 2 usage (a --user-name that is no user name, or beside --user); 3 the
configuration does not exist or does not load, or a path a unit cannot name."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "unit", DESCRIPTION, EPILOG)
    add_state_arguments(parser)
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", action="store_true",
                       help="a unit for this user's service manager, `systemctl --user` (the default)")
    scope.add_argument("--system", action="store_true",
                       help="a unit for the system's manager, run as --user-name")
    parser.add_argument("--user-name", metavar="NAME",
                        help="with --system: the user the connector runs as (default: you)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.user_name is not None and not args.system:
        raise UserError("--user-name names a system unit's user: give it with --system", EXIT_USAGE)
    user_name = (args.user_name or pwd.getpwuid(os.geteuid()).pw_name) if args.system else None
    if user_name is not None and _USER_NAME.fullmatch(user_name) is None:
        raise UserError(f"--user-name {user_name!r} is not a user name", EXIT_USAGE)
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    runtime = os.environ.get(RUNTIME_ENV, "")
    plan = UnitPlan(
        account_id=configuration.account_id, agent_id=configuration.agent_id,
        command=(*_program(), "run", "--state-dir", str(paths.directory)),
        state_directory=str(paths.directory), token_file=os.path.abspath(configuration.token_file),
        route_directories=tuple(route.directory for route in configuration.routes),
        runtime_directory=str(runtime_directory()),
        runtime_variable=(RUNTIME_ENV, runtime) if runtime else None,
        worker_variables=configuration.worker_env, claude_code=configuration.worker_command is None,
        user_name=user_name, shutdown_bound=STOP_WITHIN, no_restart=NO_RESTART,
    )  # fmt: skip
    problem = unit_problem(plan)
    if problem is not None:
        raise UserError(f"{problem}; no unit printed", EXIT_CONFIG)
    sys.stdout.write(unit_text(plan))
    return EXIT_OK


def _program() -> tuple[str, ...]:
    clone = CODE_ROOT / "bin" / "connect"
    if os.access(clone, os.X_OK):
        return (str(clone),)
    installed = shutil.which(INSTALLED_PROG)
    if installed is not None:
        return (os.path.abspath(installed),)
    return (sys.executable, "-m", "shell.cli")
