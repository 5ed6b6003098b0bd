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

ALTER TABLE events ADD COLUMN lane TEXT NOT NULL DEFAULT 'poll' CHECK (lane IN ('poll', 'live', 'repair'));

CREATE TABLE live_lane (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state      TEXT    NOT NULL CHECK (state IN ('connecting', 'connected', 'down')),
    since      TEXT    NOT NULL,
    why        TEXT    NOT NULL DEFAULT '',
    connects   INTEGER NOT NULL DEFAULT 0 CHECK (connects >= 0),
    overflows  INTEGER NOT NULL DEFAULT 0 CHECK (overflows >= 0),
    updated_at TEXT    NOT NULL
) STRICT;
