"""A state directory a shadow run left: a configuration, the shadow's ledger with records in
several states, and (optionally) the connector's own older ledger; and what promote must leave."""

from __future__ import annotations

from pathlib import Path

from core.configuration import Configuration, Route
from shell.clock import FakeClock
from shell.ledger import promotion
from shell.ledger.connection import open_ledger, open_ledger_read_only
from shell.state.config import SHADOW_DIRECTORY, StatePaths, save_config
from tests.support.ids import set_apart
from tests.support.ledger_world import PROJECT, LedgerWorld

ADMITTED = (31, 32)
BLOCKED = 33
SEEN = 34
DISCARDED = 35
OLD = 77  # the only record of the connector's own older ledger


def shadow_state(tmp_path: Path, *, old_ledger: bool = True) -> Path:
    """``tmp_path/state``: configured, its shadow ledger holding the records above."""
    state = tmp_path / "state"
    (state / SHADOW_DIRECTORY).mkdir(mode=0o700, parents=True)
    state.chmod(0o700)
    token = tmp_path / "token"
    token.write_text("token-never-shown\n")
    token.chmod(0o600)
    work = tmp_path / "work"  # the route's, beside the state and the token: a route over them is refused
    work.mkdir(exist_ok=True)
    save_config(
        StatePaths.at(state).config,
        Configuration(
            account_id=999,
            base_url="https://3.basecampapi.com",
            agent_id=42,
            token_file=str(token),
            routes=(Route(PROJECT, str(work)),),
            worker_command=("true",),
        ),
    )
    with open_ledger(StatePaths.at(state / SHADOW_DIRECTORY).ledger, clock=FakeClock()) as shadow:
        world = LedgerWorld(set_apart(shadow))
        for event_id in ADMITTED:
            world.request(event_id)
        world.seen(BLOCKED)
        world.verdict(BLOCKED, "blocked", "route_missing")
        world.seen(SEEN)
        world.seen(DISCARDED)
        world.verdict(DISCARDED, "discarded", "not_addressed")
    if old_ledger:  # settled: an admitted record and nothing in flight (``core.promotion``)
        with open_ledger(StatePaths.at(state).ledger, clock=FakeClock()) as old:
            world = LedgerWorld(set_apart(old))
            world.seen(OLD)
            world.verdict(OLD, "admitted", acknowledge=False)
    return state


def records(ledger: Path) -> dict[int, tuple[str, int]]:
    """Each record's (state, review tag)."""
    with open_ledger_read_only(ledger) as opened, opened.read() as connection:
        return {
            row[0]: (row[1], row[2]) for row in connection.execute("SELECT id, state, review FROM events")
        }


def assert_promoted(state: Path) -> None:
    """Held, every shadow record accounted for, the old ledger kept aside, no marker."""
    ledger = StatePaths.at(state).ledger
    assert promotion.hold_cause(ledger) is not None
    assert (promotion.hold_cause(ledger) or "").startswith("shadow promote ")
    assert records(ledger) == {
        31: ("held", 1),
        32: ("held", 1),
        BLOCKED: ("blocked", 1),
        SEEN: ("seen", 1),
        DISCARDED: ("discarded", 0),
    }
    assert not StatePaths.at(state / SHADOW_DIRECTORY).ledger.exists()
    assert not (state / "promote.json").exists()
    kept = sorted(state.glob("ledger.before-promote-*.sqlite3"))
    assert len(kept) == 1
    assert records(kept[0]) == {OLD: ("admitted", 0)}
    assert not [path for path in state.iterdir() if path.name.endswith(("-wal", "-journal"))]
