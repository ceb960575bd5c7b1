// Package storetest gives tests a real, migrated, private database. On
// SQLite each test gets a copy of a file migrated once per test binary,
// which costs a fraction of migrating it. On Postgres (TEST_DATABASE_URL)
// each test gets a database of its own, a copy of a template database
// migrated once per test binary, dropped when the test ends. A database,
// not a schema: advisory locks, which migrations and the store take
// (claims, compacting counts), belong to a database, so tests that run side
// by side never wait for one another's, nor skip work because of them.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite" // the "sqlite" database/sql driver
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/leadsignal/leadsignal/store"
)

// New returns a migrated store on a fresh SQLite file.
func New(t testing.TB) *store.Store {
	t.Helper()
	image, err := sqliteImage()
	if err != nil {
		t.Fatalf("migrate the SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatalf("copy the SQLite template: %v", err)
	}
	return open(t, store.Options{SQLitePath: path})
}

// NewPostgres returns a migrated store on a fresh database of the Postgres
// server TEST_DATABASE_URL names. Without it the test is skipped, or fails
// when CI=true, so CI can never pass without having run it.
func NewPostgres(t testing.TB) *store.Store {
	t.Helper()
	return open(t, store.Options{PostgresURL: MigratedPostgresURL(t)})
}

// MigratedPostgresURL is PostgresURL, but of a migrated database, for tests
// that open it themselves (as a second replica, or with database/sql).
func MigratedPostgresURL(t testing.TB) string {
	t.Helper()
	pg := postgres(t)
	template, err := pg.template()
	if err != nil {
		t.Fatalf("migrate the Postgres template: %v", err)
	}
	return pg.create(t, template)
}

// PostgresURL creates an empty private database on the Postgres server
// TEST_DATABASE_URL names (skipped as NewPostgres is) and returns its URL;
// the database is dropped when the test ends, whoever is still connected.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return postgres(t).create(t, "")
}

// Each runs fn once per database: on SQLite, and on Postgres (see
// NewPostgres for when that is skipped).
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, New(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, NewPostgres(t)) })
}

// Either runs fn once, on one database: SQLite or Postgres, chosen by the
// test's name, so that a package's tests of what lies above the store
// (browser flows, where a database costs a whole Chromium session) cover
// both databases between them at half the cost of Each. The subtest is
// named after the database, as Each names it. Without TEST_DATABASE_URL
// (and outside CI, where that fails the test) every test takes SQLite,
// rather than half of them skipping.
func Either(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	noPostgres := os.Getenv("TEST_DATABASE_URL") == "" && os.Getenv("CI") != "true"
	if h.Sum32()%2 == 0 || noPostgres {
		t.Run("sqlite", func(t *testing.T) { fn(t, New(t)) })
		return
	}
	t.Run("postgres", func(t *testing.T) { fn(t, NewPostgres(t)) })
}

func open(t testing.TB, o store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// migrate migrates the database o names as leadsignal does, and closes it.
func migrate(o store.Options) error {
	ctx := context.Background()
	s, err := store.Open(ctx, o)
	if err != nil {
		return err
	}
	_, err = s.Migrate(ctx)
	return errors.Join(err, s.Close())
}

// sqliteImage is the content of a migrated SQLite database file, made once
// per test binary in a folder removed at once.
var sqliteImage = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	if err := migrate(store.Options{SQLitePath: path}); err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the WAL into the file; a
	// checkpoint of our own makes sure, as the -wal file is not copied.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
	if err := errors.Join(err, db.Close()); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return os.ReadFile(path)
})

// server is the Postgres server of TEST_DATABASE_URL as this test binary
// uses it. Test binaries run side by side, so each names its databases with
// a prefix of its own, "lst_" and a random word: prefix_tmpl is its
// template, prefix_1, prefix_2, ... the tests' databases.
type server struct {
	base   url.URL
	admin  *sql.DB
	prefix string
	n      atomic.Int64
	// strategy makes CREATE DATABASE copy the template's files, several
	// times faster than Postgres 15's default of writing each page to the
	// WAL (earlier versions only copy files).
	strategy string
	// hold keeps the session whose advisory lock on prefix says that this
	// binary still runs: a binary that finds the lock of another prefix free
	// drops the databases that one left behind (killed, or timed out).
	hold     *sql.Conn
	template func() (string, error)
}

