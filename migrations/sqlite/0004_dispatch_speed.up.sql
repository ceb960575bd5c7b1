-- A claim leases events without changing their status: an event is being
-- sent while it is queued with a lease still running.
UPDATE events SET status = 'queued' WHERE status = 'sending';
DROP INDEX events_due_idx;
CREATE INDEX events_due_idx ON events (dataset_id, event_time, id) WHERE status = 'queued';

-- A request keeps the JSON array of the events it carried, once, instead of
-- a copy in each event.
ALTER TABLE send_requests ADD COLUMN payload text NOT NULL DEFAULT '';
