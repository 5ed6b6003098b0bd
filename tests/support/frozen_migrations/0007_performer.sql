-- Migration 7: who performed a feed event, as the feed says (spec 1.3; API.md section 11).
--
-- events.performed_by_id: the feed row's performed_by_id, NULL when the feed gives none (the
-- creator acted). The gate reads it: an event the agent performed is agent_authored, and one
-- performed by someone other than its creator (an agent acting for a person) is delegated.
-- Records written before this migration have NULL, as if the creator acted.

ALTER TABLE events ADD COLUMN performed_by_id INTEGER CHECK (performed_by_id IS NULL OR performed_by_id > 0);
