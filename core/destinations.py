"""Where a message goes, and what a listing of that place answers.

A destination is a message kind and the recording it is posted on: a boost or a comment on a
recording, or a chat line in a Campfire, whose id stands as the recording id. Ids are Basecamp's,
so a destination with a non-positive recording id is not one. A listed message carries its text
already normalised (``core.text.message_text``), so matching compares words, never markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class MessageKind(StrEnum):
    boost = "boost"
    comment = "comment"
    chat_line = "chat_line"


@dataclass(frozen=True, slots=True)
class Destination:
    kind: MessageKind
    bucket_id: int
    recording_id: int

    def __post_init__(self) -> None:
        if self.recording_id <= 0:
            raise ValueError(f"a destination needs a positive recording id, not {self.recording_id}")
        if self.bucket_id < 0:
            raise ValueError(f"a destination needs a non-negative bucket id, not {self.bucket_id}")

    def describe(self) -> str:
        """A short, content-free description for logs and a person."""
        where = "campfire" if self.kind is MessageKind.chat_line else "recording"
        return f"{self.kind} on {where} {self.recording_id}"


@dataclass(frozen=True, slots=True)
class ListedMessage:
    id: int
    created_at: datetime
    creator_id: int
    text: str
