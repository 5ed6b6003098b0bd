"""The URLs the stand-in puts in its answers.

Rules:
1. Every URL is absolute and on the stand-in's own origin (``http://127.0.0.1:PORT``), so a
   client's same-origin rule accepts them.
2. URLs inside answers are bucket-scoped (``/ACCOUNT/buckets/BUCKET/...``), as Basecamp's
   stay, even when the request used a flat route.
3. ``api`` URLs end in ``.json``; ``app`` URLs (the HTML pages) do not. Basecamp serves its
   pages from another host; the stand-in keeps them on its own origin and does not serve them.
"""

from __future__ import annotations

from urllib.parse import urlencode

from shell.basecamp.standin.world import CAMPFIRE, CARD, COMMENT, Recording


class Urls:
    """URL builder for one stand-in: its origin and its account."""

    def __init__(self, origin: str, account_id: int) -> None:
        self.origin = origin
        self.account_url = f"{origin}/{account_id}"

    def _bucket(self, bucket_id: int) -> str:
        return f"{self.account_url}/buckets/{bucket_id}"

    def _path(self, recording: Recording) -> str:
        """The bucket-relative path of a recording's resource, without a suffix."""
        if recording.type == CARD:
            return f"card_tables/cards/{recording.id}"
        if recording.type == CAMPFIRE:
            return f"chats/{recording.id}"
        if recording.type == COMMENT:
            return f"comments/{recording.id}"
        if recording.type.startswith("Chat::Lines::"):
            return f"chats/{recording.parent_id}/lines/{recording.id}"
        return f"recordings/{recording.id}"

    def api(self, recording: Recording) -> str:
        return f"{self._bucket(recording.bucket_id)}/{self._path(recording)}.json"

    def app(self, recording: Recording, parent: Recording | None = None) -> str:
        """The page of a recording; a comment's is its parent's page with an anchor."""
        bucket = self._bucket(recording.bucket_id)
        if recording.type == COMMENT and parent is not None:
            return f"{self.app(parent)}#__recording_{recording.id}"
        if recording.type.startswith("Chat::Lines::"):
            return f"{bucket}/chats/{recording.parent_id}@{recording.id}"
        return f"{bucket}/{self._path(recording)}"

    def boosts(self, recording: Recording) -> str:
        return f"{self._bucket(recording.bucket_id)}/recordings/{recording.id}/boosts.json"

    def boost(self, bucket_id: int, boost_id: int) -> str:
        return f"{self._bucket(bucket_id)}/boosts/{boost_id}.json"

    def subscription(self, recording: Recording) -> str:
        return f"{self._bucket(recording.bucket_id)}/recordings/{recording.id}/subscription.json"

    def lines(self, campfire: Recording) -> str:
        return f"{self._bucket(campfire.bucket_id)}/chats/{campfire.id}/lines.json"

    def files(self, campfire: Recording) -> str:
        return f"{self._bucket(campfire.bucket_id)}/chats/{campfire.id}/uploads.json"

    def avatar(self, person_id: int) -> str:
        return f"{self.account_url}/people/{person_id}/avatar.png"


def page_url(origin: str, path: str, query: dict[str, str], page: int) -> str:
    """``origin + path`` with ``query`` and ``page`` set: the target of a ``Link`` header."""
    return f"{origin}{path}?{urlencode({**query, 'page': str(page)})}"
