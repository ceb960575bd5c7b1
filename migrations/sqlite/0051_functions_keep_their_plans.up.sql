-- Postgres's 0051 makes three functions keep their plans. SQLite has no
-- such functions: nothing changes.
SELECT 1;
