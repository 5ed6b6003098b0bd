"""``bin/connect doctor``'s verdicts on the token and on Basecamp's answer: who the token acts
as, whether it lapsed, and whether Basecamp answers with a clock near this machine's. The
rules are ``core.doctor``'s; ``shell.doctor.remote`` measures."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from core.doctor import Check, _failing, _ok, _warning
from core.posting import TokenOutage
from core.timestamps import format_timestamp

SKEW_WARNING = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class AnsweredAs:
    """Basecamp said who the token acts as."""

    person_id: int
    person_name: str


@dataclass(frozen=True, slots=True)
class TokenRefused:
    """Basecamp answered 401."""


@dataclass(frozen=True, slots=True)
class NotAsked:
    """Basecamp did not say (``reason``: why)."""

    reason: str


@dataclass(frozen=True, slots=True)
class LastingRefused:
    """Basecamp answered a 4xx no retry changes (``core.lasting_refusal``); ``fix`` says what to do."""

    status: int
    fix: str


Identity = AnsweredAs | TokenRefused | LastingRefused | NotAsked


@dataclass(frozen=True, slots=True)
class TokenFacts:
    """The token file as read: its problem (one line naming no secret), or its kind -- a bare
    token (``expires_at`` None) or the login's credentials (their expiry)."""

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
    match identity:
        case TokenRefused() if expired and token.expires_at is not None:
            return _warning(
                name,
                f"the token in {token.file} expired at {format_timestamp(token.expires_at)}; the "
                "connector refreshes it before its next request",
                f"if it cannot, {LOGIN_ADVICE}",
            )
        case TokenRefused():
            return _failing(name, f"Basecamp refused the token in {token.file} (401)", LOGIN_ADVICE)
        case LastingRefused(status, fix):
            return _failing(
                name, f"Basecamp refused the request with the token in {token.file} (HTTP {status}); "
                "no retry changes that, so the connector does not start (exit 3)", fix,
            )  # fmt: skip
        case NotAsked(reason):
            return _warning(name, f"not asked who the token in {token.file} acts as: {reason}", "")
        case AnsweredAs(person_id, person_name) if person_id != agent_id:
            return _failing(
                name,
                f"the token in {token.file} acts as person {person_id} ({person_name}), "
                f"not the agent {agent_id}",
                f"give the agent's own token: {LOGIN_ADVICE}",
            )
        case AnsweredAs(_, person_name):
            return _acting_as_agent(token, f"acts as the agent {agent_id} ({person_name})", now)
    raise AssertionError("an identity is answered, refused or not asked")  # pragma: no cover


def _outage_check(token: TokenFacts, outage: TokenOutage, agent_id: int, identity: Identity) -> Check:
    """``core.not_created`` rule 5 in the ledger: the running connector's creates were refused
    (401, after its refresh) and wait. Failing, unless Basecamp now answers the token as the
    agent (then the connector sends them at its next read: a warning)."""
    waiting = (
        f"the connector's create was refused (401, after its refresh) at {outage.since}; sending has "
        f"stopped and {outage.messages} message(s) wait, pending"
    )
    match identity:
        case AnsweredAs(person_id, _) if person_id == agent_id:
            return _warning(
                "token",
                f"{waiting}; Basecamp answers the token in {token.file} as the agent now",
                "the running connector sends them at its next read; start it if it is not running",
            )
    return _failing(
        "token", f"{waiting}; the token in {token.file} is not accepted as the agent", LOGIN_ADVICE
    )


def _acting_as_agent(token: TokenFacts, acts: str, now: datetime) -> Check:
    name = "token"
    if token.expires_at is None:
        return _warning(
            name,
            f"{acts}; a bare token, never refreshed: Launchpad's tokens expire after two weeks",
            LOGIN_ADVICE,
        )
    days = (token.expires_at - now) / timedelta(days=1)
    return _ok(
        name,
        f"{acts}; expires in {days:.1f} days ({format_timestamp(token.expires_at)}), refreshed before then",
    )


@dataclass(frozen=True, slots=True)
class Reach:
    """One request to Basecamp, as measured: whether anything answered (its HTTP status), or
    why not; its ``Date`` header (None: absent or unreadable) and this machine's clock then."""

    answered: bool
    status: int = 0
    error: str = ""
    server_date: datetime | None = None
    now: datetime | None = None
    asked: bool = True  # False: there was no usable token to ask with (``error`` says why)


def server_date(header: str) -> datetime | None:
    """An HTTP ``Date`` header's moment; None when it is absent or not one."""
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
        return _failing(
            name,
            f"{base_url} did not answer: {reach.error}",
            "check the network, and the configured base_url (bin/connect setup --base-url)",
        )
    answered = f"{base_url} answered (HTTP {reach.status})"
    if reach.server_date is None or reach.now is None:
        return _ok(name, f"{answered}; it sent no Date to compare this machine's clock with")
    skew = (reach.now - reach.server_date).total_seconds()
    if abs(skew) > SKEW_WARNING.total_seconds():
        ahead = "ahead of" if skew > 0 else "behind"
        return _warning(
            name,
            f"{answered}; this machine's clock is {abs(skew):.0f} s {ahead} Basecamp's",
            "synchronize the clock (NTP): token expiry and Retry-After are read by it",
        )
    return _ok(name, f"{answered}; this machine's clock is within {abs(skew):.0f} s of Basecamp's")
