-- event_counts by destination (docs/destinations.md): each row counts the
-- events of one destination (dataset_id), so the Overview follows a stage
-- to each destination and its figures add up when a lead's event goes to
-- several. count_events reads the event's dataset_id with its name, the
-- merge keeps it in the key, and the counts are made anew from the events
-- there are. Writers of the events' state wait meanwhile, and so does a
-- merge.
LOCK TABLE leads, events, unsent_events, event_sends IN SHARE MODE;
SELECT pg_advisory_xact_lock(7020210021);

DROP INDEX event_counts_key;
DELETE FROM event_counts;
ALTER TABLE event_counts ADD COLUMN dataset_id bigint NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX event_counts_key ON event_counts (account_id, day, source, campaign, event_name, status, dataset_id) WHERE NOT delta;

CREATE OR REPLACE FUNCTION count_events(es event_status[], d integer, ls leads[] DEFAULT NULL) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status, dataset_id,
                              n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    SELECT l.account_id, count_bucket(l.created_at), l.source, utm_campaign(l.event_source_url), e.event_name, x.status,
           e.dataset_id,
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
    CROSS JOIN LATERAL (SELECT e.lead_id, e.event_name, e.dataset_id FROM events e WHERE e.id = x.event_id OFFSET 0) e
    CROSS JOIN LATERAL (
        SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
               l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
        FROM leads l WHERE ls IS NULL AND l.id = e.lead_id
        UNION ALL
        SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid,
               l.fbp, l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent
        FROM unnest(ls) l WHERE ls IS NOT NULL AND l.id = e.lead_id
        OFFSET 0) l
    GROUP BY 1, 2, 3, 4, 5, 6, 7;
END $$;

CREATE OR REPLACE FUNCTION compact_counts() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(7020210021) THEN
        RETURN;
    END IF;
    WITH gone AS (DELETE FROM lead_counts WHERE delta
                  RETURNING account_id, bucket, source, campaign, stage, junk, partial, junk_signals, n)
    INSERT INTO lead_counts AS c (account_id, day, source, campaign, stage, junk, partial, junk_signals, n, delta)
    SELECT g.account_id, local_day(g.bucket, a.timezone), source, campaign, stage, junk, partial, junk_signals, sum(n), false
    FROM gone g JOIN accounts a ON a.id = g.account_id GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING sum(n) <> 0
    ON CONFLICT (account_id, day, source, campaign, stage, junk, partial, junk_signals) WHERE NOT delta
    DO UPDATE SET n = c.n + excluded.n;

    WITH gone AS (DELETE FROM stage_counts WHERE delta RETURNING account_id, bucket, source, campaign, stage, hours, n)
    INSERT INTO stage_counts AS c (account_id, day, source, campaign, stage, hours, n, delta)
    SELECT g.account_id, local_day(g.bucket, a.timezone), source, campaign, stage, hours, sum(n), false
    FROM gone g JOIN accounts a ON a.id = g.account_id GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0
    ON CONFLICT (account_id, day, source, campaign, stage, hours) WHERE NOT delta DO UPDATE SET n = c.n + excluded.n;

    WITH gone AS (DELETE FROM event_counts WHERE delta
                  RETURNING account_id, bucket, source, campaign, event_name, status, dataset_id,
                            n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    INSERT INTO event_counts AS c (account_id, day, source, campaign, event_name, status, dataset_id,
                                   n, em, ph, fbc, fbp, external_id, lead_id, ip, ua, delta)
    SELECT g.account_id, local_day(g.bucket, a.timezone), source, campaign, event_name, status, dataset_id, sum(n), sum(em),
           sum(ph), sum(fbc), sum(fbp), sum(external_id), sum(lead_id), sum(ip), sum(ua), false
    FROM gone g JOIN accounts a ON a.id = g.account_id GROUP BY 1, 2, 3, 4, 5, 6, 7
    HAVING sum(n) <> 0 OR sum(em) <> 0 OR sum(ph) <> 0 OR sum(fbc) <> 0 OR sum(fbp) <> 0 OR sum(external_id) <> 0
        OR sum(lead_id) <> 0 OR sum(ip) <> 0 OR sum(ua) <> 0
    ON CONFLICT (account_id, day, source, campaign, event_name, status, dataset_id) WHERE NOT delta DO UPDATE SET
        n = c.n + excluded.n, em = c.em + excluded.em, ph = c.ph + excluded.ph, fbc = c.fbc + excluded.fbc,
        fbp = c.fbp + excluded.fbp, external_id = c.external_id + excluded.external_id,
        lead_id = c.lead_id + excluded.lead_id, ip = c.ip + excluded.ip, ua = c.ua + excluded.ua;
END $$;

-- The counts of the events there are, by destination, as deltas the
-- merge below folds in.
INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status, dataset_id,
                          n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
SELECT l.account_id, count_bucket(l.created_at), l.source, utm_campaign(l.event_source_url), e.event_name,
       CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE event_state(u.status, u.last_error) END, e.dataset_id,
       count(*),
       count(*) FILTER (WHERE l.email_hash <> ''),
       count(*) FILTER (WHERE l.phone_hash <> ''),
       count(*) FILTER (WHERE l.fbc <> '' OR l.fbclid <> ''),
       count(*) FILTER (WHERE l.fbp <> ''),
       count(*) FILTER (WHERE COALESCE(l.external_id, '') <> ''),
       count(*) FILTER (WHERE l.meta_lead_id <> ''),
       count(*) FILTER (WHERE l.client_ip_address <> ''),
       count(*) FILTER (WHERE l.client_user_agent <> '')
FROM events e
JOIN leads l ON l.id = e.lead_id
LEFT JOIN event_sends s ON s.event_id = e.id
LEFT JOIN unsent_events u ON u.event_id = e.id
WHERE s.event_id IS NOT NULL OR u.event_id IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7;

SELECT compact_counts();
