-- Counts behind the Overview (docs/architecture.md, "Counts"): three small
-- tables that the database keeps equal to a GROUP BY over the leads, their
-- stage changes and their events, so that an account's overview reads a
-- few thousand rows however many leads it holds.
--
-- A row's time is its lead's capture time: a delta's in 15-minute buckets of
-- Unix time (count_bucket), a merged row's as the date in the account's
-- zone (day, days since 1970-01-01). Every zone's offset is a whole number
-- of quarter hours, so a bucket falls in one date of any zone; a change of
-- the account's zone counts its merged rows again (store.RecountAccount).
-- source and campaign (utm_campaign of the lead's event_source_url) are
-- the Overview's filters.
--
-- Triggers keep the counts in the writes' own transactions. Each table has
-- one function that adds (d = 1) or subtracts (d = -1) given rows as they
-- are defined to count: the triggers add new rows and subtract old ones,
-- and the migration fills the tables with the same functions, so a count
-- always equals its definition over the rows as they are now. Leads, stage
-- changes and events are never deleted: a delete would have to subtract
-- first, which a trigger cannot do once a cascade has removed the lead.
--
-- A trigger only ever inserts: a delta row (delta true) per key it moves.
-- Writers then never wait for one another on a shared counter row, and
-- cannot deadlock on two. A count is the sum of its key's rows; the store
-- merges the deltas into one row per key and day (delta false) every few
-- seconds (store.CompactCounts), one replica at a time: a day of a big
-- account is then a few dozen rows, not a few thousand.

-- utm_campaign is the raw value of a URL's first utm_campaign parameter, ''
-- when it has none. SQLite has the same function, registered by the store.
CREATE FUNCTION utm_campaign(url text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT COALESCE(substring(url FROM '[?&]utm_campaign=([^&#]*)'), '') $$;

-- junk_signals is the signals of a lead's junk reasons (a JSON list of
-- {"signal", "message"}), joined by commas: the messages vary from lead to
-- lead, the signals do not.
CREATE FUNCTION junk_signals(reasons text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT COALESCE(string_agg(r.value ->> 'signal', ',' ORDER BY r.ord), '')
      FROM jsonb_array_elements(CASE WHEN left(ltrim(reasons), 1) = '[' THEN reasons::jsonb ELSE '[]' END)
           WITH ORDINALITY AS r(value, ord) $$;

-- count_bucket is a time's 15-minute bucket; whole_seconds its Unix time
-- in whole seconds, as SQLite's strftime('%s') reads a time.
CREATE FUNCTION whole_seconds(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM t))::bigint $$;
CREATE FUNCTION count_bucket(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM t) / 900)::bigint $$;

-- local_day is the date of a bucket in zone tz as days since 1970-01-01;
-- a zone Postgres does not know is read as UTC, as Go reads one it does
-- not (the account settings take only zones Go knows).
CREATE FUNCTION local_day(bucket bigint, tz text) RETURNS integer LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (to_timestamp(bucket * 900) AT TIME ZONE tz)::date - DATE '1970-01-01';
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN (to_timestamp(bucket * 900) AT TIME ZONE 'UTC')::date - DATE '1970-01-01';
END $$;

