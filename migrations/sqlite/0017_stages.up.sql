-- CRM stages (issue 19). Each account has its own list of stages, in the
-- order a lead moves through them; one may be the booking stage. A new
-- account starts with qualified, booked (the booking stage) and won.
CREATE TABLE stages (
    id          integer PRIMARY KEY AUTOINCREMENT,
    account_id  integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        text NOT NULL,
    position    integer NOT NULL,
    booking     boolean NOT NULL DEFAULT false,
    created_at  datetime NOT NULL
);
CREATE UNIQUE INDEX stages_account_name_key ON stages (account_id, lower(name));

INSERT INTO stages (account_id, name, position, booking, created_at)
SELECT a.id, s.name, s.position, s.booking, CURRENT_TIMESTAMP
FROM accounts a CROSS JOIN (SELECT 'qualified' AS name, 1 AS position, 0 AS booking
    UNION ALL SELECT 'booked', 2, 1 UNION ALL SELECT 'won', 3, 0) AS s;

-- A stage mapping is a send rule of mode 'stage': it fires when a lead
-- reaches its stage. A repeatable mapping sends one event per stage change
-- (a second sale to the same lead), the others one per lead and stage.
-- SQLite cannot change a CHECK constraint: the table is made again.
CREATE TABLE send_rules_new (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    name            text NOT NULL,
    mode            text NOT NULL CHECK (mode IN ('automatic_completed', 'automatic_partial', 'automatic_match', 'booking', 'manual', 'stage')),
    event_name      text NOT NULL,
    action_source   text NOT NULL DEFAULT '',
    value           real,
    value_field     text NOT NULL DEFAULT '',
    currency        text NOT NULL DEFAULT '',
    currency_field  text NOT NULL DEFAULT '',
    test_event_code text NOT NULL DEFAULT '',
    combinator      text NOT NULL DEFAULT 'and' CHECK (combinator IN ('and', 'or')),
    conditions      text NOT NULL DEFAULT '[]',
    enabled         boolean NOT NULL DEFAULT true,
    position        integer NOT NULL DEFAULT 0,
    created_at      datetime NOT NULL,
    updated_at      datetime NOT NULL,
    stage           text NOT NULL DEFAULT '',
    repeatable      boolean NOT NULL DEFAULT false
);
INSERT INTO send_rules_new (id, account_id, dataset_id, name, mode, event_name, action_source, value, value_field, currency,
    currency_field, test_event_code, combinator, conditions, enabled, position, created_at, updated_at)
SELECT id, account_id, dataset_id, name, mode, event_name, action_source, value, value_field, currency,
    currency_field, test_event_code, combinator, conditions, enabled, position, created_at, updated_at
FROM send_rules;
DROP TABLE send_rules;
ALTER TABLE send_rules_new RENAME TO send_rules;
CREATE UNIQUE INDEX send_rules_account_name_key ON send_rules (account_id, lower(name));
CREATE INDEX send_rules_dataset_idx ON send_rules (dataset_id);

-- A stage event knows its stage change, and whether it was filled in: a
-- lead that jumped to a later mapped stage gets the earlier ones first.
ALTER TABLE events ADD COLUMN stage_change_id integer;
ALTER TABLE events ADD COLUMN filled_in boolean NOT NULL DEFAULT false;
CREATE INDEX events_stage_change_idx ON events (stage_change_id) WHERE stage_change_id IS NOT NULL;

-- A change sent without change_id is known by its lead, stage and time;
-- the Stages page counts an account's changes per stage.
CREATE INDEX stage_changes_natural_idx ON stage_changes (lead_id, stage, occurred_at);
CREATE INDEX stage_changes_account_stage_idx ON stage_changes (account_id, stage);
