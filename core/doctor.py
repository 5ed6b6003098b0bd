"""``bin/connect doctor``'s verdicts: what each measured fact (``shell.doctor``) means -- ok,
warning or failing -- and what a person should do about it.

Failing is what makes ``run`` refuse to start or a request fail in public (a token Basecamp
refuses, a disk below status's "nearly full", a Claude Code too old to drive); a warning is what a
person should know while the connector still works (a bare token, a ledger a migration behind, a
clock off Basecamp's, no inbox for this principal). The report is ``ok`` when no check fails. A
lock held by a running connector is ok: doctor is read beside one, and takes no lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

from core.configuration import RouteFacts, route_advice, route_problem
from core.intake_status import InboxVerdict
from core.posting import TokenOutage
from core.presentation import byte_size
from core.presentation.status_values import LOW_DISK_BYTES
from core.timestamps import format_timestamp

DISK_WARNING_BYTES = 512 * 1024 * 1024
SKEW_WARNING = timedelta(seconds=60)


class CheckStatus(StrEnum):
    ok = "ok"
    warning = "warning"
    failing = "failing"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: what was found (``detail``) and what to do (``advice``)."""
    name: str
    status: CheckStatus
    detail: str
    advice: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": str(self.status), "detail": self.detail, "advice": self.advice}


def passed(checks: Sequence[Check]) -> bool:
    return all(check.status != CheckStatus.failing for check in checks)


def report(checks: Sequence[Check]) -> dict[str, Any]:
    """``--json``: ``{checks: [{name, status, detail, advice}], ok}``."""
    return {"checks": [check.to_json() for check in checks], "ok": passed(checks)}


def _ok(name: str, detail: str) -> Check:
    return Check(name, CheckStatus.ok, detail)


def _warning(name: str, detail: str, advice: str) -> Check:
    return Check(name, CheckStatus.warning, detail, advice)


def _failing(name: str, detail: str, advice: str) -> Check:
    return Check(name, CheckStatus.failing, detail, advice)


# -- the configuration and the state directory ------------------------------------------------
SETUP_ADVICE = "fix it with bin/connect setup (bin/connect setup --show prints what it holds)"


def configuration_check(
    path: str, problem: str | None, named: tuple[int, int], asked: tuple[int | None, int | None]
) -> Check:
    """It loads, and names the account and agent asked for (``--account``/``--agent``), if any."""
    name = "configuration"
    if problem is not None:
        return _failing(name, problem, SETUP_ADVICE)
    account, agent = named
    if asked[0] is not None and asked[1] is not None and (account, agent) != asked:
        return _failing(
            name,
            f"{path} names account {account} and agent {agent}, not account {asked[0]} and agent {asked[1]}",
            "give that pair's own state directory (--state-dir), or run bin/connect setup for it",
        )
    return _ok(name, f"{path}: account {account}, agent {agent}")


def state_directory_check(
    path: str, exists: bool, problem: str | None, writable: bool, *, made_here: bool = True
) -> Check:
    """A mode fix is advised only for a directory ``made_here``, never a shared or mistyped one."""
    name = "state directory"
    if not exists:
        return _failing(name, f"{path} does not exist", "bin/connect setup creates it")
    if problem is not None and not made_here:
        return _failing(name, problem, "name the state directory bin/connect setup wrote (--state-dir, or "
                        "--account and --agent); setup makes a new one owner-only")
    if problem is not None:
        return _failing(name, problem, f"make it this user's own and owner-only: chmod 700 {path}")
    if not writable:
        return _failing(name, f"{path} is not writable by this user",
                        "the connector writes its ledger and lock there")
    return _ok(name, f"{path}: owner-only and writable")


class LedgerTrouble(StrEnum):
    out_of_date = "out_of_date"
    too_new = "too_new"
    busy = "busy"
    damaged = "damaged"
    unusable = "unusable"


