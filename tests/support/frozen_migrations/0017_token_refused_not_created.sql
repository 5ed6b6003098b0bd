-- Migration 17: a 401 on a create is an outage of the agent's token, not a refusal (issue 24 part 5).
--
-- The edge trigger's sending -> pending gains core.notes.TOKEN_REFUSED: Basecamp refused the
-- token (after the client's one refresh), so nothing was created and the intent waits, pending,
-- for a token that works. It is never given up (core.not_created rule 5), so canceled -> pending
-- gains no note. Otherwise migration 8's trigger, its lists of three or more values written as
-- comparisons joined by OR (migration 14's rule: the same test, without the temporary b-tree
-- SQLite builds for such an IN list at each evaluation).

DROP TRIGGER outbox_state_edges;

CREATE TRIGGER outbox_state_edges
BEFORE UPDATE OF state ON outbox
WHEN NEW.state <> OLD.state AND NOT (
       (OLD.state = 'pending' AND (NEW.state = 'sending' OR NEW.state = 'canceled'))
    OR (OLD.state = 'sending' AND (NEW.state = 'sent' OR NEW.state = 'indeterminate' OR NEW.state = 'canceled'))
    OR (OLD.state = 'sending' AND NEW.state = 'pending' AND (
            NEW.note = 'not created: the connection never opened'
         OR NEW.note = 'not created: the request was never written'
         OR NEW.note = 'not created: Basecamp answered 429'
         OR NEW.note = 'not created: Basecamp answered 408'
         OR NEW.note = 'not created: Basecamp refused the token (401)'))
    OR (OLD.state = 'indeterminate' AND (NEW.state = 'sent' OR NEW.state = 'abandoned' OR NEW.state = 'pending'))
    OR (OLD.state = 'canceled' AND NEW.state = 'pending' AND (
            OLD.note = 'the request was refused; no message was created'
         OR OLD.note = 'not created: the connection never opened; given up after 24 h, for a person'
         OR OLD.note = 'not created: the request was never written; given up after 24 h, for a person'
         OR OLD.note = 'not created: Basecamp answered 429; given up after 24 h, for a person'
         OR OLD.note = 'not created: Basecamp answered 408; given up after 24 h, for a person')))
BEGIN
    SELECT RAISE(ABORT, 'an outbox intent never moves along that edge');
END;
