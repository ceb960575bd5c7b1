-- event_counts by the state people read (docs/architecture.md, "Counts";
-- DESIGN "Event states"): an event stored failed counts as failed (Meta
-- refused it), held_back (our pre-send check refused it) or not_sent (a
-- decision cancelled it, or its lead is gone), as models.Event.State tells
-- them apart by the reason it keeps. The Overview then shows each as its
-- own figure. The other statuses count as they are stored.

-- event_state is models.Event.State of an unsent event: its stored status
-- and last error (models.ReasonNotSent, ReasonJunkLead, ReasonNoLonger,
-- ReasonLeadGone). SQLite's is the Go method itself, registered by the
-- store; TestEventStateSQL holds the two equal.
CREATE FUNCTION event_state(status text, last_error text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE
    WHEN status <> 'failed' THEN status
    WHEN last_error = 'not sent: a person marked the lead junk'
      OR substr(last_error, 1, 28) = 'not sent: no longer matches '
      OR last_error = 'the lead no longer exists' THEN 'not_sent'
    WHEN substr(last_error, 1, 10) = 'not sent: ' THEN 'held_back'
    ELSE 'failed' END
$$;

CREATE OR REPLACE FUNCTION event_statuses(lead_ids bigint[]) RETURNS event_status[] LANGUAGE sql STABLE AS $$
SELECT ARRAY(
    SELECT ROW(e.id, CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE event_state(u.status, u.last_error) END)::event_status
    FROM events e
    LEFT JOIN event_sends s ON s.event_id = e.id
    LEFT JOIN unsent_events u ON u.event_id = e.id
    WHERE e.lead_id = ANY(lead_ids) AND (s.event_id IS NOT NULL OR u.event_id IS NOT NULL))
$$;

CREATE OR REPLACE FUNCTION unsent_events_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows)),
        ARRAY(SELECT ROW(n.event_id, event_state(n.status, n.last_error))::event_status FROM new_rows n), 1);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION unsent_events_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM old_rows)),
        ARRAY(SELECT ROW(o.event_id, event_state(o.status, o.last_error))::event_status FROM old_rows o), -1);
    RETURN NULL;
END $$;

-- Claims update unsent_events without changing a state: only the rows
-- whose state changed (a status, or a failed event's reason) move.
CREATE OR REPLACE FUNCTION unsent_events_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[];
BEGIN
    changed := ARRAY(SELECT n.event_id FROM old_rows o JOIN new_rows n ON n.event_id = o.event_id
                     WHERE event_state(n.status, n.last_error) <> event_state(o.status, o.last_error));
    IF cardinality(changed) > 0 THEN
        PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows WHERE event_id = ANY(changed))),
            ARRAY(SELECT ROW(o.event_id, event_state(o.status, o.last_error))::event_status FROM old_rows o WHERE o.event_id = ANY(changed)), -1);
        PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows WHERE event_id = ANY(changed))),
            ARRAY(SELECT ROW(n.event_id, event_state(n.status, n.last_error))::event_status FROM new_rows n WHERE n.event_id = ANY(changed)), 1);
    END IF;
    RETURN NULL;
END $$;

-- The failed events counted again by their state: every row counted
-- 'failed' is an event stored failed, so those rows go and the events
-- stored failed count anew. Writers of the events' state wait meanwhile,
-- and so does a merge.
LOCK TABLE leads, unsent_events, event_sends IN SHARE MODE;
SELECT pg_advisory_xact_lock(7020210021);
DELETE FROM event_counts WHERE status = 'failed';
SELECT count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM unsent_events WHERE status = 'failed')),
    ARRAY(SELECT ROW(event_id, event_state(status, last_error))::event_status FROM unsent_events WHERE status = 'failed'), 1);
SELECT compact_counts();
