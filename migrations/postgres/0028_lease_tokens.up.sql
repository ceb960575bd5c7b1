-- One lease design for the claimed rows of events, CRM deliveries, stage
-- uploads and dataset probes (docs/architecture.md, "Leases"): a claim
-- sets a random lease_token and an expiry, lease_until, and every write
-- made under the lease is fenced by the token, so a holder whose lease ran
-- out and was taken over changes nothing. unsent_events and stage_uploads
-- have their lease_until; CRM deliveries pushed next_try_at and a probe
-- pushed hold_until instead, which now say only when a row is due again.
-- Nullable columns without a default: no table is rewritten.
ALTER TABLE unsent_events ADD COLUMN lease_token bigint;
ALTER TABLE crm_deliveries ADD COLUMN lease_token bigint, ADD COLUMN lease_until timestamptz;
ALTER TABLE stage_uploads ADD COLUMN lease_token bigint;
ALTER TABLE datasets ADD COLUMN lease_token bigint, ADD COLUMN lease_until timestamptz;
