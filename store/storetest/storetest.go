// Package storetest gives tests a real, migrated, private database: a
// SQLite file per test, and on Postgres (TEST_DATABASE_URL) a schema per
// test, dropped afterwards.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/store"
)

// New returns a migrated store on a fresh SQLite file.
func New(t testing.TB) *store.Store {
	t.Helper()
	return open(t, store.Options{SQLitePath: filepath.Join(t.TempDir(), "test.db")})
}

// NewPostgres returns a migrated store in a fresh schema of the database
// named by TEST_DATABASE_URL. Without it the test is skipped, or fails when
// CI=true, so CI can never pass without having run it.
func NewPostgres(t testing.TB) *store.Store {
	t.Helper()
	return open(t, store.Options{PostgresURL: PostgresURL(t)})
}

// PostgresURL creates a private schema in TEST_DATABASE_URL's database and
// returns a URL whose connections use it; the schema is dropped when the
// test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_DATABASE_URL is not set: CI must run the Postgres tests (use make test)")
		}
		t.Skip("TEST_DATABASE_URL not set; run make test to include Postgres")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open TEST_DATABASE_URL: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := "t_" + strings.ToLower(rand.Text()[:16])
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Each runs fn once per database: on SQLite, and on Postgres (see
// NewPostgres for when that is skipped).
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, New(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, NewPostgres(t)) })
}

func open(t testing.TB, o store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}
