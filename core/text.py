"""The words of a message, as matching compares them.

Basecamp may wrap or re-attribute the rich text it stores; the words stay. So a body is compared
with a listing only after both are reduced to their words:

Rules:
1. ``<br>`` in any form and the closing tags of blocks (``div p li h1..h6 blockquote pre``)
   become a space; every other tag is dropped.
2. Entities are decoded after tags are dropped, so an escaped ``&lt;b&gt;`` stays text.
3. Runs of whitespace collapse to one space; the result is trimmed.
4. Both sides of a comparison go through this function. It is not idempotent (decoded
   ``&lt;b&gt;`` reads as a tag the second time): never normalise twice.
5. ``message_lines`` is for a person reading, never matching: one line per break or block.
6. Linear in the content's length: a tag is ``<`` to the next ``>`` with no ``<`` between, so no
   character is scanned twice (a regular expression took 27 s over 200,000 ``<``). A ``<`` that
   opens no tag stays text.
7. ``printable`` is what a terminal may be shown of a name or word from Basecamp: every control
   or format character (ANSI escapes, newlines, DEL, C1, bidi overrides, separators) escaped as
   Python writes it (``\\x1b``, ``\\u202e``); plain text is unchanged."""

from __future__ import annotations

import re
import unicodedata

_BREAK = re.compile(r"<br\s*/?>|</(?:div|p|li|h[1-6]|blockquote|pre)\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")  # rule 6: a tag never spans another "<"
_SPACE = re.compile(r"\s+")


def message_text(content: str) -> str:
    """Reduce a message's content (HTML or plain text) to its words."""
    import html  # noqa: PLC0415 -- here, not at the top: every command's error seam imports this module

    spaced = _BREAK.sub(" ", content)
    untagged = _TAG.sub("", spaced)
    decoded = html.unescape(untagged)
    return _SPACE.sub(" ", decoded).strip()


def message_lines(content: str) -> tuple[str, ...]:
    """The words of each line of a message, as a person reads it (rule 5)."""
    lines = (message_text(part) for part in _BREAK.split(content))
    return tuple(line for line in lines if line)


def printable(text: str) -> str:
    """``text`` with every control or format character escaped (rule 7)."""
    if text.isprintable():
        return text
    return "".join(_escaped(character) for character in text)


def _escaped(character: str) -> str:
    if character.isprintable() or unicodedata.category(character) in ("Zs",):
        return character
    return character.encode("unicode_escape").decode("ascii")
