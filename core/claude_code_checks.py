"""``bin/connect doctor``'s verdicts on the real worker, Claude Code: the version it reports and
whether it can authenticate, judged from what Claude Code itself printed (``shell.doctor.local``
measures, without a model call).

Rules:
1. A version older than ``OLDEST_SUPPORTED`` is failing (the driver relies on flags and fields
   it added), and so is output that names no version: the driver cannot know what it runs.
2. ``claude auth status``: logged in is ok, naming how; not logged in is failing, with how to
   give it a key by name (``setup --worker-env``); an answer it cannot read is a warning: doctor
   could not tell, and ``run`` will find out.
3. Pure: the shell passes in what the program printed and how it exited.
4. ``allowances_check`` is always ok: it says what the default worker may do beyond its defaults
   (``core.worker_allowances``), by name, or that it has its defaults only.
"""

from __future__ import annotations

import json
import re

from core.doctor import Check, CheckStatus

OLDEST_SUPPORTED = (2, 1, 0)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
KEY_ADVICE = (
    "give the worker a key by name: export ANTHROPIC_API_KEY in the connector's environment and "
    "run bin/connect setup --worker-env ANTHROPIC_API_KEY (or log Claude Code in as this user: "
    "claude auth login)"
)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def version_check(printed: str, exit_status: int | None) -> Check:
    """Rule 1."""
    name = "worker version"
    found = _VERSION.search(printed) if exit_status == 0 else None
    if found is None:
        said = " ".join(printed.split())[:120] or "nothing"
        return Check(
            name,
            CheckStatus.failing,
            f"the worker program did not say its version (exit {exit_status}): {said}",
            "run it by hand: claude --version",
        )
    version = tuple(int(part) for part in found.groups())
    if version < OLDEST_SUPPORTED:
        return Check(
            name,
            CheckStatus.failing,
            f"Claude Code {_dotted(version)} is older than {_dotted(OLDEST_SUPPORTED)}, "
            "the oldest the driver supports",
            "update it: npm install -g @anthropic-ai/claude-code",
        )
    return Check(name, CheckStatus.ok, f"Claude Code {_dotted(version)}")


def auth_check(printed: str, exit_status: int | None) -> Check:
    """Rule 2."""
    name = "worker login"
    try:
        status = json.loads(printed)
    except ValueError:
        status = None
    if not isinstance(status, dict) or exit_status not in (0, 1):
        return Check(
            name,
            CheckStatus.warning,
            f"claude auth status said nothing doctor can read (exit {exit_status})",
            "run it by hand, with the worker's environment: claude auth status",
        )
    method = str(status.get("authMethod") or "none")
    if status.get("loggedIn") is True and exit_status == 0:
        source = status.get("apiKeySource")
        how = f"{method}, from {source}" if source else method
        return Check(name, CheckStatus.ok, f"Claude Code can authenticate ({how})")
    return Check(name, CheckStatus.failing, f"Claude Code is not logged in (auth method {method})",
                 KEY_ADVICE)


DEFAULTS = "its defaults only: it reads and edits files in its directory and calls the connector's tools"


def allowances_check(named: tuple[str, ...]) -> Check:
    """Rule 4."""
    if not named:
        return Check("worker allowances", CheckStatus.ok, DEFAULTS)
    return Check("worker allowances", CheckStatus.ok, f"beyond its defaults: {'; '.join(named)}")
