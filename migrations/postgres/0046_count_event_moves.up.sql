-- An event that changes state is counted with one read of it and its
-- lead: count_event_moves moves it from one state to another, rather than
-- one count taking it out of its old state and another, reading both
-- again, adding it to its new one. A dispatcher's settling of a batch is
-- such a move for each event: queued (unsent_events) to sent
-- (event_sends).
--   * A send is written before its event's unsent_events row goes
--     (store.SettleEvents): event_sends' trigger reads the row's state and
--     moves the event from it to sent; unsent_events' delete trigger then
--     counts only the events that have no send.
--   * An update of unsent_events moves each event whose state changed, in
--     one call.
--   * Each lead's row is made narrow where it is read: the count's key
--     and a 0 or 1 per match key, not the lead's text columns that every
--     sum then compared after sorting.
-- The counts are the same.
CREATE TYPE event_move AS (event_id bigint, from_state text, to_state text);

-- count_event_moves counts each event of ms out of its from_state and
-- into its to_state (either may be NULL: none), by its lead as it is now
-- or, given ls, as ls has it (a moved lead's old row). Each event and lead
-- is one index lookup (the LATERAL subqueries are never turned into a join
-- that scans every event), in one plan the session keeps. That plan is
-- made without sequential scans: made while events and leads are small (a
-- new installation's first captures), it would otherwise scan both tables
-- for each event, and the session would keep it as they grow, until an
-- ANALYZE.
CREATE FUNCTION count_event_moves(ms event_move[], ls leads[] DEFAULT NULL) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status, dataset_id,
                              n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    SELECT l.account_id, l.bucket, l.source, l.campaign, e.event_name, s.state, e.dataset_id,
           sum(s.d), sum(s.d * l.em), sum(s.d * l.ph), sum(s.d * l.fbc), sum(s.d * l.fbp), sum(s.d * l.external_id),
           sum(s.d * l.lead_id), sum(s.d * l.ip), sum(s.d * l.ua)
    FROM unnest(ms) x
    CROSS JOIN LATERAL (SELECT e.lead_id, e.event_name, e.dataset_id FROM events e WHERE e.id = x.event_id OFFSET 0) e
    CROSS JOIN LATERAL (
        SELECT r.account_id, count_bucket(r.created_at) AS bucket, r.source, utm_campaign(r.event_source_url) AS campaign,
               CAST(r.email_hash <> '' AS integer) AS em,
               CAST(r.phone_hash <> '' AS integer) AS ph,
               CAST(r.fbc <> '' OR r.fbclid <> '' AS integer) AS fbc,
               CAST(r.fbp <> '' AS integer) AS fbp,
               CAST(COALESCE(r.external_id, '') <> '' AS integer) AS external_id,
               CAST(r.meta_lead_id <> '' AS integer) AS lead_id,
               CAST(r.client_ip_address <> '' AS integer) AS ip,
               CAST(r.client_user_agent <> '' AS integer) AS ua
        FROM (
            SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
                   l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
            FROM leads l WHERE ls IS NULL AND l.id = e.lead_id
            UNION ALL
            SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
                   l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
            FROM unnest(ls) l WHERE ls IS NOT NULL AND l.id = e.lead_id) r
        OFFSET 0) l
    CROSS JOIN LATERAL (VALUES (x.from_state, -1), (x.to_state, 1)) s (state, d)
    WHERE s.state IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5, 6, 7;
END $$;

-- count_events counts the events es (with their states) in (d = 1) or out
-- (d = -1) of their states: a move from or to none.
CREATE OR REPLACE FUNCTION count_events(es event_status[], d integer, ls leads[] DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_event_moves(ARRAY(
        SELECT ROW(x.event_id, CASE WHEN d < 0 THEN x.status END, CASE WHEN d > 0 THEN x.status END)::event_move
        FROM unnest(es) x), ls);
END $$;

-- Claims update unsent_events without changing a state: only the events
-- whose state changed move. Grouped by event, not joined: a plan kept
-- from a statement of a few rows never meets a thousand with a nested loop.
CREATE OR REPLACE FUNCTION unsent_events_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_event_moves(ARRAY(
        SELECT ROW(event_id, min(state) FILTER (WHERE d < 0), min(state) FILTER (WHERE d > 0))::event_move FROM (
            SELECT event_id, event_state(status, last_error) AS state, -1 AS d FROM old_rows
            UNION ALL
            SELECT event_id, event_state(status, last_error), 1 FROM new_rows) r
        GROUP BY event_id
        HAVING min(state) FILTER (WHERE d < 0) IS DISTINCT FROM min(state) FILTER (WHERE d > 0)));
    RETURN NULL;
END $$;

-- A send moves its event from the state its unsent_events row still has
-- (none for an event that never had one) to sent.
CREATE OR REPLACE FUNCTION event_sends_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_event_moves(ARRAY(
        SELECT ROW(n.event_id, (SELECT event_state(u.status, u.last_error) FROM unsent_events u WHERE u.event_id = n.event_id),
                   'sent')::event_move
        FROM new_rows n));
    RETURN NULL;
END $$;

-- An unsent_events row that goes after its event's send was written was
-- counted by the send: the others leave their state. A lookup by key per
-- row (OFFSET 0 keeps it from becoming a join over every send).
CREATE OR REPLACE FUNCTION unsent_events_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(
        SELECT ROW(o.event_id, event_state(o.status, o.last_error))::event_status FROM old_rows o
        WHERE NOT EXISTS (SELECT 1 FROM event_sends s WHERE s.event_id = o.event_id OFFSET 0)), -1);
    RETURN NULL;
END $$;
