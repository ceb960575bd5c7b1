-- On Postgres the search text's statistics are sampled more finely (see the
-- Postgres migration); SQLite reads an account's leads for a search.
SELECT 1;
