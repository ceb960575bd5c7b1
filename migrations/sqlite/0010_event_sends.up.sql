-- A send is recorded here, once, and not on the event's row (the Postgres
-- migration says why): an event is sent when it has a row here.
CREATE TABLE event_sends (
    event_id   integer PRIMARY KEY,
    request_id integer,
    attempts   integer NOT NULL,
    fbtrace_id text NOT NULL DEFAULT '',
    sent_at    datetime NOT NULL
);

-- Events sent before this migration: their send as events recorded it.
INSERT INTO event_sends (event_id, request_id, attempts, fbtrace_id, sent_at)
SELECT id, request_id, attempts, fbtrace_id, COALESCE(sent_at, updated_at)
FROM events WHERE status = 'sent';
