// Command benchdispatch measures the dispatch path end to end: it queues a
// backlog of events on a private Postgres schema, drains it with the real
// dispatch.Dispatcher to an in-process fake Graph server, and compares the
// rate with a plain client posting ready-made 1000-event batches to the same
// fake (docs/operations.md, "Benchmarks": at least half as fast).
//
//	go run ./cmd/benchdispatch -events 100000
//
// It is the dispatch half of `make bench` (.ci/bench-dispatch). Loading the
// backlog is done in SQL and is not measured.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/internal/benchkit"
	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchdispatch:", err)
		os.Exit(1)
	}
}

type config struct {
	database    string
	events      int
	dispatchers int
	baseline    time.Duration
	slices      int
	sliceLen    time.Duration
	fake        string
	cpuprofile  string
	memprofile  string
	budget      float64
	probe       int
	keep        bool
	loadOnly    bool
	prepared    bool
}

const (
	pixelID   = "123456789012345"
	fakeToken = "bench-token-EAAB"
)

func run() error {
	var cfg config
	flag.StringVar(&cfg.database, "database", benchkit.Database(), "Postgres URL (default $TEST_DATABASE_URL, then $DATABASE_URL); a private schema is created in it and dropped afterwards")
	flag.IntVar(&cfg.events, "events", 1000000, "events in the backlog (one website lead each)")
	flag.IntVar(&cfg.dispatchers, "dispatchers", 1, "concurrent dispatchers draining the backlog; the baseline uses as many clients")
	flag.DurationVar(&cfg.baseline, "baseline", 5*time.Second, "how long the plain client posts ready-made batches before and after the drain")
	flag.IntVar(&cfg.slices, "slices", 8, "how many times the drain pauses, evenly over its events, for a short baseline run (0: never)")
	flag.DurationVar(&cfg.sliceLen, "slice", time.Second, "how long each of those baseline runs lasts")
	flag.StringVar(&cfg.fake, "fake", "full", "fake Graph server: full (decodes every event as capitest does and checks it) or light (counts the data array)")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the drain to this file")
	flag.StringVar(&cfg.memprofile, "memprofile", "", "write the allocations of the run (pprof allocs, mostly the drain's) to this file")
	flag.Float64Var(&cfg.budget, "budget", 0.5, "the least drain rate / baseline rate that passes")
	flag.IntVar(&cfg.probe, "probe", 3, "before the drain, time each store call of this many batches in rolled-back transactions (0: none)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the bench schema instead of dropping it")
	flag.BoolVar(&cfg.prepared, "prepared", true, "queue the events with the payloads capture prepares; false: without, as after a settings change, so the dispatcher builds each from its lead")
	flag.BoolVar(&cfg.loadOnly, "loadonly", false, "load the backlog, keep the schema and stop (to study the queries by hand)")
	flag.Parse()
	if cfg.events < dispatch.MaxBatch || cfg.dispatchers < 1 || cfg.baseline <= 0 {
		return fmt.Errorf("-events must be at least %d, -dispatchers at least 1 and -baseline positive", dispatch.MaxBatch)
	}
	if cfg.loadOnly {
		cfg.keep = true
	}
	if cfg.fake != "full" && cfg.fake != "light" {
		return errors.New("-fake must be full or light")
	}

	ctx := context.Background()
	st, dbURL, done, err := benchkit.OpenStore(ctx, cfg.database, "benchdispatch", cfg.keep)
	if err != nil {
		return err
	}
	defer done()
	box, err := seal.New(benchkit.RandomKey())
	if err != nil {
		return err
	}
	acc, err := benchkit.Account(ctx, st)
	if err != nil {
		return err
	}
	ds, err := benchkit.LiveDataset(ctx, st, box, acc, pixelID, "v24.0", fakeToken)
	if err != nil {
		return err
	}

	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	logf("loading %d leads and events (not measured)", cfg.events)
	t0 := time.Now()
	if err := load(ctx, dbURL, acc, ds, cfg.events, cfg.prepared); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	logf("loaded in %s", time.Since(t0).Round(time.Millisecond))
	if cfg.loadOnly {
		return nil
	}

	// The fake Graph server, in this process.
	fk := &benchkit.FakeGraph{Light: cfg.fake == "light", Token: fakeToken}
	srv := &http.Server{Handler: fk, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	graphURL := "http://" + ln.Addr().String()

	tr := &http.Transport{
		MaxIdleConns:        cfg.dispatchers * 2,
		MaxIdleConnsPerHost: cfg.dispatchers * 2,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &capi.Client{HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	target := capi.Target{BaseURL: graphURL, Version: ds.APIVersion, PixelID: ds.PixelID, Token: fakeToken}

	// The first batch the dispatcher will claim, built the way it builds it.
	batch, buildTime, err := firstBatch(ctx, st, acc.ID, ds.ID)
	if err != nil {
		return fmt.Errorf("build the baseline batch: %w", err)
	}
	size := 0
	for _, p := range batch {
		size += len(p)
	}

	logf("baseline: %d client(s) posting ready-made %d-event batches (%d KB) for %s", cfg.dispatchers, len(batch), size>>10, cfg.baseline)
	base, err := baseline(client, target, batch, cfg.dispatchers, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	logf("baseline: %.0f events/s (%d requests)", base.rate, base.requests)

	var probes []probeResult
	if cfg.probe > 0 {
		probes, err = probe(ctx, st, acc.ID, ds.ID, cfg.probe)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
	}

	rssBefore := benchkit.ProcStatusKB("VmHWM")
	// The load and the baseline leave garbage and heap the drain does not need.
	debug.FreeOSMemory()
	benchkit.ResetPeakRSS()
	fk.Reset()
	// The drain pauses for short baseline runs now and then, so that the
	// baseline also sees the machine as the drain saw it.
	// What the fake takes during a slice is the baseline's: the drain's
	// counts leave it out (the drain waits meanwhile).
	slice := func() (baselineResult, error) {
		got, refused := fk.Received.Load(), fk.Refused.Load()
		r, err := baseline(client, target, batch, cfg.dispatchers, cfg.sliceLen)
		fk.Received.Store(got)
		fk.Refused.Store(refused)
		return r, err
	}
	dr, err := drain(ctx, cfg, st, box, client, graphURL, slice)
	if err != nil {
		return err
	}
	dr.peakRSSKB = benchkit.ProcStatusKB("VmHWM")
	received, refused := fk.Received.Load(), fk.Refused.Load()

	// Again after the drain: other load on the machine may have changed, so
	// the budget uses every run's events over every run's time.
	logf("baseline again after the drain")
	after, err := baseline(client, target, batch, cfg.dispatchers, cfg.baseline)
	if err != nil {
		return fmt.Errorf("baseline after: %w", err)
	}
	logf("baseline after: %.0f events/s (%d requests)", after.rate, after.requests)
	base.before, base.after = base.rate, after.rate
	for _, r := range dr.slices {
		base.slices = append(base.slices, r.rate)
	}
	for _, r := range append(dr.slices, after) {
		base.requests += r.requests
		base.events += r.events
		base.seconds += r.seconds
	}
	base.rate = float64(base.events) / base.seconds

	// Everything must have gone out exactly once.
	counts, err := statusCounts(ctx, db)
	if err != nil {
		return err
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM send_requests").Scan(&rows); err != nil {
		return err
	}

	printSummary(cfg, dr, base, probes, buildTime, size, rssBefore, counts, rows, received, refused)
	if counts[models.EventSent] != cfg.events || dr.events != cfg.events || int(received) != cfg.events {
		return fmt.Errorf("the drain sent %d events, the fake received %d, the database has %v; want %d sent",
			dr.events, received, counts, cfg.events)
	}
	if dr.failedSends > 0 {
		return fmt.Errorf("%d requests failed", dr.failedSends)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchdispatch: "+format+"\n", args...)
}

// ---------------------------------------------------------------- loading

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

// firstBatch builds the first batch the dispatcher will claim from its
// leads, as dispatch does for events without a prepared payload (match keys
// decoded, capi.Prepare, the time checked), and times that building alone.
// When the events carry prepared payloads, the batch must equal them.
func firstBatch(ctx context.Context, st *store.Store, accountID, datasetID int64) ([]json.RawMessage, time.Duration, error) {
	// The dispatcher's own claim, rolled back: the same events.
	var c store.Claim
	err := st.Tx(ctx, func(tx *store.Store) (err error) {
		if c, err = tx.ClaimEvents(ctx, datasetID, time.Now(), time.Minute, dispatch.MaxBatch, nil); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		return nil, 0, err
	}
	evs := c.Events
	acc, err := st.Account(ctx, accountID)
	if err != nil {
		return nil, 0, err
	}
	ds, err := st.DatasetByID(ctx, datasetID)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.LeadID
	}
	leads, err := st.PayloadLeads(ctx, accountID, ids)
	if err != nil {
		return nil, 0, err
	}
	build := func() ([]json.RawMessage, error) {
		now := time.Now()
		out := make([]json.RawMessage, 0, len(evs))
		for _, e := range evs {
			l := leads[e.LeadID]
			keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
			if err != nil {
				return nil, err
			}
			_, body, err := capi.Prepare(capi.BuildInput{Account: acc, Dataset: ds, Lead: l, Keys: keys, Event: e})
			if err == nil {
				err = capi.CheckTime(e.EventTime.Unix(), now)
			}
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", e.EventID, err)
			}
			out = append(out, body)
		}
		return out, nil
	}
	var batch []json.RawMessage
	var times []time.Duration
	for range 5 {
		t0 := time.Now()
		batch, err = build()
		if err != nil {
			return nil, 0, err
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	for i, e := range evs {
		if e.PayloadStamp != 0 && e.Payload != string(batch[i]) {
			return nil, 0, fmt.Errorf("event %s: its prepared payload is not what the dispatcher builds:\n%s\n%s", e.EventID, e.Payload, batch[i])
		}
	}
	return batch, times[len(times)/2], nil
}

func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---------------------------------------------------------------- baseline

type baselineResult struct {
	rate     float64 // over every run: before, during (slices) and after the drain
	before   float64
	after    float64
	slices   []float64 // the rates of the runs that paused the drain
	requests int64
	events   int64
	seconds  float64 // measured, warmups left out
}

// baseline posts the ready-made batch with conc plain clients for d (after
// a short warmup) and returns the rate (benchkit.Baseline).
func baseline(c *capi.Client, t capi.Target, batch []json.RawMessage, conc int, d time.Duration) (baselineResult, error) {
	r, err := benchkit.Baseline(c, t, batch, conc, d)
	if err != nil {
		return baselineResult{}, err
	}
	return baselineResult{rate: r.Rate, requests: r.Requests, events: r.Events, seconds: r.Seconds}, nil
}

// ---------------------------------------------------------------- probe

// probeResult is the time of each store call of one batch, measured on the
// full backlog in a transaction that is rolled back.
type probeResult struct {
	names []string
	times []time.Duration
}

var errRollback = errors.New("rollback")

// probe runs the store calls of a batch in the order dispatch makes them,
// each timed, and leaves the backlog as it found it: the claim is real (as
// in dispatch, in its own transaction), the rest runs in a transaction that
// is rolled back, and the claimed events are released at the end. (Settling
// rows that the same transaction claimed would run foreign key checks the
// real settle skips.) The rolled-back part has no commit.
func probe(ctx context.Context, st *store.Store, accountID, datasetID int64, n int) ([]probeResult, error) {
	var out []probeResult
	for range n {
		var pr probeResult
		run := func(name string, f func() error) error {
			t0 := time.Now()
			err := f()
			pr.names = append(pr.names, name)
			pr.times = append(pr.times, time.Since(t0))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
		now := time.Now()
		var c store.Claim
		req := models.SendRequest{AccountID: accountID, DatasetID: datasetID, Kind: "batch", StartedAt: now.UTC(),
			EventsCount: dispatch.MaxBatch, HTTPStatus: 200, EventsReceived: dispatch.MaxBatch, FBTraceID: "probe",
			Response: `{"events_received":1000,"messages":[],"fbtrace_id":"probe"}`}
		if err := run("DueDatasets", func() error { _, err := st.DueDatasets(ctx, now); return err }); err != nil {
			return nil, err
		}
		if err := run("DatasetByID", func() error { _, err := st.DatasetByID(ctx, datasetID); return err }); err != nil {
			return nil, err
		}
		if err := run("ClaimEvents", func() (err error) {
			c, err = st.ClaimEvents(ctx, datasetID, now, 2*time.Minute, dispatch.MaxBatch, nil)
			return err
		}); err != nil {
			return nil, err
		}
		evs := c.Events
		err := st.Tx(ctx, func(tx *store.Store) error {
			if err := run("Account", func() error { _, err := tx.Account(ctx, accountID); return err }); err != nil {
				return err
			}
			if err := run("InsertSendRequest", func() error { return tx.InsertSendRequest(ctx, &req) }); err != nil {
				return err
			}
			if err := run("SettleEvents", func() error {
				outs := make([]store.Outcome, len(evs))
				for i, e := range evs {
					outs[i] = store.Outcome{ID: e.ID, Status: models.EventSent}
				}
				return tx.SettleEvents(ctx, c, &req.ID, "probe", now, outs)
			}); err != nil {
				return err
			}
			return errRollback
		})
		if rerr := st.ReleaseEvents(ctx, c); rerr != nil {
			return nil, fmt.Errorf("release: %w", rerr)
		}
		if !errors.Is(err, errRollback) {
			return nil, err
		}
		if len(evs) != dispatch.MaxBatch {
			return nil, fmt.Errorf("claimed %d events; want %d", len(evs), dispatch.MaxBatch)
		}
		out = append(out, pr)
	}
	return out, nil
}

// ---------------------------------------------------------------- drain

// timedSender is the Sender of one dispatcher: it times each request.
type timedSender struct {
	next     dispatch.Sender
	cur      time.Duration // send time of the batch in progress
	requests int
	events   int
	failed   int
	firstErr string
}

func (t *timedSender) Send(ctx context.Context, tg capi.Target, evs []json.RawMessage) (capi.Response, error) {
	t0 := time.Now()
	resp, err := t.next.Send(ctx, tg, evs)
	t.cur += time.Since(t0)
	t.requests++
	if err != nil || !resp.OK() {
		t.failed++
		if t.firstErr == "" {
			t.firstErr = fmt.Sprintf("HTTP %d %s %v", resp.HTTPStatus, resp.Body, err)
		}
	} else {
		t.events += len(evs)
	}
	return resp, err
}

// batchTime is one Batch call of a dispatcher that claimed events.
type batchTime struct {
	total time.Duration // DueDatasets + Batch
	send  time.Duration
	n     int
}

type drainResult struct {
	wall        time.Duration
	events      int
	requests    int
	failedSends int
	firstErr    string
	batches     []batchTime
	goCPU       time.Duration
	pgCPU       float64 // seconds; -1 when unknown
	peakRSSKB   int64
	gcCycles    uint32
	totalAlloc  uint64
	slices      []baselineResult // the baseline runs that paused the drain
}

// drain runs cfg.dispatchers dispatchers until nothing is due. Each runs
// dispatch.Drain's loop itself (DueDatasets, then one Batch per dataset, until
// a round makes no progress) to time every batch.
func drain(ctx context.Context, cfg config, st *store.Store, box *seal.Box, client *capi.Client, graphURL string,
	slice func() (baselineResult, error)) (*drainResult, error) {
	var prof *os.File
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		prof = f
	}
	pgPID := benchkit.PostgresPID(ctx, cfg.database)
	pg0, pgKnown := benchkit.PostgresCPU(pgPID)
	cpu0 := benchkit.CPUTime()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)

	logf("draining %d events with %d dispatcher(s)", cfg.events, cfg.dispatchers)
	type worker struct {
		sender  *timedSender
		batches []batchTime
		err     error
	}
	// Each dispatcher works on dispatch.InFlight batches at once, as its
	// Drain does: one worker (its own Dispatcher and timed sender) each.
	workers := make([]*worker, cfg.dispatchers*dispatch.InFlight)
	// Workers hold gate for reading while they work on a batch; a baseline
	// slice holds it for writing, once the batches in flight are settled.
	var (
		gate     sync.RWMutex
		settled  atomic.Int64
		finished = make(chan struct{})
		sliced   = make(chan sliceResult, 1)
	)
	go func() { sliced <- sliceDrain(cfg, &gate, &settled, finished, slice, pgPID) }()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{sender: &timedSender{next: client}}
		workers[i] = w
		d := dispatch.New(dispatch.Options{
			Store: st, Sender: w.sender, Box: box, Log: slog.New(slog.DiscardHandler),
			GraphURL: graphURL, DefaultVersion: "v24.0",
		})
		wg.Go(func() {
			for {
				gate.RLock()
				t0 := time.Now()
				ids, err := st.DueDatasets(ctx, time.Now())
				if err != nil {
					gate.RUnlock()
					w.err = err
					return
				}
				due := time.Since(t0)
				progress := 0
				for _, id := range ids {
					w.sender.cur = 0
					t1 := time.Now()
					n, err := d.Batch(ctx, id)
					if err != nil {
						gate.RUnlock()
						w.err = err
						return
					}
					if n > 0 {
						w.batches = append(w.batches, batchTime{total: due + time.Since(t1), send: w.sender.cur, n: n})
						due = 0
					}
					progress += n
				}
				gate.RUnlock()
				settled.Add(int64(progress))
				if progress == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	close(finished)
	sr := <-sliced
	if sr.err != nil {
		return nil, fmt.Errorf("baseline slice: %w", sr.err)
	}
	// The slices' time and CPU are the baseline's, not the drain's.
	res := &drainResult{wall: time.Since(start) - sr.paused, pgCPU: -1, slices: sr.runs}
	res.goCPU = benchkit.CPUTime() - cpu0 - sr.goCPU
	if pg1, _ := benchkit.PostgresCPU(pgPID); pgKnown {
		res.pgCPU = (pg1 - pg0 - sr.pgCPU).Seconds()
	}
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	res.gcCycles = ms1.NumGC - ms0.NumGC - sr.gcCycles
	res.totalAlloc = ms1.TotalAlloc - ms0.TotalAlloc - sr.alloc
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
		logf("CPU profile of the drain in %s", cfg.cpuprofile)
	}
	if cfg.memprofile != "" {
		if err := writeAllocs(cfg.memprofile); err != nil {
			return nil, err
		}
		logf("allocation profile of the run in %s", cfg.memprofile)
	}
	for _, w := range workers {
		if w.err != nil {
			return nil, fmt.Errorf("dispatch: %w", w.err)
		}
		res.events += w.sender.events
		res.requests += w.sender.requests
		res.failedSends += w.sender.failed
		if res.firstErr == "" {
			res.firstErr = w.sender.firstErr
		}
		res.batches = append(res.batches, w.batches...)
	}
	return res, nil
}

// sliceResult is what the baseline slices took from a drain.
type sliceResult struct {
	runs         []baselineResult
	paused       time.Duration
	goCPU, pgCPU time.Duration
	gcCycles     uint32
	alloc        uint64
	err          error
}

// sliceDrain pauses the drain cfg.slices times, evenly over its events,
// to run a short baseline (slice) while the drain waits, and returns those
// runs with the time and CPU they took. It stops when finished closes.
func sliceDrain(cfg config, gate *sync.RWMutex, settled *atomic.Int64, finished <-chan struct{},
	slice func() (baselineResult, error), pgPID int) sliceResult {
	var res sliceResult
	if cfg.slices <= 0 {
		return res
	}
	step := int64(cfg.events / (cfg.slices + 1))
	next := step
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(res.runs) < cfg.slices {
		select {
		case <-finished:
			return res
		case <-tick.C:
		}
		if settled.Load() < next {
			continue
		}
		next += step
		gate.Lock()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		t0, cpu0 := time.Now(), benchkit.CPUTime()
		pg0, _ := benchkit.PostgresCPU(pgPID)
		r, err := slice()
		pg1, _ := benchkit.PostgresCPU(pgPID)
		res.goCPU += benchkit.CPUTime() - cpu0
		res.pgCPU += pg1 - pg0
		runtime.ReadMemStats(&ms1)
		res.gcCycles += ms1.NumGC - ms0.NumGC
		res.alloc += ms1.TotalAlloc - ms0.TotalAlloc
		res.paused += time.Since(t0)
		gate.Unlock()
		if err != nil {
			res.err = err
			return res
		}
		res.runs = append(res.runs, r)
	}
	return res
}

func statusCounts(ctx context.Context, db *sql.DB) (map[models.EventStatus]int, error) {
	// A sent event is one with a send; the others have their state in
	// unsent_events (migration 0014).
	rows, err := db.QueryContext(ctx, `SELECT COALESCE(u.status, CASE WHEN s.event_id IS NULL THEN '' ELSE 'sent' END), count(*)
		FROM events e LEFT JOIN event_sends s ON s.event_id = e.id LEFT JOIN unsent_events u ON u.event_id = e.id GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[models.EventStatus]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[models.EventStatus(s)] = n
	}
	return out, rows.Err()
}

// ---------------------------------------------------------------- summary

func printSummary(cfg config, dr *drainResult, base baselineResult, probes []probeResult, build time.Duration,
	size int, rssBeforeKB int64, counts map[models.EventStatus]int, sendRows int, received, refused int64) {
	rate := float64(dr.events) / dr.wall.Seconds()
	ratio := 0.0
	if base.rate > 0 {
		ratio = rate / base.rate
	}
	verdict := "FAIL"
	if ratio >= cfg.budget && dr.failedSends == 0 && dr.events == cfg.events {
		verdict = "PASS"
	}
	var total, send, other []time.Duration
	var sumTotal, sumSend time.Duration
	for _, b := range dr.batches {
		total = append(total, b.total)
		send = append(send, b.send)
		other = append(other, b.total-b.send)
		sumTotal += b.total
		sumSend += b.send
	}
	for _, s := range [][]time.Duration{total, send, other} {
		slices.Sort(s)
	}
	nb := max(len(dr.batches), 1)
	// Events built at send time spend the build's time besides the
	// database's; prepared ones do not.
	built := build
	if cfg.prepared {
		built = 0
	}
	dbEst := func(d time.Duration) float64 { return max(benchkit.Millis(d)-benchkit.Millis(built), 0) }

	fmt.Printf("dispatch: %d events in %s (%.0f events/s), %d requests, DB ms/batch p50 %.1f / p99 %.1f, send ms/batch p50 %.1f / p99 %.1f, peak RSS %.0f MB; baseline fake %.0f events/s; ratio %.3f; budget %.1f %s\n",
		dr.events, dr.wall.Round(time.Millisecond), rate, dr.requests, dbEst(benchkit.Percentile(other, .5)), dbEst(benchkit.Percentile(other, .99)),
		benchkit.Millis(benchkit.Percentile(send, .5)), benchkit.Millis(benchkit.Percentile(send, .99)), float64(dr.peakRSSKB)/1024, base.rate, ratio, cfg.budget, verdict)
	fmt.Printf("dispatch: per batch (%d batches, mean %.0f events): total p50 %.1f / p99 %.1f / max %.1f ms; not sending (DB + build) p50 %.1f / p99 %.1f ms, mean %.1f ms = %.0f%% of the time; building a batch from its leads %.1f ms (measured apart; %s)\n",
		len(dr.batches), float64(dr.events)/float64(nb), benchkit.Millis(benchkit.Percentile(total, .5)), benchkit.Millis(benchkit.Percentile(total, .99)), benchkit.Millis(benchkit.Percentile(total, 1)),
		benchkit.Millis(benchkit.Percentile(other, .5)), benchkit.Millis(benchkit.Percentile(other, .99)), benchkit.Millis(sumTotal-sumSend)/float64(nb), 100*float64(sumTotal-sumSend)/float64(max(sumTotal, 1)), benchkit.Millis(build),
		map[bool]string{true: "the drain sends prepared payloads and builds none", false: "subtracted for \"DB\""}[cfg.prepared])
	during := "none"
	if len(base.slices) > 0 {
		during = fmt.Sprintf("%d runs of %s, %.0f to %.0f", len(base.slices), cfg.sliceLen, slices.Min(base.slices), slices.Max(base.slices))
	}
	fmt.Printf("dispatch: batch body %d KB (%d B/event); fake=%s; baseline %.0f events/s before the drain, %.0f after, during it (the drain paused) %s; %d requests in %.0fs, %d client(s)\n",
		size>>10, size/max(dispatch.MaxBatch, 1), cfg.fake, base.before, base.after, during, base.requests, base.seconds, cfg.dispatchers)
	pgText := "unknown"
	if dr.pgCPU >= 0 {
		pgText = fmt.Sprintf("%.2fs = %.1f us/event", dr.pgCPU, 1e6*dr.pgCPU/float64(max(dr.events, 1)))
	}
	fmt.Printf("dispatch: CPU during the drain: Go process (dispatcher + fake) %.2fs = %.1f us/event; Postgres %s; %d GCs, %.0f MB allocated (%.1f KB/event)\n",
		dr.goCPU.Seconds(), 1e6*dr.goCPU.Seconds()/float64(max(dr.events, 1)), pgText, dr.gcCycles,
		float64(dr.totalAlloc)/(1<<20), float64(dr.totalAlloc)/1024/float64(max(dr.events, 1)))
	fmt.Printf("dispatch: peak RSS of the drain %.0f MB (whole run before it %.0f MB, fake server in-process); events by status %v; %d send_requests rows; fake received %d, refused %d\n",
		float64(dr.peakRSSKB)/1024, float64(rssBeforeKB)/1024, counts, sendRows, received, refused)
	if len(probes) > 0 {
		var b strings.Builder
		for i, name := range probes[0].names {
			var ts []time.Duration
			for _, p := range probes {
				if i < len(p.times) {
					ts = append(ts, p.times[i])
				}
			}
			slices.Sort(ts)
			fmt.Fprintf(&b, " %s %.1f", name, benchkit.Millis(ts[len(ts)/2]))
		}
		fmt.Printf("dispatch: store calls of one batch on the full backlog (median of %d, ms; the last four without commit):%s\n", len(probes), b.String())
	}
	if dr.failedSends > 0 {
		fmt.Printf("dispatch: %d requests failed; first: %s\n", dr.failedSends, dr.firstErr)
	}
	fmt.Printf("events=%d\n", dr.events)
	fmt.Printf("seconds=%.3f\n", dr.wall.Seconds())
	fmt.Printf("events_per_sec=%.1f\n", rate)
	fmt.Printf("requests=%d\n", dr.requests)
	fmt.Printf("batches=%d\n", len(dr.batches))
	fmt.Printf("db_ms_p50=%.2f\n", dbEst(benchkit.Percentile(other, .5)))
	fmt.Printf("db_ms_p99=%.2f\n", dbEst(benchkit.Percentile(other, .99)))
	fmt.Printf("nonsend_ms_p50=%.2f\n", benchkit.Millis(benchkit.Percentile(other, .5)))
	fmt.Printf("nonsend_ms_p99=%.2f\n", benchkit.Millis(benchkit.Percentile(other, .99)))
	fmt.Printf("send_ms_p50=%.2f\n", benchkit.Millis(benchkit.Percentile(send, .5)))
	fmt.Printf("send_ms_p99=%.2f\n", benchkit.Millis(benchkit.Percentile(send, .99)))
	fmt.Printf("build_ms=%.2f\n", benchkit.Millis(build))
	fmt.Printf("peak_rss_mb=%.1f\n", float64(dr.peakRSSKB)/1024)
	fmt.Printf("go_cpu_us_per_event=%.2f\n", 1e6*dr.goCPU.Seconds()/float64(max(dr.events, 1)))
	if dr.pgCPU >= 0 {
		fmt.Printf("pg_cpu_us_per_event=%.2f\n", 1e6*dr.pgCPU/float64(max(dr.events, 1)))
	}
	fmt.Printf("baseline_events_per_sec=%.1f\n", base.rate)
	fmt.Printf("baseline_before=%.1f\n", base.before)
	fmt.Printf("baseline_after=%.1f\n", base.after)
	if len(base.slices) > 0 {
		fmt.Printf("baseline_during_min=%.1f\n", slices.Min(base.slices))
		fmt.Printf("baseline_during_max=%.1f\n", slices.Max(base.slices))
	}
	fmt.Printf("ratio=%.4f\n", ratio)
	fmt.Printf("budget=%.2f\n", cfg.budget)
	fmt.Printf("verdict=%s\n", verdict)
}
