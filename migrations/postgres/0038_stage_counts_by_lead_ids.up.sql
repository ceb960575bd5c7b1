-- The stage changes' count trigger finds its changes' leads by their ids:
-- an index probe of leads_pkey per lead (= ANY of an array), where
-- "l.id IN (SELECT lead_id FROM new_rows)" let the planner, which knows
-- nothing of a transition table's size, read every lead of every account
-- once per statement (a sequential scan per stage API batch, CRM delivery
-- and upload chunk). What it counts is unchanged (0033).
CREATE OR REPLACE FUNCTION stage_changes_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ls leads[];
BEGIN
    ls := ARRAY(SELECT l FROM leads l WHERE l.id = ANY(ARRAY(SELECT DISTINCT lead_id FROM new_rows)));
    PERFORM count_stage_changes(ls, ARRAY(
        SELECT o.sc
        FROM (SELECT DISTINCT lead_id, stage FROM new_rows WHERE stage NOT IN ('junk', 'not_junk')) k
        CROSS JOIN LATERAL (
            SELECT p AS sc FROM stage_changes p
            WHERE p.lead_id = k.lead_id AND p.stage = k.stage AND p.id NOT IN (SELECT id FROM new_rows)
            ORDER BY p.occurred_at, p.id LIMIT 1) o
        WHERE NOT first_reach(o.sc)), -1);
    PERFORM count_stage_changes(ls, ARRAY(
        SELECT x.sc FROM (SELECT ROW(r.*)::stage_changes AS sc FROM new_rows r) x WHERE first_reach(x.sc)), 1);
    RETURN NULL;
END $$;
