"""`bin/connect status` over a large ledger: every query it runs reads an index, never a whole
table, and its connection keeps a bounded page cache, so its time and memory do not follow the
number of records (``bin/bench scale`` measures both; these tests hold the plans that make it so)."""

from __future__ import annotations

import re
from pathlib import Path

from shell.ledger.connection import READ_ONLY_CACHE_KIB, Ledger, open_ledger_read_only
from shell.ledger.intake import read_lane_state, read_loss_counts
from shell.ledger.status import read_snapshot
from tests.support.ledger_world import LedgerWorld

GROWING = ("events", "outbox", "attempts", "tasks", "task_events")
"""The tables that grow with use; the others hold a row or a few."""


def queries_status_runs(path: Path) -> list[str]:
    seen: list[str] = []
    with open_ledger_read_only(path) as ledger:
        with ledger.read() as connection:
            connection.set_trace_callback(seen.append)
        read_lane_state(ledger)
        read_loss_counts(ledger)
        read_snapshot(ledger)
    return [sql for sql in dict.fromkeys(seen) if sql.lstrip().upper().startswith("SELECT")]


def test_every_query_of_status_reads_a_growing_table_through_an_index(ledger: Ledger) -> None:
    path = ledger.path
    queries = queries_status_runs(path)
    assert len(queries) >= 8
    with open_ledger_read_only(path) as reader, reader.read() as connection:
        for sql in queries:
            plan = [str(row[3]) for row in connection.execute("EXPLAIN QUERY PLAN " + sql)]
            growing = any(re.search(rf"\b{table}\b", step) for step in plan for table in GROWING)
            for step in plan:
                whole = re.fullmatch(r"SCAN (\w+)(?: \w+)?", step)  # a table read row by row, no index
                assert not (whole and whole[1] in GROWING), f"{sql}\n  {plan}"
                # a count grouped through a sorter holds every row it counts
                assert not (growing and "TEMP B-TREE FOR GROUP BY" in step), f"{sql}\n  {plan}"
            if "FROM attempts ORDER BY launched_at" in sql:
                assert not any("TEMP B-TREE" in step for step in plan), f"{sql}\n  {plan}"


def test_the_read_only_connection_keeps_a_bounded_page_cache(ledger: Ledger) -> None:
    with open_ledger_read_only(ledger.path) as reader, reader.read() as connection:
        (size,) = connection.execute("PRAGMA cache_size").fetchone()
    assert size == -READ_ONLY_CACHE_KIB  # negative: KiB, whatever the page size
    assert READ_ONLY_CACHE_KIB <= 512


def test_status_never_steps_over_the_whole_events_index(ledger: Ledger) -> None:
    """Records are read by state, through an index narrowed to a state or a range of states,
    never the whole of one: the blocked ones (most of a ledger nothing routes) are counted once,
    by reason, and their count by state is the sum of those, not a second pass."""
    with open_ledger_read_only(ledger.path) as reader, reader.read() as connection:
        for sql in queries_status_runs(ledger.path):
            plan = [str(row[3]) for row in connection.execute("EXPLAIN QUERY PLAN " + sql)]
            assert not any(step.startswith("SCAN events") for step in plan), f"{sql}\n  {plan}"


def test_the_counts_by_state_hold_every_state_on_either_side_of_blocked(world: LedgerWorld) -> None:
    for event_id in range(1, 10):
        world.seen(event_id)
    for event_id, state, reason in ((1, "admitted", ""), (2, "admitted", ""), (3, "blocked", "no_route"),
                                    (4, "blocked", "no_route"), (5, "blocked", "spawn_failed"),
                                    (6, "queued", ""), (7, "discarded", "")):  # fmt: skip
        world.verdict(event_id, state, reason)
    snapshot = read_snapshot(world.ledger)
    assert snapshot.state_counts == (("admitted", 2), ("blocked", 3), ("discarded", 1), ("queued", 1), ("seen", 2))
    assert snapshot.blocked == (("no_route", 2), ("spawn_failed", 1))
