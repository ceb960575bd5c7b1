-- Counts behind the Overview (docs/architecture.md, "Counts"): three small
-- tables that the database keeps equal to a GROUP BY over the leads, their
-- stage changes and their events. See the Postgres step of the same number
-- for the definitions; here each is a view whose INSTEAD OF trigger adds
-- (d = 1) or subtracts (d = -1) one row as it counts, and the triggers of
-- the counted tables insert into those views. A trigger only inserts delta
-- rows (delta true, by 15-minute bucket); a count is the sum of its key's
-- rows, and the store merges the deltas into one row per key and date in
-- the account's zone (day) every few seconds (store.CompactCounts). The
-- store registers the
-- functions utm_campaign, junk_signals, count_bucket, whole_seconds and
-- local_day (Go) on every
-- connection.

CREATE TABLE lead_counts (
    account_id   integer NOT NULL,
    bucket       integer,
    day          integer,
    source       text NOT NULL,
    campaign     text NOT NULL,
    stage        text NOT NULL,
    junk         boolean NOT NULL,
    partial      boolean NOT NULL,
    junk_signals text NOT NULL,
    n            integer NOT NULL,
    delta        boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX lead_counts_key ON lead_counts (account_id, day, source, campaign, stage, junk, partial, junk_signals) WHERE NOT delta;
CREATE INDEX lead_counts_deltas ON lead_counts (account_id, bucket) WHERE delta;

CREATE TABLE stage_counts (
    account_id integer NOT NULL,
    bucket     integer,
    day        integer,
    source     text NOT NULL,
    campaign   text NOT NULL,
    stage      text NOT NULL,
    hours      integer NOT NULL,
    n          integer NOT NULL,
    delta      boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX stage_counts_key ON stage_counts (account_id, day, source, campaign, stage, hours) WHERE NOT delta;
CREATE INDEX stage_counts_deltas ON stage_counts (account_id, bucket) WHERE delta;

CREATE TABLE event_counts (
    account_id  integer NOT NULL,
    bucket      integer,
    day         integer,
    source      text NOT NULL,
    campaign    text NOT NULL,
    event_name  text NOT NULL,
    status      text NOT NULL,
    n           integer NOT NULL,
    em          integer NOT NULL,
    ph          integer NOT NULL,
    fbc         integer NOT NULL,
    fbp         integer NOT NULL,
    external_id integer NOT NULL,
    lead_id     integer NOT NULL,
    ip          integer NOT NULL,
    ua          integer NOT NULL,
    delta       boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX event_counts_key ON event_counts (account_id, day, source, campaign, event_name, status) WHERE NOT delta;
CREATE INDEX event_counts_deltas ON event_counts (account_id, bucket) WHERE delta;

-- A lead as lead_counts counts it.
CREATE VIEW lead_count_delta AS
SELECT account_id, created_at, source, event_source_url, stage, junk, partial, junk_reasons, 0 AS d FROM leads WHERE 0;
CREATE TRIGGER lead_count_delta INSTEAD OF INSERT ON lead_count_delta BEGIN
    INSERT INTO lead_counts (account_id, bucket, source, campaign, stage, junk, partial, junk_signals, n)
    VALUES (NEW.account_id, count_bucket(NEW.created_at), NEW.source, utm_campaign(NEW.event_source_url), NEW.stage,
            NEW.junk, NEW.partial, CASE WHEN NEW.junk THEN junk_signals(NEW.junk_reasons) ELSE '' END, NEW.d);
END;

-- A stage change of a lead (captured at created_at) as stage_counts counts it.
CREATE VIEW stage_count_delta AS
SELECT account_id, created_at, source, event_source_url, stage, created_at AS occurred_at, 0 AS d FROM leads WHERE 0;
CREATE TRIGGER stage_count_delta INSTEAD OF INSERT ON stage_count_delta WHEN NEW.stage NOT IN ('junk', 'not_junk') BEGIN
    INSERT INTO stage_counts (account_id, bucket, source, campaign, stage, hours, n)
    VALUES (NEW.account_id, count_bucket(NEW.created_at), NEW.source, utm_campaign(NEW.event_source_url), NEW.stage,
            (whole_seconds(NEW.occurred_at) - whole_seconds(NEW.created_at)) / 3600, NEW.d);
END;

-- An event with a status, of a lead with these keys, as event_counts counts it.
CREATE VIEW event_count_delta AS
SELECT account_id, created_at, source, event_source_url, email_hash, phone_hash, fbc, fbclid, fbp, external_id,
       meta_lead_id, client_ip_address, client_user_agent, '' AS event_name, '' AS status, 0 AS d FROM leads WHERE 0;
CREATE TRIGGER event_count_delta INSTEAD OF INSERT ON event_count_delta BEGIN
    INSERT INTO event_counts (account_id, bucket, source, campaign, event_name, status,
                              n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    VALUES (NEW.account_id, count_bucket(NEW.created_at), NEW.source, utm_campaign(NEW.event_source_url),
            NEW.event_name, NEW.status, NEW.d,
            NEW.d * (NEW.email_hash <> ''), NEW.d * (NEW.phone_hash <> ''),
            NEW.d * (NEW.fbc <> '' OR NEW.fbclid <> ''), NEW.d * (NEW.fbp <> ''),
            NEW.d * (COALESCE(NEW.external_id, '') <> ''), NEW.d * (NEW.meta_lead_id <> ''),
            NEW.d * (NEW.client_ip_address <> ''), NEW.d * (NEW.client_user_agent <> ''));
END;

-- event_statuses: every event with a status now, for the fill and for a
-- lead that moves.
CREATE VIEW event_statuses AS
SELECT e.id AS event_id, e.lead_id, e.event_name, CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE u.status END AS status
FROM events e
LEFT JOIN event_sends s ON s.event_id = e.id
LEFT JOIN unsent_events u ON u.event_id = e.id
WHERE s.event_id IS NOT NULL OR u.event_id IS NOT NULL;

CREATE TRIGGER leads_count_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_count_delta VALUES (NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, NEW.stage,
        NEW.junk, NEW.partial, NEW.junk_reasons, 1);
END;

CREATE TRIGGER leads_count_update AFTER UPDATE ON leads BEGIN
    INSERT INTO lead_count_delta VALUES (OLD.account_id, OLD.created_at, OLD.source, OLD.event_source_url, OLD.stage,
        OLD.junk, OLD.partial, OLD.junk_reasons, -1);
    INSERT INTO lead_count_delta VALUES (NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, NEW.stage,
        NEW.junk, NEW.partial, NEW.junk_reasons, 1);
END;

-- A lead whose capture time, source, URL or match keys changed (a partial
-- lead completed) moves its stage changes and events.
CREATE TRIGGER leads_count_move AFTER UPDATE ON leads
WHEN OLD.created_at IS NOT NEW.created_at OR OLD.source IS NOT NEW.source OR OLD.event_source_url IS NOT NEW.event_source_url
    OR OLD.email_hash IS NOT NEW.email_hash OR OLD.phone_hash IS NOT NEW.phone_hash OR OLD.fbc IS NOT NEW.fbc
    OR OLD.fbclid IS NOT NEW.fbclid OR OLD.fbp IS NOT NEW.fbp OR OLD.external_id IS NOT NEW.external_id
    OR OLD.meta_lead_id IS NOT NEW.meta_lead_id OR OLD.client_ip_address IS NOT NEW.client_ip_address
    OR OLD.client_user_agent IS NOT NEW.client_user_agent
BEGIN
    INSERT INTO stage_count_delta
    SELECT OLD.account_id, OLD.created_at, OLD.source, OLD.event_source_url, sc.stage, sc.occurred_at, -1
    FROM stage_changes sc WHERE sc.lead_id = OLD.id;
    INSERT INTO stage_count_delta
    SELECT NEW.account_id, NEW.created_at, NEW.source, NEW.event_source_url, sc.stage, sc.occurred_at, 1
    FROM stage_changes sc WHERE sc.lead_id = NEW.id;
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

CREATE TRIGGER stage_changes_count_insert AFTER INSERT ON stage_changes BEGIN
    INSERT INTO stage_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, NEW.stage, NEW.occurred_at, 1
    FROM leads l WHERE l.id = NEW.lead_id;
END;

CREATE TRIGGER unsent_events_count_insert AFTER INSERT ON unsent_events BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, NEW.status, 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

CREATE TRIGGER unsent_events_count_update AFTER UPDATE OF status ON unsent_events WHEN OLD.status <> NEW.status BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, OLD.status, -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, NEW.status, 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

CREATE TRIGGER unsent_events_count_delete AFTER DELETE ON unsent_events BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, OLD.status, -1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = OLD.event_id;
END;

CREATE TRIGGER event_sends_count_insert AFTER INSERT ON event_sends BEGIN
    INSERT INTO event_count_delta
    SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
           l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, e.event_name, 'sent', 1
    FROM events e JOIN leads l ON l.id = e.lead_id WHERE e.id = NEW.event_id;
END;

-- The counts of the rows there are.
INSERT INTO lead_count_delta
SELECT account_id, created_at, source, event_source_url, stage, junk, partial, junk_reasons, 1 FROM leads;
INSERT INTO stage_count_delta
SELECT l.account_id, l.created_at, l.source, l.event_source_url, sc.stage, sc.occurred_at, 1
FROM stage_changes sc JOIN leads l ON l.id = sc.lead_id;
INSERT INTO event_count_delta
SELECT l.account_id, l.created_at, l.source, l.event_source_url, l.email_hash, l.phone_hash, l.fbc, l.fbclid, l.fbp,
       l.external_id, l.meta_lead_id, l.client_ip_address, l.client_user_agent, x.event_name, x.status, 1
FROM event_statuses x JOIN leads l ON l.id = x.lead_id;

-- When an account's stage updates arrive (Overview readiness, the agency
-- overview's alerts): the latest, and whether any came on a given day.
CREATE INDEX stage_changes_account_created_idx ON stage_changes (account_id, created_at);
