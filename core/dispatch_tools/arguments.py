"""The dispatch tools' arguments, read from what a worker sent: shapes only.

A wrong shape is a ``ToolRefusal`` of kind ``invalid_arguments`` that names what to fix
(rule 6 of ``core.dispatch_tools``); whether a well-shaped report is acceptable is
``core.dispatch_tools.decisions.check_completion``'s to judge (rule 5 of ``core.dispatch_tools``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from core.dispatch_tools.refusals import RefusalKind, ToolRefusal, refuse
from core.ids import MAX_ID


@dataclass(frozen=True, slots=True)
class GetRequest:
    event_id: int | None


@dataclass(frozen=True, slots=True)
class AckRequest:
    """``ack_id``: the id of an acknowledgement the worker posted itself; ``text``: the words the
    connector posts for it (``core.worker_words``). One or the other, or neither."""

    event_id: int
    ack_id: int | None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    """``reply_dispatch``: a message at the reply destination before completion."""

    event_id: int
    text: str


@dataclass(frozen=True, slots=True)
class Completion:
    """A worker's report as sent; checked by ``check_completion`` (rule 5 of ``core.dispatch_tools``)."""

    outcome: str
    reply_id: int | None = None
    links: tuple[str, ...] = ()
    reply: str | None = None  # the worker's answer, posted for it; or reply_id, never both


@dataclass(frozen=True, slots=True)
class CompleteRequest:
    event_id: int
    completion: Completion


_DIGITS = re.compile(r"[0-9]{1,19}")


class _BadArguments(Exception):
    """Raised inside the readers below only, and turned into their ``Failure``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.refusal = refuse(RefusalKind.invalid_arguments, message)


def _read_id(arguments: Mapping[str, object], name: str, *, required: bool) -> int | None:
    value = arguments.get(name)
    if value is None:
        if required:
            raise _BadArguments(f"{name} is required")
        return None
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None or number <= 0 or number > MAX_ID:
        raise _BadArguments(f"{name} must be a positive integer id")
    return number


def _read_text(arguments: Mapping[str, object], name: str, *, required: bool) -> str | None:
    value = arguments.get(name)
    if value is None:
        if required:
            raise _BadArguments(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise _BadArguments(f"{name} must be a string")
    return value


def _one_of(arguments: Mapping[str, object], first: str, second: str) -> None:
    if arguments.get(first) is not None and arguments.get(second) is not None:
        raise _BadArguments(
            f"give {first} (the connector posts it for you) or {second} (you posted it yourself), not both"
        )


def _refuse_unknown(arguments: Mapping[str, object], known: Iterable[str]) -> None:
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise _BadArguments("unknown argument " + ", ".join(repr(name) for name in unknown))


def _required_id(arguments: Mapping[str, object], name: str) -> int:
    number = _read_id(arguments, name, required=True)
    assert number is not None  # required: None raised
    return number


def read_get_arguments(arguments: Mapping[str, object]) -> Result[GetRequest, ToolRefusal]:
    """``{event_id?}``."""
    try:
        _refuse_unknown(arguments, ("event_id",))
        return Success(GetRequest(_read_id(arguments, "event_id", required=False)))
    except _BadArguments as error:
        return Failure(error.refusal)


def read_ack_arguments(arguments: Mapping[str, object]) -> Result[AckRequest, ToolRefusal]:
    """``{event_id, text? | ack_id?}``."""
    try:
        _refuse_unknown(arguments, ("event_id", "ack_id", "text"))
        _one_of(arguments, "text", "ack_id")
        return Success(
            AckRequest(
                _required_id(arguments, "event_id"),
                _read_id(arguments, "ack_id", required=False),
                _read_text(arguments, "text", required=False),
            )
        )
    except _BadArguments as error:
        return Failure(error.refusal)


def read_complete_arguments(arguments: Mapping[str, object]) -> Result[CompleteRequest, ToolRefusal]:
    """``{event_id, outcome, reply? | reply_id?, links?}``: shapes only; ``check_completion`` judges."""
    try:
        _refuse_unknown(arguments, ("event_id", "outcome", "reply_id", "reply", "links"))
        _one_of(arguments, "reply", "reply_id")
        event_id = _required_id(arguments, "event_id")
        outcome = arguments.get("outcome")
        if not isinstance(outcome, str) or outcome == "":
            raise _BadArguments('outcome is required: "succeeded" or "failed"')
        reply_id = _read_id(arguments, "reply_id", required=False)
        raw_links = arguments.get("links")
        links: tuple[str, ...] = ()
        if raw_links is not None:
            if not isinstance(raw_links, list | tuple) or not all(
                isinstance(link, str) for link in raw_links
            ):
                raise _BadArguments("links must be an array of strings")
            links = tuple(str(link) for link in raw_links)
        reply = _read_text(arguments, "reply", required=False)
        return Success(CompleteRequest(event_id, Completion(outcome, reply_id, links, reply)))
    except _BadArguments as error:
        return Failure(error.refusal)


def read_reply_arguments(arguments: Mapping[str, object]) -> Result[ReplyRequest, ToolRefusal]:
    """``{event_id, text}``."""
    try:
        _refuse_unknown(arguments, ("event_id", "text"))
        text = _read_text(arguments, "text", required=True)
        assert text is not None  # required: None raised
        return Success(ReplyRequest(_required_id(arguments, "event_id"), text))
    except _BadArguments as error:
        return Failure(error.refusal)
