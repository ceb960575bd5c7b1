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
SELECT r.account_id, 'booked', COALESCE((SELECT MAX(s.position) FROM stages s WHERE s.account_id = r.account_id), 0) + 1, false, now()
FROM (SELECT DISTINCT account_id FROM send_rules WHERE mode = 'booking') AS r
WHERE NOT EXISTS (SELECT 1 FROM stages s WHERE s.account_id = r.account_id AND (s.booking OR lower(s.name) = 'booked'));

CREATE TEMPORARY TABLE booking_mappings ON COMMIT DROP AS
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
SELECT t.account_id, t.id, NULL, t.before, substr(t.after, 1, length(t.after) - 1) || ',"stage":' || to_json(t.stage)::text || '}', now()
FROM (
    SELECT b.account_id, b.id, b.stage, v.after AS before,
        replace(replace(v.after, '"mode":"booking"', '"mode":"stage"'),
            '"enabled":true', CASE WHEN b.enabled THEN '"enabled":true' ELSE '"enabled":false' END) AS after
    FROM booking_mappings b
    JOIN send_rule_versions v ON v.id = (SELECT x.id FROM send_rule_versions x WHERE x.account_id = b.account_id AND x.rule_id = b.id
        ORDER BY x.created_at DESC, x.id DESC LIMIT 1)
    WHERE v.after <> ''
) AS t;

UPDATE send_rules r SET mode = 'stage', stage = b.stage, enabled = b.enabled, repeatable = false, updated_at = now()
FROM booking_mappings b
WHERE r.id = b.id;

ALTER TABLE send_rules DROP CONSTRAINT send_rules_mode_check;
ALTER TABLE send_rules ADD CONSTRAINT send_rules_mode_check
    CHECK (mode IN ('automatic_completed', 'automatic_partial', 'automatic_match', 'manual', 'stage'));