@dataclass(frozen=True, slots=True)
class LedgerFacts:
    """The ledger: absent, not openable (``trouble``), or its schema and integrity check's words."""
    exists: bool
    trouble: LedgerTrouble | None = None
    message: str = ""
    version: int = 0
    expected: int = 0
    problems: tuple[str, ...] = ()
    full_check: bool = False


def ledger_check(path: str, facts: LedgerFacts) -> Check:
    name = "ledger"
    if not facts.exists:
        return _ok(name, f"{path} is not created yet: bin/connect run creates it")
    match facts.trouble:
        case LedgerTrouble.out_of_date:
            return _warning(name, facts.message, "start the connector once (bin/connect run) to migrate it")
        case LedgerTrouble.busy:
            return _warning(name, facts.message, "run bin/connect doctor again")
        case LedgerTrouble.too_new:
            return _failing(name, facts.message, "run the newer program that wrote it")
        case LedgerTrouble.damaged:
            return _failing(name, facts.message, "stop the connector and restore the ledger from a copy")
        case LedgerTrouble.unusable:
            return _failing(name, facts.message, "")
    pragma = "integrity_check" if facts.full_check else "quick_check"
    if facts.problems:
        more = f" and {len(facts.problems) - 1} more" if len(facts.problems) > 1 else ""
        found = f"{path} is damaged ({pragma}: {facts.problems[0]}{more})"
        return _failing(name, found, "stop the connector and restore the ledger from a copy")
    if facts.version != facts.expected:  # opened read-only, so never: the opening refuses it
        return _failing(name, f"{path} is at schema {facts.version}, not {facts.expected}", "")
    return _ok(name, f"{path}: schema {facts.version} (current), {pragma} ok")


def disk_check(path: str, measured: tuple[int, int] | None) -> Check:
    """``measured``: the free and whole bytes where the ledger lives."""
    name = "disk"
    if measured is None:
        return _warning(name, f"the free space at {path} could not be measured", "")
    free_bytes, total_bytes = measured
    found = f"{byte_size(free_bytes)} free of {byte_size(total_bytes)} where the ledger lives"
    if free_bytes < LOW_DISK_BYTES:
        return _failing(name, found, "free some space: the connector's writes fail there first")
    if free_bytes < DISK_WARNING_BYTES:
        return _warning(name, found, "free some space before the connector's writes fail")
    return _ok(name, found)


@dataclass(frozen=True, slots=True)
class LockHolder:
    """What the lock file's metadata says (diagnostic: the flock is the truth)."""
    pid: int
    started_at: str
    present: bool | None  # None: a process is there, not provably ours
    configuration_problem: str = ""


def lock_check(holder: LockHolder | None) -> Check:
    name = "lock"
    if holder is None:
        return _ok(name, "free: no connector runs on this state directory")
    since = f"pid {holder.pid} since {holder.started_at}"
    if holder.present is False:
        return _ok(name, f"free: {since} held it and is gone (stopped without cleaning up, or killed)")
    if holder.configuration_problem:
        found = f"held by {since}; its re-read configuration file is unusable: {holder.configuration_problem}"
        advice = "fix the configuration file: that connector authorizes nothing until it is usable"
        return _warning(name, found, advice)
    return _ok(name, f"held by {since}: a connector runs here")


def pair_check(ids: tuple[int, int], here: str, elsewhere: str | None, problem: str | None) -> Check:
    name = "pair"
    account, agent = ids
    if problem is not None:
        return _failing(name, problem, "")
    if elsewhere is not None:
        return _failing(
            name, f"account {account} agent {agent} is served from {elsewhere}, not {here}: run refuses here",
            f"run that one, or move the pair here: bin/connect setup --state-dir {here} --force",
        )
    return _ok(name, f"account {account} agent {agent} is served from this state directory")


# -- the routes and the worker --------------------------------------------------------------
def route_checks(routes: Sequence[RouteFacts]) -> list[Check]:
    if not routes:
        return [_warning("routes", "none: no project's requests can run",
                         "add one: bin/connect setup --route PROJECT=DIRECTORY")]
    return [_route_check(route) for route in routes]


