"""The notes an outbox intent carries: why it was canceled, left indeterminate, or resolved.

Rules:
1. A note is fixed words and ids, never a message body or anything a person wrote.
2. Every note the outbox writes is named here once, so the code that writes one and the code
   that reads one back (a person's resend of a refused intent) compare the same words.
3. A canceled intent is resendable by a person only when its note proves no message exists
   and the connector will not try again on its own: ``REFUSED_NOTE`` (Basecamp refused the
   request) or a ``given_up`` note (it never reached Basecamp for ``core.not_created``'s bound).
   ``resendable`` is the one test of that; the ledger's trigger holds the same words.
4. A ``NOT_CREATED_NOTES`` note is the cause a ``sending -> pending`` move records: the request
   provably never reached Basecamp, so the connector may try again. ``TOKEN_REFUSED`` is one of
   them and never given up (``core.not_created`` rule 5), so it has no ``given_up`` note.
"""

from __future__ import annotations

REFUSED_NOTE = "the request was refused; no message was created"
"""Basecamp refused the create: nothing was posted, and a person may send it again."""

NOT_CONNECTED = "not created: the connection never opened"
"""The request never left: no connection to Basecamp could be opened."""

NOT_WRITTEN = "not created: the request was never written"
"""The client declined to write the request (a rate-limit wait past its deadline)."""

RATE_LIMITED = "not created: Basecamp answered 429"
"""Basecamp rate-limited the request: it created nothing and says when to ask again."""

REQUEST_TIMEOUT = "not created: Basecamp answered 408"
"""Basecamp timed out waiting for the request: it never had the whole request."""

TOKEN_REFUSED = "not created: Basecamp refused the token (401)"  # noqa: S105 -- a note, no secret
"""Basecamp refused the agent's token, after the one refresh: an outage of the connector's, not a
refusal of the message; it waits, pending, for a token that works."""

GIVING_UP_CAUSES = frozenset({NOT_CONNECTED, NOT_WRITTEN, RATE_LIMITED, REQUEST_TIMEOUT})
"""The causes ``core.not_created``'s day-long bound gives up on, for a person."""

NOT_CREATED_NOTES = GIVING_UP_CAUSES | {TOKEN_REFUSED}
"""The causes that prove a request never reached Basecamp (rule 4)."""


def given_up(cause: str) -> str:
    """The note of an intent canceled after trying for the bound; ``cause`` is its last cause."""
    return f"{cause}; given up after 24 h, for a person"


GIVEN_UP_NOTES = frozenset(given_up(cause) for cause in GIVING_UP_CAUSES)
"""Every note ``given_up`` can write."""

NO_LONGER_CALLED_FOR = "no longer called for"
"""The claim found the record moved on (or gone): the message would now be wrong."""

ATTEMPT_ENDED = "the attempt ended before the notice went out"
"""A still-running notice whose attempt ended (or vanished) before its claim."""

ALL_REPORTED = "every instruction was reported before the notice went out"
"""A still-running notice whose worker reported every instruction of its task before the claim."""

CANCELED_BY_GET_DISPATCH = "get_dispatch"
"""A worker pulled its instruction before the guard was due (written by the ledger)."""

CANCELED_BY_HOLD = "held"
"""The record was held for a person before the guard was due (written by the ledger)."""

ADOPTED = "adopted by reconciliation"
"""Reconciliation found the one message this intent's request created."""

UNLISTABLE = "destination cannot be listed"
"""Reconciliation cannot look at this destination at all, so it cannot ever adopt."""

NO_WORDS = "the body has no words to match"
"""An intent whose body reduces to no words: no listing can prove which message is its."""

RESOLVED_SENT_CHECKED = "resolved: sent, receipt checked"
"""A person marked it sent, and the message was read first: the agent's, with the intent's words."""

RESOLVED_SENT_UNCHECKED = "resolved: sent, receipt unchecked"
"""A person marked it sent with ``--unchecked``: the receipt was recorded without looking."""

RESOLVED_ABANDON = "resolved: abandon"
RESOLVED_RESEND = "resolved: resend"


def listing_failed(failures: int) -> str:
    """The note of an intent that gave up after ``failures`` failed listings."""
    return f"listing failed {failures} times"


def matching_messages(count: int) -> str:
    """The note of a reconciliation that found ``count`` candidates, not exactly one."""
    return f"{count} matching messages at the destination"


def rival_could_claim(intent_id: int) -> str:
    """The note of a reconciliation whose one candidate another intent could own."""
    return f"intent {intent_id} could claim the same message"


DISCARDED_BY_PERSON = "its record was discarded by a person"
"""A person discarded the record this notice was for, before it was sent (``bin/connect discard``)."""


RESENDABLE_NOTES = frozenset({REFUSED_NOTE}) | GIVEN_UP_NOTES
"""The notes of a canceled intent a person may send again (rule 3)."""


def resendable(note: str) -> bool:
    """Whether a canceled intent with ``note`` provably created nothing and waits for a person."""
    return note in RESENDABLE_NOTES
