-- Postgres's 0045 makes its counts' keys hold the sums (INCLUDE), so that
-- a span's merged rows are read from the key alone. SQLite has no INCLUDE,
-- and adding the sums to its unique keys would change what they keep
-- unique (the merge's ON CONFLICT): its keys stay as they are.
SELECT 1;
