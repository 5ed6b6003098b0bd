"""What a failed read from Basecamp is, one class per thing the caller does about it. A caller that
only backs off catches ``BasecampError``; a create never raises (its outcome is a value,
``core.posting``). A listing ends short only by ``ListingFailed`` (try again later) or its
``Unlistable`` (gone, forbidden or too deep). A refusal's message names its kind only: a feed
position is a credential."""

from __future__ import annotations

from core.feed import FeedRefusal, InboxRefusal


class BasecampError(Exception):
    """A read that could not be answered."""


class ListingFailed(BasecampError):
    pass


class Unlistable(ListingFailed):
    pass


class FeedFailed(BasecampError):
    """A feed page could not be read: back off and try again."""


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
    """Basecamp refused the token (401), after one more try with a fresher one if there was one."""


class LastingRefusal(BasecampError):
    """The identity request answered a 4xx that no retry changes (``core.pacing.lasting``)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"my/profile.json answered HTTP {status}, which no retry changes")
        self.status = status
