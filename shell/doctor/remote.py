"""What doctor measures of the token and of Basecamp: the token file as read (never refreshed,
never written), one identity request (``my/profile.json``) that says who the token acts as,
whether Basecamp answers, and its ``Date`` against this machine's clock; then, once the token
answered as someone, one read of the agent's inbox (``inbox.json?since=now``: it moves nothing)
that says whether Basecamp serves it to this token (``core.doctor_inbox``)."""

from __future__ import annotations

from pathlib import Path

from core.configuration import Configuration
from core.doctor import (
    AnsweredAs,
    Check,
    Identity,
    LastingRefused,
    NotAsked,
    Reach,
    TokenFacts,
    TokenRefused,
    basecamp_check,
    inbox_check,
    server_date,
    token_check,
)
from core.feed import NotForPrincipal
from core.intake_status import InboxVerdict
from core.pacing import what_to_fix
from core.posting import TokenOutage
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import AuthenticationFailed, BasecampError, InboxRefused, LastingRefusal
from shell.clock import Clock
from shell.errors import UserError
from shell.state.config import read_token_file

ASK_SECONDS = 10.0
USER_AGENT = "basecamp-connector doctor (https://github.com/basecamp/basecamp-connector)"


def token_and_basecamp(loaded: Configuration, clock: Clock, outage: TokenOutage | None = None) -> list[Check]:
    """The token's check and Basecamp's, from one request; the inbox's, from a second. ``outage``
    is the ledger's word that the running connector's creates were refused with this token."""
    file = loaded.token_file
    try:
        found = read_token_file(Path(file))
    except UserError as error:
        reach = Reach(answered=False, error="the token file is unusable", asked=False)
        return [
            token_check(TokenFacts(file, problem=str(error)), loaded.agent_id, NotAsked(""), clock.now()),
            basecamp_check(loaded.base_url, reach),
            inbox_check(None),
        ]
    access = found if isinstance(found, str) else found.access_token
    expires = None if isinstance(found, str) else found.expires_at
    identity, reach, client = _ask(loaded, access, clock)
    return [
        token_check(
            TokenFacts(file, expires_at=expires, outage=outage), loaded.agent_id, identity, clock.now()
        ),
        basecamp_check(loaded.base_url, reach),
        _inbox(client) if isinstance(identity, AnsweredAs) and client is not None else inbox_check(None),
    ]


def _inbox(client: BasecampClient) -> Check:
    """Whether Basecamp serves the agent's inbox to this token: one read that moves nothing."""
    try:
        client.poll_inbox(None, None, client.deadline_in(ASK_SECONDS))
    except InboxRefused as refused:
        if isinstance(refused.refusal, NotForPrincipal):
            return inbox_check(InboxVerdict.not_for_principal)
        return inbox_check(InboxVerdict.failing, str(refused))
    except BasecampError as error:
        return inbox_check(InboxVerdict.failing, str(error))
    return inbox_check(InboxVerdict.available)


def _ask(
    loaded: Configuration, access_token: str, clock: Clock
) -> tuple[Identity, Reach, BasecampClient | None]:
    """Who the token acts as, and how Basecamp answered (its status, its Date, the clock then)."""
    try:
        client = BasecampClient(loaded.base_url, loaded.account_id, access_token, USER_AGENT, clock=clock)
    except ValueError as error:
        return NotAsked(str(error)), Reach(answered=False, error=str(error)), None
    identity: Identity
    why = ""
    try:
        person = client.me(client.deadline_in(ASK_SECONDS))
        identity = AnsweredAs(person.id, person.name)
    except AuthenticationFailed:
        identity = TokenRefused()
    except LastingRefusal as refused:
        fix = what_to_fix(
            refused.status, token_file=loaded.token_file, account_id=loaded.account_id,
            base_url=loaded.base_url,
        )  # fmt: skip
        identity = LastingRefused(refused.status, fix)
    except BasecampError as failed:
        why = str(failed)
        identity = NotAsked(f"Basecamp did not say ({why})")
    now = clock.now()
    if client.last_answer is None:
        return identity, Reach(answered=False, error=why or "no answer"), client
    status, date = client.last_answer
    return identity, Reach(answered=True, status=status, server_date=server_date(date), now=now), client
