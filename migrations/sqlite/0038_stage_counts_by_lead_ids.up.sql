-- Postgres only: its stage changes' count trigger finds its leads by id
-- (see the Postgres migration). SQLite's triggers are row triggers that do
-- so already.
SELECT 1;
