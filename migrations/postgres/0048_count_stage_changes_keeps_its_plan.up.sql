-- count_stage_changes does what 0033 made it do, in PL/pgSQL instead of
-- SQL: a SQL function's statement is planned at every call, and planning
-- this INSERT costs more than running it; PL/pgSQL keeps the plan where
-- the session keeps plans (the stage write's COPYs, under keptPlansSQL).
-- It reads only its arrays, never a table, so a kept plan cannot go stale
-- as tables grow; and a SQL function's plan, made without its arguments'
-- values, was as generic as the one kept now.
CREATE OR REPLACE FUNCTION count_stage_changes(ls leads[], scs stage_changes[], d integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stage_counts (account_id, bucket, source, campaign, stage, hours, n)
    SELECT l.account_id, count_bucket(sc.occurred_at), l.source, utm_campaign(l.event_source_url), sc.stage,
           (whole_seconds(sc.occurred_at) - whole_seconds(l.created_at)) / 3600, d * count(*)
    FROM unnest(ls) l JOIN unnest(scs) sc ON sc.lead_id = l.id
    WHERE sc.stage NOT IN ('junk', 'not_junk')
    GROUP BY 1, 2, 3, 4, 5, 6;
END $$;
