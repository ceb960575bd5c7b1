-- Postgres's 0047 finds the campaign without a regular expression. SQLite's
-- utm_campaign is store.Campaign, registered with the driver: nothing
-- changes.
SELECT 1;
