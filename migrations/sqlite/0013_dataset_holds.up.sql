-- A Meta outage holds a dataset, not its events (see the Postgres
-- migration). The hold replaces throttled_until.
ALTER TABLE datasets ADD COLUMN held_since datetime;
ALTER TABLE datasets ADD COLUMN hold_until datetime;
ALTER TABLE datasets ADD COLUMN hold_tries integer NOT NULL DEFAULT 0;
ALTER TABLE datasets ADD COLUMN hold_error text NOT NULL DEFAULT '';
UPDATE datasets SET held_since = throttled_until, hold_until = throttled_until, hold_tries = 1,
    hold_error = 'throttled by Meta'
WHERE throttled_until IS NOT NULL;
ALTER TABLE datasets DROP COLUMN throttled_until;
