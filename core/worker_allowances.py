"""What a person allowed the default worker (Claude Code) beyond what it has by default, as the
configuration records it: by name, never by content.

By default the worker reads and edits files in its directory and calls the connector's tools;
it runs no command and reaches no other MCP server (``shell.worker.command``).

Rules:
1. ``bash`` holds Bash command patterns in Claude Code's permission-rule form without
   ``Bash(...)`` (``git status``, ``npm test *``), each allowing matching commands alone. A
   pattern is 1 to ``MAX_PATTERN`` characters without ``(``, ``)``, ``,`` or a control
   character, and not only spaces or ``*``: one allowing every command is refused.
2. ``mcp_files`` holds absolute paths of MCP config files whose servers the worker also starts,
   every tool allowed; their content is read when the command is built, never recorded here. A
   server there named ``connector`` is refused then: that name is the connector's own.
3. Each list keeps a value's first occurrence, in order, under the configuration's
   ``worker_allow`` key.
4. Pure: paths are checked as text only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_PATTERN = 200
KEY = "worker_allow"


@dataclass(frozen=True, slots=True)
class WorkerAllowances:
    """Rule 1 and 2's lists."""

    bash: tuple[str, ...] = ()
    mcp_files: tuple[str, ...] = ()

    def named(self) -> tuple[str, ...]:
        """What was allowed, by name, one entry each: ``Bash(PATTERN)`` and ``MCP servers of FILE``."""
        return (
            *(f"Bash({pattern})" for pattern in self.bash),
            *(f"MCP servers of {path}" for path in self.mcp_files),
        )


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a Bash pattern rule 1 allows, or None."""
    if not pattern or len(pattern) > MAX_PATTERN:
        return f"a Bash pattern is 1 to {MAX_PATTERN} characters, not {len(pattern)}"
    if any(character in "()," or ord(character) < 32 or ord(character) == 127 for character in pattern):
        return f"the Bash pattern {pattern!r} holds '(', ')', ',' or a control character"
    if not pattern.replace("*", "").strip():
        return f"the Bash pattern {pattern!r} allows every command: name another worker command instead"
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` is not an MCP config file rule 2 allows, or None."""
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
    recorded: Any,
    *,
    bash: tuple[str, ...],
    remove_bash: tuple[str, ...],
    mcp: tuple[str, ...],
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
