-- Destinations (docs/destinations.md): a dataset is one kind of destination
-- of an account's events, Meta's; TikTok, Google Ads and Pinterest are the
-- others. pixel_id is the platform's id of where events go (TikTok's pixel
-- code or event set, Google's operating account, Pinterest's ad account),
-- token_sealed its token (Google's OAuth refresh token), app_secret_sealed
-- Google's OAuth client secret.
ALTER TABLE datasets ADD COLUMN kind text NOT NULL DEFAULT 'meta'
    CHECK (kind IN ('meta', 'tiktok', 'google', 'pinterest'));
-- TikTok's event_source: web, crm or offline.
ALTER TABLE datasets ADD COLUMN event_source text NOT NULL DEFAULT '';
-- The destination's own names of our events, a JSON object that overrides
-- its kind's defaults; Google's are its conversion actions' ids.
ALTER TABLE datasets ADD COLUMN event_names text NOT NULL DEFAULT '';
-- Google: the manager account that reaches the operating account, the
-- OAuth client id, and the consent sent with every request ('', granted,
-- denied).
ALTER TABLE datasets ADD COLUMN login_account text NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN client_id text NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN consent text NOT NULL DEFAULT ''
    CHECK (consent IN ('', 'granted', 'denied'));
