-- A send is recorded here, once, and not on the event's row: the row in
-- events is written when the event is queued and then only read, for its
-- payload. Sending a batch of 1000 is then 1000 narrow deletes from
-- unsent_events and 1000 narrow inserts here. Before, it also wrote a new
-- version of every events row, so the payload had to be cleared from it to
-- stay a HOT update, and each request row kept the batch's JSON again
-- (about a megabyte) for the event page: both are gone.
--
-- An event is sent when it has a row here, and then the row says with which
-- request, on which attempt, with which trace and when; events keeps the
-- event as it was before (status, attempts and last error of its last
-- unsent state), and its payload is the JSON that was sent.
--
-- No foreign keys: checking one locks the referenced row, which would write
-- to the events row on every send again. No flow deletes events; a send
-- left by an event deleted by hand is never read, as reads start from events.
CREATE TABLE event_sends (
    event_id   bigint PRIMARY KEY,
    request_id bigint,
    attempts   integer NOT NULL,
    fbtrace_id text NOT NULL DEFAULT '',
    sent_at    timestamptz NOT NULL
);

-- Events sent before this migration: their send as events recorded it.
INSERT INTO event_sends (event_id, request_id, attempts, fbtrace_id, sent_at)
SELECT id, request_id, attempts, fbtrace_id, COALESCE(sent_at, updated_at)
FROM events WHERE status = 'sent';
