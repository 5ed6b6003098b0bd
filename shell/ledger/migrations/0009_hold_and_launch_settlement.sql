-- Migration 9: the hold a person sets and releases (spec 5.5), the way out of an attempt left
-- mid-launch (issue 11, item 6), and a person's redispatch of a record a live task carries
-- (spec 5.3; issue 11, item 5).
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
-- tasks.token_retired_at: a person's redispatch retired the task's token (its worker's tools are
--              refused from then on) while the task still runs; it ends as every task ends.
-- decisions.pending_task_id: a redispatch authorized while that task carried the record: it is
--              applied when the task ends (below), if the record then settled unknown or failed.
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

ALTER TABLE tasks ADD COLUMN token_retired_at TEXT;
ALTER TABLE decisions ADD COLUMN pending_task_id INTEGER REFERENCES tasks (id);

ALTER TABLE attempts ADD COLUMN left_at TEXT;
ALTER TABLE attempts ADD COLUMN settled_by TEXT;
ALTER TABLE attempts ADD COLUMN settled_as TEXT NOT NULL DEFAULT '';

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

-- A redispatch pending on a task is applied as its row retires (the task's end): the record,
-- completed unknown or failed, gets the decision row the terminal trigger asks for (who decided
-- is the person who authorized it) and moves to admitted in the same transaction. A success, a
-- record settled back to waiting, and a pending decision a later one replaced are left alone.
CREATE TRIGGER task_events_retirement_applies_redispatch
AFTER UPDATE OF retired_at ON task_events
WHEN OLD.retired_at IS NULL AND NEW.retired_at IS NOT NULL AND NEW.outcome IN ('unknown', 'failed')
 AND (SELECT state FROM events WHERE id = NEW.event_id) = 'completed'
 AND EXISTS (SELECT 1 FROM decisions d
              WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = NEW.event_id)
                AND d.action = 'redispatch' AND d.pending_task_id = NEW.task_id)
BEGIN
    INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_reason, from_outcome,
                           from_revision, to_state, note)
    SELECT 'redispatch', e.id, d.decided_by, NEW.retired_at, 'completed', e.reason, NEW.outcome, e.revision,
           'admitted', 'applied when task ' || NEW.task_id || ' ended (decision ' || d.id || ')'
      FROM events e JOIN decisions d ON d.id = (SELECT MAX(id) FROM decisions WHERE event_id = e.id)
     WHERE e.id = NEW.event_id;
    UPDATE events SET state = 'admitted', reason = '', revision = revision + 1, updated_at = NEW.retired_at,
                      decided_at = NEW.retired_at
     WHERE id = NEW.event_id;
END;
