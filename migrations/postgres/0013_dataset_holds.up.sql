-- A Meta outage holds a dataset, not its events: while held_since is set,
-- only one probe batch at a time is claimed, when hold_until comes (a
-- probe in flight pushes it out by its lease), and waiting events spend no
-- attempt. hold_tries counts the failed tries, for the backoff; hold_error
-- is the last one's. The hold replaces throttled_until: Meta's throttling
-- is one more reason to hold.
ALTER TABLE datasets ADD COLUMN held_since timestamptz;
ALTER TABLE datasets ADD COLUMN hold_until timestamptz;
ALTER TABLE datasets ADD COLUMN hold_tries integer NOT NULL DEFAULT 0;
ALTER TABLE datasets ADD COLUMN hold_error text NOT NULL DEFAULT '';
UPDATE datasets SET held_since = now(), hold_until = throttled_until, hold_tries = 1,
    hold_error = 'throttled by Meta'
WHERE throttled_until > now();
ALTER TABLE datasets DROP COLUMN throttled_until;
