-- Migration 5: what admission keeps about a blocked record (spec 2.4).
--
-- events: blocked_at     when the record was first blocked for its current reason (the retry
--                        window runs from here; NULL unless blocked);
--         next_retry_at  when the sweep next offers it back to admission (NULL: no timer
--                        re-runs it, only a person's redispatch);
--         retry_at       a throttled read's server deadline (never retried before it).

ALTER TABLE events ADD COLUMN blocked_at TEXT;
ALTER TABLE events ADD COLUMN next_retry_at TEXT;
ALTER TABLE events ADD COLUMN retry_at TEXT;

CREATE INDEX events_blocked_due ON events (state, next_retry_at) WHERE next_retry_at IS NOT NULL;
