"""What a worker may be given beyond what it has by default, by name, never by content: the
environment variables it gets, and what a person allowed the default worker (Claude Code).

A worker gets from the connector's environment only the variables named, never by prefix:
``ALLOWLIST``, and those ``setup --worker-env NAME`` adds: never the connector's own (the task
token's, the client secret's, any ``BASECAMP_`` name) nor the dynamic loader's (``LD_``). By default the
worker reads and edits files in its directory and calls the connector's tools; it runs no command
and reaches no other MCP server (``shell.worker.command``). ``worker_allow`` widens that: ``bash``
holds Bash patterns in Claude Code's permission-rule form without ``Bash(...)`` (``git status``,
``npm test *``), 1 to ``MAX_PATTERN`` characters, each allowing matching commands alone (one
allowing every command is refused); ``mcp_files`` holds absolute paths of MCP config files whose
servers the worker also starts, every tool allowed (a server there named ``connector`` is refused
when the command is built). Each list keeps a value's first occurrence, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.task_token import TASK_TOKEN_ENV

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


def pattern_problem(pattern: str) -> str | None:
    if not pattern or len(pattern) > MAX_PATTERN:
        return f"a Bash pattern is 1 to {MAX_PATTERN} characters, not {len(pattern)}"
    if any(character in "()," or ord(character) < 32 or ord(character) == 127 for character in pattern):
        return f"the Bash pattern {pattern!r} holds '(', ')', ',' or a control character"
    if not pattern.replace("*", "").strip():
        return f"the Bash pattern {pattern!r} allows every command: name another worker command instead"
    return None


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
