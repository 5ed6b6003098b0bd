-- Migration 2: what dispatch needs beyond the outbox's tables.
--
-- events:   the recording as admission read it (the only content in the ledger, JSON, NULL
--           until an admitted verdict writes it), who asked, and the recording's URL and type.
-- tasks:    the driver and the approved directory the worker runs in; one live task per
--           directory, so two workers never edit one checkout at once.
-- attempts: the worker's session id and the permissions the driver refused.

ALTER TABLE events ADD COLUMN snapshot TEXT CHECK (snapshot IS NULL OR json_valid(snapshot));
ALTER TABLE events ADD COLUMN requester_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN recording_url TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN recording_type TEXT NOT NULL DEFAULT '';

ALTER TABLE tasks ADD COLUMN driver TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN work_dir TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX tasks_live_work_dir ON tasks (work_dir) WHERE ended_at IS NULL AND work_dir <> '';
CREATE INDEX tasks_live ON tasks (ended_at);

ALTER TABLE attempts ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0 CHECK (refusals >= 0);

CREATE INDEX task_events_task ON task_events (task_id, delivery);
