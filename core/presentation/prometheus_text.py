"""Prometheus's text exposition format (0.0.4), rendered from values: each family's ``# HELP`` and
``# TYPE`` once, then its samples together. A label value escapes backslash, double quote and
newline; help text is one line (each run of whitespace one space, a backslash escaped); a value
that is not finite is ``+Inf``, ``-Inf`` or ``NaN``. A name or a label name outside Prometheus's
alphabet is a bug here, never output."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")


class MetricType(StrEnum):
    counter = "counter"
    gauge = "gauge"


@dataclass(frozen=True, slots=True)
class Sample:
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass(frozen=True, slots=True)
class Family:
    name: str  # a counter's ends in _total, as its samples' do
    help: str
    type: MetricType
    samples: tuple[Sample, ...]


def exposition(families: tuple[Family, ...]) -> str:
    out: list[str] = []
    for family in families:
        if not _NAME.match(family.name):
            raise ValueError(f"not a metric name: {family.name!r}")
        out.append(f"# HELP {family.name} {_escape_help(family.help)}")
        out.append(f"# TYPE {family.name} {family.type}")
        out.extend(f"{family.name}{_labels(sample.labels)} {_value(sample.value)}"
                   for sample in family.samples)
    return "".join(line + "\n" for line in out)


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    for name, _ in labels:
        if not _LABEL_NAME.match(name) or name.startswith("__"):
            raise ValueError(f"not a label name: {name!r}")
    return "{" + ",".join(f'{name}="{_escape_label(value)}"' for name, value in labels) + "}"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\")  # one line, as a reader strips it


def _value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))
