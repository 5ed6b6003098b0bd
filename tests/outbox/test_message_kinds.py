"""Every message kind has every part in ``core.message_kinds.KINDS`` (rule 1 of core.message_kinds),
and what the outbox derives from the table covers every kind."""

from __future__ import annotations

import importlib.util
from dataclasses import fields, replace

import pytest

from core.intent_kinds import IntentKind
from core.message_kinds import KINDS, Cancel, Claim, ClaimFacts, ClaimNeeds, KindSpec, Where
from core.urgency import URGENCY
from shell.outbox_claims import READS

PARTS = tuple(field.name for field in fields(KindSpec))


def missing_parts(table: dict[IntentKind, KindSpec]) -> list[str]:
    """``kind.part`` for every part of every row that is absent or not what a part must be."""
    missing = [f"{kind}.row" for kind in IntentKind if kind not in table]
    for kind, spec in table.items():
        checks = {
            "label": isinstance(spec.label, str) and bool(spec.label.strip()),
            "urgency": isinstance(spec.urgency, int) and spec.urgency >= 0,
            "needs": isinstance(spec.needs, ClaimNeeds),
            "key": callable(spec.key),
            "where": isinstance(spec.where, Where),
            "claim": callable(spec.claim) and isinstance(spec.claim(ClaimFacts()), Claim | Cancel),
            "template": callable(spec.template),
        }
        assert set(checks) == set(PARTS), "a part of KindSpec this test does not check"
        missing.extend(f"{kind}.{part}" for part, present in checks.items() if not present)
    return missing


def test_every_kind_has_a_row_with_every_part() -> None:
    assert set(KINDS) == set(IntentKind)
    assert missing_parts(KINDS) == []


@pytest.mark.parametrize("part", PARTS)
def test_a_kind_lacking_any_part_fails_the_walk(part: str) -> None:
    lacking = {**KINDS, IntentKind.completion: replace(KINDS[IntentKind.completion], **{part: None})}  # type: ignore[arg-type]
    assert missing_parts(lacking) == [f"completion.{part}"]


def test_a_kind_without_a_row_fails_the_walk() -> None:
    assert missing_parts({kind: spec for kind, spec in KINDS.items() if kind is not IntentKind.completion}) == [
        "completion.row"
    ]


def test_every_snapshot_a_claim_needs_has_its_reader() -> None:
    assert set(READS) == set(ClaimNeeds)


def test_the_urgency_tiers_are_the_tables() -> None:
    assert {kind for tier in URGENCY for kind in tier} == set(IntentKind)


def test_a_kind_without_a_row_fails_at_import() -> None:
    source = importlib.util.find_spec("core.message_kinds")
    assert source is not None
    assert source.loader is not None
    module = importlib.util.module_from_spec(source)
    code = source.loader.get_source("core.message_kinds")  # type: ignore[attr-defined]
    row = (
        '    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.nothing,\n'
        "        completion_key, Where.reply, always_claimed, templates.completion),\n"
    )
    assert row in code
    with pytest.raises(ImportError, match="completion"):
        exec(compile(code.replace(row, ""), "core/message_kinds.py", "exec"), module.__dict__)
