"""Who the token acts as, asked of Basecamp before anything is written or started.

Rules (``setup`` and ``run`` both hold them):
1. The answer is one ``my/profile.json`` read within ``CHECK_SECONDS``.
2. A token acting as anyone but the configured agent is refused, naming both ids: a connector
   running as someone else would post its notices in their name, and its loop guard
   (``exclude_performers=self``) would hide that person's events and let the agent's own in.
3. A token Basecamp refuses (401), and any refusal Basecamp will repeat (431 for a huge token,
   403, 404 and every 4xx ``core.pacing`` calls lasting), is ``EXIT_CONFIG`` with what
   to fix; a Basecamp that cannot answer is ``EXIT_UNAVAILABLE``: an identity that cannot be
   checked is never assumed.
4. Each refusal is one line ending in what did not happen (``consequence``); the token itself
   is never in it.
"""

from __future__ import annotations

from core.pacing import what_to_fix
from shell.basecamp.client import BasecampClient, Profile
from shell.basecamp.errors import AuthenticationFailed, BasecampError, LastingRefusal
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError

CHECK_SECONDS = 20.0


def check_identity(
    client: BasecampClient,
    *,
    agent_id: int,
    token_file: str,
    base_url: str,
    consequence: str,
    wrong_person_hint: str = "",
    unreachable_hint: str = "",
) -> Profile:
    """The person the token acts as, when it is the agent; else one line (rules 2-4)."""
    try:
        person = client.me(client.deadline_in(CHECK_SECONDS))
    except AuthenticationFailed as error:
        refused = f"Basecamp refused the token in {token_file} (401): {consequence}"
        raise UserError(refused, EXIT_CONFIG) from error
    except LastingRefusal as error:
        account = client.account_id
        fix = what_to_fix(error.status, token_file=token_file, account_id=account, base_url=base_url)
        raise UserError(f"{fix}: {consequence}", EXIT_CONFIG) from error
    except BasecampError as error:
        raise UserError(
            f"could not ask {base_url} who the token in {token_file} acts as ({error}): {consequence}"
            f"{unreachable_hint}",
            EXIT_UNAVAILABLE,
        ) from error
    if person.id != agent_id:
        raise UserError(
            f"the token in {token_file} acts as person {person.id} ({person.name}), "
            f"not the configured agent {agent_id}: {consequence}{wrong_person_hint}",
            EXIT_CONFIG,
        )
    return person
