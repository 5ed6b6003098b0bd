"""The worker program's command: its argv template and its environment.

The worker is Claude Code by default, any program by configuration (``WorkerCommand``).

Rules:
1. ``argv`` may hold ``{prompt}``, ``{mcp_config}`` and ``{work_dir}`` anywhere in an argument,
   replaced in one pass, so a value is never read again as a template. Any other ``{name}`` is
   refused: a misspelt placeholder never reaches a worker.
2. The worker's environment is ``core.worker_allowances.ALLOWLIST`` from the connector's, plus
   what the command's configuration names (``pass_env``, ``env``), never the task token's
   variable: the token is never in a worker's environment or argv.
3. A command that asks ``--input-format stream-json`` gets its prompt on stdin as one user
   message, and its output is read as Claude Code's stream (``shell.worker.claude_stream``).
4. The default command is Claude Code as the connector can trust it (``WorkerCommand.claude_code``
   says each flag): stream-json both ways, replayed user messages so a follow-up joins its turn,
   host settings ignored, edits in its directory, only ``BUILT_IN_TOOLS`` and the connector's
   MCP server, loaded before the first model request.
5. What ``setup`` allowed (``core.worker_allowances``) widens the default command alone: a Bash
   pattern allows itself, an MCP config's servers come after the connector's. A file unreadable,
   naming no server or the connector's is a ``UserError`` before anything starts; so are
   allowances beside a configured ``worker_command`` (its argv is the person's whole say)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from core.configuration import Configuration
from core.dispatch_prompt import MCP_SERVER_NAME
from core.worker_allowances import ALLOWLIST, CONNECTOR_SECRETS, WorkerAllowances, variable_name_problem
from shell.errors import EXIT_CONFIG, UserError

BUILT_IN_TOOLS = ("Read", "Edit", "Write", "NotebookEdit")
"""The built-in tools the default worker is given: it reads and changes files; it runs nothing."""
PERMISSION_MODE = "acceptEdits"
STREAM_JSON = "stream-json"
BLOCKING_MCP_START = (("MCP_CONNECTION_NONBLOCKING", "0"),)
"""Claude Code waits for its MCP servers before its first model request."""

PLACEHOLDERS = frozenset({"prompt", "mcp_config", "work_dir"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class WorkerCommand:
    """The worker program's argv template and the environment its configuration adds.

    ``argv`` may hold the placeholders ``{prompt}``, ``{mcp_config}`` and ``{work_dir}``,
    anywhere in an argument; they are replaced in one pass, so a value is never read again as a
    template. Any other ``{name}`` is refused, so a misspelt placeholder never reaches a worker
    as text. Other braces are left as they are.
    """

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # set to exactly these values
    pass_env: tuple[str, ...] = ()  # copied from the connector's environment when present

    def __post_init__(self) -> None:
        if not self.argv or not self.argv[0]:
            raise ValueError("a worker command needs a program")
        for argument in self.argv:
            for name in _PLACEHOLDER.findall(argument):
                if name not in PLACEHOLDERS:
                    raise ValueError(
                        f"unknown placeholder {{{name}}} in the worker command; "
                        f"known: {', '.join(sorted(PLACEHOLDERS))}"
                    )
        for name in [name for name, _ in self.env] + list(self.pass_env):
            problem = variable_name_problem(name)
            if problem is not None:
                raise ValueError(problem)

    @classmethod
    def claude_code(
        cls,
        program: str = "claude",
        env: Mapping[str, str] | None = None,
        pass_env: Iterable[str] = (),
        bash: Iterable[str] = (),
        mcp_files: Mapping[str, Iterable[str]] | None = None,
    ) -> WorkerCommand:
        """Claude Code as rule 4 says: stream-json, acceptEdits, the pinned built-in tools, host
        settings ignored, the connector's MCP server alone and loaded before the first request;
        rule 5's ``bash`` patterns and ``mcp_files`` (each file with the servers it names)."""
        patterns = tuple(bash)
        extra = dict(mcp_files or {})
        tools = (*BUILT_IN_TOOLS, *(["Bash"] if patterns else []))
        allowed = (
            f"mcp__{MCP_SERVER_NAME}",
            *(f"Bash({pattern})" for pattern in patterns),
            *(f"mcp__{server}" for servers in extra.values() for server in servers),
        )
        return cls(
            argv=(
                program,
                "-p",
                "--input-format",
                STREAM_JSON,
                "--output-format",
                STREAM_JSON,
                "--verbose",
                "--replay-user-messages",
                "--setting-sources",
                "",
                "--permission-mode",
                PERMISSION_MODE,
                "--tools",
                ",".join(tools),
                "--allowed-tools",
                ",".join(allowed),
                "--strict-mcp-config",
                "--mcp-config",
                "{mcp_config}",
                *extra,
            ),
            env=tuple(sorted({**dict(BLOCKING_MCP_START), **(env or {})}.items())),
            pass_env=tuple(pass_env),
        )

    @classmethod
    def configured(
        cls, argv: Iterable[str] | None, pass_env: Iterable[str] = (), allow: WorkerAllowances | None = None
    ) -> WorkerCommand:
        """The configuration's worker command, or Claude Code when it names none; ``pass_env``:
        the variables ``setup --worker-env`` named; ``allow``: what setup allowed beyond the
        default (rule 5). A command this program cannot run as written (an unknown placeholder, an
        unreadable MCP file) is a ``UserError``: one line, ``EXIT_CONFIG``, before anything starts."""
        given = tuple(argv or ())
        allowed = allow or WorkerAllowances()
        try:
            if given:
                if allowed.named():
                    raise ValueError(
                        "--worker-allow-bash and --worker-mcp widen the default worker only; "
                        "a configured worker command's argv says everything it may do"
                    )
                return cls(argv=given, pass_env=tuple(pass_env))
            servers = {path: mcp_servers_of(Path(path)) for path in allowed.mcp_files}
            return cls.claude_code(pass_env=pass_env, bash=allowed.bash, mcp_files=servers)
        except ValueError as error:
            raise UserError(f"worker_command: {error}", EXIT_CONFIG) from None

    @classmethod
    def of(cls, configuration: Configuration) -> WorkerCommand:
        """The worker command ``configuration`` names (``configured``, from its fields)."""
        return cls.configured(
            configuration.worker_command, configuration.worker_env, configuration.worker_allow
        )

    @property
    def speaks_stream_json(self) -> bool:
        """Rule 3: the argv asks Claude Code's ``--input-format stream-json``."""
        return _option(self.argv, "--input-format") == STREAM_JSON

    @property
    def permission_mode(self) -> str:
        """Rule 3: the permission mode the argv asks for."""
        return _option(self.argv, "--permission-mode") or "default"

    def program_path(self) -> str | None:
        """Where the program the worker runs is found (on ``$PATH``, or at its path); None: nowhere."""
        program = self.argv[0] if self.argv else ""
        return shutil.which(program) if program else None

    def program_missing(self) -> str | None:
        """One line when the program the worker runs is not found (on ``$PATH``, or at its path),
        so a missing program is said before a request fails in public; None when it is there."""
        program = self.argv[0] if self.argv else ""
        if self.program_path() is not None:
            return None
        return (
            f"worker: the program {program!r} is not found on PATH; install it, or name another "
            "with setup --worker-command"
        )

    def render(self, *, prompt: str, mcp_config: Path, work_dir: Path) -> tuple[str, ...]:
        """The argv for one attempt."""
        values = {"prompt": prompt, "mcp_config": str(mcp_config), "work_dir": str(work_dir)}
        return tuple(
            _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), argument)
            for argument in self.argv
        )

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The worker's whole environment, from the connector's (rule 2)."""
        chosen = {name: value for name, value in environ.items() if name in ALLOWLIST}
        chosen.update({name: environ[name] for name in self.pass_env if name in environ})
        chosen.update(dict(self.env))
        for name in CONNECTOR_SECRETS:
            chosen.pop(name, None)
        return chosen


def mcp_servers_of(path: Path) -> tuple[str, ...]:
    """The server names an MCP config file gives (rule 5), or ``ValueError`` saying why not."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"the MCP config file {path} cannot be read: {error}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise ValueError(f"the MCP config file {path} names no server under mcpServers")
    if MCP_SERVER_NAME in servers:
        raise ValueError(
            f"the MCP config file {path} names a server {MCP_SERVER_NAME!r}: that name is the connector's"
        )
    return tuple(str(name) for name in servers)


def _option(argv: tuple[str, ...], name: str) -> str | None:
    """The value ``argv`` gives option ``name`` (``--name value`` or ``--name=value``), or None."""
    for index, argument in enumerate(argv):
        if argument == name and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith(name + "="):
            return argument[len(name) + 1 :]
    return None
