"""Who a Basecamp rich text mentions, and the same text without one person's mentions.

Admission reads who is mentioned; the dispatch tools strip the agent's own mentions from the
content a worker is handed. One tag walk serves both, so the two never disagree about what a
mention is: a ``bc-attachment`` start tag whose first ``sgid`` (entities decoded) names exactly one
Person. Stripping removes such an attachment from its start tag to the first ``</bc-attachment>``,
unless it closes itself, another attachment starts first or none closes (then its start tag
alone goes), leaving one space each. Should the walk still find the person mentioned, the text is
handed out escaped: its words, and no markup.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from dataclasses import dataclass

_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9:_.-]*")
_ATTRIBUTE_NAME = re.compile(r"[^\s\"'>/=]+")
_UNQUOTED_VALUE = re.compile(r"[^\s>]*")
_PERSON_GID = re.compile(r"gid://bc3/Person/([0-9]+)")
_ATTACHMENT = "bc-attachment"
_STRIPPED_MENTION = " "


@dataclass(frozen=True, slots=True)
class _Tag:
    start: int
    end: int
    name: str
    is_end: bool
    self_closing: bool
    sgid: str | None


def _attributes_end(text: str, index: int) -> tuple[int, str | None] | None:
    """From inside a start tag: where it ends (after ``>``) and its first ``sgid``; None when it
    never ends (an unterminated tag ends the markup)."""
    sgid: str | None = None
    length = len(text)
    while index < length:
        character = text[index]
        if character.isspace() or character == "/":
            index += 1
            continue
        if character == ">":
            return index + 1, sgid
        name = _ATTRIBUTE_NAME.match(text, index)
        if name is None:  # a stray quote or '=': skip it
            index += 1
            continue
        index = name.end()
        value = ""
        while index < length and text[index].isspace():
            index += 1
        if index < length and text[index] == "=":
            index += 1
            while index < length and text[index].isspace():
                index += 1
            if index < length and text[index] in "\"'":
                close = text.find(text[index], index + 1)
                if close < 0:
                    return None
                value = text[index + 1 : close]
                index = close + 1
            else:
                unquoted = _UNQUOTED_VALUE.match(text, index)
                assert unquoted is not None  # it matches the empty string at worst
                value = unquoted.group(0)
                index = unquoted.end()
        if sgid is None and name.group(0).lower() == "sgid":
            sgid = html.unescape(value)
    return None


def _next_tag(text: str, position: int) -> _Tag | None:
    """The next tag at or after ``position``; comments, ``<!`` and ``<?`` are skipped."""
    while True:
        start = text.find("<", position)
        if start < 0:
            return None
        if text.startswith("<!--", start):
            close = text.find("-->", start + 4)
            if close < 0:
                return None
            position = close + 3
            continue
        if text.startswith(("<!", "<?"), start):
            close = text.find(">", start)
            if close < 0:
                return None
            position = close + 1
            continue
        is_end = text.startswith("</", start)
        name = _TAG_NAME.match(text, start + (2 if is_end else 1))
        if name is None:
            position = start + 1
            continue
        ended = _attributes_end(text, name.end())
        if ended is None:
            return None
        end, sgid = ended
        return _Tag(start, end, name.group(0).lower(), is_end, self_closing=text[start:end].endswith("/>"),
                    sgid=None if is_end else sgid)


def person_id_from_sgid(sgid: str) -> int | None:
    """The Person id an attachable sgid names (``base64(payload)--digest``, the payload holding
    ``gid://bc3/Person/<id>``), or None when it names no one person."""
    payload = sgid.strip().split("--", 1)[0]
    if not payload:
        return None
    padded = payload + "=" * (-len(payload) % 4)
    found: set[int] = set()
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decode(padded)
        except (binascii.Error, ValueError):
            continue
        text = raw.decode("utf-8", "replace").replace("\\/", "/")
        found.update(int(match) for match in _PERSON_GID.findall(text))
    if len(found) != 1:
        return None
    (person_id,) = found
    return person_id


def _mentioned(tag: _Tag) -> int | None:
    if tag.is_end or tag.name != _ATTACHMENT or tag.sgid is None:
        return None
    return person_id_from_sgid(tag.sgid)


def mentioned_person_ids(rich_text: str) -> tuple[int, ...]:
    """In order of appearance, each once."""
    found: list[int] = []
    position = 0
    while (tag := _next_tag(rich_text, position)) is not None:
        person_id = _mentioned(tag)
        if person_id is not None and person_id not in found:
            found.append(person_id)
        position = tag.end
    return tuple(found)


def _mention_end(text: str, position: int) -> int:
    cursor = position
    while (tag := _next_tag(text, cursor)) is not None:
        if tag.name == _ATTACHMENT:
            return tag.end if tag.is_end else position
        cursor = tag.end
    return position


def strip_mentions_of(rich_text: str, person_id: int) -> str:
    if person_id not in mentioned_person_ids(rich_text):
        return rich_text
    pieces: list[str] = []
    position = 0
    cursor = 0
    while (tag := _next_tag(rich_text, cursor)) is not None:
        if _mentioned(tag) == person_id:
            pieces.append(rich_text[position : tag.start])
            pieces.append(_STRIPPED_MENTION)
            position = tag.end if tag.self_closing else _mention_end(rich_text, tag.end)
            cursor = position
            continue
        cursor = tag.end
    pieces.append(rich_text[position:])
    stripped = "".join(pieces)
    if person_id in mentioned_person_ids(stripped):
        return html.escape(stripped)  # a backstop: the words, and no markup
    return stripped
