-- Send rules decide which leads become which events (internal/rule). Each
-- belongs to one dataset; position orders an account's rules on its page.
-- value and currency are fixed, or read from a lead field (value_field,
-- currency_field); an empty currency is the account's. action_source and
-- test_event_code, when set, override the lead's and the dataset's for
-- this rule's events, which carry them (events.action_source,
-- events.test_event_code) so a payload built again at send time keeps them.
CREATE TABLE send_rules (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    name            text NOT NULL,
    mode            text NOT NULL CHECK (mode IN ('automatic_completed', 'automatic_partial', 'automatic_match', 'booking', 'manual')),
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
    updated_at      datetime NOT NULL
);
CREATE UNIQUE INDEX send_rules_account_name_key ON send_rules (account_id, lower(name));
CREATE INDEX send_rules_dataset_idx ON send_rules (dataset_id);

-- Every change of a rule, kept: who, when, and the rule as JSON before and
-- after ('' when it was created or deleted).
CREATE TABLE send_rule_versions (
    id          integer PRIMARY KEY AUTOINCREMENT,
    account_id  integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    rule_id     integer NOT NULL,
    user_id     integer REFERENCES users (id) ON DELETE SET NULL,
    before      text NOT NULL DEFAULT '',
    after       text NOT NULL DEFAULT '',
    created_at  datetime NOT NULL
);
CREATE INDEX send_rule_versions_rule_idx ON send_rule_versions (account_id, rule_id, created_at DESC, id DESC);

ALTER TABLE events ADD COLUMN action_source text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN test_event_code text NOT NULL DEFAULT '';

-- Each dataset gets the rule that does what capture did before rules:
-- every complete lead that is not junk becomes a Lead.
INSERT INTO send_rules (account_id, dataset_id, name, mode, event_name, position, created_at, updated_at)
SELECT account_id, id, 'Completed leads to ' || name, 'automatic_completed', 'Lead',
    row_number() OVER (PARTITION BY account_id ORDER BY lower(name), id), CURRENT_TIMESTAMP, CURRENT_TIMESTAMP
FROM datasets;
