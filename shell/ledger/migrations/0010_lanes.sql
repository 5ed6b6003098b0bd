-- Migration 10: intake's lanes (issue 12; reference spec 1.3 and 2.1).
--
-- events.lane: the lane that recorded the event first: 'poll' (the events.json walk),
--              'live' (the WebSocket), 'repair' (a repair walk). Diagnostic only: dedupe is
--              by id, and the same event ordinarily arrives on both lanes; whichever comes
--              first writes the row, the other finds it. Rows written before this
--              migration came from the poll lane, the only one there was.
-- live_lane:   one row (id = 1): the live lane's state as the running connector last wrote
--              it, for status. state: 'connecting', 'connected' or 'down'; since: when it
--              entered that state; why: a short reason for 'down' (never a ticket or a
--              URL's query); connects: subscriptions confirmed since the connector started;
--              overflows: overflow frames heard (events the server dropped; the poll lane,
--              which alone moves the position, serves them).

ALTER TABLE events ADD COLUMN lane TEXT NOT NULL DEFAULT 'poll';

CREATE TABLE live_lane (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state      TEXT    NOT NULL,
    since      TEXT    NOT NULL,
    why        TEXT    NOT NULL DEFAULT '',
    connects   INTEGER NOT NULL DEFAULT 0 CHECK (connects >= 0),
    overflows  INTEGER NOT NULL DEFAULT 0 CHECK (overflows >= 0),
    updated_at TEXT    NOT NULL
) STRICT;

-- gaps:   a stretch of the feed intake may never read: a 410 said the position predates the
--         feed's epoch, and intake resumed after resumed_after_id; after_id was the last event
--         served before. Kept for status.
-- losses: a stretch the live lane did not hear: an overflow (the server dropped events) or a
--         dropped connection. Events after after_id, through through_id (NULL until an event
--         heard after the loss bounds it: then the walk reads what the feed serves). From
--         due_at on, a repair walk reads events.json since=cursor under the lane's filters and
--         records what no lane has (lane 'repair'; recovered counts them); the loss is
--         'repaired' once the walk passed through_id (or reached the feed's end), and
--         'unrecovered' when window_ends_at passed first.

CREATE TABLE gaps (
    id               INTEGER PRIMARY KEY,
    after_id         INTEGER NOT NULL CHECK (after_id >= 0),
    resumed_after_id INTEGER NOT NULL CHECK (resumed_after_id >= 0),
    recorded_at      TEXT    NOT NULL
) STRICT;

CREATE TABLE losses (
    id             INTEGER PRIMARY KEY,
    cause          TEXT    NOT NULL CHECK (cause IN ('overflow', 'dropped')),
    after_id       INTEGER NOT NULL CHECK (after_id >= 0),
    through_id     INTEGER CHECK (through_id IS NULL OR through_id > after_id),
    cursor         INTEGER NOT NULL CHECK (cursor >= after_id),
    state          TEXT    NOT NULL DEFAULT 'open',
    recovered      INTEGER NOT NULL DEFAULT 0 CHECK (recovered >= 0),
    recorded_at    TEXT    NOT NULL,
    due_at         TEXT    NOT NULL,
    window_ends_at TEXT    NOT NULL,
    settled_at     TEXT
) STRICT;

CREATE INDEX losses_open ON losses (due_at) WHERE state = 'open';
