-- event_counts by the state people read (see the Postgres migration of the
-- same number): an event stored failed counts as failed, held_back or
-- not_sent. event_state is models.Event.State itself, registered by the
-- store.

DROP VIEW event_statuses;
CREATE VIEW event_statuses AS
SELECT e.id AS event_id, e.lead_id, e.event_name,
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
           event_state(NEW.status, NEW.last_error), 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

-- Claims update unsent_events without changing a state: only a status, or
-- a failed event's reason, can move it.
DROP TRIGGER unsent_events_count_update;
CREATE TRIGGER unsent_events_count_update AFTER UPDATE OF status, last_error ON unsent_events
WHEN event_state(OLD.status, OLD.last_error) <> event_state(NEW.status, NEW.last_error) BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(OLD.status, OLD.last_error), -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(NEW.status, NEW.last_error), 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

DROP TRIGGER unsent_events_count_delete;
CREATE TRIGGER unsent_events_count_delete AFTER DELETE ON unsent_events BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
           event_state(OLD.status, OLD.last_error), -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
END;

-- The events stored failed, counted again by their state.
DELETE FROM event_counts WHERE status = 'failed';
INSERT INTO event_count_delta
SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
       l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name,
       event_state(u.status, u.last_error), 1
FROM unsent_events u JOIN events e ON e.id = u.event_id JOIN leads l ON l.id = e.lead_id
WHERE u.status = 'failed';
