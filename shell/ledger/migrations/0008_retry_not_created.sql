-- Migration 8: a request that provably never reached Basecamp goes back to pending (issue 10).
--
-- outbox.retrying_since: when the first of a run of retries was recorded (core.not_created);
-- NULL while the intent has never had to retry, and cleared by a person's resend.
--
-- The two edges this issue added -- sending -> pending with a cause proving nothing reached
-- Basecamp, and a person's resend of an intent given up after 24 h of such causes -- are
-- core/edges.py's, held at the ledger by the rule generated from it (shell.ledger.rules).

ALTER TABLE outbox ADD COLUMN retrying_since TEXT;
