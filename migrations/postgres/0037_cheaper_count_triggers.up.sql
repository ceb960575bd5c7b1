-- The count triggers at less cost (docs/architecture.md, "Counts"), the
-- counts as they were. What they cost: arrays of whole lead rows
-- (ROW(n.*)::leads, message and match keys included), the count functions'
-- INSERTs planned again on every call (SQL functions keep no plans), a
-- join that read every event's id to find a batch's 1000, and count_bucket
-- run as a function call per row. Now:
--   * lead_counts is fed straight from the transition tables; an update's
--     old and new rows go in one statement, so a lead whose counted
--     columns did not change (a payload stamp, updated_at) adds no delta;
--   * count_events takes the events' ids and states only, and looks each
--     event and its lead up by id; a moved lead's old row is given;
--   * the trigger functions are PL/pgSQL with static statements, whose
--     plans a session keeps (count_events one generic plan, whatever
--     plan_cache_mode the connection asks for).

-- count_bucket and whole_seconds as the planner can inline them: Unix
-- time read from an interval, which no time zone changes (extract of a
-- timestamptz is only stable, so an immutable function around it ran as a
-- function call per row).
CREATE OR REPLACE FUNCTION whole_seconds(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM t - timestamptz '1970-01-01 00:00:00+00'))::bigint $$;
CREATE OR REPLACE FUNCTION count_bucket(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM t - timestamptz '1970-01-01 00:00:00+00') / 900)::bigint $$;

-- count_events counts the events es (with their states) of their leads as
-- they are now, or, given ls, as ls has them (a moved lead's old row). Each
-- event and lead is one index lookup (the LATERAL subqueries are never
-- turned into a join that scans every event), in one plan the session
-- keeps: right for 1 event or 1000.
CREATE FUNCTION count_events(es event_status[], d integer, ls leads[] DEFAULT NULL) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status,
                              n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    SELECT l.account_id, count_bucket(l.created_at), l.source, utm_campaign(l.event_source_url), e.event_name, x.status,
           d * count(*),
           d * count(*) FILTER (WHERE l.email_hash <> ''),
           d * count(*) FILTER (WHERE l.phone_hash <> ''),
           d * count(*) FILTER (WHERE l.fbc <> '' OR l.fbclid <> ''),
           d * count(*) FILTER (WHERE l.fbp <> ''),
           d * count(*) FILTER (WHERE COALESCE(l.external_id, '') <> ''),
           d * count(*) FILTER (WHERE l.meta_lead_id <> ''),
           d * count(*) FILTER (WHERE l.client_ip_address <> ''),
           d * count(*) FILTER (WHERE l.client_user_agent <> '')
    FROM unnest(es) x
    CROSS JOIN LATERAL (SELECT e.lead_id, e.event_name FROM events e WHERE e.id = x.event_id OFFSET 0) e
    CROSS JOIN LATERAL (
        SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
               l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
        FROM leads l WHERE ls IS NULL AND l.id = e.lead_id
        UNION ALL
        SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
               l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
        FROM unnest(ls) l WHERE ls IS NOT NULL AND l.id = e.lead_id
        OFFSET 0) l
    GROUP BY 1, 2, 3, 4, 5, 6;
END $$;

-- The leads' own counts: each row as lead_counts counts it, the old ones
-- (an update's) subtracted. A key whose rows cancel out adds nothing.
CREATE OR REPLACE FUNCTION leads_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_counts (account_id, bucket, source, campaign, stage, junk, partial, junk_signals, n)
    SELECT account_id, count_bucket(created_at), source, utm_campaign(event_source_url), stage, junk, partial,
           CASE WHEN junk THEN junk_signals(junk_reasons) ELSE '' END, count(*)
    FROM new_rows
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
    RETURN NULL;
END $$;

-- An updated lead leaves its old count and joins its new one. One whose
-- capture time, source, URL or match keys changed (a partial lead completed)
-- moves its stage changes and events too.
CREATE OR REPLACE FUNCTION leads_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moved bigint[];
BEGIN
    INSERT INTO lead_counts (account_id, bucket, source, campaign, stage, junk, partial, junk_signals, n)
    SELECT account_id, count_bucket(created_at), source, utm_campaign(event_source_url), stage, junk, partial,
           CASE WHEN junk THEN junk_signals(junk_reasons) ELSE '' END, sum(d)
    FROM (SELECT account_id, created_at, source, event_source_url, stage, junk, partial, junk_reasons, -1 AS d FROM old_rows
          UNION ALL
          SELECT account_id, created_at, source, event_source_url, stage, junk, partial, junk_reasons, 1 FROM new_rows) r
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING sum(d) <> 0;
    -- Grouped, not joined: a plan kept from a statement of a few rows
    -- never meets a thousand with a nested loop.
    moved := ARRAY(
        SELECT id FROM (
            SELECT id, created_at, source, event_source_url, email_hash, phone_hash, fbc, fbclid, fbp, external_id,
                   meta_lead_id, client_ip_address, client_user_agent, -1 AS d FROM old_rows
            UNION ALL
            SELECT id, created_at, source, event_source_url, email_hash, phone_hash, fbc, fbclid, fbp, external_id,
                   meta_lead_id, client_ip_address, client_user_agent, 1 FROM new_rows) r
        GROUP BY id, created_at, source, event_source_url, email_hash, phone_hash, fbc, fbclid, fbp, external_id,
                 meta_lead_id, client_ip_address, client_user_agent
        HAVING sum(d) > 0);
    IF cardinality(moved) > 0 THEN
        PERFORM count_stage_changes(ARRAY(SELECT ROW(o.*)::leads FROM old_rows o WHERE o.id = ANY(moved)),
            first_reaches(moved), -1);
        PERFORM count_stage_changes(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n WHERE n.id = ANY(moved)),
            first_reaches(moved), 1);
        PERFORM count_events(event_statuses(moved), -1, ARRAY(SELECT ROW(o.*)::leads FROM old_rows o WHERE o.id = ANY(moved)));
        PERFORM count_events(event_statuses(moved), 1);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION unsent_events_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT ROW(n.event_id, event_state(n.status, n.last_error))::event_status FROM new_rows n), 1);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION unsent_events_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT ROW(o.event_id, event_state(o.status, o.last_error))::event_status FROM old_rows o), -1);
    RETURN NULL;
END $$;

-- Claims update unsent_events without changing a state: only the rows
-- whose state changed (a status, or a failed event's reason) move. Each
-- (event, state) of the old rows and the new is summed: -1 left, 1 joined,
-- 0 stayed. Grouped, not joined, as a lead's move above.
CREATE OR REPLACE FUNCTION unsent_events_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(
        SELECT ROW(event_id, state)::event_status FROM (
            SELECT event_id, event_state(status, last_error) AS state, -1 AS d FROM old_rows
            UNION ALL
            SELECT event_id, event_state(status, last_error), 1 FROM new_rows) r
        GROUP BY event_id, state HAVING sum(d) < 0), -1);
    PERFORM count_events(ARRAY(
        SELECT ROW(event_id, state)::event_status FROM (
            SELECT event_id, event_state(status, last_error) AS state, -1 AS d FROM old_rows
            UNION ALL
            SELECT event_id, event_state(status, last_error), 1 FROM new_rows) r
        GROUP BY event_id, state HAVING sum(d) > 0), 1);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION event_sends_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT ROW(n.event_id, 'sent')::event_status FROM new_rows n), 1);
    RETURN NULL;
END $$;

-- The count functions over arrays of whole leads are no longer called.
DROP FUNCTION count_events(leads[], event_status[], integer);
DROP FUNCTION count_leads(leads[], integer);
