"""What doctor measures of the token and of Basecamp: the token file as read (never refreshed,
never written), one identity request (``my/profile.json``) that says who the token acts as,
whether Basecamp answers, and its ``Date`` against this machine's clock; then, once the token
answered as someone, one read of the agent's inbox (``inbox.json?since=now``: it moves nothing)
that says whether Basecamp serves it to this token (``core.doctor.inbox_check``)."""

from __future__ import annotations

from pathlib import Path

from core import doctor
from core.configuration import Configuration
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


def token_and_basecamp(loaded: Configuration, clock: Clock,
                       outage: TokenOutage | None = None) -> list[doctor.Check]:
    """The token's check and Basecamp's, from one request; the inbox's, from a second. ``outage``
    is the ledger's word that the running connector's creates were refused with this token."""
    file = loaded.token_file
    identity: doctor.Identity
    try:
        found = read_token_file(Path(file))
    except UserError as error:
        facts, identity = doctor.TokenFacts(file, problem=str(error)), doctor.NotAsked("")
        reach, client = doctor.Reach(answered=False, error="the token file is unusable", asked=False), None
    else:
        access, expires = (found, None) if isinstance(found, str) else (found.access_token, found.expires_at)
        facts = doctor.TokenFacts(file, expires_at=expires, outage=outage)
        identity, reach, client = _ask(loaded, access, clock)
    return [doctor.token_check(facts, loaded.agent_id, identity, clock.now()),
            doctor.basecamp_check(loaded.base_url, reach), _inbox(client, identity)]


def _inbox(client: BasecampClient | None, identity: doctor.Identity) -> doctor.Check:
    """Whether Basecamp serves the agent's inbox to this token, once it answered as someone: one
    read that moves nothing."""
    if client is None or not isinstance(identity, doctor.AnsweredAs):
        return doctor.inbox_check(None)
    try:
        client.poll_inbox(None, None, client.deadline_in(ASK_SECONDS))
    except InboxRefused as refused:
        if isinstance(refused.refusal, NotForPrincipal):
            return doctor.inbox_check(InboxVerdict.not_for_principal)
        return doctor.inbox_check(InboxVerdict.failing, str(refused))
    except BasecampError as error:
        return doctor.inbox_check(InboxVerdict.failing, str(error))
    return doctor.inbox_check(InboxVerdict.available)


def _ask(loaded: Configuration, access_token: str,
         clock: Clock) -> tuple[doctor.Identity, doctor.Reach, BasecampClient | None]:
    """Who the token acts as, and how Basecamp answered (its status, its Date, the clock then)."""
    try:
        client = BasecampClient(loaded.base_url, loaded.account_id, access_token, USER_AGENT, clock=clock)
    except ValueError as error:
        return doctor.NotAsked(str(error)), doctor.Reach(answered=False, error=str(error)), None
    identity: doctor.Identity
    why = ""
    try:
        person = client.me(client.deadline_in(ASK_SECONDS))
        identity = doctor.AnsweredAs(person.id, person.name)
    except AuthenticationFailed:
        identity = doctor.TokenRefused()
    except LastingRefusal as refused:
        fix = what_to_fix(refused.status, token_file=loaded.token_file, account_id=loaded.account_id,
                          base_url=loaded.base_url)
        identity = doctor.LastingRefused(refused.status, fix)
    except BasecampError as failed:
        why = str(failed)
        identity = doctor.NotAsked(f"Basecamp did not say ({why})")
    now = clock.now()
    if client.last_answer is None:
        return identity, doctor.Reach(answered=False, error=why or "no answer"), client
    status, date = client.last_answer
    reach = doctor.Reach(answered=True, status=status, server_date=doctor.server_date(date), now=now)
    return identity, reach, client
