-- A booking rule (mode 'booking') sent when a lead reached the account's
-- booking stage. It becomes what it always was, the stage mapping of that
-- stage (issue 19): mode 'stage', stage the booking stage's name, and the
-- same id, name, dataset, event, value, currency, conditions, action
-- source, test event code, enabled and position. Its events keep their
-- ids: a booking event's record key was the lead's and the booking stage's
-- (capi.StageRecordKey), as a mapping's is when it is not repeatable, so a
-- lead booked before is never sent twice. Its position is kept too: a
-- mapping sends, and owns a shared event, in position order among its
-- stage's mappings, and a booking rule came before them as before.
--
-- An account with booking rules but no booking stage: its booking rules
-- never sent (no stage was the booking stage). The safest conversion keeps
-- it that way: they become mappings of its stage 'booked' (any case),
-- added at the end of its stages when it has none, and are disabled, so
-- that nothing is sent that was not sent before; a person enables them on
-- the Stages page. The added stage is not made the booking stage: the
-- account had chosen to have none.
INSERT INTO stages (account_id, name, position, booking, created_at)
SELECT r.account_id, 'booked', COALESCE((SELECT MAX(s.position) FROM stages s WHERE s.account_id = r.account_id), 0) + 1, false, CURRENT_TIMESTAMP
FROM (SELECT DISTINCT account_id FROM send_rules WHERE mode = 'booking') AS r
WHERE NOT EXISTS (SELECT 1 FROM stages s WHERE s.account_id = r.account_id AND (s.booking OR lower(s.name) = 'booked'));

CREATE TEMPORARY TABLE booking_mappings AS
SELECT r.id, r.account_id,
    (SELECT s.name FROM stages s WHERE s.account_id = r.account_id AND (s.booking OR lower(s.name) = 'booked')
        ORDER BY s.booking DESC, s.position, s.id LIMIT 1) AS stage,
    r.enabled AND EXISTS (SELECT 1 FROM stages s WHERE s.account_id = r.account_id AND s.booking) AS enabled
FROM send_rules r
WHERE r.mode = 'booking';

-- Each rule's history says so: a version, no person's, from its last one
-- to the rule as a mapping, in the JSON of store.RuleSnapshot. A JSON
-- string escapes its quotes, so "mode":"booking" and "enabled":true are
-- the snapshot's own keys; stage is its last key (repeatable, false, is
-- left out), added before the closing brace.
INSERT INTO send_rule_versions (account_id, rule_id, user_id, before, after, created_at)
SELECT t.account_id, t.id, NULL, t.before, substr(t.after, 1, length(t.after) - 1) || ',"stage":' || json_quote(t.stage) || '}', CURRENT_TIMESTAMP
FROM (
    SELECT b.account_id, b.id, b.stage, v.after AS before,
        replace(replace(v.after, '"mode":"booking"', '"mode":"stage"'),
            '"enabled":true', CASE WHEN b.enabled THEN '"enabled":true' ELSE '"enabled":false' END) AS after
    FROM booking_mappings b
    JOIN send_rule_versions v ON v.id = (SELECT x.id FROM send_rule_versions x WHERE x.account_id = b.account_id AND x.rule_id = b.id
        ORDER BY x.created_at DESC, x.id DESC LIMIT 1)
    WHERE v.after <> ''
) AS t;

-- SQLite cannot change a CHECK constraint: the table is made again, without
-- 'booking', the booking rules going over as mappings.
CREATE TABLE send_rules_new (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    dataset_id      integer NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    name            text NOT NULL,
    mode            text NOT NULL CHECK (mode IN ('automatic_completed', 'automatic_partial', 'automatic_match', 'manual', 'stage')),
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
    currency_field, test_event_code, combinator, conditions, enabled, position, created_at, updated_at, stage, repeatable)
SELECT r.id, r.account_id, r.dataset_id, r.name, CASE WHEN b.id IS NULL THEN r.mode ELSE 'stage' END, r.event_name, r.action_source,
    r.value, r.value_field, r.currency, r.currency_field, r.test_event_code, r.combinator, r.conditions,
    CASE WHEN b.id IS NULL THEN r.enabled ELSE b.enabled END, r.position, r.created_at,
    CASE WHEN b.id IS NULL THEN r.updated_at ELSE CURRENT_TIMESTAMP END,
    CASE WHEN b.id IS NULL THEN r.stage ELSE b.stage END, CASE WHEN b.id IS NULL THEN r.repeatable ELSE false END
FROM send_rules r LEFT JOIN booking_mappings b ON b.id = r.id;
-- New rules go on from the old table's last id, never taking the id of a
-- rule deleted since, whose versions stay under it.
DELETE FROM sqlite_sequence WHERE name = 'send_rules_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'send_rules_new', COALESCE(MAX(n), 0)
FROM (SELECT seq AS n FROM sqlite_sequence WHERE name = 'send_rules' UNION ALL SELECT MAX(rule_id) FROM send_rule_versions) AS ids;
DROP TABLE send_rules;
ALTER TABLE send_rules_new RENAME TO send_rules;
CREATE UNIQUE INDEX send_rules_account_name_key ON send_rules (account_id, lower(name));
CREATE INDEX send_rules_dataset_idx ON send_rules (dataset_id);

DROP TABLE booking_mappings;