def _route_check(route: RouteFacts) -> Check:
    problem = route_problem(route)
    if problem is not None:
        return _failing(f"route {route.project_id}", problem, route_advice(route))
    return _ok(f"route {route.project_id}", f"{route.directory} exists and is writable")


def worker_check(program: str, found_at: str | None, problem: str | None) -> Check:
    if problem is not None:
        return _failing("worker", problem, "fix it: bin/connect setup --worker-command 'PROGRAM ARGS'")
    if found_at is None:
        where = "at that path" if "/" in program else "on PATH"
        return _failing("worker", f"the program {program!r} is not found {where}",
                        "install it, or name another: bin/connect setup --worker-command 'PROGRAM ARGS'")
    return _ok("worker", f"{program} found at {found_at}")


@dataclass(frozen=True, slots=True)
class Handshake:
    """``--deep``'s spawn of the worker. ``ended``: how it ended itself ("exited 1"), or ""."""
    initialized: bool
    seconds: float
    spawn_failed: str = ""
    timed_out: bool = False
    ended: str = ""
    stderr_tail: str = ""
    signals: tuple[str, ...] = ()
    survivors: bool = False
    strays: int = 0  # processes it started outside its group (a session of their own), ended after it
    strays_survived: bool = False


HANDSHAKE_ADVICE = ("run the worker command by hand: it must start the MCP server named in the file its "
                    "{mcp_config} placeholder names (Claude Code: --mcp-config {mcp_config})")


def handshake_check(facts: Handshake) -> Check:
    name = "worker handshake"
    if facts.spawn_failed:
        return _failing(name, f"the worker could not be started: {facts.spawn_failed}", HANDSHAKE_ADVICE)
    said = f": {facts.stderr_tail}" if facts.stderr_tail else ""
    if not facts.initialized:
        if facts.timed_out:
            found = f"no MCP handshake with bin/connect mcp within {facts.seconds:.0f} s{said}"
        else:
            found = f"the worker {facts.ended or 'ended'} before completing the MCP handshake{said}"
        return _failing(name, found + _strays(facts), HANDSHAKE_ADVICE)
    ending = ", ".join(facts.signals) if facts.signals else "nothing left to signal"
    done = f"completed the MCP handshake with bin/connect mcp in {facts.seconds:.1f} s"
    if facts.survivors or facts.strays_survived:
        who = "members of its process group" if facts.survivors else "processes it started outside its group"
        return _warning(name, f"{done}; {who} outlived SIGKILL", "look for the worker's stray processes")
    if facts.strays:
        return _warning(name, f"{done}; its process group ended ({ending}){_strays(facts)}",
                        "keep what the worker starts in its process group (no setsid, no daemon): the "
                        "connector ends it with its attempt only while it keeps the attempt's environment")
    return _ok(name, f"{done}; its process group ended ({ending})")


def _strays(facts: Handshake) -> str:
    if not facts.strays:
        return ""
    left = "1 process" if facts.strays == 1 else f"{facts.strays} processes"
    ended = "found, but not all ended by SIGKILL" if facts.strays_survived else "found and ended too"
    return f"; it left {left} outside its group (a session of its own), {ended}"


# -- the token and Basecamp's answer ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AnsweredAs:
    person_id: int
    person_name: str


@dataclass(frozen=True, slots=True)
class TokenRefused:
    """Basecamp answered 401."""


@dataclass(frozen=True, slots=True)
class NotAsked:
    reason: str


@dataclass(frozen=True, slots=True)
class LastingRefused:
    """Basecamp answered a 4xx no retry changes; ``fix`` says what to do."""
    status: int
    fix: str


Identity = AnsweredAs | TokenRefused | LastingRefused | NotAsked


@dataclass(frozen=True, slots=True)
class TokenFacts:
    """The token file as read: its problem (naming no secret), or its expiry (None: a bare token)."""
    file: str
    problem: str | None = None
    expires_at: datetime | None = None
    outage: TokenOutage | None = None  # the ledger's word: creates refused (401) and waiting


