package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// loadLeadsSQL inserts website leads $2 to $3 (of $4) of account $1, captured
// over the last hour in id order as capture stores them, with the columns
// and match keys capture stores for a full form: hashed em, ph, fn, ln, ct,
// st, zp, country and external_id, the visitor's IP and user agent, fbc and
// fbp, and the page URL. Names and places come from small tables hashed
// once; em, ph and external_id are hashed per lead.
const loadLeadsSQL = `
WITH fnames AS MATERIALIZED (
	SELECT i::int - 1 AS i, n,
		'"fn":{"normalized":"' || lower(n) || '","hash":"' || encode(sha256(convert_to(lower(n), 'UTF8')), 'hex') || '"}' AS j
	FROM unnest(ARRAY['James','Mary','Robert','Patricia','John','Jennifer','Michael','Linda','David','Elizabeth','Oliver','Amelia','George']) WITH ORDINALITY AS t(n, i)
), lnames AS MATERIALIZED (
	SELECT i::int - 1 AS i, n,
		'"ln":{"normalized":"' || lower(n) || '","hash":"' || encode(sha256(convert_to(lower(n), 'UTF8')), 'hex') || '"}' AS j
	FROM unnest(ARRAY['Smith','Johnson','Williams','Brown','Jones','Garcia','Miller','Davis','Taylor','Wilson','Evans']) WITH ORDINALITY AS t(n, i)
), places AS MATERIALIZED (
	SELECT i::int - 1 AS i, z.z, city, st, zp3 || lpad(z.z::text, 2, '0') AS zip,
		'"ct":{"normalized":"' || replace(lower(city), ' ', '') || '","hash":"' || encode(sha256(convert_to(replace(lower(city), ' ', ''), 'UTF8')), 'hex') ||
		'"},"st":{"normalized":"' || lower(st) || '","hash":"' || encode(sha256(convert_to(lower(st), 'UTF8')), 'hex') ||
		'"},"zp":{"normalized":"' || zp3 || lpad(z.z::text, 2, '0') || '","hash":"' || encode(sha256(convert_to(zp3 || lpad(z.z::text, 2, '0'), 'UTF8')), 'hex') ||
		'"},"country":{"normalized":"us","hash":"' || encode(sha256(convert_to('us', 'UTF8')), 'hex') || '"}' AS j
	FROM unnest(ARRAY['New York','Austin','Denver','Seattle','Miami','Chicago','Phoenix','Boston'],
		ARRAY['NY','TX','CO','WA','FL','IL','AZ','MA'],
		ARRAY['100','787','802','981','331','606','850','021']) WITH ORDINALITY AS t(city, st, zp3, i)
	CROSS JOIN generate_series(0, 99) AS z(z)
), base AS MATERIALIZED (
	SELECT g, f.n AS fn, l.n AS ln, p.city, p.st, p.zip, f.j || ',' || l.j || ',' || p.j AS j,
		(ARRAY['gmail.com','yahoo.com','outlook.com','hotmail.com','icloud.com','aol.com','acme-corp.com','proton.me'])[1 + g % 8] AS dom,
		(ARRAY['212','646','512','303','206','305','312','602','617','415','702','404'])[1 + g % 12] AS area,
		lpad(((g::bigint * 7919) % 8000000 + 2000000)::text, 7, '0') AS line,
		(ARRAY[
			'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/468.0.0.41.109;FBBV/612345678;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]',
			'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/467.0.0.45.109;]',
			'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
			'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'])[1 + g % 4] AS ua,
		(ARRAY['https://www.example-dental.com/free-consultation',
			'https://acme-roofing.example.com/quote?utm_source=facebook&utm_medium=paid&utm_campaign=spring_promo',
			'https://www.example-law.com/contact/', 'https://example.co.uk/book-a-call'])[1 + g % 4] AS page,
		(ARRAY[24,50,66,73,81,86,98,104,151,174,188,212])[1 + g % 12]::text || '.' || ((g / 180) % 256)::text || '.' ||
			((g / 46080) % 256)::text || '.' || (1 + g % 254)::text AS ip,
		now() - interval '56 minutes' + (g::float8 / $4::int) * interval '55 minutes' AS t
	FROM generate_series($2::int, $3::int) AS g
	JOIN fnames f ON f.i = g % 13
	JOIN lnames l ON l.i = (g / 13) % 11
	JOIN places p ON p.i = (g / 7) % 8 AND p.z = g % 100
), v AS MATERIALIZED (
	SELECT b.*,
		lower(b.fn) || '.' || lower(b.ln) || b.g || '@' || b.dom AS email,
		'1' || b.area || b.line AS e164,
		'bench-' || b.g AS ext,
		'IwAR' || md5(b.g::text) AS fbclid,
		(extract(epoch FROM b.t) * 1000)::bigint AS ms
	FROM base b
), k AS (
	SELECT v.*,
		encode(sha256(convert_to(v.email, 'UTF8')), 'hex') AS h_em,
		encode(sha256(convert_to(v.e164, 'UTF8')), 'hex') AS h_ph,
		encode(sha256(convert_to(v.ext, 'UTF8')), 'hex') AS h_ext,
		'fb.1.' || v.ms || '.' || v.fbclid AS fbc,
		'fb.1.' || (v.ms - 86400000) || '.' || (1000000000 + v.g) AS fbp
	FROM v
)
INSERT INTO leads (account_id, external_id, source, email, phone, phone_e164, first_name, last_name,
	city, state, zip, country, message, fbclid, fbc, fbp, client_ip_address, client_user_agent,
	event_source_url, fill_seconds, fields, match_keys, email_hash, phone_hash, junk_reasons,
	created_at, received_at, updated_at)
SELECT $1, k.ext, 'website', k.email, '(' || k.area || ') ' || substr(k.line, 1, 3) || '-' || substr(k.line, 4), k.e164,
	k.fn, k.ln, k.city, k.st, k.zip, 'US',
	'Can someone call me back about the free consultation? Thanks!', k.fbclid, k.fbc, k.fbp,
	k.ip, k.ua, k.page, 8 + (k.g % 180), '{}',
	-- normalize.Keys as JSON, in its field order; every value is JSON-safe.
	'{"em":{"normalized":"' || k.email || '","hash":"' || k.h_em ||
		'"},"ph":{"normalized":"' || k.e164 || '","hash":"' || k.h_ph || '"},' || k.j ||
		',"external_id":{"normalized":"' || k.ext || '","hash":"' || k.h_ext ||
		'"},"client_ip_address":"' || k.ip || '","client_user_agent":"' || k.ua ||
		'","fbc":"' || k.fbc || '","fbp":"' || k.fbp || '","phone_country":"US"}',
	k.h_em, k.h_ph, '[]', k.t, k.t + interval '20 milliseconds', k.t + interval '20 milliseconds'
FROM k`

