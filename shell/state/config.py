"""The configuration file and state directory of one (account, agent), and the file re-read while it runs.

One state directory per (account, agent), ``$XDG_STATE_HOME/basecamp-connector/<account>-<agent>/``
(``~/.local/state`` when unset or not absolute), holds ``config.json`` and ``ledger.sqlite3``. What
is missing is made owner-only; what is a symlink, another user's, or open to others is refused with
how to fix it, never loosened, tightened or followed (``shell.private_files``). A write is whole or
absent. A configuration that does not parse or validate is refused with every problem, one line
each; the token file with one line naming the file, never its content. While it runs, the connector
re-reads the file (``connectRoutesTTL``) by the same policy and applies what it authorizes
(``core.configuration.authorize``) whole: a loop sees the old routes or the new, never a mix."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.configuration import (
    Authorization,
    Configuration,
    RouteFacts,
    authorize,
    news,
    parse_configuration,
    to_mapping,
    unreaching,
)
from core.file_kinds import CONFIG_NAME, LEDGER_NAME, FileKind
from core.json_input import JsonRefused, decode_json
from core.oauth import Credentials, read_token_text
from core.route_reach import OwnPath
from shell import private_files, process_secrets
from shell.errors import EXIT_CONFIG, EXIT_USAGE, UserError
from shell.state.pair_lock import runtime_directory

if TYPE_CHECKING:
    from core.admission import AdmissionSettings

log = logging.getLogger("connector.config")

APP_DIRECTORY = "basecamp-connector"
CONFIG_MAX_BYTES = 1024 * 1024  # the largest configuration file read (core.json_input bounds its depth too)
SHADOW_DIRECTORY = "shadow"  # run --shadow's own lock, ledger and feed position, inside the state directory
MAX_TOKEN_FILE_BYTES = 64 * 1024  # a token or a login's credentials is far less
WRITABLE = os.W_OK | os.X_OK


class ConfigurationInvalid(UserError):
    def __init__(self, where: str, problems: tuple[str, ...]) -> None:
        self.problems = tuple(f"{where}: {line}" for line in problems)
        super().__init__("\nerror: ".join(self.problems), EXIT_CONFIG)  # main says "error: " before the first


@dataclass(frozen=True, slots=True)
class StatePaths:
    directory: Path
    config: Path
    ledger: Path

    @classmethod
    def at(cls, directory: Path) -> StatePaths:
        return cls(directory, directory / CONFIG_NAME, directory / LEDGER_NAME)


def state_root(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME", "")
    if not base or not os.path.isabs(base):
        base = str(Path(environ.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / APP_DIRECTORY


def state_paths(account_id: int, agent_id: int, environ: Mapping[str, str] | None = None) -> StatePaths:
    return StatePaths.at(state_root(environ) / f"{account_id}-{agent_id}")


def is_state_directory(directory: Path, environ: Mapping[str, str] | None = None) -> bool:
    """A state directory or inside one: under ``state_root``, or holding a configuration or ledger by name."""
    root = state_root(environ).resolve()
    resolved = directory.resolve()
    if resolved == root or root in resolved.parents:
        return True
    return any(os.path.lexists(resolved / name) for name in (CONFIG_NAME, LEDGER_NAME))


def state_files(path: Path) -> tuple[Path, ...]:
    """What a state directory the connector made holds: a mode fix is offered only for these."""
    return (path / CONFIG_NAME, path / LEDGER_NAME)


def check_private_directory(path: Path) -> None:
    """Refuse an existing directory that is a symlink, not ours, or open to others."""
    private_files.check_directory(path, "state directory", holds=state_files(path))


def ensure_private_directory(path: Path) -> None:
    """Make ``path`` (0700) if it is missing; refuse it if it exists and is not owner-only."""
    private_files.ensure_directory(path, "state directory", holds=state_files(path))


def read_config_mapping(path: Path) -> dict[str, object] | None:
    """The file's JSON object, after the owner-only checks; None when there is no file."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:  # the state directory is a file, or cannot be searched
        raise UserError(f"cannot read {path}: {error.strerror}", EXIT_CONFIG) from error
    check_private_directory(path.parent)
    private_files.check_file_status(status, path, "configuration file", kind=FileKind.configuration)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise UserError(f"cannot read {path}: {error.strerror}", EXIT_CONFIG) from error
    with os.fdopen(descriptor, "rb") as handle:
        private_files.check_file_status(os.fstat(handle.fileno()), path, "configuration file",
                                        kind=FileKind.configuration)
        raw = handle.read()
    decoded = decode_json(raw, max_bytes=CONFIG_MAX_BYTES)
    if isinstance(decoded, JsonRefused):
        raise ConfigurationInvalid(str(path), (f"not valid JSON: {decoded.reason}",))
    data = decoded.value
    if not isinstance(data, dict):
        raise ConfigurationInvalid(str(path), (f"expected a JSON object, not {type(data).__name__}",))
    return data


