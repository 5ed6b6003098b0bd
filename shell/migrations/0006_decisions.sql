-- Migration 6: a person's decisions on a record (spec 5.3, 5.4; issue 5).
--
-- decisions: one row per redispatch or discard a person made, written in the transaction of
--            the state change it causes, naming who decided and what the record was before.
--            from_revision is the record's revision when the decision was made: a decision
--            moves the record once, because every state change bumps the revision.
--
-- The record's terminal trigger is rewritten: completed and discarded stay terminal, except
-- for the two moves a person's decision makes after the outcome settled (no live task row
-- carries the record any more):
--   completed -> admitted   a redispatch, when the outcome is unknown or failed;
--   completed -> discarded  a discard (reason by_operator), when the outcome is unknown.
-- Each needs the record's newest decision to be that move, made at the record's current
-- revision. A success is never run again; discarded never leaves.

CREATE TABLE decisions (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    action             TEXT    NOT NULL CHECK (action IN ('redispatch', 'discard')),
    event_id           INTEGER NOT NULL REFERENCES events (id),
    decided_by         TEXT    NOT NULL CHECK (decided_by <> '' AND decided_by NOT GLOB '*[' || char(10, 13) || ']*'),
    decided_at         TEXT    NOT NULL,
    from_state         TEXT    NOT NULL,
    from_reason        TEXT    NOT NULL DEFAULT '',
    from_outcome       TEXT    NOT NULL DEFAULT '',
    from_revision      INTEGER NOT NULL,
    to_state           TEXT    NOT NULL,
    note               TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX decisions_event ON decisions (event_id, id);

CREATE TRIGGER decisions_are_kept
BEFORE UPDATE ON decisions
BEGIN
    SELECT RAISE(ABORT, 'a decision is a record of what a person decided: it never changes');
END;

CREATE TRIGGER decisions_are_not_deleted
BEFORE DELETE ON decisions
BEGIN
    SELECT RAISE(ABORT, 'a decision is never deleted');
END;

DROP TRIGGER events_terminal_is_terminal;

CREATE TRIGGER events_terminal_is_terminal
BEFORE UPDATE OF state ON events
WHEN NEW.state <> OLD.state AND OLD.state IN ('completed', 'discarded') AND NOT (
    OLD.state = 'completed'
    AND NOT EXISTS (SELECT 1 FROM task_events WHERE event_id = NEW.id AND retired_at IS NULL)
    AND EXISTS (
        SELECT 1 FROM decisions d
         WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = NEW.id)
           AND d.from_state = 'completed'
           AND d.from_revision = OLD.revision
           AND d.to_state = NEW.state
           AND ((d.action = 'redispatch' AND NEW.state = 'admitted'
                 AND d.from_outcome IN ('unknown', 'failed'))
             OR (d.action = 'discard' AND NEW.state = 'discarded'
                 AND NEW.reason = 'by_operator' AND d.from_outcome = 'unknown'))
           AND d.from_outcome = (SELECT outcome FROM task_events WHERE event_id = NEW.id
                                  ORDER BY task_id DESC LIMIT 1)))
BEGIN
    SELECT RAISE(ABORT, 'a completed or discarded record is terminal: its state never changes');
END;
