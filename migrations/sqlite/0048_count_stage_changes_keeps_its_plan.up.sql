-- Postgres's 0048 keeps count_stage_changes' plan (PL/pgSQL). SQLite counts
-- stage changes with its views' triggers: nothing changes.
SELECT 1;
