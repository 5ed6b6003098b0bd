-- Migration 19: what the worker's tools know of the connector's credentials, and what they refused.
--
-- credential_fingerprints: the SHA-256 of each encoded form of a credential the connector holds
--               (core.fingerprints), never the credential. The agent's tokens and the client secret
--               have no task (the running connector writes them when they change, keeping the
--               generation before); a task's token is written with its task, and goes when the task
--               is superseded.
-- attempts.words_refused: the last of the worker's words its tools refused for holding one of them,
--               as the tool and the credential's name; '' when none was.
CREATE TABLE credential_fingerprints (
    sha256      TEXT    NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    length      INTEGER NOT NULL CHECK (length > 0),
    folded      INTEGER NOT NULL CHECK (folded IN (0, 1)),
    credential  TEXT    NOT NULL CHECK (credential <> ''),
    task_id     INTEGER REFERENCES tasks (id),
    written_at  TEXT    NOT NULL
) STRICT;

CREATE INDEX credential_fingerprints_task ON credential_fingerprints (task_id);

CREATE TRIGGER credential_fingerprints_of_a_superseded_task
AFTER UPDATE OF superseded_at ON tasks
WHEN NEW.superseded_at IS NOT NULL
BEGIN
    DELETE FROM credential_fingerprints WHERE task_id = NEW.id;
END;

ALTER TABLE attempts ADD COLUMN words_refused TEXT NOT NULL DEFAULT '';
