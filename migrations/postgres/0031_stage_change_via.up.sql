-- Where each stage change came from, for the lead page: the way in (via:
-- api, upload, crm, person, demo; '' for changes recorded before this) and
-- what it came by: the ingest key, the stage upload or the CRM delivery
-- (via_id), and the upload's row (via_row). No foreign keys: a key, an
-- upload or a delivery may go while the change stays, and the write path
-- pays for none.
ALTER TABLE stage_changes
    ADD COLUMN via text NOT NULL DEFAULT '',
    ADD COLUMN via_id bigint,
    ADD COLUMN via_row integer;
