-- Every event that is not sent has a row in unsent_events, which holds its
-- status (queued, failed, expired or dry_run) and, while it is queued, its
-- schedule: when it is due and the lease of the claim sending it. The
-- dispatcher claims from there and a sent event leaves it.
--
-- events keeps each event's whole record, status included, but no index of
-- events reads a column that sending changes: marking 1000 events sent is
-- then a HOT update that writes no index entry (41 ms a batch before, 10
-- after), and the claim updates only the narrow rows of this table. What
-- the indexes on status did (the claim's order, counts and filters per
-- status) the index of this table does, except for sent events, which are
-- read from events.
--
-- Stop every replica of the earlier version first (docs/operations.md, "Migrations"):
-- it claims and settles through the dropped columns.
CREATE TABLE unsent_events (
    event_id        bigint PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    dataset_id      bigint NOT NULL,
    lead_id         bigint NOT NULL,
    status          text NOT NULL CHECK (status IN ('queued', 'failed', 'expired', 'dry_run')),
    event_time      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz
) WITH (fillfactor = 70);

-- A replica from before 0004 may have left events 'sending': they are queued.
UPDATE events SET status = 'queued' WHERE status = 'sending';
INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, lease_until)
SELECT id, dataset_id, lead_id, status, event_time, next_attempt_at, lease_until
FROM events WHERE status <> 'sent';

-- The claim reads it in order for (dataset, 'queued'); counts and filters
-- per status read it for the account's datasets.
CREATE INDEX unsent_events_status_idx ON unsent_events (dataset_id, status, event_time, event_id);

DROP INDEX events_due_idx;
DROP INDEX events_account_status_idx;
ALTER TABLE events DROP COLUMN next_attempt_at, DROP COLUMN lease_until;

-- A request's JSON (about a megabyte per 1000 events) is compressed with
-- lz4: as fast to store as uncompressed, and about a seventh of the size.
-- A Postgres without lz4 (built without it) keeps it uncompressed.
DO $$
BEGIN
    ALTER TABLE send_requests ALTER COLUMN payload SET COMPRESSION lz4;
    ALTER TABLE send_requests ALTER COLUMN payload SET STORAGE EXTENDED;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: request payloads stay uncompressed';
END
$$;
