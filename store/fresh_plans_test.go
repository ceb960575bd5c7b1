package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// freshLeads is a new Postgres database, migrated, whose leads table
// autovacuum leaves alone, with one account; add inserts leads up to a
// total of n, plan explains the recent-contacts lookup of every capture as
// the generic plan prepared under name, and wantLookups checks a plan.
type freshLeads struct {
	t        *testing.T
	store    *store.Store
	conn     *sql.Conn
	inserted int
}

func newFreshLeads(t *testing.T) *freshLeads {
	t.Helper()
	s, url := postgresStore(t)
	ctx := t.Context()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &freshLeads{t: t, store: s, conn: conn}
	f.exec(`ALTER TABLE leads SET (autovacuum_enabled = false)`)
	f.exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'acme', 'Acme', now(), now())`)
	// As the store's own connections are set.
	mode, err := store.PlanCacheMode(t, s)
	if err != nil || mode != "force_custom_plan" {
		t.Fatalf("the store's plan_cache_mode = %q, %v; want force_custom_plan", mode, err)
	}
	f.exec(`SET plan_cache_mode = ` + mode)
	return f
}

func (f *freshLeads) exec(q string) {
	f.t.Helper()
	if _, err := f.conn.ExecContext(f.t.Context(), q); err != nil {
		f.t.Fatalf("%.60s: %v", q, err)
	}
}

func (f *freshLeads) add(n int) {
	f.t.Helper()
	f.exec(fmt.Sprintf(`INSERT INTO leads (account_id, source, email_hash, phone_hash, created_at, received_at, updated_at, fields, match_keys, junk_reasons)
		SELECT 1, 'website', md5(i::text) || md5(i::text), md5((i + 1)::text) || md5(i::text), now(), now(), now(), '{}', '{}', '[]'
		FROM generate_series(%d, %d) i`, f.inserted+1, n))
	f.inserted = n
}

// plan is the plan of the recent-contacts lookup prepared as name
// (prepared on first use), as a pooled connection's statement cache runs
// it.
func (f *freshLeads) plan(name string) string {
	f.t.Helper()
	return f.planOf(name, `(text[], bigint, text[])`, store.RecentContactsSQL, `(ARRAY['a', 'b'], 1, ARRAY['c'])`)
}

// existingPlan is the plan of the lookup of leads by external id, as plan.
func (f *freshLeads) existingPlan(name string) string {
	f.t.Helper()
	return f.planOf(name, `(text[], bigint)`, store.ExistingLeadsSQL, `(ARRAY['a', 'b'], 1)`)
}

// planOf is the plan of query prepared as name with params, run with args
// in a transaction that keeps its plans, as the capture's lookup runs.
func (f *freshLeads) planOf(name, params, query, args string) string {
	f.t.Helper()
	ctx := f.t.Context()
	var n int
	if err := f.conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE name = $1`, name).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	if n == 0 {
		f.exec(`PREPARE ` + name + params + ` AS ` + query)
	}
	f.exec(`BEGIN`)
	f.exec(store.KeptPlansSQL)
	plan := f.explain(`EXPLAIN EXECUTE ` + name + args)
	f.exec(`COMMIT`)
	return plan
}

