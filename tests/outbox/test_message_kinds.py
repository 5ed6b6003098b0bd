"""Every message kind has every part in ``core.message_kinds.KINDS`` (rule 1 of core.message_kinds)."""

from __future__ import annotations

import importlib.util

import pytest

from core.intent_kinds import IntentKind
from core.message_kinds import KINDS, ClaimNeeds
from core.urgency import URGENCY


def test_every_kind_has_a_row_with_every_part() -> None:
    assert set(KINDS) == set(IntentKind)
    for kind, spec in KINDS.items():
        assert spec.label, kind
        assert isinstance(spec.urgency, int), kind
        assert spec.urgency >= 0, kind
        assert isinstance(spec.needs, ClaimNeeds), kind


def test_the_urgency_tiers_are_the_tables() -> None:
    assert {kind for tier in URGENCY for kind in tier} == set(IntentKind)


def test_a_kind_without_a_row_fails_at_import() -> None:
    source = importlib.util.find_spec("core.message_kinds")
    assert source is not None
    assert source.loader is not None
    module = importlib.util.module_from_spec(source)
    code = source.loader.get_source("core.message_kinds")  # type: ignore[attr-defined]
    row = '    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.nothing),\n'
    assert row in code
    with pytest.raises(ImportError, match="completion"):
        exec(compile(code.replace(row, ""), "core/message_kinds.py", "exec"), module.__dict__)