def load_config(path: Path) -> Configuration:
    data = read_config_mapping(path)
    if data is None:
        raise UserError(f"no configuration at {path}: run bin/connect setup", EXIT_CONFIG)
    parsed = parse_configuration(data)
    if not isinstance(parsed, Configuration):
        raise ConfigurationInvalid(str(path), parsed)
    return parsed


def save_config(path: Path, configuration: Configuration) -> None:
    ensure_private_directory(path.parent)
    with contextlib.suppress(FileNotFoundError):
        private_files.check_file(path, "configuration file", kind=FileKind.configuration)
    text = json.dumps(to_mapping(configuration), indent=2, sort_keys=False) + "\n"
    try:
        private_files.write_atomically(path, text.encode("utf-8"), FileKind.configuration)
    except OSError as error:  # a full disk, a read-only directory: the old file stands
        raise UserError(
            f"cannot write {path}: {error.strerror or error}; nothing was written (any configuration there "
            "is as it was)", EXIT_CONFIG,
        ) from error


def read_token_file(path: Path) -> str | Credentials:
    """The token or the login's credentials in ``path``, never echoed; one line refuses a file not
    owner-only, not regular, empty, over 64 KiB, not ASCII, holding a control character, or unreadable."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the start
    except FileNotFoundError as error:
        raise UserError(f"token file {path} does not exist", EXIT_CONFIG) from error
    except OSError as error:
        raise UserError(f"cannot read token file {path}: {error.strerror}", EXIT_CONFIG) from error
    try:
        private_files.check_file_status(os.fstat(descriptor), path, "token file", kind=FileKind.token)
        raw = os.read(descriptor, MAX_TOKEN_FILE_BYTES + 1)
    except OSError as error:
        raise UserError(f"cannot read token file {path}: {error.strerror}", EXIT_CONFIG) from error
    finally:
        os.close(descriptor)
    if len(raw) > MAX_TOKEN_FILE_BYTES:  # cut, it would be read as a token it is not
        raise UserError(
            f"token file {path} holds more than {MAX_TOKEN_FILE_BYTES // 1024} KiB; a token file holds"
            " one token or a login's credentials", EXIT_CONFIG,
        )
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise UserError(f"token file {path} holds a character that is not ASCII; a Basecamp token is ASCII",
                        EXIT_CONFIG) from None
    try:
        found = read_token_text(text)
    except ValueError as error:
        raise UserError(f"token file {path} {error}", EXIT_CONFIG) from None
    if isinstance(found, str) and not found.isprintable():
        raise UserError(f"token file {path} holds a control character; a token is printable", EXIT_CONFIG)
    process_secrets.hold_token(found)
    return found


def read_token(path: Path) -> str:
    found = read_token_file(path)
    return found if isinstance(found, str) else found.access_token


def locate_state(state_dir: str | None, account: str | int | None, agent: str | int | None, *,
                 confirm_pair: bool = True) -> StatePaths:
    """The state directory: ``state_dir``, else from the account and agent ids, else the only one.
    ``--account`` and ``--agent`` come together or not at all; beside ``--state-dir`` they must name
    the pair its configuration serves (unless not ``confirm_pair``: ``setup``, ``doctor``)."""
    if (account is None) != (agent is None):
        raise UserError("--account and --agent name one pair: give both, or neither", EXIT_USAGE)
    if state_dir:
        paths = StatePaths.at(Path(os.path.abspath(os.path.expanduser(state_dir))))
        if confirm_pair and account is not None and os.path.lexists(paths.config):
            configured = load_config(paths.config)
            if (configured.account_id, configured.agent_id) != (int(account), int(agent or 0)):
                raise UserError(
                    f"--state-dir {paths.directory} serves account {configured.account_id} agent "
                    f"{configured.agent_id}, not --account {account} --agent {agent}: give one or the other",
                    EXIT_USAGE,
                )
        return paths
    if account and agent and str(account).strip().isdigit() and str(agent).strip().isdigit():
        return state_paths(int(account), int(agent))
    if account or agent:
        raise UserError("--account and --agent must both be given, as positive integer ids", EXIT_CONFIG)
    root = state_root()
    found = sorted(path.parent for path in root.glob("*-*/config.json")) if root.is_dir() else []
    if len(found) == 1:
        return StatePaths.at(found[0])
    if not found:
        raise UserError(f"no configuration under {root}: run bin/connect setup (an existing one is named by "
                        "--state-dir, or by --account and --agent)", EXIT_CONFIG)
    raise UserError(f"{len(found)} configurations under {root}: say which with --account and --agent",
                    EXIT_CONFIG)


def route_facts(project_id: int, directory: str, own: tuple[OwnPath, ...]) -> RouteFacts:
    """Route ``project_id``'s directory as the file system has it now, for ``core.configuration``:
    setup, run and doctor read it here and are answered there, so they judge alike and say it alike."""
    return RouteFacts(project_id, directory, exists=os.path.exists(directory),
                      is_directory=os.path.isdir(directory), writable=os.access(directory, WRITABLE),
                      real=os.path.realpath(directory), own=own)


def own_paths(state_dir: Path, token_file: str | None, mcp_files: Iterable[str]) -> tuple[OwnPath, ...]:
    """The connector's own paths, resolved, that no route may reach (``core.route_reach``)."""
    named = [("the state directory", str(state_dir)),
             ("the connector's checkout", str(Path(__file__).resolve().parents[2]))]
    if token_file:
        named.append(("the token file", token_file))
    with contextlib.suppress(UserError):  # a relative one is refused where the locks are taken
        named.append(("the runtime directory", str(runtime_directory())))
    if sys.prefix != sys.base_prefix:  # a venv; a system Python's prefix is /usr, not the connector's
        named.append(("the connector's venv", sys.prefix))
    named += [("the MCP config file", path) for path in mcp_files]
    return tuple(OwnPath(what, os.path.realpath(path)) for what, path in named)


