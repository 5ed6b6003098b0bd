-- Migration 1: the record, its tasks and attempts, the lifecycle-message outbox, the hold
-- marker. Never edited once shipped; later issues add their columns in their own files.
--
-- Rules this file holds at the database (the last line, not a defence against raw SQL):
--  1. Every table is STRICT. Which values a lifecycle or vocabulary column holds, and which
--     moves between them are edges, are rules generated from core (shell.ledger.rules), applied
--     after the migrations: this file once wrote them as CHECKs and triggers, which an older
--     ledger drops as it comes up to date.
--  2. One live task per conversation, one live task per event, one live attempt per task,
--     one intent per key, one intent per receipt (per message kind): unique indexes, so two
--     writers on one file cannot both win.
--  3. A supersession happens once (a trigger); the lifecycles' edges are rule 1's.
--  4. A worker's get_dispatch cancels the pending guard intent in its own write; a task
--     created after the guard went out is told it fired.
--  5. Nothing moves to sending while the hold marker stands.
--  6. Task events and outbox intents are never deleted.
--  7. SQL-side stamps: strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z', the same fixed
--     width (nine fractional digits, UTC) as core.timestamps.format_timestamp.

-- The record: one row per feed event id.
CREATE TABLE events (
    id                 INTEGER PRIMARY KEY,
    state              TEXT    NOT NULL,
    reason             TEXT    NOT NULL DEFAULT '',
    event_type         TEXT    NOT NULL DEFAULT '',
    bucket_id          INTEGER NOT NULL DEFAULT 0,
    recording_id       INTEGER NOT NULL DEFAULT 0,
    creator_id         INTEGER NOT NULL DEFAULT 0,
    trigger_name       TEXT    NOT NULL DEFAULT '',
    acknowledge        INTEGER NOT NULL DEFAULT 0 CHECK (acknowledge IN (0, 1)),
    conversation_key   TEXT    NOT NULL DEFAULT '',
    reply_kind         TEXT    NOT NULL DEFAULT '',
    reply_bucket_id    INTEGER NOT NULL DEFAULT 0,
    reply_recording_id INTEGER NOT NULL DEFAULT 0,
    revision           INTEGER NOT NULL DEFAULT 0,
    created_at         TEXT,
    seen_at            TEXT    NOT NULL,
    updated_at         TEXT    NOT NULL,
    decided_at         TEXT
) STRICT;

CREATE INDEX events_state_id ON events (state, id);
CREATE INDEX events_conversation ON events (conversation_key, state);

-- A task: one conversation's work bound to a token. It keeps the token's hash (64 lowercase
-- hex digits of SHA-256), never the token.
CREATE TABLE tasks (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    token_sha256         TEXT    NOT NULL UNIQUE CHECK (length(token_sha256) = 64
                             AND token_sha256 NOT GLOB '*[^0-9a-f]*'),
    conversation_key     TEXT    NOT NULL DEFAULT '',
    originating_event_id INTEGER REFERENCES events (id),
    created_at           TEXT    NOT NULL,
    superseded_at        TEXT,
    deadline_at          TEXT,
    ended_at             TEXT,
    CHECK (ended_at IS NULL OR superseded_at IS NOT NULL)
) STRICT;

CREATE UNIQUE INDEX tasks_live_conversation ON tasks (conversation_key)
    WHERE ended_at IS NULL AND conversation_key <> '';

-- An attempt: one worker run under a task. Its id is 'att_' and 24 lowercase hex digits.
CREATE TABLE attempts (
    id              TEXT    PRIMARY KEY CHECK (length(id) = 28 AND substr(id, 1, 4) = 'att_'
                        AND substr(id, 5) NOT GLOB '*[^0-9a-f]*'),
    task_id         INTEGER NOT NULL REFERENCES tasks (id),
    seq             INTEGER NOT NULL CHECK (seq >= 1),
    state           TEXT    NOT NULL DEFAULT 'launching',
    stop_reason     TEXT    NOT NULL DEFAULT '',
    pid             INTEGER,
    pgid            INTEGER,
    process_started TEXT    NOT NULL DEFAULT '',
    launched_at     TEXT    NOT NULL,
    running_at      TEXT,
    ended_at        TEXT,
    spawn_failed    INTEGER NOT NULL DEFAULT 0 CHECK (spawn_failed IN (0, 1)),
    progress_at     TEXT,
    still_running   INTEGER NOT NULL DEFAULT 0 CHECK (still_running >= 0),
    UNIQUE (task_id, seq),
    CHECK ((state = 'ended') = (stop_reason <> ''))
) STRICT;

CREATE UNIQUE INDEX attempts_live_per_task ON attempts (task_id) WHERE state <> 'ended';
CREATE INDEX attempts_state ON attempts (state);

-- Each event's delivery on a task.
CREATE TABLE task_events (
    task_id            INTEGER NOT NULL REFERENCES tasks (id),
    event_id           INTEGER NOT NULL REFERENCES events (id),
    conversation_key   TEXT    NOT NULL DEFAULT '',
    delivery           TEXT    NOT NULL DEFAULT 'admitted',
    guard              TEXT    NOT NULL DEFAULT '',
    exposed_at         TEXT,
    delivered_at       TEXT,
    completed_at       TEXT,
    pulled_at          TEXT,
    withdrawn_at       TEXT,
    retired_at         TEXT,
    ack_id             INTEGER,
    outcome            TEXT    NOT NULL DEFAULT '',
    reply_id           INTEGER,
    adopted_reply_id   INTEGER,
    links              TEXT    NOT NULL DEFAULT '[]' CHECK (CASE WHEN json_valid(links)
                           THEN json_type(links) = 'array' ELSE 0 END),
    exposed_attempt_id TEXT    REFERENCES attempts (id),
    PRIMARY KEY (task_id, event_id)
) STRICT;

