-- The send log filtered by an event name reads the account's events of that
-- name newest first, a page at a time (store.Events, EventCounts), rather
-- than every event of the account checked for its name.
CREATE INDEX events_account_name_idx ON events (account_id, event_name, created_at DESC, id DESC);
