-- stage_counts by when a lead reached a stage (docs/architecture.md,
-- "Counts"): a row's time is now the stage change's occurred_at, no longer
-- its lead's capture time, so last week's "reached qualified" settles when
-- the week ends. It counts each lead's first change to a stage (by
-- occurred_at, then id; junk markers aside): a lead moved back and forth
-- reaches a stage once. source, campaign and hours (whole hours from the
-- capture to the change) stay the lead's.

-- first_reach reports whether sc is its lead's first change to its stage.
CREATE FUNCTION first_reach(sc stage_changes) RETURNS boolean LANGUAGE sql STABLE AS $$
SELECT NOT EXISTS (SELECT 1 FROM stage_changes p WHERE p.lead_id = sc.lead_id AND p.stage = sc.stage
                   AND (p.occurred_at, p.id) < (sc.occurred_at, sc.id))
$$;

-- count_stage_changes counts the stage changes scs (first reaches, as the
-- callers choose them) of the leads ls, by the changes' own time.
CREATE OR REPLACE FUNCTION count_stage_changes(ls leads[], scs stage_changes[], d integer) RETURNS void LANGUAGE sql AS $$
INSERT INTO stage_counts (account_id, bucket, source, campaign, stage, hours, n)
SELECT l.account_id, count_bucket(sc.occurred_at), l.source, utm_campaign(l.event_source_url), sc.stage,
       (whole_seconds(sc.occurred_at) - whole_seconds(l.created_at)) / 3600, d * count(*)
FROM unnest(ls) l JOIN unnest(scs) sc ON sc.lead_id = l.id
WHERE sc.stage NOT IN ('junk', 'not_junk')
GROUP BY 1, 2, 3, 4, 5, 6
$$;

-- first_reaches are the first reaches of the leads ids.
CREATE FUNCTION first_reaches(ids bigint[]) RETURNS stage_changes[] LANGUAGE sql STABLE AS $$
SELECT ARRAY(SELECT sc FROM stage_changes sc WHERE sc.lead_id = ANY(ids) AND first_reach(sc))
$$;

CREATE OR REPLACE FUNCTION leads_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moved bigint[];
BEGIN
    PERFORM count_leads(ARRAY(SELECT ROW(o.*)::leads FROM old_rows o), -1);
    PERFORM count_leads(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n), 1);
    moved := ARRAY(
        SELECT n.id FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.created_at, o.source, o.event_source_url, o.email_hash, o.phone_hash, o.fbc, o.fbclid, o.fbp,
               o.external_id, o.meta_lead_id, o.client_ip_address, o.client_user_agent)
              IS DISTINCT FROM
              (n.created_at, n.source, n.event_source_url, n.email_hash, n.phone_hash, n.fbc, n.fbclid, n.fbp,
               n.external_id, n.meta_lead_id, n.client_ip_address, n.client_user_agent));
    IF cardinality(moved) > 0 THEN
        PERFORM count_stage_changes(ARRAY(SELECT ROW(o.*)::leads FROM old_rows o WHERE o.id = ANY(moved)),
            first_reaches(moved), -1);
        PERFORM count_stage_changes(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n WHERE n.id = ANY(moved)),
            first_reaches(moved), 1);
        PERFORM count_events(ARRAY(SELECT ROW(o.*)::leads FROM old_rows o WHERE o.id = ANY(moved)), event_statuses(moved), -1);
        PERFORM count_events(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n WHERE n.id = ANY(moved)), event_statuses(moved), 1);
    END IF;
    RETURN NULL;
END $$;

-- New changes that are first reaches count; a change dated before its
-- lead's first to the same stage (an upload of older history) takes that
-- one's place, which stops counting. Each lookup is a probe of the index
-- stage_changes_natural_idx (lead_id, stage, occurred_at) per new change.
CREATE OR REPLACE FUNCTION stage_changes_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ls leads[];
BEGIN
    ls := ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows));
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

-- Count the stage changes there are again, by their own time. Writers of
-- stage changes and leads wait meanwhile.
LOCK TABLE leads, stage_changes IN SHARE MODE;
SELECT pg_advisory_xact_lock(7020210021);
DELETE FROM stage_counts;
DO $$
DECLARE
    lo bigint := 0;
    top bigint;
    ids bigint[];
BEGIN
    SELECT COALESCE(max(id), 0) INTO top FROM leads;
    WHILE lo < top LOOP
        ids := ARRAY(SELECT id FROM leads WHERE id > lo AND id <= lo + 10000);
        PERFORM count_stage_changes(ARRAY(SELECT l FROM leads l WHERE l.id = ANY(ids)), first_reaches(ids), 1);
        lo := lo + 10000;
    END LOOP;
END $$;
SELECT compact_counts();
