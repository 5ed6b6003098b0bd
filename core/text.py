"""The words of a message, as matching compares them, and what a terminal may be shown.

Basecamp may wrap or re-attribute the rich text it stores; the words stay. So a body is compared
with a listing only after both are reduced to their words: ``<br>`` and the closing tags of
blocks become a space, every other tag is dropped, entities are decoded after that (an escaped
``&lt;b&gt;`` stays text), and whitespace collapses. It is not idempotent (decoded ``&lt;b&gt;``
reads as a tag the second time): never normalise twice. It is linear in the content's length: a
tag is ``<`` to the next ``>`` with no ``<`` between (a regular expression took 27 s over 200,000
``<``), and a ``<`` that opens no tag stays text. ``message_lines`` is for a person reading, never
matching. ``printable`` escapes every control or format character of a name or word from Basecamp
(ANSI escapes, newlines, bidi overrides) as Python writes it (``\\x1b``); plain text is unchanged."""

from __future__ import annotations

import re
import unicodedata

_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|h[1-6]|blockquote|pre)\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")  # a tag never spans another "<"
_SPACE = re.compile(r"\s+")


def message_text(content: str) -> str:
    import html  # noqa: PLC0415 -- here, not at the top: every command's error seam imports this module

    spaced = _BREAK.sub(" ", content)
    untagged = _TAG.sub("", spaced)
    decoded = html.unescape(untagged)
    return _SPACE.sub(" ", decoded).strip()


def message_lines(content: str) -> tuple[str, ...]:
    lines = (message_text(part) for part in _BREAK.split(content))
    return tuple(line for line in lines if line)


def printable(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(_escaped(character) for character in text)


def _escaped(character: str) -> str:
    if character.isprintable() or unicodedata.category(character) in ("Zs",):
        return character
    return character.encode("unicode_escape").decode("ascii")
