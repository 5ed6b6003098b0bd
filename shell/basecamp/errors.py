"""What a failed read from Basecamp is, one class per thing the caller does about it.

Rules:
1. ``BasecampError`` is every read that could not be answered; a caller that only backs off
   catches it. A create never raises: its outcome is a value (``core.posting``).
2. ``ListingFailed`` (try again later) and its ``Unlistable`` (gone, forbidden or too deep) are
   the only ways a listing ends short (``shell.basecamp.client`` rule 2).
3. ``FeedFailed`` backs off; its ``FeedRefused`` carries ``core.feed``'s reading of a 400, 409 or
   410, and ``InboxRefused`` ``core.feed``'s of the inbox's refusal; their messages name the
   refusal's kind only (a position is a credential).
4. ``AuthenticationFailed`` is Basecamp refusing the token (401), after one more try with a
   fresher token (``shell.basecamp.client`` rule 9).
5. ``LastingRefusal`` is the identity request answered with a 4xx no retry changes
   (``core.pacing``): a person must fix something first."""

from __future__ import annotations

from core.feed import FeedRefusal, InboxRefusal


class BasecampError(Exception):
    """A read that could not be answered."""


class ListingFailed(BasecampError):
    """The listing could not be completed; try again later."""


class Unlistable(ListingFailed):
    """The destination cannot be listed back to the time asked: gone, forbidden or too deep."""


class FeedFailed(BasecampError):
    """A feed page could not be read (transport, deadline, 5xx, an unreadable page, a
    ``next`` on another origin): back off and try again."""


class FeedRefused(FeedFailed):
    """The feed answered 400, 409 or 410; ``refusal`` says what to do."""

    def __init__(self, refusal: FeedRefusal) -> None:
        super().__init__(f"the event feed refused the request: {type(refusal).__name__}")
        self.refusal = refusal


class InboxRefused(FeedFailed):
    """The inbox answered 400, 403, 409 or 410; ``refusal`` says what to do."""

    def __init__(self, refusal: InboxRefusal) -> None:
        super().__init__(f"the inbox refused the request: {type(refusal).__name__}")
        self.refusal = refusal


class AuthenticationFailed(BasecampError):
    """Basecamp refused the token (401)."""


class LastingRefusal(BasecampError):
    """The identity request answered a 4xx that no retry changes (rule 5); ``status`` is it."""

    def __init__(self, status: int) -> None:
        super().__init__(f"my/profile.json answered HTTP {status}, which no retry changes")
        self.status = status
