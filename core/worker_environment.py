"""What a worker's environment may be made of: variable names, never prefixes, never values.

Rules:
1. ``ALLOWLIST`` names each variable a worker gets from the connector's environment as it is;
   there is no prefix (no ``XDG_*``, no ``LC_*``): a variable nobody named is not passed.
2. ``setup --worker-env NAME`` adds a name (the configuration records names, never values);
   a name is ``[A-Za-z_][A-Za-z0-9_]*`` and is never the task token's variable.
3. Pure: names in, problem lines out.
"""

from __future__ import annotations

import re

from core.task_token import TASK_TOKEN_ENV

ALLOWLIST = frozenset(
    {
        "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "USER", "LOGNAME",
        "SHELL", "TMPDIR", "TZ",
    }
)  # fmt: skip
CONNECTOR_SECRETS = frozenset({TASK_TOKEN_ENV})
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def variable_name_problem(name: str) -> str | None:
    """One line when ``name`` cannot be passed to a worker (rule 2); None when it can."""
    if _VARIABLE.fullmatch(name) is None:
        return f"{name!r} is not an environment variable name"
    if name in CONNECTOR_SECRETS:
        return f"{name} is the connector's own and is never handed to a worker"
    return None
