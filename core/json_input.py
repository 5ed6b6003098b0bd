"""Every JSON the program reads, decoded in one place and within bounds: configuration, token and
import files, Basecamp's and Launchpad's answers, tickets, live frames, a worker's MCP lines.

An input longer than ``max_bytes`` (UTF-8 bytes) is refused before anything is parsed, and one
nested deeper than ``max_depth`` before the parser sees it, by one linear pass over strings and
brackets: a deep answer is a refusal like any other, never a ``RecursionError``. Text not UTF-8,
not JSON, or holding ``NaN``/``Infinity`` is refused in the parser's own words (line and column),
which quote no part of the input. A refusal is a value, not a ``Result``: ``status`` reads through
here and never imports ``returns``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64  # Basecamp's answers nest under ten deep, the program's files less
# A whole string (skipped), a bracket, or a quote that opens a string never closed.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]', re.DOTALL)


@dataclass(frozen=True, slots=True)
class Decoded:
    value: Any


@dataclass(frozen=True, slots=True)
class JsonRefused:
    reason: str


def decode_json(
    raw: bytes | str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Decoded | JsonRefused:
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        return JsonRefused(f"larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as error:
        return JsonRefused(f"not JSON (not UTF-8 at byte {error.start})")
    deepest = _depth(text, max_depth)
    if deepest is not None:
        return JsonRefused(deepest)
    try:
        return Decoded(json.loads(text, parse_constant=_no_constant))
    except ValueError as error:
        return JsonRefused(f"not JSON ({_where(error)})")
    except RecursionError:  # the depth pass keeps it from here; a second wall, not the first
        return JsonRefused(f"nested deeper than {max_depth}")


def json_or_none(raw: bytes | str, *, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value in ``raw``, or None when it is refused (for a reader to whom both are no answer)."""
    decoded = decode_json(raw, max_bytes=max_bytes)
    return decoded.value if isinstance(decoded, Decoded) else None


def _depth(text: str, max_depth: int) -> str | None:
    depth = 0
    for token in _TOKENS.finditer(text):
        match token.group():
            case "[" | "{":
                depth += 1
                if depth > max_depth:
                    return f"nested deeper than {max_depth}"
            case "]" | "}":
                depth -= 1
            case '"':
                return None  # a string never closed: the parser says where
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _where(error: ValueError) -> str:
    """The parser's words without the part of the input some of them quote."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (line {error.lineno}, column {error.colno})"
    return str(error).split(":", 1)[0]