// explain runs an EXPLAIN and returns its plan.
func (f *freshLeads) explain(q string) string {
	f.t.Helper()
	rows, err := f.conn.QueryContext(f.t.Context(), q)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			f.t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// wantExisting checks a plan of the lookup by external id: one lookup of
// the account's external-id key per id.
func (f *freshLeads) wantExisting(what, plan string) {
	f.t.Helper()
	if !strings.Contains(plan, "Index Scan using leads_external_id_key") {
		f.t.Errorf("%s: the lookup by external id does not read leads_external_id_key:\n%s", what, plan)
	}
	for _, bad := range []string{"Seq Scan on leads", "Hash Join", "Merge Join", "Bitmap Heap Scan on leads"} {
		if strings.Contains(plan, bad) {
			f.t.Errorf("%s: the lookup by external id has %q, which reads the account's leads:\n%s", what, bad, plan)
		}
	}
}

func (f *freshLeads) wantLookups(what, plan string) {
	f.t.Helper()
	for _, want := range []string{"Index Scan using leads_email_hash_idx", "Index Scan using leads_phone_hash_idx"} {
		if !strings.Contains(plan, want) {
			f.t.Errorf("%s: plan lacks %q:\n%s", what, want, plan)
		}
	}
	for _, bad := range []string{"Seq Scan on leads", "Hash Join", "Bitmap Heap Scan on leads"} {
		if strings.Contains(plan, bad) {
			f.t.Errorf("%s: plan has %q, which reads the account's leads:\n%s", what, bad, plan)
		}
	}
}

func (f *freshLeads) neverAnalyzed() {
	f.t.Helper()
	var tuples float64
	if err := f.conn.QueryRowContext(f.t.Context(), `SELECT reltuples FROM pg_class WHERE oid = 'leads'::regclass`).Scan(&tuples); err != nil || tuples >= 0 {
		f.t.Fatalf("leads reltuples = %v, %v; want -1, never analyzed, for the test to mean anything", tuples, err)
	}
}

// TestCaptureLookupPlanOnANewDatabase: the recent-contacts lookup of every
// capture stays one index lookup per hash as a new database fills up. A
// generic plan, cached per statement and connection, made while the table
// was small (or before Postgres first analyzed it, when the account's own
// index looks as selective as the email-hash one) read every lead of the
// account for each capture, so capture slowed as a new installation filled
// up. The store's connections plan each statement for its parameters, and
// AnalyzeNew gives the table statistics once it has rows.
func TestCaptureLookupPlanOnANewDatabase(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	f.add(150)
	f.neverAnalyzed()
	waitForStats(t, f.conn, "leads")
	tables, _, err := f.store.AnalyzeNew(t.Context())
	if err != nil || !slices.Contains(tables, "leads") {
		t.Fatalf("AnalyzeNew = %v, %v; want leads analyzed", tables, err)
	}
	f.plan("lookup") // made and run on the small table
	f.existingPlan("existing")
	f.exec(`PREPARE page(bigint, integer) AS SELECT * FROM leads WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`)
	for _, n := range []int{1000, 10000, 30000} {
		f.add(n)
		f.wantLookups(fmt.Sprintf("%d leads, analyzed at 150", n), f.plan("lookup"))
		f.wantExisting(fmt.Sprintf("%d leads, analyzed at 150", n), f.existingPlan("existing"))
		// The leads list's first page reads its 50 leads in index order,
		// not every lead of the account to sort them.
		if page := f.explain(`EXPLAIN EXECUTE page(1, 50)`); strings.Contains(page, "Sort") || !strings.Contains(page, "leads_account_created_idx") {
			t.Errorf("%d leads: the leads list's plan sorts the account's leads:\n%s", n, page)
		}
	}
	if again, _, err := f.store.AnalyzeNew(t.Context()); err != nil || slices.Contains(again, "leads") {
		t.Errorf("second AnalyzeNew = %v, %v; want leads left to autovacuum", again, err)
	}
}

// TestCaptureLookupPlanWithoutStatistics: before AnalyzeNew has run, the
// lookup reads only the leads of each hash on a table past its first few
// thousand leads; a generic plan made then was a hash join over the
// account's leads.
func TestCaptureLookupPlanWithoutStatistics(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	for _, n := range []int{10000, 30000} {
		f.add(n)
		f.neverAnalyzed()
		f.wantLookups(fmt.Sprintf("%d leads, no statistics", n), f.plan("lookup"))
		f.wantExisting(fmt.Sprintf("%d leads, no statistics", n), f.existingPlan("existing"))
	}
}

// TestCaptureLookupPlanMadeOnEmptyStatistics: the recent-contacts lookup's
// plan that the capture keeps, made on a table analyzed while empty, still
// reads each hash's own index as the table grows, before any ANALYZE: with
// no statistics every index of the account costs the same, and such a plan
// read the phone index for an email hash. (The lookup by external id has
// no such tie-breaker, an order by a column it equates being no order: it
// relies on AnalyzeNew, TestCaptureLookupPlanAnalyzedEmpty.)
func TestCaptureLookupPlanMadeOnEmptyStatistics(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	f.exec(`ANALYZE leads`)
	f.plan("lookup")
	for _, n := range []int{1000, 10000} {
		f.add(n)
		f.wantLookups(fmt.Sprintf("%d leads, analyzed empty", n), f.plan("lookup"))
	}
}

// TestCaptureLookupPlanAnalyzedEmpty: a new database analyzed while empty
// (a VACUUM ANALYZE before its first lead) has statistics of no rows. The
// capture's kept plans made on them read the account's phone index for
// every email hash, and stayed so as leads grew, until autovacuum analyzed
// the table a minute or more later. AnalyzeNew analyzes such a table again
// once it has rows, which makes the plans anew.
func TestCaptureLookupPlanAnalyzedEmpty(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	f.exec(`ANALYZE leads`)
	f.plan("lookup") // made on the empty table's statistics
	f.existingPlan("existing")
	f.add(150)
	waitForStats(t, f.conn, "leads")
	tables, _, err := f.store.AnalyzeNew(t.Context())
	if err != nil || !slices.Contains(tables, "leads") {
		t.Fatalf("AnalyzeNew = %v, %v; want leads, analyzed while empty, analyzed again", tables, err)
	}
	for _, n := range []int{1000, 10000} {
		f.add(n)
		f.wantLookups(fmt.Sprintf("%d leads, analyzed empty, then at 150", n), f.plan("lookup"))
		f.wantExisting(fmt.Sprintf("%d leads, analyzed empty, then at 150", n), f.existingPlan("existing"))
	}
	if again, _, err := f.store.AnalyzeNew(t.Context()); err != nil || slices.Contains(again, "leads") {
		t.Errorf("second AnalyzeNew = %v, %v; want leads left to autovacuum", again, err)
	}
}

// waitForStats waits until the cumulative statistics count the rows
// written to table: backends report them within a second or so.
func waitForStats(t *testing.T, conn *sql.Conn, table string) {
	t.Helper()
	poll.Until(t, 5*time.Second, func() error {
		var n int64
		if err := conn.QueryRowContext(t.Context(), `SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = $1 AND schemaname = current_schema()`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n < 100 {
			return fmt.Errorf("pg_stat_user_tables counts %d rows of %s", n, table)
		}
		return nil
	})
}

// TestAnalyzeNewOnSQLite: SQLite plans by its indexes without statistics;
// there is nothing to analyze.
func TestAnalyzeNewOnSQLite(t *testing.T) {
	t.Parallel()
	tables, done, err := storetest.New(t).AnalyzeNew(t.Context())
	if err != nil || !done || len(tables) != 0 {
		t.Errorf("AnalyzeNew on SQLite = %v, %v, %v; want nothing to do", tables, done, err)
	}
}

// TestClaimPlanWithStaleStatistics: a claim checks, for each due event,
// that its lead has no earlier event waiting, by the lead's own index,
// whatever the statistics say. Analyzed when nothing was queued (before an
// outage's backlog), Postgres would take the dataset-and-status index,
// which reads every earlier queued event of the dataset for each candidate.
func TestClaimPlanWithStaleStatistics(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	f.exec(`ALTER TABLE unsent_events SET (autovacuum_enabled = false)`)
	f.exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (7, 1, 'Main', '1', now(), now())`)
	f.add(30000)
	// The queue as Postgres last saw it: nothing queued.
	f.exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
		SELECT i, 1, 7, i, 'default', 'Lead', 'e' || i, now() - interval '1 hour', now() FROM generate_series(1, 2000) i`)
	f.exec(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at)
		SELECT i, 7, i, 'failed', now() - interval '1 hour', now() FROM generate_series(1, 2000) i`)
	f.exec(`ANALYZE unsent_events`)
	// Then an outage's backlog.
	f.exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
		SELECT i, 1, 7, i, 'default', 'Lead', 'e' || i, now() - interval '30 minutes', now() FROM generate_series(2001, 25000) i`)
	f.exec(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at)
		SELECT i, 7, i, 'queued', now() - interval '30 minutes', now() FROM generate_series(2001, 25000) i`)

	claim := store.ClaimPostgresSQL
	for i, name := range []string{"@dataset", "@now", "@probe", "@limit", "@lease", "@token"} {
		claim = strings.ReplaceAll(claim, name, fmt.Sprintf("$%d", i+1))
	}
	f.exec(`PREPARE claim(bigint, timestamptz, bigint, integer, timestamptz, bigint) AS ` + claim)
	plan := f.explain(`EXPLAIN EXECUTE claim(7, now(), NULL, 1000, now() + interval '2 minutes', 42)`)
	if !strings.Contains(plan, "using unsent_events_lead_idx on unsent_events p") {
		t.Errorf("the claim's check of a lead's earlier events does not use the lead index:\n%s", plan)
	}
}

// CleanSearchIndex moves the search index's pending rows into the index:
// after it, none are left to move, where the leads inserted since have
// some. SQLite has nothing to clean.
func TestCleanSearchIndex(t *testing.T) {
	t.Parallel()
	f := newFreshLeads(t)
	insert := func(from, to int) {
		f.exec(fmt.Sprintf(`INSERT INTO leads (account_id, source, email, first_name, last_name, phone_e164, created_at, received_at, updated_at,
			fields, match_keys, junk_reasons)
			SELECT 1, 'website', 'person' || i || '@example.com', 'Jane' || i, 'Doe', '1415692' || i, now(), now(), now(), '{}', '{}', '[]'
			FROM generate_series(%d, %d) i`, from, to))
	}
	pending := func() int64 {
		var n int64
		if err := f.conn.QueryRowContext(t.Context(), `SELECT gin_clean_pending_list('leads_search_idx'::regclass)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert(1, 500)
	if err := f.store.CleanSearchIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := pending(); n != 0 {
		t.Errorf("%d pending pages left after CleanSearchIndex; want none", n)
	}
	insert(501, 1000)
	if n := pending(); n == 0 {
		t.Error("500 leads inserted left no pending page: the test proves nothing")
	}
	if err := storetest.New(t).CleanSearchIndex(t.Context()); err != nil {
		t.Errorf("CleanSearchIndex on SQLite: %v", err)
	}
}

// A database user that does not own the search index may not clean it:
// CleanSearchIndex says so with ErrNotOwner (upkeep.Search then stops).
func TestCleanSearchIndexNotOwner(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPostgresURL(t)
	owner, err := store.Open(t.Context(), store.Options{PostgresURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	role := fmt.Sprintf("ls_reader_%d", time.Now().UnixNano())
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `CREATE ROLE `+role+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), `DROP ROLE `+role) })
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role)
	reader, err := store.Open(t.Context(), store.Options{PostgresURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	err = reader.CleanSearchIndex(t.Context())
	reader.Close()
	if !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("CleanSearchIndex by another user = %v; want ErrNotOwner", err)
	}
	if err := owner.CleanSearchIndex(t.Context()); err != nil {
		t.Errorf("CleanSearchIndex by the owner = %v", err)
	}
}
