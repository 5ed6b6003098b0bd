"""The worker program: its argv template, its environment, and Claude Code's stream-json.

The worker is Claude Code by default, any program by configuration. Its argv's ``{prompt}``,
``{mcp_config}`` and ``{work_dir}`` are replaced in one pass, so a value is never read again as a
template; any other ``{name}``, and a ``{`` with no ``}`` after it, is refused. Its environment is
the allowlist from the connector's plus what its configuration names, never the task token. What
``setup`` allowed widens the default command alone: a configured command's argv is the person's
whole say.

A stream-json command gets its turns on stdin, one user message each, and its stdout is read as
Claude Code's stream: whole lines, at most ``MAX_READ_BYTES`` a poll, a line over
``MAX_LINE_BYTES`` dropped whole, so a worker cannot make the connector hold its output. Once a
result answers every message given, stdin closes and Claude Code exits; no turn is given after."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from core.configuration import Configuration
from core.worker_allowances import (
    ALLOWLIST,
    CONNECTOR_SECRETS,
    WorkerAllowances,
    allowed_tools,
    variable_name_problem,
)
from core.worker_stream import StreamFacts, fold
from shell.errors import EXIT_CONFIG, UserError
from shell.worker.allowances import mcp_servers_of

BUILT_IN_TOOLS = ("Read", "Edit", "Write", "NotebookEdit")  # it reads and changes files; it runs nothing
PERMISSION_MODE = "acceptEdits"
STREAM_JSON = "stream-json"
BLOCKING_MCP_START = (("MCP_CONNECTION_NONBLOCKING", "0"),)  # its servers load before its first request
PLACEHOLDERS = frozenset({"prompt", "mcp_config", "work_dir"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_UNCLOSED = re.compile(r"\{[^}]*$")
MAX_READ_BYTES = 1 << 20
MAX_LINE_BYTES = 4 << 20
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"  # the driver sets it: a directory of the connector's own
WORKER_MARK_ENV = "CONNECTOR_WORKER_ATTEMPT"  # the driver sets it to the attempt's id, found in its strays


@dataclass(frozen=True, slots=True)
class WorkerCommand:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # set to exactly these values
    pass_env: tuple[str, ...] = ()  # copied from the connector's environment when present
    mcp_files: tuple[tuple[str, tuple[str, ...]], ...] = ()  # each file and the servers it gave

    def __post_init__(self) -> None:
        if not self.argv or not self.argv[0]:
            raise ValueError("a worker command needs a program")
        known = ", ".join(sorted(PLACEHOLDERS))
        for argument in self.argv:
            for name in _PLACEHOLDER.findall(argument):
                if name not in PLACEHOLDERS:
                    raise ValueError(f"unknown placeholder {{{name}}} in the worker command; known: {known}")
            if (unclosed := _UNCLOSED.search(argument)) is not None:
                raise ValueError(f"unclosed placeholder {unclosed.group(0)[:40]!r} in the worker command "
                                 f"(a {{ with no }} after it); known: {known}")
        for name in [name for name, _ in self.env] + list(self.pass_env):
            if (problem := variable_name_problem(name)) is not None:
                raise ValueError(problem)

    @classmethod
    def claude_code(cls, program: str = "claude", env: Mapping[str, str] | None = None,
                    pass_env: Iterable[str] = (), bash: Iterable[str] = (),
                    mcp_files: Mapping[str, Iterable[str]] | None = None) -> WorkerCommand:
        """Claude Code as the connector can trust it: replayed user messages so a follow-up joins its
        turn, host settings ignored, only ``BUILT_IN_TOOLS``, the connector's MCP server and what setup
        allowed (``bash`` patterns, ``mcp_files`` with the servers each names)."""
        patterns = tuple(bash)
        extra = {path: tuple(servers) for path, servers in (mcp_files or {}).items()}
        tools = (*BUILT_IN_TOOLS, *(["Bash"] if patterns else []))
        allowed = allowed_tools(patterns, (server for servers in extra.values() for server in servers))
        argv = (
            program, "-p", "--input-format", STREAM_JSON, "--output-format", STREAM_JSON, "--verbose",
            "--replay-user-messages", "--setting-sources", "", "--permission-mode", PERMISSION_MODE,
            "--tools", ",".join(tools), "--allowed-tools", allowed,
            "--strict-mcp-config", "--mcp-config", "{mcp_config}", *extra)  # fmt: skip
        environment = tuple(sorted({**dict(BLOCKING_MCP_START), **(env or {})}.items()))
        return cls(argv=argv, env=environment, pass_env=tuple(pass_env), mcp_files=tuple(extra.items()))

    @classmethod
    def configured(cls, argv: Iterable[str] | None, pass_env: Iterable[str] = (),
                   allow: WorkerAllowances | None = None) -> WorkerCommand:
        """The configuration's worker command, or Claude Code widened by ``allow`` when it names
        none. A command this program cannot run as written is a ``UserError`` before anything starts."""
        given = tuple(argv or ())
        allowed = allow or WorkerAllowances()
        try:
            if given:
                if allowed.named():
                    raise ValueError("--worker-allow-bash and --worker-mcp widen the default worker only; "
                                     "a configured worker command's argv says everything it may do")
                return cls(argv=given, pass_env=tuple(pass_env))
            servers = {path: mcp_servers_of(Path(path)) for path in allowed.mcp_files}
            return cls.claude_code(pass_env=pass_env, bash=allowed.bash, mcp_files=servers)
        except ValueError as error:
            raise UserError(f"worker_command: {error}", EXIT_CONFIG) from None

    @classmethod
    def of(cls, configuration: Configuration) -> WorkerCommand:
        return cls.configured(configuration.worker_command, configuration.worker_env,
                              configuration.worker_allow)

    @property
    def allowed_tools(self) -> str | None:
        """The ``--allowed-tools`` value the worker gets, as its argv has it; None: a configured command."""
        return _option(self.argv, "--allowed-tools")

    def mcp_changed(self) -> str | None:
        """Why a worker may not start with this command now: an MCP file read again is no longer
        usable, or gives other servers than when the command was built; None: it may."""
        for path, servers in self.mcp_files:
            try:
                now = mcp_servers_of(Path(path))
            except ValueError as error:
                return f"{error}: not started"
            if now != servers:
                return (f"the MCP config file {path} now names the servers {', '.join(now)}, not "
                        f"{', '.join(servers)} at the start: not started (a restart takes them)")
        return None

    @property
    def speaks_stream_json(self) -> bool:
        return _option(self.argv, "--input-format") == STREAM_JSON

    @property
    def permission_mode(self) -> str:
        return _option(self.argv, "--permission-mode") or "default"

    def program_path(self) -> str | None:
        """Where the program is found (on ``$PATH``, or at its path); None: nowhere."""
        return shutil.which(self.argv[0])

    def program_missing(self) -> str | None:
        """One line when the program is not found, said before a request fails in public."""
        if self.program_path() is not None:
            return None
        return (f"worker: the program {self.argv[0]!r} is not found on PATH; install it, or name another "
                "with setup --worker-command")

    def render(self, *, prompt: str, mcp_config: Path, work_dir: Path) -> tuple[str, ...]:
        values = {"prompt": prompt, "mcp_config": str(mcp_config), "work_dir": str(work_dir)}
        return tuple(_PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), argument)
                     for argument in self.argv)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        chosen = {name: value for name, value in environ.items() if name in ALLOWLIST}
        chosen.update({name: environ[name] for name in self.pass_env if name in environ})
        chosen.update(dict(self.env))
        return {name: value for name, value in chosen.items() if name not in CONNECTOR_SECRETS}


def _option(argv: tuple[str, ...], name: str) -> str | None:
    """The value ``argv`` gives option ``name`` (``--name value`` or ``--name=value``), or None."""
    for index, argument in enumerate(argv):
        if argument == name and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith(name + "="):
            return argument[len(name) + 1 :]
    return None


def user_message(text: str) -> bytes:
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return (json.dumps(message) + "\n").encode()


def close_input(stdin: IO[bytes] | None) -> None:
    if stdin is not None and not stdin.closed:
        with contextlib.suppress(OSError):
            stdin.close()


class Turns:
    """The turns given to one stream-json worker on its stdin; giving and closing share one lock."""

    def __init__(self, stdin: IO[bytes] | None) -> None:
        self._stdin = stdin
        self._lock = threading.Lock()
        self.given = 0
        self.closed = stdin is None

    def give(self, text: str) -> bool:
        """Write one turn; False when the input is already closed (nothing written)."""
        with self._lock:
            if self.closed or self._stdin is None:
                return False
            with contextlib.suppress(OSError, ValueError):  # a worker that closed its end says why
                self._stdin.write(user_message(text))
                self._stdin.flush()
            self.given += 1
            return True

    def close_if_answered(self, answered: int) -> bool:
        """Close the input once ``answered`` messages cover every one given; True once closed."""
        with self._lock:
            if not self.closed and answered >= self.given:
                close_input(self._stdin)
                self.closed = True
            return self.closed

    def close(self) -> None:
        with self._lock:
            close_input(self._stdin)
            self.closed = True


class StreamWatch:
    """The facts of one worker's stream, read from its stdout file as it grows."""

    def __init__(self, stdout: Path) -> None:
        self._path = stdout
        self._offset = 0
        self._partial = b""
        self._dropping = False
        self.facts = StreamFacts()

    def poll(self) -> StreamFacts:
        try:
            with self._path.open("rb") as file:
                file.seek(self._offset)
                chunk = file.read(MAX_READ_BYTES)
        except OSError:
            return self.facts
        self._offset += len(chunk)
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            if self._dropping:  # the rest of a line too long to keep
                self._dropping = False
                continue
            self.facts = fold(self.facts, line.decode("utf-8", "replace"))
        if len(self._partial) > MAX_LINE_BYTES:
            self._partial, self._dropping = b"", True
        return self.facts
