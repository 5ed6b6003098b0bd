"""The demo's verdict: what the stand-in's own record of POSTs says was posted, doubled, missing.

Rules:
1. The judge is the stand-in's record of every request, never the ledger. A recorded POST posted
   a message when answered 2xx, when created then left unanswered on purpose
   (``create_then_drop``, ``create_then_delay``), or when unanswered with no fault (the create
   ran, the answer could not be written); otherwise it posted nothing.
2. A POST's place is read from its path alone; its words are ``core.text.message_text`` of its
   body's ``content``.
3. Doubled: a message whose words were already posted at its place, or one meeting an
   expectation an earlier message met (two acknowledgements of one request, in any words). A
   message is counted once, whichever makes it extra.
4. Missing: an expectation no message meets. Unexpected: a message neither doubled nor expected.
5. The demo passes only when all three are zero and every scene happened as scripted."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from core.destinations import MessageKind
from core.text import message_text

CREATING_FAULTS = frozenset({"create_then_drop", "create_then_delay"})
"""Faults that create what the request asks for and then withhold the answer."""

NOTHING_CREATED_FAULTS = frozenset({"refuse", "server_error", "rate_limit", "drop_without_create"})
"""Faults that answer before anything is created, or drop the request unhandled."""

_PLACE = re.compile(
    r"/(\d+)/(?:buckets/\d+/)?(?:recordings/(\d+)/(comments|boosts)|chats/(\d+)/lines)(?:\.json)?"
)
_KIND_OF = {"comments": MessageKind.comment, "boosts": MessageKind.boost}


@dataclass(frozen=True, slots=True)
class Place:
    """Where a message is: its kind and the recording (the Campfire for a chat line) it is on."""

    kind: MessageKind
    recording_id: int

    def describe(self) -> str:
        match self.kind:
            case MessageKind.boost:
                return f"boosts on {self.recording_id}"
            case MessageKind.comment:
                return f"comments on {self.recording_id}"
            case MessageKind.chat_line:
                return f"lines of Campfire {self.recording_id}"


@dataclass(frozen=True, slots=True)
class RecordedPost:
    """One POST as the stand-in recorded it: its path, body, answer (None: none) and fault."""

    path: str
    body: str
    status: int | None
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class Posted:
    """A message a POST created (rule 1), at its place, in its words."""

    place: Place
    words: str


@dataclass(frozen=True, slots=True)
class Expected:
    """A message a scene calls for: at ``place``, with every one of ``fragments`` in its words."""

    scene: int
    label: str
    place: Place
    fragments: tuple[str, ...] = ()

    def met_by(self, posted: Posted) -> bool:
        return posted.place == self.place and all(fragment in posted.words for fragment in self.fragments)


@dataclass(frozen=True, slots=True)
class DemoTally:
    posted: tuple[Posted, ...]
    doubled: tuple[Posted, ...]
    missing: tuple[Expected, ...]
    unexpected: tuple[Posted, ...]

    @property
    def passed(self) -> bool:
        """Rule 5."""
        return not (self.doubled or self.missing or self.unexpected)

    def by_kind(self) -> dict[str, int]:
        counted = Counter(posted.place.kind.value for posted in self.posted)
        return {kind.value: counted[kind.value] for kind in MessageKind if counted[kind.value]}


def created(post: RecordedPost) -> bool:
    """Whether the recorded POST created a message (rule 1)."""
    if post.fault in NOTHING_CREATED_FAULTS:
        return False
    if post.status is None:
        return post.fault is None or post.fault in CREATING_FAULTS
    return 200 <= post.status < 300


def place_of(path: str, account_id: int) -> Place | None:
    """The place a POST's path names in ``account_id``, or None (rule 2)."""
    found = _PLACE.fullmatch(path)
    if found is None or int(found.group(1)) != account_id:
        return None
    if found.group(4) is not None:
        return Place(MessageKind.chat_line, int(found.group(4)))
    return Place(_KIND_OF[found.group(3)], int(found.group(2)))


def words_of(body: str) -> str:
    """The words of a POST body's ``content`` ('' when the body holds none)."""
    try:
        content = json.loads(body).get("content")
    except (ValueError, AttributeError):
        return ""
    return message_text(content) if isinstance(content, str) else ""


def posted_messages(posts: Iterable[RecordedPost], account_id: int) -> tuple[Posted, ...]:
    """The messages the recorded POSTs created, in the order they arrived."""
    found = []
    for post in posts:
        place = place_of(post.path, account_id)
        if place is not None and created(post):
            found.append(Posted(place, words_of(post.body)))
    return tuple(found)


def judge(posted: Iterable[Posted], expected: Iterable[Expected]) -> DemoTally:
    """Rules 3 and 4: each posted message is extra, meets an expectation, or is unexpected."""
    expectations = tuple(expected)
    seen: set[Posted] = set()
    met: set[Expected] = set()
    every, doubled, unexpected = [], [], []
    for message in posted:
        every.append(message)
        expectation = next((wanted for wanted in expectations if wanted.met_by(message)), None)
        if message in seen or (expectation is not None and expectation in met):
            doubled.append(message)
        elif expectation is None:
            unexpected.append(message)
        else:
            met.add(expectation)
        seen.add(message)
    missing = tuple(wanted for wanted in expectations if wanted not in met)
    return DemoTally(tuple(every), tuple(doubled), missing, tuple(unexpected))


def verdict_line(verdict: DemoTally, problems: int = 0) -> str:
    """The demo's last line; ``problems`` counts scenes that did not happen as scripted, and any
    one of them fails the demo as a doubled or missing message does."""
    kinds = ", ".join(f"{count} {kind}" for kind, count in verdict.by_kind().items())
    scenes = f", scene problems: {problems}" if problems else ""
    passed = verdict.passed and not problems
    return (
        f"verdict: {len(verdict.posted)} messages posted ({kinds or 'none'}), "
        f"messages doubled: {len(verdict.doubled)}, missing: {len(verdict.missing)}, "
        f"unexpected: {len(verdict.unexpected)}{scenes} -- {'PASS' if passed else 'FAIL'}"
    )
