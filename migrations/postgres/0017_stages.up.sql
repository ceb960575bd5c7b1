-- CRM stages (issue 19). Each account has its own list of stages, in the
-- order a lead moves through them; one may be the booking stage. A new
-- account starts with qualified, booked (the booking stage) and won.
CREATE TABLE stages (
    id          bigserial PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        text NOT NULL,
    position    integer NOT NULL,
    booking     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX stages_account_name_key ON stages (account_id, lower(name));

INSERT INTO stages (account_id, name, position, booking, created_at)
SELECT a.id, s.name, s.position, s.booking, now()
FROM accounts a CROSS JOIN (VALUES ('qualified', 1, false), ('booked', 2, true), ('won', 3, false))
    AS s (name, position, booking);

-- A stage mapping is a send rule of mode 'stage': it fires when a lead
-- reaches its stage. A repeatable mapping sends one event per stage change
-- (a second sale to the same lead), the others one per lead and stage.
ALTER TABLE send_rules DROP CONSTRAINT send_rules_mode_check;
ALTER TABLE send_rules ADD CONSTRAINT send_rules_mode_check
    CHECK (mode IN ('automatic_completed', 'automatic_partial', 'automatic_match', 'booking', 'manual', 'stage'));
ALTER TABLE send_rules ADD COLUMN stage text NOT NULL DEFAULT '';
ALTER TABLE send_rules ADD COLUMN repeatable boolean NOT NULL DEFAULT false;

-- A stage event knows its stage change, and whether it was filled in: a
-- lead that jumped to a later mapped stage gets the earlier ones first.
ALTER TABLE events ADD COLUMN stage_change_id bigint;
ALTER TABLE events ADD COLUMN filled_in boolean NOT NULL DEFAULT false;
CREATE INDEX events_stage_change_idx ON events (stage_change_id) WHERE stage_change_id IS NOT NULL;

-- A change sent without change_id is known by its lead, stage and time;
-- the Stages page counts an account's changes per stage.
CREATE INDEX stage_changes_natural_idx ON stage_changes (lead_id, stage, occurred_at);
CREATE INDEX stage_changes_account_stage_idx ON stage_changes (account_id, stage);