LOGIN_ADVICE = "run bin/connect login for the agent (it stores a token the connector refreshes)"


def token_check(token: TokenFacts, agent_id: int, identity: Identity, now: datetime) -> Check:
    name = "token"
    if token.problem is not None:
        return _failing(name, token.problem, LOGIN_ADVICE)
    if token.outage is not None:
        return _outage_check(token, token.outage, agent_id, identity)
    expired = token.expires_at is not None and now >= token.expires_at
    held = f"the token in {token.file}"
    match identity:
        case TokenRefused() if expired and token.expires_at is not None:
            expiry = format_timestamp(token.expires_at)
            found = f"{held} expired at {expiry}; the connector refreshes it before its next request"
            return _warning(name, found, f"if it cannot, {LOGIN_ADVICE}")
        case TokenRefused():
            return _failing(name, f"Basecamp refused {held} (401)", LOGIN_ADVICE)
        case LastingRefused(status, fix):
            return _failing(name, f"Basecamp refused the request with {held} (HTTP {status}); no retry "
                            "changes that, so the connector does not start (exit 3)", fix)
        case NotAsked(reason):
            return _warning(name, f"not asked who {held} acts as: {reason}", "")
        case AnsweredAs(person_id, person_name) if person_id != agent_id:
            found = f"{held} acts as person {person_id} ({person_name}), not the agent {agent_id}"
            return _failing(name, found, f"give the agent's own token: {LOGIN_ADVICE}")
        case AnsweredAs(_, person_name):
            acts = f"acts as the agent {agent_id} ({person_name})"
            if token.expires_at is None:
                return _warning(name, f"{acts}; a bare token, never refreshed: Launchpad's tokens expire "
                                "after two weeks", LOGIN_ADVICE)
            days = (token.expires_at - now) / timedelta(days=1)
            expiry = format_timestamp(token.expires_at)
            return _ok(name, f"{acts}; expires in {days:.1f} days ({expiry}), refreshed before then")
    raise AssertionError("an identity is answered, refused or not asked")  # pragma: no cover


def _outage_check(token: TokenFacts, outage: TokenOutage, agent_id: int, identity: Identity) -> Check:
    waiting = (f"the connector's create was refused (401, after its refresh) at {outage.since}; sending has "
               f"stopped and {outage.messages} message(s) wait, pending")
    if isinstance(identity, AnsweredAs) and identity.person_id == agent_id:
        return _warning("token", f"{waiting}; Basecamp answers the token in {token.file} as the agent now",
                        "the running connector sends them at its next read; start it if it is not running")
    return _failing("token", f"{waiting}; the token in {token.file} is not accepted as the agent",
                    LOGIN_ADVICE)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reach:
    """One request to Basecamp: its status, or why nothing answered; its ``Date`` and our clock then."""
    answered: bool
    status: int = 0
    error: str = ""
    server_date: datetime | None = None
    now: datetime | None = None
    asked: bool = True  # False: there was no usable token to ask with (``error`` says why)