-- Leads by their state now: stage is the lead's latest stage, junk_signals
-- the signals of a junk lead ('' for the others).
CREATE TABLE lead_counts (
    account_id   bigint NOT NULL,
    bucket       bigint,
    day          integer,
    source       text NOT NULL,
    campaign     text NOT NULL,
    stage        text NOT NULL,
    junk         boolean NOT NULL,
    partial      boolean NOT NULL,
    junk_signals text NOT NULL,
    n            bigint NOT NULL,
    delta        boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX lead_counts_key ON lead_counts (account_id, day, source, campaign, stage, junk, partial, junk_signals) WHERE NOT delta;
CREATE INDEX lead_counts_deltas ON lead_counts (account_id, bucket) WHERE delta;

-- Stage changes (not the junk markers) by stage and by whole hours from the
-- lead's capture to the change, for the funnel's median times.
CREATE TABLE stage_counts (
    account_id bigint NOT NULL,
    bucket     bigint,
    day        integer,
    source     text NOT NULL,
    campaign   text NOT NULL,
    stage      text NOT NULL,
    hours      bigint NOT NULL,
    n          bigint NOT NULL,
    delta      boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX stage_counts_key ON stage_counts (account_id, day, source, campaign, stage, hours) WHERE NOT delta;
CREATE INDEX stage_counts_deltas ON stage_counts (account_id, bucket) WHERE delta;

-- Events by name and status (sent when event_sends has it, else its
-- unsent_events status), and how many of them carry each match key: the
-- lead's keys, which its events send.
CREATE TABLE event_counts (
    account_id  bigint NOT NULL,
    bucket      bigint,
    day         integer,
    source      text NOT NULL,
    campaign    text NOT NULL,
    event_name  text NOT NULL,
    status      text NOT NULL,
    n           bigint NOT NULL,
    em          bigint NOT NULL,
    ph          bigint NOT NULL,
    fbc         bigint NOT NULL,
    fbp         bigint NOT NULL,
    external_id bigint NOT NULL,
    lead_id     bigint NOT NULL,
    ip          bigint NOT NULL,
    ua          bigint NOT NULL,
    delta       boolean NOT NULL DEFAULT true
);
CREATE UNIQUE INDEX event_counts_key ON event_counts (account_id, day, source, campaign, event_name, status) WHERE NOT delta;
CREATE INDEX event_counts_deltas ON event_counts (account_id, bucket) WHERE delta;

CREATE FUNCTION count_leads(ls leads[], d integer) RETURNS void LANGUAGE sql AS $$
INSERT INTO lead_counts (account_id, bucket, source, campaign, stage, junk, partial, junk_signals, n)
SELECT l.account_id, count_bucket(l.created_at), l.source, utm_campaign(l.event_source_url), l.stage, l.junk, l.partial,
       CASE WHEN l.junk THEN junk_signals(l.junk_reasons) ELSE '' END, d * count(*)
FROM unnest(ls) l
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
$$;

-- count_stage_changes counts the stage changes scs of the leads ls.
CREATE FUNCTION count_stage_changes(ls leads[], scs stage_changes[], d integer) RETURNS void LANGUAGE sql AS $$
INSERT INTO stage_counts (account_id, bucket, source, campaign, stage, hours, n)
SELECT l.account_id, count_bucket(l.created_at), l.source, utm_campaign(l.event_source_url), sc.stage,
       (whole_seconds(sc.occurred_at) - whole_seconds(l.created_at)) / 3600, d * count(*)
FROM unnest(ls) l JOIN unnest(scs) sc ON sc.lead_id = l.id
WHERE sc.stage NOT IN ('junk', 'not_junk')
GROUP BY 1, 2, 3, 4, 5, 6
$$;

-- An event with a status: the status tables' rows, or an event's now
-- (event_statuses).
CREATE TYPE event_status AS (event_id bigint, status text);

CREATE FUNCTION event_statuses(lead_ids bigint[]) RETURNS event_status[] LANGUAGE sql STABLE AS $$
SELECT ARRAY(
    SELECT ROW(e.id, CASE WHEN s.event_id IS NOT NULL THEN 'sent' ELSE u.status END)::event_status
    FROM events e
    LEFT JOIN event_sends s ON s.event_id = e.id
    LEFT JOIN unsent_events u ON u.event_id = e.id
    WHERE e.lead_id = ANY(lead_ids) AND (s.event_id IS NOT NULL OR u.event_id IS NOT NULL))
$$;

-- count_events counts the events es (with their statuses) of the leads ls.
CREATE FUNCTION count_events(ls leads[], es event_status[], d integer) RETURNS void LANGUAGE sql AS $$
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
FROM unnest(es) x JOIN events e ON e.id = x.event_id JOIN unnest(ls) l ON l.id = e.lead_id
GROUP BY 1, 2, 3, 4, 5, 6
$$;

-- compact_counts merges the deltas into one row per key, if no other
-- session is merging (two merging at once could deadlock on the merged
-- rows). A delta committed meanwhile stays for the next time.
CREATE FUNCTION compact_counts() RETURNS void LANGUAGE plpgsql AS $$
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
                  RETURNING account_id, bucket, source, campaign, event_name, status, n, em, ph, fbc, fbp, external_id, lead_id, ip, ua)
    INSERT INTO event_counts AS c (account_id, day, source, campaign, event_name, status,
                                   n, em, ph, fbc, fbp, external_id, lead_id, ip, ua, delta)
    SELECT g.account_id, local_day(g.bucket, a.timezone), source, campaign, event_name, status, sum(n), sum(em), sum(ph),
           sum(fbc), sum(fbp), sum(external_id), sum(lead_id), sum(ip), sum(ua), false
    FROM gone g JOIN accounts a ON a.id = g.account_id GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(n) <> 0 OR sum(em) <> 0 OR sum(ph) <> 0 OR sum(fbc) <> 0 OR sum(fbp) <> 0 OR sum(external_id) <> 0
        OR sum(lead_id) <> 0 OR sum(ip) <> 0 OR sum(ua) <> 0
    ON CONFLICT (account_id, day, source, campaign, event_name, status) WHERE NOT delta DO UPDATE SET
        n = c.n + excluded.n, em = c.em + excluded.em, ph = c.ph + excluded.ph, fbc = c.fbc + excluded.fbc,
        fbp = c.fbp + excluded.fbp, external_id = c.external_id + excluded.external_id,
        lead_id = c.lead_id + excluded.lead_id, ip = c.ip + excluded.ip, ua = c.ua + excluded.ua;
END $$;

CREATE FUNCTION leads_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_leads(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n), 1);
    RETURN NULL;
