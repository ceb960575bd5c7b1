-- A claim skips an event while an earlier event of its lead, in the same
-- dataset, is still queued and not due. That check looked up the lead's
-- events in events_lead_idx, then each one's queue row: one lookup and,
-- as settling leaves few pages all-visible, one heap fetch per candidate.
-- This index answers it from the queue alone: for the usual candidate, the
-- only event of its lead, one descent finds nothing earlier.
CREATE INDEX unsent_events_lead_idx ON unsent_events (lead_id, event_time, event_id);
