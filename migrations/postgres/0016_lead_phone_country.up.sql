-- The region of a lead's phone as capture parsed it (match_keys'
-- phone_country), in a column of its own: send rules and their preview
-- read it for every lead, and decoding match_keys to get it cost more than
-- reading the row.
ALTER TABLE leads ADD COLUMN phone_country text NOT NULL DEFAULT '';
UPDATE leads SET phone_country = COALESCE(CAST(match_keys AS jsonb) ->> 'phone_country', '')
WHERE phone_e164 <> '' AND match_keys LIKE '%"phone_country"%';
