"""What a worker may be given beyond what it has by default, by name, never by content: the
environment variables it gets, and what a person allowed the default worker (Claude Code).

A worker gets from the connector's environment only the variables named, never by prefix:
``ALLOWLIST``, and those ``setup --worker-env NAME`` adds: never the connector's own (the task
token's, the client secret's, any ``BASECAMP_`` name) nor the dynamic loader's (``LD_``). By default the
worker reads and edits files in its directory and calls the connector's tools; it runs no command
and reaches no other MCP server (``shell.worker.command``). ``worker_allow`` widens that: ``bash``
holds Bash patterns in Claude Code's permission-rule form without ``Bash(...)`` (``git status``,
``pytest tests/unit``, the prefix form ``git diff:*``), 1 to ``MAX_PATTERN`` characters; one that
allows every command is refused (a wildcard or empty command, a shell, a wrapper that runs its
arguments, an interpreter given code or a wildcard), and one that runs the repository's code, which
the worker may edit, is accepted but ``gives`` says it is every command. ``mcp_files`` holds
absolute paths of MCP config files whose servers the worker also starts, every tool allowed, each
server named in ``SERVER_NAME``'s alphabet and never ``connector``. ``allowed_tools`` is the one
builder of Claude Code's ``--allowed-tools`` value, from parts checked again as it builds. Each list
keeps a value's first occurrence, in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.task_token import TASK_TOKEN_ENV

MCP_SERVER_NAME = "connector"  # in the worker's session config: its tools are mcp__connector__*

ALLOWLIST = frozenset({
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR",
    "TZ",
})  # fmt: skip
CLIENT_SECRET_ENV = "BASECAMP_CLIENT_SECRET"  # noqa: S105 -- the variable's name
CONNECTOR_SECRETS = frozenset({TASK_TOKEN_ENV, CLIENT_SECRET_ENV})
CONNECTOR_PREFIX = "BASECAMP_"
LOADER_PREFIX = "LD_"
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

MAX_PATTERN = 200
KEY = "worker_allow"


def variable_name_problem(name: str) -> str | None:
    if _VARIABLE.fullmatch(name) is None:
        return f"{name!r} is not an environment variable name"
    if name in CONNECTOR_SECRETS or name.startswith(CONNECTOR_PREFIX):
        return f"{name} is the connector's own and is never handed to a worker"
    if name.startswith(LOADER_PREFIX):
        return f"{name} steers the dynamic loader of every program the worker runs: never handed to a worker"
    return None


@dataclass(frozen=True, slots=True)
class WorkerAllowances:
    bash: tuple[str, ...] = ()
    mcp_files: tuple[str, ...] = ()

    def named(self) -> tuple[str, ...]:
        """What was allowed, by name, one entry each: ``Bash(PATTERN)`` and ``MCP servers of FILE``."""
        return (*(f"Bash({pattern})" for pattern in self.bash),
                *(f"MCP servers of {path}" for path in self.mcp_files))


PREFIX_FORM = ":*"  # Claude Code's "this prefix, then anything"
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"})
RUNS_ITS_ARGUMENTS = frozenset({
    "sudo", "su", "doas", "env", "xargs", "nohup", "nice", "ionice", "timeout", "time", "exec", "eval",
    "command", "builtin", "stdbuf", "setsid", "chroot", "unshare", "nsenter", "script", "strace", "ltrace",
    "watch",
})  # fmt: skip
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|php|lua)[0-9.]*|node|nodejs|deno|bun")
_CODE_OPTION = re.compile(r"-[A-Za-z]*[ceE][A-Za-z]*|--eval|--exec|--command")
RUNS_REPOSITORY_CODE = frozenset({
    "npm", "npx", "yarn", "pnpm", "make", "gmake", "cmake", "ninja", "pytest", "py.test", "tox", "nox",
    "cargo", "go", "gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "rake", "bundle", "just", "poetry", "uv",
    "pip", "pip3", "dotnet", "mix", "composer", "git",
})  # fmt: skip
EVERY_COMMAND = "this is every command"


def _words(pattern: str) -> list[str]:
    """The pattern's words, its prefix form's ``:*`` read as a wildcard word."""
    body = pattern.removesuffix(PREFIX_FORM)
    return [*body.split(), *(["*"] if pattern.endswith(PREFIX_FORM) else [])]


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def pattern_problem(pattern: str) -> str | None:
    if not pattern or len(pattern) > MAX_PATTERN:
        return f"a Bash pattern is 1 to {MAX_PATTERN} characters, not {len(pattern)}"
    if any(character in "()," or ord(character) < 32 or ord(character) == 127 for character in pattern):
        return f"the Bash pattern {pattern!r} holds '(', ')', ',' or a control character"
    every = f"the Bash pattern {pattern!r} allows every command: name another worker command instead"
    if PREFIX_FORM in pattern.removesuffix(PREFIX_FORM):
        return f"the Bash pattern {pattern!r} holds {PREFIX_FORM!r} before its end; Claude Code reads it last"
    words = _words(pattern)
    if not words or "*" in words[0]:
        return f"{every} (its command is a wildcard)"
    program = _program(words[0])
    if program in SHELLS:
        return f"{every} ({program} is a shell: it runs any command it is given)"
    if program in RUNS_ITS_ARGUMENTS:
        return f"{every} ({program} runs any command it is given)"
    if _INTERPRETER.fullmatch(program) and (
        any(_CODE_OPTION.fullmatch(word) for word in words[1:]) or "*" in "".join(words[1:2])
    ):
        return f"{every} ({program} runs any code it is given)"
    return None


def gives(pattern: str) -> str | None:
    """What an accepted pattern gives beyond its words, one line; None: the commands it matches."""
    words = _words(pattern)
    program = _program(words[0]) if words else ""
    relative = "/" in words[0] and not words[0].startswith("/") if words else False
    if program in RUNS_REPOSITORY_CODE or _INTERPRETER.fullmatch(program) or relative:
        return f"Bash({pattern}) runs the repository's code, which the worker may edit: {EVERY_COMMAND}"
    return None


SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def server_name_problem(name: str) -> str | None:
    if SERVER_NAME.fullmatch(name) is None:
        return (f"the MCP server name {name[:80]!r} is not 1 to 64 letters, digits, '-' or '_' (a comma, a "
                "parenthesis, a space or a colon would widen Claude Code's allowed tools)")
    if name == MCP_SERVER_NAME:
        return f"the MCP server name {MCP_SERVER_NAME!r} is the connector's"
    return None


MCP_FILE_MAX_BYTES = 1 << 20  # an MCP config names a few servers; core.json_input bounds its depth too


def servers_of(value: Any) -> tuple[str, ...] | str:
    """The server names a decoded MCP config file gives, or why it gives none the worker may have."""
    servers = value.get("mcpServers") if isinstance(value, dict) else None
    if not isinstance(servers, dict) or not servers:
        return "it names no server under mcpServers"
    for name in servers:
        if (problem := server_name_problem(name)) is not None:
            return problem
    return tuple(servers)


def allowed_tools(bash: Iterable[str], servers: Iterable[str]) -> str:
    """Claude Code's ``--allowed-tools`` value: the connector's server, then each pattern and server,
    every part checked again here (``ValueError``), so no text becomes a rule it was not checked as."""
    patterns, names = tuple(bash), tuple(servers)
    for problem in (*map(pattern_problem, patterns), *map(server_name_problem, names)):
        if problem is not None:
            raise ValueError(problem)
    rules = (f"mcp__{MCP_SERVER_NAME}", *(f"Bash({pattern})" for pattern in patterns),
             *(f"mcp__{name}" for name in names))
    return ",".join(rules)


def path_problem(path: str) -> str | None:
    if not path.startswith("/") or any(ord(character) < 32 for character in path):
        return f"an MCP config file is named by its absolute path, not {path!r}"
    return None


def _unique(values: list[str]) -> tuple[str, ...]:
    return tuple(value for index, value in enumerate(values) if value not in values[:index])


def read(value: Any) -> tuple[WorkerAllowances, tuple[str, ...]]:
    """The configuration's ``worker_allow`` (None: nothing allowed) and its problems, one line each."""
    if value is None:
        return WorkerAllowances(), ()
    if not isinstance(value, dict) or set(value) - {"bash", "mcp_files"}:
        return WorkerAllowances(), (f'{KEY}: expected {{"bash": [...], "mcp_files": [...]}}',)
    problems: list[str] = []
    lists: dict[str, list[str]] = {}
    for key, check in (("bash", pattern_problem), ("mcp_files", path_problem)):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            problems.append(f"{KEY}.{key}: expected a list of strings")
            items = []
        problems += [f"{KEY}.{key}: {line}" for item in items if (line := check(item)) is not None]
        lists[key] = items
    return WorkerAllowances(_unique(lists["bash"]), _unique(lists["mcp_files"])), tuple(problems)


def merged(
    recorded: Any, *, bash: tuple[str, ...], remove_bash: tuple[str, ...], mcp: tuple[str, ...],
    remove_mcp: tuple[str, ...],
) -> dict[str, list[str]]:
    """``recorded`` (the configuration's ``worker_allow``) with one setup's additions and removals."""
    kept = recorded if isinstance(recorded, dict) else {}

    def listed(key: str) -> list[str]:
        items = kept.get(key)
        return list(items) if isinstance(items, list) else []

    return {
        "bash": list(_unique([item for item in [*listed("bash"), *bash] if item not in remove_bash])),
        "mcp_files": list(_unique([item for item in [*listed("mcp_files"), *mcp] if item not in remove_mcp])),
    }


def to_mapping(allowances: WorkerAllowances) -> dict[str, list[str]]:
    return {"bash": list(allowances.bash), "mcp_files": list(allowances.mcp_files)}
