"""How a command's log lines, and ``run``'s own lines on both streams, are written: ``text`` (the
default, ``TIME LOGGER MESSAGE`` as always) or ``json`` (one object a line, ``core.log_lines``), every
secret the process holds (``shell.process_secrets``) redacted in both. A call site gives a line's
ids as values with ``ids(...)``, logging's ``extra``; ``line`` is one of ``run``'s printed lines in
the chosen format. With ``json`` an uncaught exception and Python's warnings are objects too."""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from types import TracebackType

from core.log_lines import json_line, redacted
from shell.process_secrets import held

TEXT, JSON = "text", "json"
FORMATS = (TEXT, JSON)
TEXT_LAYOUT = "%(asctime)s %(name)s %(message)s"
_FIELDS = "connector_fields"  # the record's attribute ``ids`` fills
_CHOSEN = [TEXT]  # the format configure chose last


def ids(*, event_id: object = None, task: object = None, attempt: object = None, intent: object = None,
        kind: object = None, **more: object) -> dict[str, object]:
    """``extra=`` for a log call: the line's ids (and ``more``) as fields, those given alone."""
    given = {"event_id": event_id, "task": task, "attempt": attempt, "intent": intent, "kind": kind, **more}
    return {_FIELDS: {name: value for name, value in given.items() if value is not None}}


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(TEXT_LAYOUT)

    def format(self, record: logging.LogRecord) -> str:
        return redacted(super().format(record), held())


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields: Mapping[str, object] = getattr(record, _FIELDS, None) or {}
        exception = self.formatException(record.exc_info) if record.exc_info else record.exc_text
        if record.stack_info:
            exception = f"{exception or ''}{self.formatStack(record.stack_info)}"
        return json_line(created=record.created, level=record.levelname, logger=record.name,
                         message=record.getMessage(), fields=fields, secrets=held(), exception=exception)


def formatter(log_format: str) -> logging.Formatter:
    return JsonFormatter() if log_format == JSON else TextFormatter()


def configure(verbose: bool, log_format: str = TEXT) -> None:
    """The root logger's lines on stderr in ``log_format`` (kept as they are where a handler is set)."""
    _CHOSEN[:] = [log_format]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(log_format))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])
    if log_format == JSON:
        logging.captureWarnings(True)
        sys.excepthook = _uncaught
        threading.excepthook = lambda died: _uncaught(died.exc_type, died.exc_value, died.exc_traceback)


def line(message: str, *, level: str = "info", logger: str = "connector.run",
         fields: Mapping[str, object] | None = None, detail: str = "") -> str:
    """One of ``run``'s own lines (a transition, ``running``, ``stopped``, an ``error:``) as it is printed;
    ``detail``: the lines after it (a stack dump's), in the text format, or its ``detail`` field."""
    if _CHOSEN[0] != JSON:
        return redacted(f"{message}\n{detail}" if detail else message, held())
    said = {**(fields or {}), **({"detail": detail} if detail else {})}
    return json_line(created=time.time(), level=level, logger=logger, message=message, fields=said,
                     secrets=held())


def _uncaught(kind: type[BaseException], error: BaseException | None, trace: TracebackType | None) -> None:
    trace_text = "".join(traceback.format_exception(kind, error, trace))
    said = json_line(created=time.time(), level="critical", logger="connector",
                     message=f"uncaught {kind.__name__}", fields={}, secrets=held(), exception=trace_text)
    print(said, file=sys.stderr, flush=True)