END $$;

-- An updated lead leaves its old count and joins its new one. One whose
-- capture time, source, URL or match keys changed (a partial lead completed)
-- moves its stage changes and events too.
CREATE FUNCTION leads_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
            ARRAY(SELECT sc FROM stage_changes sc WHERE sc.lead_id = ANY(moved)), -1);
        PERFORM count_stage_changes(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n WHERE n.id = ANY(moved)),
            ARRAY(SELECT sc FROM stage_changes sc WHERE sc.lead_id = ANY(moved)), 1);
        PERFORM count_events(ARRAY(SELECT ROW(o.*)::leads FROM old_rows o WHERE o.id = ANY(moved)), event_statuses(moved), -1);
        PERFORM count_events(ARRAY(SELECT ROW(n.*)::leads FROM new_rows n WHERE n.id = ANY(moved)), event_statuses(moved), 1);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION stage_changes_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_stage_changes(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows)),
        ARRAY(SELECT ROW(n.*)::stage_changes FROM new_rows n), 1);
    RETURN NULL;
END $$;

CREATE FUNCTION unsent_events_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows)),
        ARRAY(SELECT ROW(n.event_id, n.status)::event_status FROM new_rows n), 1);
    RETURN NULL;
END $$;

CREATE FUNCTION unsent_events_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM old_rows)),
        ARRAY(SELECT ROW(o.event_id, o.status)::event_status FROM old_rows o), -1);
    RETURN NULL;
END $$;

-- Claims update unsent_events without changing a status: only the rows
-- whose status changed move.
CREATE FUNCTION unsent_events_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[];
BEGIN
    changed := ARRAY(SELECT n.event_id FROM old_rows o JOIN new_rows n ON n.event_id = o.event_id WHERE n.status <> o.status);
    IF cardinality(changed) > 0 THEN
        PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows WHERE event_id = ANY(changed))),
            ARRAY(SELECT ROW(o.event_id, o.status)::event_status FROM old_rows o WHERE o.event_id = ANY(changed)), -1);
        PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT lead_id FROM new_rows WHERE event_id = ANY(changed))),
            ARRAY(SELECT ROW(n.event_id, n.status)::event_status FROM new_rows n WHERE n.event_id = ANY(changed)), 1);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION event_sends_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count_events(
        ARRAY(SELECT l FROM leads l WHERE l.id IN (SELECT e.lead_id FROM events e JOIN new_rows n ON n.event_id = e.id)),
        ARRAY(SELECT ROW(n.event_id, 'sent')::event_status FROM new_rows n), 1);
    RETURN NULL;
END $$;

-- Writers of the counted tables wait while the counts are filled: a row
-- they wrote meanwhile would be counted by neither the fill nor a trigger.
LOCK TABLE leads, stage_changes, unsent_events, event_sends IN SHARE MODE;

CREATE TRIGGER leads_count_insert AFTER INSERT ON leads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION leads_count_insert();
CREATE TRIGGER leads_count_update AFTER UPDATE ON leads
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION leads_count_update();
CREATE TRIGGER stage_changes_count_insert AFTER INSERT ON stage_changes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stage_changes_count_insert();
CREATE TRIGGER unsent_events_count_insert AFTER INSERT ON unsent_events
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION unsent_events_count_insert();
CREATE TRIGGER unsent_events_count_update AFTER UPDATE ON unsent_events
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION unsent_events_count_update();
CREATE TRIGGER unsent_events_count_delete AFTER DELETE ON unsent_events
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION unsent_events_count_delete();
CREATE TRIGGER event_sends_count_insert AFTER INSERT ON event_sends
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_sends_count_insert();

-- The counts of the rows there are, 10,000 leads at a time.
DO $$
DECLARE
    lo bigint := 0;
    top bigint;
    ids bigint[];
BEGIN
    SELECT COALESCE(max(id), 0) INTO top FROM leads;
    WHILE lo < top LOOP
        ids := ARRAY(SELECT id FROM leads WHERE id > lo AND id <= lo + 10000);
        PERFORM count_leads(ARRAY(SELECT l FROM leads l WHERE l.id = ANY(ids)), 1);
        PERFORM count_stage_changes(ARRAY(SELECT l FROM leads l WHERE l.id = ANY(ids)),
            ARRAY(SELECT sc FROM stage_changes sc WHERE sc.lead_id = ANY(ids)), 1);
        PERFORM count_events(ARRAY(SELECT l FROM leads l WHERE l.id = ANY(ids)), event_statuses(ids), 1);
        lo := lo + 10000;
    END LOOP;
END $$;
SELECT compact_counts();

-- When an account's stage updates arrive (Overview readiness, the agency
-- overview's alerts): the latest, and whether any came on a given day.
CREATE INDEX stage_changes_account_created_idx ON stage_changes (account_id, created_at);
