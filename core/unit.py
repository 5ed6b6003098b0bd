"""bin/connect unit's systemd service, as text from values: the configuration's paths, the command
that runs it, and the exit codes a restart cannot mend.

The unit is ``Type=notify`` with a watchdog (``shell.notify`` speaks the protocol), restarted on
failure but never on an exit code a person must act on, stopped by SIGTERM to the connector alone
(it stops its workers itself, within its shutdown bound; ``TimeoutStopSec`` is above that bound).
The file system is read-only but for what the connector and its workers write: the state
directory, the token file's directory (a refresh replaces the file), every route's directory, the
runtime directory of the pair locks, and the home directory when the worker is Claude Code (its
sessions live there). ``PrivateTmp`` would hide a runtime directory under /tmp from a connector run
by hand, and with it the pair lock: under /tmp, /tmp stays shared and writable. The worker's
variables are named, never valued: their values are an owner-only ``EnvironmentFile``'s. A path a
unit cannot name (relative, or holding a control character) is refused, with the path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

WATCHDOG = timedelta(seconds=60)
START_WITHIN = timedelta(minutes=5)  # the start's settling (60 s of listings), its admissions and first read
STOP_MARGIN = timedelta(seconds=30)  # past the shutdown bound: the log's drain and the exit
RESTART_AFTER = timedelta(seconds=10)
ENVIRONMENT_FILE = "environment"  # in the state directory, NAME=value lines for the worker's variables
_TMP = ("/tmp", "/var/tmp")  # noqa: S108 -- PrivateTmp's directories


@dataclass(frozen=True, slots=True)
class UnitPlan:
    account_id: int
    agent_id: int
    command: tuple[str, ...]  # ExecStart, the program absolute
    state_directory: str
    token_file: str
    route_directories: tuple[str, ...]
    runtime_directory: str
    runtime_variable: tuple[str, str] | None  # (name, value) when it was set as the unit was printed
    worker_variables: tuple[str, ...]
    claude_code: bool  # the default worker
    user_name: str | None  # a system unit's User=; None: a --user unit
    shutdown_bound: timedelta
    no_restart: tuple[int, ...]


def unit_name(account_id: int, agent_id: int) -> str:
    return f"basecamp-connector-{account_id}-{agent_id}.service"


def unit_problem(plan: UnitPlan) -> str | None:
    paths = [plan.command[0], plan.state_directory, plan.token_file, *plan.route_directories,
             plan.runtime_directory]
    for path in paths:
        if not path.startswith("/"):
            return f"{path!r} is not an absolute path: a unit cannot name it"
        if any(ord(character) < 0x20 or ord(character) == 0x7F for character in path):
            return f"{path!r} holds a control character: a unit cannot name it"
    return None


def _seconds(duration: timedelta) -> str:
    return f"{int(-(-duration.total_seconds() // 1))}s"


def _word(text: str, *, command: bool = False) -> str:
    """One word of a setting, as systemd splits words: specifiers and (a command's argument) variables
    escaped, quoted when it holds a space, a quote or a backslash."""
    escaped = text.replace("%", "%%")
    if command:
        escaped = escaped.replace("$", "$$")
    if escaped and not any(character in escaped for character in " \t\"'\\;"):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _writable(plan: UnitPlan) -> list[str]:
    token_directory = plan.token_file.rsplit("/", 1)[0] or "/"
    paths = [plan.state_directory, token_directory, *plan.route_directories]
    runtime = plan.runtime_directory
    paths.append(next((tmp for tmp in _TMP if runtime == tmp or runtime.startswith(tmp + "/")), runtime))
    words = list(dict.fromkeys(_word(path) for path in paths))
    if plan.claude_code:
        words.append("-%h")
    return words


def private_tmp(plan: UnitPlan) -> bool:
    runtime = plan.runtime_directory
    return not any(runtime == tmp or runtime.startswith(tmp + "/") for tmp in _TMP)


def unit_text(plan: UnitPlan) -> str:
    """The unit; ``unit_problem`` first."""
    system = plan.user_name is not None
    name = unit_name(plan.account_id, plan.agent_id)
    install = f"/etc/systemd/system/{name}" if system else f"~/.config/systemd/user/{name}"
    manager = "systemctl" if system else "systemctl --user"
    network = ["Wants=network-online.target", "After=network-online.target"]  # the system manager's
    program, *arguments = plan.command  # systemd expands no variable in the program's path
    linger = "# A user unit stops at logout unless `loginctl enable-linger` keeps this user's manager."
    lines = [
        f"# bin/connect unit for account {plan.account_id} agent {plan.agent_id}: save it as {install},",
        f"# then `{manager} daemon-reload && {manager} enable --now {name}`.",
        *([] if system else [linger]),
        "# Print it again after setup changes a route: each route's directory is named below.",
        "[Unit]",
        f"Description=Basecamp connector (account {plan.account_id}, agent {plan.agent_id})",
        *(network if system else []),
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        "ExecStart=" + " ".join([_word(program), *(_word(word, command=True) for word in arguments)]),
        *([f"User={plan.user_name}"] if system else []),
        f"WatchdogSec={_seconds(WATCHDOG)}",
        "Restart=on-failure",
        f"RestartSec={_seconds(RESTART_AFTER)}",
        "RestartPreventExitStatus=" + " ".join(str(code) for code in plan.no_restart),
        f"TimeoutStartSec={_seconds(START_WITHIN)}",
        "KillSignal=SIGTERM",
        "KillMode=mixed",
        f"TimeoutStopSec={_seconds(plan.shutdown_bound + STOP_MARGIN)}",
        *_environment(plan),
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ReadWritePaths=" + " ".join(_writable(plan)),
        f"PrivateTmp={'yes' if private_tmp(plan) else 'no'}",
        "",
        "[Install]",
        f"WantedBy={'multi-user.target' if system else 'default.target'}",
    ]
    return "\n".join(lines) + "\n"


def _environment(plan: UnitPlan) -> Sequence[str]:
    lines: list[str] = []
    if plan.runtime_variable is not None:
        name, value = plan.runtime_variable
        lines.append(f"Environment={_word(f'{name}={value}')}")
    if plan.worker_variables:
        lines.append(f"# {ENVIRONMENT_FILE} holds NAME=value for the worker's variables: "
                     f"{' '.join(plan.worker_variables)} (owner-only; never in this file)")
        environment_file = f"{plan.state_directory}/{ENVIRONMENT_FILE}".replace("%", "%%")
        lines.append(f"EnvironmentFile={environment_file}")  # one path, never split nor unquoted
    return lines
