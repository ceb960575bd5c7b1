-- The region of a lead's phone as capture parsed it (match_keys'
-- phone_country), in a column of its own: send rules and their preview
-- read it for every lead, and decoding match_keys to get it cost more than
-- reading the row. Adding a column with a constant default rewrites
-- nothing; the leads captured before it get their value from a backfill
-- after start (store/backfill.go), and rules read match_keys until then.
ALTER TABLE leads ADD COLUMN phone_country text NOT NULL DEFAULT '';
