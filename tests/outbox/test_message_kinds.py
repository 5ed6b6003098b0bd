"""Every message kind has every part in ``core.message_kinds.KINDS``,
and what the outbox derives from the table covers every kind."""

from __future__ import annotations

import importlib.util
from dataclasses import fields, replace

import pytest

from core.edges import IntentState
from core.intent_kinds import IntentKind
from core.message_kinds import KINDS, Cancel, Claim, ClaimFacts, ClaimNeeds, KindSpec, Where
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from shell.ledger.outbox import claim_snapshot
from shell.ledger.rules import URGENCY
from tests.support.ledger_world import LedgerWorld

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


def test_every_snapshot_a_claim_needs_has_its_reader(ledger: Ledger, world: LedgerWorld) -> None:
    world.request(101)
    with ledger.read() as connection:
        (row,) = rows.intents_in(connection, [IntentState.pending])
        for needs in ClaimNeeds:
            kind = next(kind for kind, spec in KINDS.items() if spec.needs is needs)
            assert isinstance(claim_snapshot(connection, replace(row, kind=kind)), ClaimFacts), needs


def test_the_claim_order_gives_every_kind_its_tables_urgency() -> None:
    assert all(f"WHEN '{kind}' THEN {spec.urgency}" in URGENCY for kind, spec in KINDS.items())
    assert set(KINDS) == set(IntentKind)


def test_a_kind_without_a_row_fails_at_import() -> None:
    source = importlib.util.find_spec("core.message_kinds")
    assert source is not None
    assert source.loader is not None
    module = importlib.util.module_from_spec(source)
    code = source.loader.get_source("core.message_kinds")  # type: ignore[attr-defined]
    row = (
        '    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.words,\n'
        "        completion_key, Where.reply, after_earlier_words, templates.completion),\n"
    )
    assert row in code
    with pytest.raises(ImportError, match="completion"):
        exec(compile(code.replace(row, ""), "core/message_kinds.py", "exec"), module.__dict__)
