-- One lease design: a random lease_token and an expiry, lease_until, on
-- every claimed row, every write under the lease fenced by the token (see
-- the Postgres migration).
ALTER TABLE unsent_events ADD COLUMN lease_token integer;
ALTER TABLE crm_deliveries ADD COLUMN lease_token integer;
ALTER TABLE crm_deliveries ADD COLUMN lease_until datetime;
ALTER TABLE stage_uploads ADD COLUMN lease_token integer;
ALTER TABLE datasets ADD COLUMN lease_token integer;
ALTER TABLE datasets ADD COLUMN lease_until datetime;
