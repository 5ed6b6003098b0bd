-- Migration 4: intake's checkpoints on the account event feed.
--
-- checkpoints: one row per filter set (core.feed.FeedFilters.digest(): 64 lowercase hex
--              digits); the ledger is already one file per (account, agent), so the digest
--              is the whole key. position: the feed's opaque token, a credential ('' when
--              dropped after a 400/409, or set back by a 410: then intake resumes with
--              since=last_served_id). last_served_id: the newest event id whose row is
--              committed. Both are written only in the transaction that writes the page's
--              events rows, after them: a position is never ahead of the records.

CREATE TABLE checkpoints (
    filter_digest  TEXT    PRIMARY KEY CHECK (length(filter_digest) = 64
                       AND filter_digest NOT GLOB '*[^0-9a-f]*'),
    position       TEXT    NOT NULL DEFAULT '',
    last_served_id INTEGER NOT NULL DEFAULT 0 CHECK (last_served_id >= 0),
    updated_at     TEXT    NOT NULL
) STRICT;
