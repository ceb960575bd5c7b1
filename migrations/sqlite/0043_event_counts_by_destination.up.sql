-- event_counts by destination (see the Postgres migration of the same
-- number): each row counts the events of one destination (dataset_id), so
-- the Overview follows a stage to each destination. The view every trigger
-- counts an event through takes the event's dataset_id, and the counts are
-- made anew from the events there are.

DROP INDEX event_counts_key;
DELETE FROM event_counts;
ALTER TABLE event_counts ADD COLUMN dataset_id integer NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX event_counts_key ON event_counts (account_id, day, source, campaign, event_name, status, dataset_id) WHERE NOT delta;

DROP TRIGGER event_count_delta;
DROP VIEW event_count_delta;
CREATE VIEW event_count_delta AS
SELECT account_id, created_at, source, event_source_url, email_hash, phone_hash, fbc, fbclid, fbp, external_id,
       meta_lead_id, client_ip_address, client_user_agent, '' AS event_name, '' AS status, 0 AS dataset_id, 0 AS d
FROM leads WHERE 0;
CREATE TRIGGER event_count_delta INSTEAD OF INSERT ON event_count_delta BEGIN
    INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status, dataset_id,
                              n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    VALUES (NEW.account_id, count_bucket(NEW.created_at), NEW.source, utm_campaign(NEW.event_source_url),
            NEW.event_name, NEW.status, NEW.dataset_id, NEW.d,
            NEW.d * (NEW.email_hash <> ''), NEW.d * (NEW.phone_hash <> ''),
            NEW.d * (NEW.fbc <> '' OR NEW.fbclid <> ''), NEW.d * (NEW.fbp <> ''),
            NEW.d * (COALESCE(NEW.external_id, '') <> ''), NEW.d * (NEW.meta_lead_id <> ''),
            NEW.d * (NEW.client_ip_address <> ''), NEW.d * (NEW.client_user_agent <> ''));
END;

DROP VIEW event_statuses;
CREATE VIEW event_statuses AS
SELECT e.id AS event_id, e.lead_id, e.event_name, e.dataset_id,
       CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE event_state(u.status, u.last_error) END AS status
FROM events e
LEFT JOIN event_sends s ON s.event_id = e.id
LEFT JOIN unsent_events u ON u.event_id = e.id
WHERE s.event_id IS NOT NULL OR u.event_id IS NOT NULL;

DROP TRIGGER unsent_events_count_insert;
CREATE TRIGGER unsent_events_count_insert AFTER INSERT ON unsent_events BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(NEW.status, NEW.last_error), e.dataset_id, 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

DROP TRIGGER unsent_events_count_update;
CREATE TRIGGER unsent_events_count_update AFTER UPDATE OF status, last_error ON unsent_events
WHEN event_state(OLD.status, OLD.last_error) <> event_state(NEW.status, NEW.last_error) BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(OLD.status, OLD.last_error), e.dataset_id, -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(NEW.status, NEW.last_error), e.dataset_id, 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

DROP TRIGGER unsent_events_count_delete;
CREATE TRIGGER unsent_events_count_delete AFTER DELETE ON unsent_events BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(OLD.status, OLD.last_error), e.dataset_id, -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
END;

DROP TRIGGER event_sends_count_insert;
CREATE TRIGGER event_sends_count_insert AFTER INSERT ON event_sends BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, 'sent', e.dataset_id, 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
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
           x.event_name, x.status, x.dataset_id, -1
    FROM event_statuses x WHERE x.lead_id = OLD.id;
    INSERT INTO event_count_delta
    SELECT NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, NEW.email_hash, NEW.phone_hash, NEW.fbc,
           NEW.fbclid, NEW.fbp, NEW.external_id, NEW.meta_lead_id, NEW.client_ip_address, NEW.client_user_agent,
           x.event_name, x.status, x.dataset_id, 1
    FROM event_statuses x WHERE x.lead_id = NEW.id;
END;

-- The counts of the events there are, by destination.
INSERT INTO event_count_delta
SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
       l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, x.event_name, x.status, x.dataset_id, 1
FROM event_statuses x JOIN leads l ON l.id = x.lead_id;