var pgServer = sync.OnceValues(func() (*server, error) { return connect(os.Getenv("TEST_DATABASE_URL")) })

// postgres returns the binary's server, connecting on first use; without
// TEST_DATABASE_URL it skips the test, or fails it when CI=true.
func postgres(t testing.TB) *server {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_DATABASE_URL is not set: CI must run the Postgres tests (use make test)")
		}
		t.Skip("TEST_DATABASE_URL not set; run make test to include Postgres")
	}
	s, err := pgServer()
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	return s
}

func connect(base string) (*server, error) {
	ctx := context.Background()
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	s := &server{base: *u, admin: admin, prefix: "lst_" + strings.ToLower(rand.Text()[:12])}
	s.template = sync.OnceValues(s.migrateTemplate)
	if s.hold, err = admin.Conn(ctx); err != nil {
		return nil, err
	}
	if _, err := s.hold.ExecContext(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, s.prefix); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	var version int
	if err := s.hold.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return nil, err
	}
	if version >= 150000 {
		s.strategy = ` STRATEGY FILE_COPY`
	}
	if err := s.sweep(ctx); err != nil {
		return nil, fmt.Errorf("drop the databases of ended test binaries: %w", err)
	}
	return s, nil
}

// sweep drops the databases of test binaries that no longer run.
func (s *server) sweep(ctx context.Context) error {
	var prefixes []string
	rows, err := s.hold.QueryContext(ctx, `SELECT DISTINCT substring(datname FROM '^lst_[a-z2-7]+') FROM pg_database WHERE datname ~ '^lst_[a-z2-7]+_'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		prefixes = append(prefixes, p)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, p := range prefixes {
		var ended bool
		if err := s.hold.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, p).Scan(&ended); err != nil {
			return err
		}
		if !ended {
			continue
		}
		err := s.dropAll(ctx, p)
		if _, uerr := s.hold.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, p); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropAll drops the databases whose names start with prefix and _.
func (s *server) dropAll(ctx context.Context, prefix string) error {
	var names []string
	rows, err := s.hold.QueryContext(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, prefix+"_")
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := s.hold.ExecContext(ctx, `DROP DATABASE IF EXISTS `+n+` WITH (FORCE)`); err != nil {
			return err
		}
	}
	return nil
}

// migrateTemplate creates and migrates the binary's template database. Its
// connections are closed when it returns: Postgres copies a database only
// while nobody is connected to it.
func (s *server) migrateTemplate() (string, error) {
	name := s.prefix + "_tmpl"
	if err := s.createDatabase(context.Background(), name, ""); err != nil {
		return "", err
	}
	if err := migrate(store.Options{PostgresURL: s.url(name)}); err != nil {
		return "", err
	}
	return name, nil
}

// create makes a database for the test, a copy of template or, when it is
// empty, an empty one, drops it when the test ends and returns its URL.
func (s *server) create(t testing.TB, template string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", s.prefix, s.n.Add(1))
	if err := s.createDatabase(t.Context(), name, template); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := s.admin.ExecContext(context.Background(), `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return s.url(name)
}

// createDatabase runs CREATE DATABASE. A session that has just closed may
// still be leaving the template (Postgres waits 5 s for it, under load
// that can be too short): then it tries again, for up to a minute.
func (s *server) createDatabase(ctx context.Context, name, template string) error {
	q := `CREATE DATABASE ` + name + s.strategy
	if template != "" {
		q += ` TEMPLATE ` + template
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := s.admin.ExecContext(ctx, q)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// url is TEST_DATABASE_URL with the database name.
func (s *server) url(name string) string {
	u := s.base
	u.Path = "/" + name
	return u.String()
}
