-- The send log filtered by an event name reads the account's events of that
-- name newest first, a page at a time (store.Events, EventCounts): an index
-- range. Without it Postgres read events_account_idx from the newest event
-- down, checking each one's name, and a name that no event has read every
-- event of the account: 2.9 s at a million. A step runs in a transaction,
-- where CREATE INDEX CONCURRENTLY cannot: new events wait while it builds
-- (docs/operations.md, "Migrations").
CREATE INDEX events_account_name_idx ON events (account_id, event_name, created_at DESC, id DESC);
