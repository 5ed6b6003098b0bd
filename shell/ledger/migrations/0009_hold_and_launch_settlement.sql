-- Migration 9: the hold a person sets and releases (spec 5.5), and the way out of an attempt
-- left mid-launch (issue 11, item 6).
--
-- generations: one row per hold set (``bin/connect hold``, ``run --hold``): who, when, why,
--              and when and by whom it was released. The hold marker names the newest.
-- hold_marker: gains cause and generation. A standing hold keeps its first setter and time;
--              a second hold only moves its generation on.
-- events.review: 1 on every record that was not terminal when a hold was set (it waits for
--              a person's review); the waiting ones (admitted, queued) moved to held with it.
-- attempts.left_at: when a start's recovery found the attempt launching with no recorded
--              process, left by a process that is gone: only such an attempt a person may
--              settle (``bin/connect settle-launch``). settled_by / settled_as record that
--              person and what they found ('ran' or 'did_not_run').
--
-- Triggers (the second wall; the dispatcher and get_dispatch ask first):
--   attempts_refused_under_hold   no attempt is inserted while the hold marker stands;
--   task_events_no_first_exposure_under_hold   no delivery moves admitted -> exposed under it.

CREATE TABLE generations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    held_by     TEXT    NOT NULL CHECK (held_by <> '' AND held_by NOT GLOB '*[' || char(10, 13) || ']*'),
    held_at     TEXT    NOT NULL,
    cause       TEXT    NOT NULL DEFAULT '' CHECK (cause NOT GLOB '*[' || char(10, 13) || ']*'),
    released_by TEXT,
    released_at TEXT,
    CHECK ((released_by IS NULL) = (released_at IS NULL))
) STRICT;

ALTER TABLE hold_marker ADD COLUMN cause TEXT NOT NULL DEFAULT '';
ALTER TABLE hold_marker ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;

ALTER TABLE events ADD COLUMN review INTEGER NOT NULL DEFAULT 0 CHECK (review IN (0, 1));

ALTER TABLE attempts ADD COLUMN left_at TEXT;
ALTER TABLE attempts ADD COLUMN settled_by TEXT;
ALTER TABLE attempts ADD COLUMN settled_as TEXT NOT NULL DEFAULT ''
    CHECK (settled_as IN ('', 'ran', 'did_not_run'));

CREATE TRIGGER attempts_refused_under_hold
BEFORE INSERT ON attempts
WHEN EXISTS (SELECT 1 FROM hold_marker)
BEGIN
    SELECT RAISE(ABORT, 'the connector is held: nothing is launched until it is released');
END;

CREATE TRIGGER task_events_no_first_exposure_under_hold
BEFORE UPDATE OF delivery ON task_events
WHEN OLD.delivery = 'admitted' AND NEW.delivery = 'exposed' AND EXISTS (SELECT 1 FROM hold_marker)
BEGIN
    SELECT RAISE(ABORT, 'the connector is held: no instruction is handed out until it is released');
END;
