// Package benchkit holds what the load drivers of make bench share: a
// private Postgres schema per run, an account's worth of history, clients
// posting varied leads (CaptureLoad) or a fixed number of bodies (Posts),
// pgbench's single-row INSERT (PgbenchInsert), a fake Graph API (FakeGraph)
// and the plain client's rate against it (Baseline).
package benchkit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// PrivateSchema creates a schema bench_<random> in the database and returns
// a URL whose connections use it, and a func that drops it (or, with keep,
// names it on stderr for study by hand). who names the tool in messages.
func PrivateSchema(ctx context.Context, base, who string, keep bool) (string, func(), error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, fmt.Errorf("open database: %w", err)
	}
	schema := "bench_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		defer admin.Close()
		if keep {
			fmt.Fprintf(os.Stderr, "%s: kept schema %s\n", who, schema)
			return
		}
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "%s: drop schema %s: %v\n", who, schema, err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("parse database URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// SeedLeads gives the account n earlier leads over the last 30 days, each
// with a Lead event per dataset of the account, and refreshes the planner's
// statistics: a run then meets the table sizes and query plans of an
// account in use, not those of an empty database. Their external ids and
// event ids start with "hist-". Like a live account's: one lead in 10 is
// junk, one in 50 partial, one in 100 won; one event in 200 failed, the
// rest sent, each with its JSON.
func SeedLeads(ctx context.Context, dbURL string, accountID int64, n int) error {
	return SeedLeadsOf(ctx, dbURL, []int64{accountID}, n)
}

// SeedLeadsOf is SeedLeads for each of accounts, n leads each, in one
// statement and one vacuum: an agency of 500 accounts loads in seconds.
func SeedLeadsOf(ctx context.Context, dbURL string, accountIDs []int64, n int) error {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if n > 0 {
		if _, err := db.ExecContext(ctx, `
INSERT INTO leads (account_id, external_id, source, email, phone, phone_e164, first_name, last_name,
	country, client_ip_address, client_user_agent, event_source_url, match_keys, email_hash, phone_hash,
	junk, junk_reasons, partial, stage, created_at, received_at, updated_at)
SELECT a.id, 'hist-' || i, 'website', 'lead' || i || '@example.com', '+1555' || lpad(i::text, 7, '0'),
	'1555' || lpad(i::text, 7, '0'), 'Pat', 'Smith' || (i % 1000), 'US', '203.0.113.7',
	'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36', 'https://example.com/quote', '{}',
	encode(sha256(convert_to('lead' || i || '@example.com', 'UTF8')), 'hex'),
	encode(sha256(convert_to('1555' || lpad(i::text, 7, '0'), 'UTF8')), 'hex'),
	i % 10 = 0, CASE WHEN i % 10 = 0 THEN '["too_fast"]' ELSE '[]' END, i % 50 = 7,
	CASE WHEN i % 100 = 3 THEN 'won' ELSE '' END, t, t, t
FROM unnest(CAST($1 AS bigint[])) AS a(id), generate_series(1, $2) AS i,
	LATERAL (SELECT now() - (i % 43200) * interval '1 minute') AS c(t)`, accountIDs, n); err != nil {
			return err
		}
		// As the product keeps them: a sent event has its JSON (about a
		// kilobyte of hashes) and a send in event_sends; one in 200 failed,
		// with its state in unsent_events.
		if _, err := db.ExecContext(ctx, `
WITH ev AS (
	INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, payload, created_at)
	SELECT l.account_id, d.id, l.id, 'default', 'Lead', 'hist-' || d.id || '-' || l.id, l.created_at,
		'{"event_name":"Lead","event_time":' || extract(epoch FROM l.created_at)::bigint ||
		',"event_id":"hist-' || d.id || '-' || l.id || '","action_source":"website","event_source_url":"' || l.event_source_url ||
		'","user_data":{"em":["' || l.email_hash || '"],"ph":["' || l.phone_hash || '"]' ||
		(SELECT string_agg(',"' || k || '":["' || encode(sha256(convert_to(k || l.id, 'UTF8')), 'hex') || '"]', '')
			FROM unnest(ARRAY['fn', 'ln', 'ct', 'st', 'zp', 'country', 'external_id']) AS k) ||
		',"client_ip_address":"' || l.client_ip_address || '","client_user_agent":"' || l.client_user_agent ||
		'"},"custom_data":{"lead_event_source":"leadsignal"}}',
		l.created_at
	FROM leads l JOIN datasets d ON d.account_id = l.account_id
	WHERE l.account_id = ANY(CAST($1 AS bigint[])) AND NOT l.junk AND NOT l.partial
	RETURNING id, dataset_id, lead_id, event_time, created_at
), sent AS (
	INSERT INTO event_sends (event_id, attempts, fbtrace_id, sent_at)
	SELECT id, 1, 'AbCdEfGhIjKlMnOpQrStUvW', created_at FROM ev WHERE lead_id % 200 <> 1
)
INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, attempts, last_error, updated_at)
SELECT id, dataset_id, lead_id, 'failed', event_time, created_at, 1, 'Meta refused: invalid parameter', created_at
FROM ev WHERE lead_id % 200 = 1`, accountIDs); err != nil {
			return err
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	// An account in use has its pages all-visible (autovacuum sees to it),
	// so index-only scans read no row. Right after the load, an automatic
	// ANALYZE that began during it can keep VACUUM from marking them:
	// vacuum again until it could.
	for range 10 {
		var pages, visible int64
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(sum(relpages), 0), COALESCE(sum(relallvisible), 0) FROM pg_class
			WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`).Scan(&pages, &visible); err != nil {
			return err
		}
		if visible >= pages*95/100 {
			return nil
		}
		time.Sleep(time.Second)
		if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
			return err
		}
	}
	return nil
}

// Database is the Postgres URL a load driver uses by default:
// TEST_DATABASE_URL (make bench), else DATABASE_URL.
func Database() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return os.Getenv("DATABASE_URL")
}

// OpenStore opens a migrated store on a private schema of the database
// (PrivateSchema) and returns it with the schema's URL and a func that
// closes the store and drops the schema.
func OpenStore(ctx context.Context, base, who string, keep bool) (*store.Store, string, func(), error) {
	if base == "" {
		return nil, "", nil, errors.New("no database: set -database, TEST_DATABASE_URL or DATABASE_URL (make bench starts a throwaway Postgres)")
	}
	dbURL, drop, err := PrivateSchema(ctx, base, who, keep)
	if err != nil {
		return nil, "", nil, err
	}
	st, err := store.Open(ctx, store.Options{PostgresURL: dbURL})
	if err != nil {
		drop()
		return nil, "", nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		drop()
		return nil, "", nil, fmt.Errorf("migrate: %w", err)
	}
	return st, dbURL, func() { st.Close(); drop() }, nil
}

// RandomKey is 32 random bytes, for session keys.
func RandomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// Millis is d in milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile is the q-quantile of sorted durations (nearest rank); 0 for
// none.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Account creates the bench account, as a new client of an agency would
// have it.
func Account(ctx context.Context, st *store.Store) (models.Account, error) {
	return NamedAccount(ctx, st, "bench", "Bench")
}

// NamedAccount creates an account like Account's under another slug and
// name, for a run with several accounts.
func NamedAccount(ctx context.Context, st *store.Store, slug, name string) (models.Account, error) {
	return st.CreateAccount(ctx, models.Account{
		Slug: slug, Name: name, Timezone: "America/New_York", DefaultCountry: "US", Currency: "USD",
	}, 0)
}

// LiveDataset connects a live dataset to acc whose token, sealed with box,
// is token: what the dispatcher sends to a fake Graph server with.
func LiveDataset(ctx context.Context, st *store.Store, box *seal.Box, acc models.Account, pixelID, apiVersion, token string) (models.Dataset, error) {
	ds := models.Dataset{AccountID: acc.ID, Name: "Bench pixel", PixelID: pixelID, Mode: models.ModeLive,
		LDU: models.LDUOff, APIVersion: apiVersion, TokenLast4: token[len(token)-4:]}
	if err := st.CreateDataset(ctx, &ds); err != nil {
		return ds, err
	}
	ds.TokenSealed = box.Seal(token, dispatch.TokenLabel(ds.ID))
	return ds, st.SaveDataset(ctx, &ds)
}
