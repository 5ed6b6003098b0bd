-- Migration 16: the agent's inbox, intake's third lane (issue 23).
--
-- events.lane: may also be 'inbox' -- the event was recorded first by the inbox lane (an event
--              addressed to the agent that neither the feed nor the live lane had brought: a
--              braked one, or one past a stale feed position). The lane's vocabulary is
--              core.intake_status.LANES, held by a trigger generated from it (shell.ledger.rules);
--              this migration once widened the CHECK in the table's text.
-- inbox_lane:  one row (id = 1): the inbox lane's own position and what is known of the inbox.
--              position: the inbox's opaque token, a credential ('' before the first page, or
--              dropped after a 400/409/410); last_item_id: the newest addressing id whose events
--              are recorded (where a dropped position resumes); floor_id: events at or below it
--              are history from before the lane entered, never recorded from the inbox;
--              verdict: 'available', 'not_for_principal' (a 403: this principal has no inbox --
--              not asked again while the connector runs) or 'failing'; verdict_since: when it
--              entered that verdict; why: a short reason (never a position or a query);
--              read_at: the last page read. Written only with the page's events rows, after them.
-- lane_news:   one row per lane: the last time that lane recorded an event no other lane had
--              (last_new_at, last_new_id), and how many (news), for status.


CREATE TABLE inbox_lane (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    position      TEXT    NOT NULL DEFAULT '',
    last_item_id  INTEGER NOT NULL DEFAULT 0 CHECK (last_item_id >= 0),
    floor_id      INTEGER NOT NULL DEFAULT 0 CHECK (floor_id >= 0),
    verdict       TEXT    NOT NULL CHECK (verdict = 'available' OR verdict = 'not_for_principal' OR verdict = 'failing'),
    verdict_since TEXT    NOT NULL,
    why           TEXT    NOT NULL DEFAULT '',
    read_at       TEXT,
    updated_at    TEXT    NOT NULL
) STRICT;

CREATE TABLE lane_news (
    lane        TEXT    PRIMARY KEY CHECK (lane = 'poll' OR lane = 'live' OR lane = 'repair' OR lane = 'inbox'),
    last_new_at TEXT    NOT NULL,
    last_new_id INTEGER NOT NULL,
    news        INTEGER NOT NULL DEFAULT 0 CHECK (news >= 0)
) STRICT;
