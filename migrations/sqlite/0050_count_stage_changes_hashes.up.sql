-- Postgres's 0050 lets count_stage_changes hash its join. SQLite counts
-- stage changes with its views' triggers: nothing changes.
SELECT 1;
