-- Migration 12: a hold revokes the redispatches still waiting on a live task (reference spec
-- 5.5), and `bin/connect import` closes a record the reconciliation file decided done (5.6).
--
-- revoked_redispatches: one row per pending redispatch (a decision with pending_task_id) a hold
--              revoked before its task ended: the hold's generation, when, and the note a person
--              reads. A revoked decision is never applied; a person redispatches again after
--              the release. Decisions themselves never change (migration 0006), so the
--              revocation is a row of its own.
--
-- The trigger that applies a pending redispatch as its task ends is rewritten to skip a
-- revoked one. The record's terminal trigger is rewritten with one more decision edge:
--   completed -> discarded(imported_done)   an import's entry decided done, when the outcome
--                                           settled unknown or failed.
-- A record the ledger never saw, decided done, is written as a tombstone: discarded
-- (imported_done) from its first row (shell.ledger.records.tombstone), so intake never admits it.
--
-- Both triggers are written in a layout of their own (two-space indents), so each rule's proof
-- (tests/proofs) names this migration's text, the one that runs, and not the dropped one's.

CREATE TABLE revoked_redispatches (
    decision_id INTEGER PRIMARY KEY REFERENCES decisions (id),
    generation  INTEGER NOT NULL REFERENCES generations (id),
    revoked_at  TEXT    NOT NULL,
    note        TEXT    NOT NULL CHECK (note <> '')
) STRICT;

DROP TRIGGER task_events_retirement_applies_redispatch;

CREATE TRIGGER task_events_retirement_applies_redispatch
AFTER UPDATE OF retired_at ON task_events
WHEN OLD.retired_at IS NULL AND NEW.retired_at IS NOT NULL
 AND NEW.outcome IN ('unknown', 'failed')
 AND (SELECT state FROM events WHERE id = NEW.event_id) = 'completed'
 AND EXISTS (SELECT 1 FROM decisions d
              WHERE d.id = (SELECT MAX(id) FROM decisions WHERE event_id = NEW.event_id)
                AND d.action = 'redispatch' AND d.pending_task_id = NEW.task_id
                AND NOT EXISTS (SELECT 1 FROM revoked_redispatches r WHERE r.decision_id = d.id))
BEGIN
  INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_reason, from_outcome,
                         from_revision, to_state, note)
  SELECT 'redispatch', e.id, d.decided_by, NEW.retired_at, 'completed', e.reason, NEW.outcome, e.revision,
         'admitted', 'applied when task ' || NEW.task_id || ' ended (decision ' || d.id || ')'
    FROM events e JOIN decisions d ON d.id = (SELECT MAX(id) FROM decisions WHERE event_id = e.id)
   WHERE e.id = NEW.event_id;
  UPDATE events SET state = 'admitted', reason = '', revision = revision + 1,
         updated_at = NEW.retired_at, decided_at = NEW.retired_at
   WHERE id = NEW.event_id;
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
             AND NEW.reason = 'by_operator' AND d.from_outcome = 'unknown')
         OR (d.action = 'discard' AND NEW.state = 'discarded'
             AND NEW.reason = 'imported_done' AND d.from_outcome IN ('unknown', 'failed')))
       AND d.from_outcome = (SELECT outcome FROM task_events WHERE event_id = NEW.id
                              ORDER BY task_id DESC LIMIT 1)))
BEGIN
  SELECT RAISE(ABORT, 'a completed or discarded record is terminal: its state never changes');
END;
