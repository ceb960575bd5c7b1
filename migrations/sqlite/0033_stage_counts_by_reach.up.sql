-- stage_counts by when a lead reached a stage (see the Postgres migration
-- of the same number): a row's time is the stage change's occurred_at, and
-- it counts each lead's first change to a stage (by occurred_at, then id;
-- junk markers aside).

-- first_reaches are the stage changes that are their lead's first to
-- their stage.
CREATE VIEW first_reaches AS
SELECT sc.* FROM stage_changes sc
WHERE NOT EXISTS (SELECT 1 FROM stage_changes p WHERE p.lead_id = sc.lead_id AND p.stage = sc.stage
                  AND (p.occurred_at, p.id) < (sc.occurred_at, sc.id));

DROP TRIGGER stage_count_delta;
CREATE TRIGGER stage_count_delta INSTEAD OF INSERT ON stage_count_delta WHEN NEW.stage NOT IN ('junk', 'not_junk') BEGIN
    INSERT INTO stage_counts (account_id, bucket, source, campaign, stage, hours, n)
    VALUES (NEW.account_id, count_bucket(NEW.occurred_at), NEW.source, utm_campaign(NEW.event_source_url), NEW.stage,
            (whole_seconds(NEW.occurred_at) - whole_seconds(NEW.created_at)) / 3600, NEW.d);
END;

-- A new first reach counts, and the change it comes before (an upload of
-- older history), if any, stops counting.
DROP TRIGGER stage_changes_count_insert;
CREATE TRIGGER stage_changes_count_insert AFTER INSERT ON stage_changes
WHEN NEW.stage NOT IN ('junk', 'not_junk') AND NOT EXISTS (SELECT 1 FROM stage_changes p WHERE p.lead_id = NEW.lead_id
    AND p.stage = NEW.stage AND (p.occurred_at, p.id) < (NEW.occurred_at, NEW.id))
BEGIN
    INSERT INTO stage_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, p.stage, p.occurred_at, -1
    FROM stage_changes p JOIN leads l ON l.id = p.lead_id
    WHERE p.id = (SELECT q.id FROM stage_changes q WHERE q.lead_id = NEW.lead_id AND q.stage = NEW.stage AND q.id <> NEW.id
                  ORDER BY q.occurred_at, q.id LIMIT 1);
    INSERT INTO stage_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, NEW.stage, NEW.occurred_at, 1
    FROM leads l WHERE l.id = NEW.lead_id;
END;

DROP TRIGGER leads_count_move;
CREATE TRIGGER leads_count_move AFTER UPDATE ON leads
WHEN OLD.created_at IS NOT NEW.created_at OR OLD.source IS NOT NEW.source OR OLD.event_source_url IS NOT NEW.event_source_url
    OR OLD.email_hash IS NOT NEW.email_hash OR OLD.phone_hash IS NOT NEW.phone_hash OR OLD.fbc IS NOT NEW.fbc
    OR OLD.fbclid IS NOT NEW.fbclid OR OLD.fbp IS NOT NEW.fbp OR OLD.external_id IS NOT NEW.external_id
    OR OLD.meta_lead_id IS NOT NEW.meta_lead_id OR OLD.client_ip_address IS NOT NEW.client_ip_address
    OR OLD.client_user_agent IS NOT NEW.client_user_agent
BEGIN
    INSERT INTO stage_count_delta
    SELECT OLD.account_id, OLD.created_at, OLD.source, OLD.event_source_url, sc.stage, sc.occurred_at, -1
    FROM first_reaches sc WHERE sc.lead_id = OLD.id;
    INSERT INTO stage_count_delta
    SELECT NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, sc.stage, sc.occurred_at, 1
    FROM first_reaches sc WHERE sc.lead_id = NEW.id;
    INSERT INTO event_count_delta
    SELECT OLD.account_id, OLD.created_at, OLD.source, OLD.event_source_url, OLD.email_hash, OLD.phone_hash, OLD.fbc,
           OLD.fbclid, OLD.fbp, OLD.external_id, OLD.meta_lead_id, OLD.client_ip_address, OLD.client_user_agent,
           x.event_name, x.status, -1
    FROM event_statuses x WHERE x.lead_id = OLD.id;
    INSERT INTO event_count_delta
    SELECT NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, NEW.email_hash, NEW.phone_hash, NEW.fbc,
           NEW.fbclid, NEW.fbp, NEW.external_id, NEW.meta_lead_id, NEW.client_ip_address, NEW.client_user_agent,
           x.event_name, x.status, 1
    FROM event_statuses x WHERE x.lead_id = NEW.id;
END;

-- The stage changes there are, counted again by their own time.
DELETE FROM stage_counts;
INSERT INTO stage_count_delta
SELECT l.account_id, l.created_at, l.source, l.event_source_url, sc.stage, sc.occurred_at, 1
FROM first_reaches sc JOIN leads l ON l.id = sc.lead_id;
