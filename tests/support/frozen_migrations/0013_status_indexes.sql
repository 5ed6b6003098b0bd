-- Migration 13: what ``bin/connect status`` reads comes from indexes, whatever the ledger's size.
--
-- The blocked records' count by reason read every blocked row from the table and sorted them
-- (``events_state_id`` holds no reason): 0.17 s and 4 MB at 100,000 blocked records. This
-- partial index holds the blocked ones' reasons alone, in order: the count reads it and
-- nothing else (it covers the query, so the planner prefers it without statistics).
-- The newest dispatches (``ORDER BY launched_at DESC LIMIT 20``) sorted every attempt ever
-- made; ``attempts_launched`` hands them over newest first.
CREATE INDEX events_blocked_reason ON events (state, reason) WHERE state = 'blocked';
CREATE INDEX attempts_launched ON attempts (launched_at);