def configured_own_paths(paths: StatePaths, configuration: Configuration) -> tuple[OwnPath, ...]:
    return own_paths(paths.directory, configuration.token_file, configuration.worker_allow.mcp_files)


# --- the configuration re-read while the connector runs ---------------------------------------


def read_authorization(path: Path, running: Configuration) -> Authorization:
    """What the file authorizes now; one route reaching the connector's own paths, nothing."""
    try:
        mapping = read_config_mapping(path)
    except UserError as error:
        return authorize(running, str(error).split("\n", 1)[0])
    if mapping is None:
        return authorize(running, f"{path} does not exist")
    authorization = authorize(running, mapping)
    own = configured_own_paths(StatePaths.at(path.parent), running)
    return unreaching(authorization, [route_facts(route.project_id, route.directory, own)
                                      for route in authorization.routes])


def routed_settings(settings: AdmissionSettings, authorization: Authorization) -> AdmissionSettings:
    return replace(settings, routed_projects=authorization.routed_projects,
                   watched_projects=authorization.watched_projects, configuration_usable=authorization.usable)


@dataclass
class Reloader:
    """Applies each re-read to the running parts."""

    current: Authorization
    set_routes: Callable[[Authorization], None]
    note: Callable[[str], None]  # the lock file's metadata: "" when usable
    readmit_unreadable: Callable[[], None]

    def apply(self, after: Authorization) -> tuple[str, ...]:
        before, self.current = self.current, after
        said = news(before, after)
        if not said:
            return said
        self.set_routes(after)
        for line in said:
            (log.info if after.usable else log.warning)("configuration: %s", line)
        self.note(after.problem)
        if after.usable and not before.usable:
            self.readmit_unreadable()
        return said
