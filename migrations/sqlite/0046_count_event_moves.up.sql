-- Postgres's 0046 counts an event that changes state with one read of it
-- and its lead. SQLite counts events in its own triggers, row by row:
-- nothing changes.
SELECT 1;
