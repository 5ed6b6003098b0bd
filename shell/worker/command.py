"""The worker program's command: its argv template and its environment.

The worker is Claude Code by default, any program by configuration (``WorkerCommand``).

Rules:
1. ``argv`` may hold the placeholders ``{prompt}``, ``{mcp_config}`` and ``{work_dir}``,
   anywhere in an argument; they are replaced in one pass, so a value is never read again as
   a template. Any other ``{name}`` is refused, so a misspelt placeholder never reaches a
   worker as text. Other braces are left as they are.
2. The worker's environment is ``core.worker_environment.ALLOWLIST`` (names, never prefixes)
   taken from the connector's environment, plus exactly what the command's configuration names
   (``pass_env`` values copied -- ``setup --worker-env NAME`` -- and ``env`` values set). The
   task token's variable can be neither: the token is never in a worker's environment (nor its
   argv).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from core.dispatch_prompt import DISPATCH_TOOLS, tool_name
from core.worker_environment import ALLOWLIST, CONNECTOR_SECRETS, variable_name_problem
from shell.errors import EXIT_CONFIG, UserError

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
    ) -> WorkerCommand:
        """Claude Code in print mode, with only the connector's MCP server and its dispatch tools."""
        return cls(
            argv=(
                program,
                "-p",
                "{prompt}",
                "--mcp-config",
                "{mcp_config}",
                "--strict-mcp-config",
                "--output-format",
                "json",
                "--allowedTools",
                ",".join(tool_name(tool) for tool in DISPATCH_TOOLS),
            ),
            env=tuple(sorted((env or {}).items())),
            pass_env=tuple(pass_env),
        )

    @classmethod
    def configured(cls, argv: Iterable[str] | None, pass_env: Iterable[str] = ()) -> WorkerCommand:
        """The configuration's worker command, or Claude Code when it names none; ``pass_env``:
        the variables ``setup --worker-env`` named. A command this program cannot run as written
        (an unknown placeholder) is a ``UserError``: one line, ``EXIT_CONFIG``, before anything
        starts."""
        given = tuple(argv or ())
        try:
            return cls(argv=given, pass_env=tuple(pass_env)) if given else cls.claude_code(pass_env=pass_env)
        except ValueError as error:
            raise UserError(f"worker_command: {error}", EXIT_CONFIG) from None

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
