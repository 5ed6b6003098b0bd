"""The notes an outbox intent carries: why it was canceled, left indeterminate, or resolved.

A note is fixed words and ids, never a message body or anything a person wrote, and each is named
here once, so the code that writes one and the code that reads it back compare the same words.
A ``NOT_CREATED_NOTES`` note is the cause a ``sending -> pending`` move records: the request
provably never reached Basecamp. A canceled intent is resendable by a person (``resendable``; the
ledger's trigger holds the same words) only when its note proves no message exists and the
connector will not try again on its own: Basecamp refused it, or it was given up after the retry
bound. ``TOKEN_REFUSED`` is never given up, so it has no ``given_up`` note.
"""

from __future__ import annotations

REFUSED_NOTE = "the request was refused; no message was created"
NOT_CONNECTED = "not created: the connection never opened"
NOT_WRITTEN = "not created: the request was never written"  # a rate-limit wait past its deadline
RATE_LIMITED = "not created: Basecamp answered 429"
REQUEST_TIMEOUT = "not created: Basecamp answered 408"
TOKEN_REFUSED = "not created: Basecamp refused the token (401)"  # noqa: S105 -- a note, no secret

GIVING_UP_CAUSES = frozenset({NOT_CONNECTED, NOT_WRITTEN, RATE_LIMITED, REQUEST_TIMEOUT})
NOT_CREATED_NOTES = GIVING_UP_CAUSES | {TOKEN_REFUSED}


def given_up(cause: str) -> str:
    """The note of an intent canceled after trying for the bound; ``cause`` is its last cause."""
    return f"{cause}; given up after 24 h, for a person"


GIVEN_UP_NOTES = frozenset(given_up(cause) for cause in GIVING_UP_CAUSES)

NO_LONGER_CALLED_FOR = "no longer called for"  # the claim found the record moved on, or gone
ATTEMPT_ENDED = "the attempt ended before the notice went out"
ALL_REPORTED = "every instruction was reported before the notice went out"
CANCELED_BY_GET_DISPATCH = "get_dispatch"  # a worker pulled its instruction before the guard was due
CANCELED_BY_HOLD = "held"  # the record was held for a person before the guard was due
DISCARDED_BY_PERSON = "its record was discarded by a person"
ADOPTED = "adopted by reconciliation"
UNLISTABLE = "destination cannot be listed"
NO_WORDS = "the body has no words to match"
RESOLVED_SENT_CHECKED = "resolved: sent, receipt checked"
RESOLVED_SENT_UNCHECKED = "resolved: sent, receipt unchecked"
RESOLVED_ABANDON = "resolved: abandon"
RESOLVED_RESEND = "resolved: resend"


def listing_failed(failures: int) -> str:
    return f"listing failed {failures} times"


def matching_messages(count: int) -> str:
    return f"{count} matching messages at the destination"


def rival_could_claim(intent_id: int) -> str:
    return f"intent {intent_id} could claim the same message"


RESENDABLE_NOTES = frozenset({REFUSED_NOTE}) | GIVEN_UP_NOTES


def resendable(note: str) -> bool:
    return note in RESENDABLE_NOTES
