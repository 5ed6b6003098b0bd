"""``bin/connect doctor``'s verdicts: what each measured fact means -- ok, warning or failing --
and what a person should do about it. The shell measures (``shell.doctor``); these judge, and
``core.doctor_basecamp`` judges the token and Basecamp's answer.

Rules:
1. A check is a name, a verdict, what was found (``detail``) and what to do (``advice``, empty
   when nothing). The report is ``ok`` when no check fails: a warning does not stop the connector.
2. Failing is what makes ``run`` refuse to start or a request fail in public (a token Basecamp
   refuses, ``core.lasting_refusal``; creates refused with it, ``core.not_created`` rule 5; a
   disk below ``LOW_DISK_BYTES``; ...).
3. A warning is what a person should know while the connector still works (a token never
   refreshed or past expiry, a ledger a migration behind, a disk below ``DISK_WARNING_BYTES``, a
   clock more than ``SKEW_WARNING`` off Basecamp's, ...).
4. A lock held by a running connector is ok: doctor is read beside one, and takes no lock.
5. Pure: times come in as values; nothing here reads a file, a clock or the network.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.presentation import byte_size
from core.presentation.status_values import LOW_DISK_BYTES
from core.route_preflight import RouteFacts, route_advice, route_problem

DISK_WARNING_BYTES = 512 * 1024 * 1024
"""Below this much free space a warning; below ``LOW_DISK_BYTES`` (status's "nearly full")
failing: the connector's writes fail there first."""


class CheckStatus(StrEnum):
    ok = "ok"
    warning = "warning"
    failing = "failing"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report (rule 1)."""

    name: str
    status: CheckStatus
    detail: str
    advice: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": str(self.status), "detail": self.detail, "advice": self.advice}


def passed(checks: Sequence[Check]) -> bool:
    """True when nothing fails (rule 1)."""
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
    """The configuration file: it loads (owner-only, parses, validates) and names the account
    and agent asked for, when they were (``--account``/``--agent``)."""
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
    """``made_here``: the directory holds the connector's files, so a mode fix is the connector's
    advice to give; never for a shared, system or mistyped directory (``shell.private_files``)."""
    name = "state directory"
    if not exists:
        return _failing(name, f"{path} does not exist", "bin/connect setup creates it")
    if problem is not None and not made_here:
        return _failing(
            name, problem, "name the state directory bin/connect setup wrote (--state-dir, or "
            "--account and --agent); setup makes a new one owner-only",
        )  # fmt: skip
    if problem is not None:
        return _failing(name, problem, f"make it this user's own and owner-only: chmod 700 {path}")
    if not writable:
        return _failing(
            name, f"{path} is not writable by this user", "the connector writes its ledger and lock there"
        )
    return _ok(name, f"{path}: owner-only and writable")


class LedgerTrouble(StrEnum):
    """Why the ledger could not be opened read-only, as the shell found it."""

    out_of_date = "out_of_date"
    too_new = "too_new"
    busy = "busy"
    damaged = "damaged"
    unusable = "unusable"


@dataclass(frozen=True, slots=True)
class LedgerFacts:
    """The ledger as measured: absent, not openable (``trouble`` and the line it gave), or its
    schema version and what SQLite's integrity check said (``problems``; empty when "ok")."""

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
        return _failing(
            name,
            f"{path} is damaged ({pragma}: {facts.problems[0]}{more})",
            "stop the connector and restore the ledger from a copy",
        )
    if facts.version != facts.expected:  # opened read-only, so never: the opening refuses it
        return _failing(name, f"{path} is at schema {facts.version}, not {facts.expected}", "")
    return _ok(name, f"{path}: schema {facts.version} (current), {pragma} ok")


def disk_check(path: str, free_bytes: int | None, total_bytes: int | None) -> Check:
    name = "disk"
    if free_bytes is None or total_bytes is None:
        return _warning(name, f"the free space at {path} could not be measured", "")
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
    """Who holds the instance lock, as its metadata says (rule 4)."""
    name = "lock"
    if holder is None:
        return _ok(name, "free: no connector runs on this state directory")
    since = f"pid {holder.pid} since {holder.started_at}"
    if holder.present is False:
        return _ok(name, f"free: {since} held it and is gone (stopped without cleaning up, or killed)")
    if holder.configuration_problem:
        return _warning(
            name,
            f"held by {since}; its re-read configuration file is unusable: {holder.configuration_problem}",
            "fix the configuration file: that connector authorizes nothing until it is usable",
        )
    return _ok(name, f"held by {since}: a connector runs here")


def pair_check(ids: tuple[int, int], here: str, elsewhere: str | None, problem: str | None) -> Check:
    """Whether this state directory is the one that serves its (account, agent) on this machine."""
    name = "pair"
    account, agent = ids
    if problem is not None:
        return _failing(name, problem, "")
    if elsewhere is not None:
        return _failing(
            name,
            f"account {account} agent {agent} is served from {elsewhere}, not {here}: run refuses here",
            f"run that one, or move the pair here: bin/connect setup --state-dir {here} --force",
        )
    return _ok(name, f"account {account} agent {agent} is served from this state directory")


# -- the routes and the worker --------------------------------------------------------------


def route_checks(routes: Sequence[RouteFacts]) -> list[Check]:
    """One check per route; a warning when there is none (the connector would serve nobody)."""
    if not routes:
        return [
            _warning(
                "routes",
                "none: no project's requests can run",
                "add one: bin/connect setup --route PROJECT=DIRECTORY",
            )
        ]
    return [_route_check(route) for route in routes]


def _route_check(route: RouteFacts) -> Check:
    """The route's check: ``core.route_preflight``'s judgement, in its words."""
    name = f"route {route.project_id}"
    problem = route_problem(route)
    if problem is not None:
        return _failing(name, problem, route_advice(route))
    return _ok(name, f"{route.directory} exists and is writable")


def worker_check(program: str, found_at: str | None, problem: str | None) -> Check:
    name = "worker"
    advice = "install it, or name another: bin/connect setup --worker-command 'PROGRAM ARGS'"
    if problem is not None:
        return _failing(name, problem, "fix it: bin/connect setup --worker-command 'PROGRAM ARGS'")
    if found_at is None:
        where = "at that path" if "/" in program else "on PATH"
        return _failing(name, f"the program {program!r} is not found {where}", advice)
    return _ok(name, f"{program} found at {found_at}")


@dataclass(frozen=True, slots=True)
class Handshake:
    """``--deep``: a real spawn of the worker command, as measured. ``ended``: how it ended by
    itself (e.g. "exited 1"), "" when doctor ended it."""

    initialized: bool
    seconds: float
    spawn_failed: str = ""
    timed_out: bool = False
    ended: str = ""
    stderr_tail: str = ""
    signals: tuple[str, ...] = ()
    survivors: bool = False


HANDSHAKE_ADVICE = (
    "run the worker command by hand: it must start the MCP server named in the file its "
    "{mcp_config} placeholder names (Claude Code: --mcp-config {mcp_config})"
)


def handshake_check(facts: Handshake) -> Check:
    """The worker, spawned as the dispatcher spawns it, completed the MCP handshake with
    ``bin/connect mcp``, and its process group was ended."""
    name = "worker handshake"
    if facts.spawn_failed:
        return _failing(name, f"the worker could not be started: {facts.spawn_failed}", HANDSHAKE_ADVICE)
    said = f": {facts.stderr_tail}" if facts.stderr_tail else ""
    if not facts.initialized:
        if facts.timed_out:
            found = f"no MCP handshake with bin/connect mcp within {facts.seconds:.0f} s{said}"
            return _failing(name, found, HANDSHAKE_ADVICE)
        found = f"the worker {facts.ended or 'ended'} before completing the MCP handshake{said}"
        return _failing(name, found, HANDSHAKE_ADVICE)
    ending = ", ".join(facts.signals) if facts.signals else "nothing left to signal"
    done = f"completed the MCP handshake with bin/connect mcp in {facts.seconds:.1f} s"
    if facts.survivors:
        return _warning(
            name,
            f"{done}; members of its process group outlived SIGKILL",
            "look for the worker's stray processes",
        )
    return _ok(name, f"{done}; its process group ended ({ending})")
