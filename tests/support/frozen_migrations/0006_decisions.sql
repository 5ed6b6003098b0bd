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
--
-- One more edge, also a person's only: dispatched -> discarded, for a follow-up that joined a
-- live task and was never handed out (its live row still at delivery admitted, never pulled).
-- Its row stays on the task, unservable (its record is discarded), and is retired with it.
--
-- A record a person moves to blocked or discarded keeps no content: its snapshot goes, as
-- admission's own verdicts drop it (events_no_content_unless_runnable).

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

DROP TRIGGER events_state_edges;

CREATE TRIGGER events_state_edges
BEFORE UPDATE OF state ON events
WHEN NEW.state <> OLD.state AND OLD.state NOT IN ('completed', 'discarded') AND NOT (
       (OLD.state = 'seen' AND NEW.state IN ('admitted', 'queued', 'blocked', 'discarded'))
    OR (OLD.state = 'blocked' AND NEW.state IN ('admitted', 'queued', 'discarded'))
    OR (OLD.state = 'admitted' AND NEW.state IN ('queued', 'blocked', 'dispatched', 'discarded',
                                                 'held'))
    OR (OLD.state = 'queued' AND NEW.state IN ('blocked', 'dispatched', 'discarded', 'held'))
    OR (OLD.state = 'dispatched' AND NEW.state IN ('admitted', 'blocked', 'completed', 'discarded'))
    OR (OLD.state = 'held' AND NEW.state IN ('admitted', 'queued', 'blocked', 'discarded')))
BEGIN
    SELECT RAISE(ABORT, 'a seen record moves only to admitted, queued, blocked or discarded')
     WHERE OLD.state = 'seen';
    SELECT RAISE(ABORT, 'a blocked record moves only to admitted, queued or discarded')
     WHERE OLD.state = 'blocked';
    SELECT RAISE(ABORT,
        'an admitted record moves only to queued, blocked, dispatched, discarded or held')
     WHERE OLD.state = 'admitted';
    SELECT RAISE(ABORT, 'a queued record moves only to blocked, dispatched, discarded or held')
     WHERE OLD.state = 'queued';
    SELECT RAISE(ABORT, 'a dispatched record moves only to admitted, blocked, completed or discarded')
     WHERE OLD.state = 'dispatched';
    SELECT RAISE(ABORT, 'a held record moves only to admitted, queued, blocked or discarded')
     WHERE OLD.state = 'held';
END;

-- dispatched -> discarded: only a person's discard made at this revision, and only while no row
-- of the record was ever exposed or pulled (no worker can have seen the instruction).
CREATE TRIGGER events_discarded_only_if_never_handed_out
BEFORE UPDATE OF state ON events
WHEN OLD.state = 'dispatched' AND NEW.state = 'discarded' AND NOT (
    NEW.reason = 'by_operator'
    AND NOT EXISTS (SELECT 1 FROM task_events
                     WHERE event_id = NEW.id AND (delivery <> 'admitted' OR pulled_at IS NOT NULL))
    AND EXISTS (SELECT 1 FROM decisions d
                 WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = NEW.id)
                   AND d.action = 'discard' AND d.from_state = 'dispatched'
                   AND d.from_revision = OLD.revision AND d.to_state = 'discarded'))
BEGIN
    SELECT RAISE(ABORT,
        'a dispatched record is discarded only by a person, and only if no worker was handed it');
END;

-- Content only on a record that may still run: a move to blocked or discarded drops the snapshot.
CREATE TRIGGER events_no_content_unless_runnable
AFTER UPDATE OF state ON events
WHEN NEW.state IN ('blocked', 'discarded') AND NEW.snapshot IS NOT NULL
BEGIN
    UPDATE events SET snapshot = NULL WHERE id = NEW.id;
END;
