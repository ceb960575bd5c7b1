-- An event's state lives in one place: while it is not sent, in its
-- unsent_events row (status, attempts, last error, last request, when it
-- changed); once sent, in its event_sends row. The copies that events kept
-- go: since 0010 they no longer followed a sent event, and a reader that
-- trusted them saw a sent event as queued. An events row is now what the
-- event is (its name, id, time, value and JSON), written once but for a
-- payload built again at send time.
ALTER TABLE unsent_events ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE unsent_events ADD COLUMN last_error text NOT NULL DEFAULT '';
ALTER TABLE unsent_events ADD COLUMN request_id bigint;
ALTER TABLE unsent_events ADD COLUMN updated_at timestamptz;

UPDATE unsent_events u
SET attempts = e.attempts, last_error = e.last_error, request_id = e.request_id, updated_at = e.updated_at
FROM events e WHERE e.id = u.event_id;

ALTER TABLE events
    DROP COLUMN status,
    DROP COLUMN attempts,
    DROP COLUMN last_error,
    DROP COLUMN fbtrace_id,
    DROP COLUMN request_id,
    DROP COLUMN sent_at,
    DROP COLUMN updated_at;
