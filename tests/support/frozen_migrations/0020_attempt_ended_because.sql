-- Migration 20: why the connector ended a worker that had begun its work, when its stop reason
-- alone does not say (its output passed the cap kept on disk); '' otherwise.
ALTER TABLE attempts ADD COLUMN ended_because TEXT NOT NULL DEFAULT '';
