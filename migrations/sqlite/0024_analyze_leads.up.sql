-- On Postgres, leads are analyzed again with 0023's finer sample of the
-- search text; SQLite keeps no such statistics.
SELECT 1;
