-- Migration 8: a request that provably never reached Basecamp goes back to pending (issue 10).
--
-- outbox.retrying_since: when the first of a run of retries was recorded (core.not_created);
-- NULL while the intent has never had to retry, and cleared by a person's resend.
--
-- The edge trigger gains two things, in core.notes's words (core/edges.py is the table):
--  * sending -> pending, only with a cause proving nothing reached Basecamp (NEW.note);
--  * canceled -> pending (a person's resend) also for an intent given up after 24 h of such
--    causes (OLD.note), besides the refused note.

ALTER TABLE outbox ADD COLUMN retrying_since TEXT;

DROP TRIGGER outbox_state_edges;

CREATE TRIGGER outbox_state_edges
BEFORE UPDATE OF state ON outbox
WHEN NEW.state <> OLD.state AND NOT (
       (OLD.state = 'pending' AND NEW.state IN ('sending', 'canceled'))
    OR (OLD.state = 'sending' AND NEW.state IN ('sent', 'indeterminate', 'canceled'))
    OR (OLD.state = 'sending' AND NEW.state = 'pending' AND NEW.note IN (
            'not created: the connection never opened',
            'not created: the request was never written',
            'not created: Basecamp answered 429',
            'not created: Basecamp answered 408'))
    OR (OLD.state = 'indeterminate' AND NEW.state IN ('sent', 'abandoned', 'pending'))
    OR (OLD.state = 'canceled' AND NEW.state = 'pending' AND OLD.note IN (
            'the request was refused; no message was created',
            'not created: the connection never opened; given up after 24 h, for a person',
            'not created: the request was never written; given up after 24 h, for a person',
            'not created: Basecamp answered 429; given up after 24 h, for a person',
            'not created: Basecamp answered 408; given up after 24 h, for a person')))
BEGIN
    SELECT RAISE(ABORT, 'an outbox intent never moves along that edge');
END;
