-- Where each stage change came from (see the Postgres migration).
ALTER TABLE stage_changes ADD COLUMN via text NOT NULL DEFAULT '';
ALTER TABLE stage_changes ADD COLUMN via_id integer;
ALTER TABLE stage_changes ADD COLUMN via_row integer;