def server_date(header: str) -> datetime | None:
    try:
        moment = parsedate_to_datetime(header.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo is not None else None


def basecamp_check(base_url: str, reach: Reach) -> Check:
    name = "basecamp"
    if not reach.asked:
        return _warning(name, f"{base_url} not asked: {reach.error}", "")
    if not reach.answered:
        return _failing(name, f"{base_url} did not answer: {reach.error}",
                        "check the network, and the configured base_url (bin/connect setup --base-url)")
    answered = f"{base_url} answered (HTTP {reach.status})"
    if reach.server_date is None or reach.now is None:
        return _ok(name, f"{answered}; it sent no Date to compare this machine's clock with")
    skew = (reach.now - reach.server_date).total_seconds()
    if abs(skew) > SKEW_WARNING.total_seconds():
        ahead = "ahead of" if skew > 0 else "behind"
        return _warning(name, f"{answered}; this machine's clock is {abs(skew):.0f} s {ahead} Basecamp's",
                        "synchronize the clock (NTP): token expiry and Retry-After are read by it")
    return _ok(name, f"{answered}; this machine's clock is within {abs(skew):.0f} s of Basecamp's")


# -- the inbox and Claude Code ----------------------------------------------------------------
def inbox_check(verdict: InboxVerdict | None, why: str = "") -> Check:
    """Never failing: without the inbox (403: agents only) or while it fails, run hears by the feed
    and the live lane alone. ``None``: not asked."""
    name = "inbox"
    match verdict:
        case InboxVerdict.available:
            return _ok(name, "available to this token: what is addressed to the agent is heard even when the "
                       "feed does not bring it")
        case InboxVerdict.not_for_principal:
            return _warning(name, "Basecamp serves no inbox to this token's principal (403: agents only)",
                            "intake hears by the feed and the live lane alone: a braked event, or one past a "
                            "stale feed position, can go unheard; give the connector an agent principal's "
                            "token")
        case InboxVerdict.failing:
            return _warning(name, f"the inbox could not be read: {why}",
                            "run starts and reads it again; see bin/connect status")
        case None:
            return _warning(name, f"not asked: {why or 'the token was not usable'}",
                            "fix the token check first")


OLDEST_SUPPORTED = (2, 1, 0)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
KEY_ADVICE = ("give the worker a key by name: export ANTHROPIC_API_KEY in the connector's environment and "
              "run bin/connect setup --worker-env ANTHROPIC_API_KEY (for a subscription: claude setup-token, "
              "then the same with CLAUDE_CODE_OAUTH_TOKEN; a login kept in ~/.claude is not the worker's)")


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def version_check(printed: str, exit_status: int | None) -> Check:
    """Failing for a version older than ``OLDEST_SUPPORTED``, or none: the driver relies on its flags."""
    name = "worker version"
    found = _VERSION.search(printed) if exit_status == 0 else None
    if found is None:
        said = " ".join(printed.split())[:120] or "nothing"
        found_words = f"the worker program did not say its version (exit {exit_status}): {said}"
        return _failing(name, found_words, "run it by hand: claude --version")
    version = tuple(int(part) for part in found.groups())
    if version < OLDEST_SUPPORTED:
        older = f"Claude Code {_dotted(version)} is older than {_dotted(OLDEST_SUPPORTED)}"
        advice = "update it: npm install -g @anthropic-ai/claude-code"
        return _failing(name, f"{older}, the oldest the driver supports", advice)
    return _ok(name, f"Claude Code {_dotted(version)}")


def auth_check(printed: str, exit_status: int | None) -> Check:
    """``claude auth status``: logged in is ok, not logged in failing, an unreadable answer a warning."""
    name = "worker login"
    try:
        status = json.loads(printed)
    except ValueError:
        status = None
    if not isinstance(status, dict) or exit_status not in (0, 1):
        unread = f"claude auth status said nothing doctor can read (exit {exit_status})"
        return _warning(name, unread, "run it by hand, with the worker's environment: claude auth status")
    method = str(status.get("authMethod") or "none")
    if status.get("loggedIn") is True and exit_status == 0:
        source = status.get("apiKeySource")
        how = f"{method}, from {source}" if source else method
        return _ok(name, f"Claude Code can authenticate ({how})")
    return _failing(name, f"Claude Code is not logged in (auth method {method})", KEY_ADVICE)


DEFAULTS = "its defaults only: it reads and edits files in its directory and calls the connector's tools"


def allowances_check(told: tuple[str, ...], allowed_tools: str) -> Check:
    """``told``: ``shell.worker.command.allowances_told``, which names the exact value when widened."""
    if told:
        return _ok("worker allowances", f"beyond its defaults: {'; '.join(told)}")
    return _ok("worker allowances", f"{DEFAULTS} (--allowed-tools {allowed_tools})")