CREATE UNIQUE INDEX task_events_one_live_task ON task_events (event_id)
    WHERE retired_at IS NULL;
CREATE INDEX task_events_event ON task_events (event_id, delivery);
CREATE INDEX task_events_conversation ON task_events (conversation_key)
    WHERE retired_at IS NULL;

-- The lifecycle-message outbox (spec 4.2): one intent per thing answered for.
CREATE TABLE outbox (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    intent_key         TEXT    NOT NULL UNIQUE CHECK (intent_key <> ''),
    kind               TEXT    NOT NULL,
    state              TEXT    NOT NULL DEFAULT 'pending',
    event_id           INTEGER REFERENCES events (id),
    task_id            INTEGER REFERENCES tasks (id),
    attempt_id         TEXT    REFERENCES attempts (id),
    occurrence         INTEGER NOT NULL DEFAULT 0,
    bucket_id          INTEGER NOT NULL,
    message_kind       TEXT    NOT NULL,
    recording_id       INTEGER NOT NULL CHECK (recording_id > 0),
    body               TEXT    NOT NULL CHECK (body <> ''),
    created_at         TEXT    NOT NULL,
    not_before         TEXT    NOT NULL,
    sending_at         TEXT,
    finished_at        TEXT,
    receipt_id         INTEGER,
    note               TEXT    NOT NULL DEFAULT '',
    resolved_by        TEXT    NOT NULL DEFAULT '',
    reconcile_failures INTEGER NOT NULL DEFAULT 0,
    reconcile_at       TEXT,
    CHECK ((state = 'sent') = (receipt_id IS NOT NULL)),
    CHECK (state IN ('pending', 'canceled') OR sending_at IS NOT NULL)
) STRICT;

CREATE UNIQUE INDEX outbox_receipt ON outbox (message_kind, receipt_id)
    WHERE receipt_id IS NOT NULL;
CREATE INDEX outbox_due ON outbox (state, not_before);
CREATE INDEX outbox_destination ON outbox (message_kind, recording_id, state);
CREATE INDEX outbox_event ON outbox (event_id, kind);

-- The hold marker: while its one row stands, nothing is posted.
CREATE TABLE hold_marker (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    held_by TEXT    NOT NULL CHECK (held_by <> ''),
    held_at TEXT    NOT NULL
) STRICT;

-- Outbox triggers.


CREATE TRIGGER outbox_receipt_is_final
BEFORE UPDATE OF receipt_id ON outbox
WHEN OLD.receipt_id IS NOT NULL AND NEW.receipt_id IS NOT OLD.receipt_id
BEGIN
    SELECT RAISE(ABORT, 'an outbox receipt never changes');
END;

CREATE TRIGGER outbox_refused_under_hold
BEFORE UPDATE OF state ON outbox
WHEN NEW.state = 'sending' AND OLD.state <> 'sending' AND EXISTS (SELECT 1 FROM hold_marker)
BEGIN
    SELECT RAISE(ABORT, 'the connector is held: nothing is posted until it is released');
END;

CREATE TRIGGER outbox_intents_are_not_deleted
BEFORE DELETE ON outbox
BEGIN
    SELECT RAISE(ABORT, 'an outbox intent is never deleted');
END;

CREATE TRIGGER outbox_guard_canceled_by_get_dispatch
AFTER UPDATE OF guard ON task_events
WHEN OLD.guard = 'armed' AND NEW.guard = 'canceled'
BEGIN
    UPDATE outbox
       SET state = 'canceled',
           note = 'get_dispatch',
           finished_at = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z'
     WHERE intent_key = 'guard_ack:event:' || NEW.event_id
       AND state = 'pending';
END;

CREATE TRIGGER outbox_guard_fired_before_task
AFTER INSERT ON task_events
WHEN NEW.guard = 'armed' AND EXISTS (
    SELECT 1 FROM outbox
     WHERE intent_key = 'guard_ack:event:' || NEW.event_id
       AND state IN ('sending', 'sent', 'indeterminate', 'abandoned'))
BEGIN
    UPDATE task_events SET guard = 'fired'
     WHERE task_id = NEW.task_id AND event_id = NEW.event_id;
END;

-- Task, task-event and attempt triggers.

CREATE TRIGGER task_events_guard_starts_unsettled
BEFORE INSERT ON task_events
WHEN NEW.guard NOT IN ('', 'armed')
BEGIN
    SELECT RAISE(ABORT, 'a guard is written empty or armed; it settles later');
END;


CREATE TRIGGER task_events_are_not_deleted
BEFORE DELETE ON task_events
BEGIN
    SELECT RAISE(ABORT, 'a task event is never deleted');
END;

CREATE TRIGGER tasks_supersession_is_final
BEFORE UPDATE OF superseded_at ON tasks
WHEN OLD.superseded_at IS NOT NULL AND NEW.superseded_at IS NOT OLD.superseded_at
BEGIN
    SELECT RAISE(ABORT, 'a superseded task stays superseded');
END;

