-- Migration 11: the outbox's urgency order reads the oldest due intent of each kind.
--
-- ``shell.ledger.outbox.next_due`` asks, per kind, for the oldest pending intent due by now
-- (``core.urgency`` then chooses among the heads). With only ``outbox_due (state, not_before)``
-- each of those four queries walked every due pending row of the other kinds too, and
-- ``bin/bench outbox`` fell from 1.43x the raw-SQLite floor to 2.84x. This index answers each
-- query with one seek.
CREATE INDEX outbox_due_by_kind ON outbox (state, kind, not_before, id);
