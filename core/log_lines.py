"""One line of the connector's log, as text or as a JSON object, with no secret in it.

``redacted`` replaces each secret wherever it occurs with ``[redacted]``, the longest first (one that
holds another goes whole); a string shorter than ``MIN_SECRET`` is no secret (redacting it would
garble every line). ``json_line`` is one object on one line, ASCII only: ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message``, then the line's fields (its ids: ``event_id``, ``task``,
``attempt``, ``intent``, ``kind``), every string redacted; no field takes one of the four's names.
A ``Transition`` is one of ``run``'s transition lines: its words as printed, and its fields."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

REDACTED = "[redacted]"
MIN_SECRET = 8
HEAD = ("time", "level", "logger", "message")
ID_FIELDS = ("event_id", "task", "attempt", "intent", "kind")
_FIELD_OF_WORD = {"event": "event_id"}  # a transition's word for a field, where it is not the field's name


def redacted(text: str, secrets: Iterable[str]) -> str:
    ordered = sorted({secret for secret in secrets if len(secret) >= MIN_SECRET}, key=len, reverse=True)
    if not ordered:
        return text
    return re.sub("|".join(map(re.escape, ordered)), REDACTED, text)


def json_line(*, created: float, level: str, logger: str, message: str, fields: Mapping[str, object],
              secrets: Iterable[str], exception: str | None = None) -> str:
    """The object of one line; ``created``: seconds since the epoch."""
    held = tuple(secrets)
    stamp = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    said: dict[str, object] = {"time": stamp, "level": level.lower(), "logger": redacted(logger, held),
                               "message": redacted(message, held)}
    for name, value in fields.items():
        if name not in HEAD:
            said[redacted(name, held)] = _value(value, held)
    if exception:
        said["exception"] = redacted(exception, held)
    return json.dumps(said, ensure_ascii=True)


def _value(value: object, secrets: tuple[str, ...]) -> object:
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple | frozenset | set):
        return [_value(item, secrets) for item in value]
    return redacted(str(value), secrets)


@dataclass(frozen=True, slots=True)
class Transition:
    """``head``, then each ``word=value`` of ``said`` in order (a sequence as ``1,2``)."""

    head: str
    said: tuple[tuple[str, object], ...] = ()

    @property
    def line(self) -> str:
        return " ".join([self.head, *(f"{word}={_shown(value)}" for word, value in self.said)])

    @property
    def fields(self) -> dict[str, object]:
        return {_FIELD_OF_WORD.get(word, word): value for word, value in self.said}


def transition(head: str, **said: object) -> Transition:
    return Transition(head, tuple(said.items()))


def _shown(value: object) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)
