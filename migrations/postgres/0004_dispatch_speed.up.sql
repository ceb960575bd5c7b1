-- A claim leases events without changing their status: an event is being
-- sent while it is queued with a lease still running. Neither lease_until
-- nor attempts is indexed, so with room left on each page (fillfactor) a
-- claim is a HOT update that touches no index. The fillfactor applies to
-- pages written from now on.
--
-- Stop every replica of the earlier version first: its claims and settles
-- rely on status 'sending' (docs/operations.md, "Migrations"). The index is rebuilt
-- inside the migration's transaction, which locks events meanwhile.
UPDATE events SET status = 'queued' WHERE status = 'sending';
DROP INDEX events_due_idx;
CREATE INDEX events_due_idx ON events (dataset_id, event_time, id) WHERE status = 'queued';
ALTER TABLE events SET (fillfactor = 70);

-- A request keeps the JSON array of the events it carried, once, instead of
-- a copy in each event. It is stored uncompressed, as events.payload was:
-- compressing a megabyte per request costs the dispatcher more than it saves.
ALTER TABLE send_requests ADD COLUMN payload text NOT NULL DEFAULT '';
ALTER TABLE send_requests ALTER COLUMN payload SET STORAGE EXTERNAL;
