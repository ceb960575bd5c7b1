-- utm_campaign finds the first "?utm_campaign=" or "&utm_campaign=" and
-- takes what follows up to "&" or "#", with string functions instead of a
-- regular expression, which cost more than the rest of a counted row: the
-- same answer (store.Campaign's, TestCampaign). Every count of a lead, a
-- stage change and an event's change of state reads it, a thousand times
-- a batch, as does the leads list's campaign filter. No index is built on
-- it.
CREATE OR REPLACE FUNCTION utm_campaign(url text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT COALESCE(split_part(split_part(
    substr(url, least(NULLIF(strpos(url, '?utm_campaign='), 0), NULLIF(strpos(url, '&utm_campaign='), 0)) + 14),
    '&', 1), '#', 1), '') $$;
