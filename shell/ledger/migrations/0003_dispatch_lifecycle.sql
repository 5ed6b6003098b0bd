-- Migration 3: the dispatch lifecycle at the database (spec 1.4-1.6).
--
-- core/edges.py holds every lifecycle table as data: which pairs of states exist, and who may
-- take each; the ledger holds the same pairs as rules generated from it (shell.ledger.rules).
-- These triggers are the structural rules that tie the record, its task rows and its tasks
-- together. tests/ledger/test_ledger_dispatch_lifecycle.py tries every pair of every table.
--
-- Already held by migration 1, not repeated here: a guard written '' or armed
-- (task_events_guard_starts_unsettled); a supersession once (tasks_supersession_is_final);
-- task events never deleted.
--
-- A pair that is not an edge is refused by its table's generated edge rule; the structural
-- triggers look only at pairs that are edges, so a refusal's message says which rule it broke. Writing the value a column already has is not a
-- move: these triggers see changes only (a record's repeat, dispatched -> dispatched, is the
-- one exception: it is a redispatch, checked like an entry).
--
-- What these triggers are for: holding the connector's own writes, and those of a second
-- connector on the same file, to the lifecycle. They are not a defence against raw SQL.

-- The record.

-- Out of completed, the edges core names (a person's decision) are taken only under a decision.
CREATE TRIGGER events_terminal_is_terminal
BEFORE UPDATE OF state ON events
WHEN NEW.state <> OLD.state AND OLD.state IN ('completed', 'discarded')
BEGIN
    SELECT RAISE(ABORT, 'a completed or discarded record is terminal: its state never changes');
END;

-- A record enters dispatched (or is redispatched) only while a live task carries it: the
-- dispatcher inserts its task_events row on a live task first, then moves the record.
CREATE TRIGGER events_dispatched_while_on_a_live_task
BEFORE UPDATE OF state ON events
WHEN NEW.state = 'dispatched' AND OLD.state IN ('admitted', 'queued', 'dispatched')
 AND NOT EXISTS (
    SELECT 1 FROM task_events
      JOIN tasks ON tasks.id = task_events.task_id
     WHERE task_events.event_id = NEW.id
       AND task_events.retired_at IS NULL
       AND tasks.superseded_at IS NULL)
BEGIN
    SELECT RAISE(ABORT,
        'a record is dispatched only while a live task carries it: join it to a live task first');
END;

-- Work a worker was handed (a row exposed or delivered, not withdrawn) settles first: its
-- record leaves dispatched only to completed. A withdrawal (the one automatic retry) is marked
-- on the row before the record moves.
CREATE TRIGGER events_handed_work_settles_first
BEFORE UPDATE OF state ON events
WHEN OLD.state = 'dispatched' AND NEW.state IN ('admitted', 'blocked')
 AND EXISTS (
    SELECT 1 FROM task_events
     WHERE event_id = NEW.id
       AND delivery IN ('exposed', 'delivered')
       AND withdrawn_at IS NULL)
BEGIN
    SELECT RAISE(ABORT,
        'a record whose instruction was exposed to a worker leaves dispatched only to completed');
END;

-- Tasks and their rows.

CREATE TRIGGER tasks_supersession_retires_its_events
AFTER UPDATE OF superseded_at ON tasks
WHEN OLD.superseded_at IS NULL AND NEW.superseded_at IS NOT NULL
BEGIN
    UPDATE task_events SET retired_at = NEW.superseded_at
     WHERE task_id = NEW.id AND retired_at IS NULL;
END;

CREATE TRIGGER task_events_retirement_follows_supersession
BEFORE UPDATE OF retired_at ON task_events
WHEN NEW.retired_at IS NOT OLD.retired_at
BEGIN
    SELECT RAISE(ABORT, 'a task event is retired once, and never brought back')
     WHERE OLD.retired_at IS NOT NULL;
    SELECT RAISE(ABORT,
        'a task event is retired only by its task''s supersession: supersede the task instead')
     WHERE (SELECT superseded_at FROM tasks WHERE id = NEW.task_id) IS NULL;
END;

CREATE TRIGGER task_events_join_live_tasks_only
BEFORE INSERT ON task_events
BEGIN
    SELECT RAISE(ABORT, 'a record joins only a live task: this task is superseded or missing')
     WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE id = NEW.task_id AND superseded_at IS NULL);
    SELECT RAISE(ABORT, 'only an admitted, queued or dispatched record joins a task')
     WHERE NOT EXISTS (SELECT 1 FROM events WHERE id = NEW.event_id
                          AND state IN ('admitted', 'queued', 'dispatched'));
END;

CREATE TRIGGER task_events_do_not_move
BEFORE UPDATE OF task_id, event_id ON task_events
WHEN NEW.task_id IS NOT OLD.task_id OR NEW.event_id IS NOT OLD.event_id
BEGIN
    SELECT RAISE(ABORT, 'a task event never moves to another task or another record');
END;

CREATE TRIGGER task_events_conversation_does_not_move
BEFORE UPDATE OF conversation_key ON task_events
WHEN NEW.conversation_key IS NOT OLD.conversation_key
BEGIN
    SELECT RAISE(ABORT, 'a task event keeps the conversation it joined with');
END;

-- A worker acknowledges and completes what it pulled (pulled_at, written by get_dispatch);
-- anything else is the dispatcher settling, which writes the outcome unknown.
CREATE TRIGGER task_events_exposure_comes_first
BEFORE UPDATE OF delivery ON task_events
WHEN OLD.delivery IN ('exposed', 'delivered') AND NEW.delivery <> OLD.delivery
 AND NEW.pulled_at IS NULL
BEGIN
    SELECT RAISE(ABORT,
        'a worker acknowledges only an instruction it pulled: this one was never pulled')
     WHERE NEW.delivery = 'delivered';
    SELECT RAISE(ABORT,
        'an instruction no worker pulled is completed only by the settlement, outcome unknown')
     WHERE NEW.delivery = 'completed' AND NEW.outcome <> 'unknown';
END;

-- The worker's acknowledgement id: written once, with the move exposed -> delivered in the
-- same statement, or never (an id in the receipt that no worker reported is worse than none).
CREATE TRIGGER task_events_acknowledgement_settles_once
BEFORE UPDATE OF ack_id ON task_events
WHEN NEW.ack_id IS NOT OLD.ack_id
 AND NOT (OLD.ack_id IS NULL AND OLD.delivery = 'exposed' AND NEW.delivery = 'delivered')
BEGIN
    SELECT RAISE(ABORT, 'an acknowledgement id never changes once recorded')
     WHERE OLD.ack_id IS NOT NULL;
    SELECT RAISE(ABORT,
        'an acknowledgement id is written only with the move from exposed to delivered');
END;

CREATE TRIGGER task_events_withdrawn_is_final
BEFORE UPDATE OF withdrawn_at, delivery ON task_events
WHEN OLD.withdrawn_at IS NOT NULL
 AND (NEW.withdrawn_at IS NOT OLD.withdrawn_at OR NEW.delivery <> OLD.delivery)
BEGIN
    SELECT RAISE(ABORT, 'a withdrawn task event is final: its withdrawal and delivery never change');
END;