// loadEventsSQL queues one Lead event per lead, as capture does: $1 is the
// account, $2 the dataset, then one array per column, with the payload
// capture prepares (or none, with -prepared=false); due since the lead was
// received.
const loadEventsSQL = `
WITH ev AS (
	INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time,
		payload, payload_stamp, created_at)
	SELECT $1, $2, u.lead_id, 'default', 'Lead', u.event_id, u.at, u.payload, u.stamp, u.received
	FROM unnest($3::bigint[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[], $8::timestamptz[])
		AS u(lead_id, event_id, at, payload, stamp, received)
	RETURNING id, dataset_id, lead_id, event_time, created_at
)
INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, updated_at)
SELECT id, dataset_id, lead_id, 'queued', event_time, created_at, created_at FROM ev`

// load fills the backlog on one connection. The secondary indexes of leads
// and events (not those of constraints) are dropped first and built again
// at the end, which is several times faster than keeping them up to date.
func load(ctx context.Context, dbURL string, acc models.Account, ds models.Dataset, n int, prepared bool) error {
	accountID := acc.ID
	t0 := time.Now()
	// A pool of its own, closed at the end: the connection keeps buffers
	// as large as the largest statement it sent, which the drain's peak
	// RSS must not count.
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '256MB'"); err != nil {
		return err
	}
	var defs []string
	for _, table := range []string{"leads", "events", "unsent_events"} {
		d, err := dropIndexes(ctx, conn, table)
		if err != nil {
			return err
		}
		defs = append(defs, d...)
	}
	const chunk = 100000
	for done := 0; done < n; done += chunk {
		// Chunks keep one statement's memory small.
		m := min(chunk, n-done)
		if _, err := conn.ExecContext(ctx, loadLeadsSQL, accountID, done+1, done+m, n); err != nil {
			return fmt.Errorf("leads: %w", err)
		}
	}
	logf("leads inserted after %s", time.Since(t0).Round(time.Millisecond))
	var lo, hi int64
	if err := conn.QueryRowContext(ctx, "SELECT min(id), max(id) FROM leads WHERE account_id = $1", accountID).Scan(&lo, &hi); err != nil {
		return err
	}
	// Smaller chunks: each holds its payloads in memory.
	const eventChunk = 20000
	for from := lo; from <= hi; from += eventChunk {
		if err := queueEvents(ctx, conn, acc, ds, from, from+eventChunk-1, prepared); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	logf("events queued after %s", time.Since(t0).Round(time.Millisecond))
	for _, def := range defs {
		if _, err := conn.ExecContext(ctx, def); err != nil {
			return fmt.Errorf("%s: %w", def, err)
		}
	}
	logf("indexes built after %s", time.Since(t0).Round(time.Millisecond))
	for _, t := range []string{"leads", "events", "unsent_events", "datasets", "accounts"} {
		if _, err := conn.ExecContext(ctx, "VACUUM ANALYZE "+t); err != nil {
			return fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	var got int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM unsent_events WHERE status = 'queued'").Scan(&got); err != nil {
		return err
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT bool_and((match_keys::json)->'em'->>'hash' = email_hash
		AND (match_keys::json)->>'fbp' = fbp) FROM (SELECT * FROM leads LIMIT 1000) l`).Scan(&ok); err != nil || !ok {
		return fmt.Errorf("the loaded match keys are not what capture stores (%v)", err)
	}
	if got != n {
		return fmt.Errorf("%d events queued; want %d", got, n)
	}
	return nil
}

// queueEvents queues the Lead events of leads lo to hi, in their order, as
// capture makes them under the dataset's default send rule
// (capture.RuleEvent), with the payload it prepares when prepared is set.
func queueEvents(ctx context.Context, conn *sql.Conn, acc models.Account, ds models.Dataset, lo, hi int64, prepared bool) error {
	rows, err := conn.QueryContext(ctx, `SELECT id, external_id, created_at, received_at, source, partial, event_source_url,
		meta_lead_id, country, state, match_keys FROM leads WHERE account_id = $1 AND id BETWEEN $2 AND $3 ORDER BY id`, acc.ID, lo, hi)
	if err != nil {
		return err
	}
	var leadIDs, stamps []int64
	var eventIDs, payloads []string
	var at, received []time.Time
	for rows.Next() {
		var l models.Lead
		if err := rows.Scan(&l.ID, &l.ExternalID, &l.CreatedAt, &l.ReceivedAt, &l.Source, &l.Partial, &l.EventSourceURL,
			&l.MetaLeadID, &l.Country, &l.State, &l.MatchKeys); err != nil {
			rows.Close()
			return err
		}
		keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
		if err != nil {
			rows.Close()
			return err
		}
		l.AccountID = acc.ID
		e := decide.Event(acc, ds, store.DefaultRule(ds), l, keys, rule.NewLead(&l), capi.RecordKey(l), l.CreatedAt)
		if e.PayloadStamp == 0 {
			rows.Close()
			return fmt.Errorf("event %s cannot be sent as built", e.EventID)
		}
		if !prepared {
			e.Payload, e.PayloadStamp = "", 0
		}
		leadIDs, eventIDs, at = append(leadIDs, l.ID), append(eventIDs, e.EventID), append(at, e.EventTime)
		payloads, stamps, received = append(payloads, e.Payload), append(stamps, e.PayloadStamp), append(received, l.ReceivedAt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, loadEventsSQL, acc.ID, ds.ID, leadIDs, eventIDs, at, payloads, stamps, received)
	return err
}

// dropIndexes drops the indexes of a table that back no constraint and
// returns the statements that create them again.
func dropIndexes(ctx context.Context, conn *sql.Conn, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i WHERE i.indrelid = $1::regclass
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`, table)
	if err != nil {
		return nil, err
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, err
		}
		names, defs = append(names, name), append(defs, def)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := conn.ExecContext(ctx, "DROP INDEX "+name); err != nil {
			return nil, err
		}
	}
	return defs, nil
}
