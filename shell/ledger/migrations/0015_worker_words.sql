-- Migration 15: a worker's words go through the outbox (issue 21 part 1).
--
-- Rules this file holds at the database:
--  1. The outbox's kind names the worker's three beside the connector's four: worker_ack (its
--     acknowledgement), worker_reply (its reply at completion), worker_note (a message before
--     completion). Same table, same states, same edges, same triggers: the same promise.
--  2. A worker message's intent names its task and event (the rows it reports on).
--  3. A task row's ack_id is written once: with the move exposed -> delivered (a worker that
--     posted with tools of its own), or as the receipt of that row's own worker_ack intent, in
--     the transaction that records the receipt. An id no worker reported and no worker intent
--     received is still refused (the rule migration 3 held).
--
-- The kind's vocabulary (rule 1) is core.intent_kinds.IntentKind, held by a trigger generated
-- from it (shell.ledger.rules); this migration once widened the CHECK in the table's text.

CREATE TRIGGER outbox_worker_words_name_their_row
BEFORE INSERT ON outbox
WHEN (NEW.kind = 'worker_ack' OR NEW.kind = 'worker_reply' OR NEW.kind = 'worker_note')
 AND NOT EXISTS (SELECT 1 FROM task_events WHERE task_id = NEW.task_id AND event_id = NEW.event_id)
BEGIN
    SELECT RAISE(ABORT, 'a worker''s words name the task row they report on');
END;

DROP TRIGGER task_events_acknowledgement_settles_once;

CREATE TRIGGER task_events_acknowledgement_settles_once
BEFORE UPDATE OF ack_id ON task_events
WHEN NEW.ack_id IS NOT OLD.ack_id
 AND NOT (OLD.ack_id IS NULL AND OLD.delivery = 'exposed' AND NEW.delivery = 'delivered')
 AND NOT (OLD.ack_id IS NULL AND EXISTS (
    SELECT 1 FROM outbox WHERE kind = 'worker_ack' AND task_id = NEW.task_id
       AND event_id = NEW.event_id AND receipt_id = NEW.ack_id))
BEGIN
    SELECT RAISE(ABORT, 'an acknowledgement id never changes once recorded')
     WHERE OLD.ack_id IS NOT NULL;
    SELECT RAISE(ABORT,
        'an acknowledgement id is written only with the move from exposed to delivered');
END;
