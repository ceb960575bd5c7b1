-- An account's Website URL: the event_source_url of website leads posted
-- without one (Meta refuses a website event without it). Empty means none.
ALTER TABLE accounts ADD COLUMN website_url text NOT NULL DEFAULT '';
