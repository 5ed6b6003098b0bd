"""What the stand-in accepts when it is told how to behave: finite, bounded numbers everywhere,
and control bodies it can read, or a ``ValueError`` naming what is wrong (a 400 at the control
API, a usage error on the command line).

Rules:
1. A duration is a finite number of seconds from 0 to ``MAX_SECONDS`` (a day); a window is more
   than 0. NaN and Infinity are refused, never slept on.
2. A count is a whole number (not a boolean) up to ``MAX_COUNT``.
3. An ``oversize`` body is at most ``MAX_OVERSIZE_MIB``; a token lifetime at most
   ``MAX_TOKEN_LIFETIME_SECONDS`` (later is past what a date can hold).
4. A control body (``read_json``) is UTF-8 JSON with no NaN or Infinity (nor ``1e400``), nested at
   most ``MAX_DEPTH`` deep; anything else is a ``ValueError``, never a dropped connection."""

from __future__ import annotations

import json
import math

MAX_SECONDS = 86_400.0
MAX_COUNT = 1_000_000
MAX_OVERSIZE_MIB = 64
MAX_TOKEN_LIFETIME_SECONDS = 10 * 365 * 86_400
MAX_DEPTH = 32


def seconds(value: object, what: str, *, positive: bool = False) -> float:
    """Rule 1: ``value`` as seconds, or ValueError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} is a number of seconds, not {value!r}")
    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS or (positive and value == 0):
        low = "more than 0" if positive else "0"
        raise ValueError(f"{what} is a finite number of seconds from {low} to {MAX_SECONDS:g}, not {value!r}")
    return float(value)


def whole(value: object, what: str, *, low: int = 0, high: int = MAX_COUNT) -> int:
    """Rule 2: ``value`` as a whole number from ``low`` to ``high``, or ValueError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} is a whole number, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{what} is from {low} to {high}, not {value}")
    return value


def mebibytes(value: object, what: str) -> float:
    """Rule 3: ``value`` as an ``oversize`` body's MiB, more than 0, or ValueError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} is a number of MiB, not {value!r}")
    if not math.isfinite(value) or not 0 < value <= MAX_OVERSIZE_MIB:
        raise ValueError(f"{what} is more than 0 MiB and at most {MAX_OVERSIZE_MIB}, not {value!r}")
    return float(value)


def _no_constant(name: str) -> object:
    raise ValueError(f"the body holds {name}, which is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the body holds {text}, a number too large to be finite")
    return value


def read_json(body: bytes) -> object:
    """Rule 4."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    if _depth(text) > MAX_DEPTH:
        raise ValueError(f"the body is nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ValueError(f"the body is not JSON: {error.msg} at {where}") from None


def _depth(text: str) -> int:
    """How deep brackets nest outside strings (read before ``json`` recurses into them)."""
    deepest = depth = 0
    in_string = escaped = False
    for character in text:
        if escaped:
            escaped = False
        elif in_string:
            escaped = character == "\\"
            in_string = character != '"'
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "]}":
            depth -= 1
    return deepest
