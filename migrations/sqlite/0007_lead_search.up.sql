-- Postgres indexes the leads' search text with trigrams (pg_trgm); SQLite,
-- for one process and small accounts, keeps reading the leads.
SELECT 1;
