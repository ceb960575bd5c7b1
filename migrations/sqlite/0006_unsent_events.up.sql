-- Every event that is not sent has a row in unsent_events, with its status
-- and, while it is queued, its schedule (the Postgres migration says why).
CREATE TABLE unsent_events (
    event_id        integer PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL,
    lead_id         integer NOT NULL,
    status          text NOT NULL CHECK (status IN ('queued', 'failed', 'expired', 'dry_run')),
    event_time      datetime NOT NULL,
    next_attempt_at datetime NOT NULL,
    lease_until     datetime
);

-- A replica from before 0004 may have left events 'sending': they are queued.
UPDATE events SET status = 'queued' WHERE status = 'sending';
INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, lease_until)
SELECT id, dataset_id, lead_id, status, event_time, next_attempt_at, lease_until
FROM events WHERE status <> 'sent';

CREATE INDEX unsent_events_status_idx ON unsent_events (dataset_id, status, event_time, event_id);

DROP INDEX events_due_idx;
DROP INDEX events_account_status_idx;
ALTER TABLE events DROP COLUMN next_attempt_at;
ALTER TABLE events DROP COLUMN lease_until;
