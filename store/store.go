// Package store is leadsignal's only door to the database: every query the
// product runs lives here, scoped by account wherever data belongs to one.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
)

// Errors callers can test for with errors.Is.
var (
	// ErrNotFound means no row matched, or the row belongs to an account the
	// caller may not see: both answer the same, so tenancy leaks nothing.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict means a unique value (email, slug, ...) is taken.
	ErrConflict = errors.New("store: already exists")
	// ErrDestinations means a send rule names a destination twice, or
	// more than MaxDestinations.
	ErrDestinations = errors.New("store: a destination named twice, or too many")
)

// Options says which database to open.
type Options struct {
	// PostgresURL is a postgres:// URL; empty opens the SQLite file.
	PostgresURL string
	// SQLitePath is the embedded database file, created when missing.
	SQLitePath string
	// notice, when set (tests), is told each notice Postgres sends.
	notice func(string)
}

// Store runs leadsignal's queries on one database.
type Store struct {
	db      *gorm.DB
	dialect string
	keys    *keyCache
	// hooks caches the CRM connections hook URLs name.
	hooks *cache[models.CRMConnection]
	// sites caches the live site keys the collect API is called with.
	sites *cache[siteKeyAccount]
	// instance caches the instance's settings (store/instance.go).
	instance *cache[models.InstanceSettings]
	// afterCommit, inside Tx, collects what to do once the transaction
	// has committed.
	afterCommit *[]func()
	// clock is the time the store dates and queues its writes by and
	// reads "due" and "sending" against (WithClock); the key caches keep
	// real time.
	clock func() time.Time
}

// Now is the store's clock in UTC: what deciding and queueing call now.
func (s *Store) Now() time.Time { return s.clock().UTC() }

// WithClock returns the store on another clock, sharing its database and
// caches: a test's app runs every date the store writes (created_at,
// next_attempt_at, ...) on the clock its dispatcher and Meta's fake run on.
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.clock = now
	c.db = s.db.Session(&gorm.Session{NowFunc: func() time.Time { return now().UTC() }})
	return &c
}

// keptPlansSQL lets the rest of a transaction on Postgres keep its plans:
// each statement, and each foreign-key check of the rows it writes, is
// planned once per connection instead of on every call (Open asks for
// force_custom_plan). A kept plan is made of index lookups joined by
// nested loops: no sequential scan, no hash or merge join, no nested loop
// over a materialized table, each of which, made on a new installation's
// first rows, reads a whole table and keeps doing so as it grows, until an
// ANALYZE (TestReadStagesKeepsItsPlans, TestChangeLeadsKeepsItsPlans;
// migration 0046 says the same of count_event_moves). It is for statements
// that read and write rows by key: rows inserted from arrays or COPY, with
// their triggers and foreign-key checks, rows updated or looked up by the
// keys given, and the rows those join by key. On a table analyzed while
// empty every index of an account (or dataset) costs the planner the same
// as the key's: a lookup by a key and the account is written as a
// subquery in the key index's order that the planner may not turn into a
// join (OFFSET 0, as recentContactsSQL and leadsByKey), or by the key
// alone with the account checked outside the lookup (lock_fresh_leads),
// or, a join of given keys with the account's rows (storedEventsSQL,
// completeLeadsSQL), planned for its rows before the rest keeps its plans.
//
// Each row a capture or an upload writes runs one to three foreign-key
// checks, each a key lookup that costs less to run than to plan; and a
// batch of stage changes runs a dozen small statements whose planning cost
// more than their running. JIT is off: a scan with no index to take
// instead (a trigger's, say) is priced so high with sequential scans off
// that Postgres would compile it, which takes far longer than the write.
const keptPlansSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true),
	set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
	set_config('enable_material', 'off', true), set_config('jit', 'off', true)`

// Open connects to the database and checks that it answers. It does not
// migrate: call Migrate.
func Open(ctx context.Context, o Options) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		TranslateError:         true,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var (
		db      *gorm.DB
		dialect string
		err     error
	)
	if o.PostgresURL != "" {
		dialect = migrations.Postgres
		var pc *pgx.ConnConfig
		if pc, err = pgx.ParseConfig(o.PostgresURL); err != nil {
			return nil, fmt.Errorf("store: open: %w", err)
		}
		// Every statement is planned for its own parameters: a generic plan,
		// cached per statement and connection, fits the table and the
		// account it was first made for. Made while a new installation's
		// tables were small, or for a small account, it read every lead of
		// a big one. Planning costs well under a millisecond a statement;
		// the writes that check the keys of many rows keep their plans
		// (keptPlansSQL).
		pc.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
		if o.notice != nil {
			pc.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { o.notice(n.Message) }
		}
		db, err = gorm.Open(postgres.New(postgres.Config{Conn: stdlib.OpenDB(*pc)}), cfg)
	} else {
		dialect = migrations.SQLite
		if err := ownerOnly(o.SQLitePath); err != nil {
			return nil, err
		}
		db, err = gorm.Open(sqlite.Open(sqliteDSN(o.SQLitePath)), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	if dialect == migrations.Postgres {
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(32)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	} else {
		// SQLite has one writer; a few connections let reads overlap writes
		// under WAL while busy_timeout queues the writers.
		sqlDB.SetMaxOpenConns(4)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("store: ping: %w", err)
	}
	return &Store{db: db, dialect: dialect, keys: newKeyCache(), hooks: newCache[models.CRMConnection](), sites: newCache[siteKeyAccount](),
		instance: newCache[models.InstanceSettings](), clock: time.Now}, nil
}

// ownerOnly makes the SQLite file, which holds personal data, the owner's
// alone: it creates the data folder 0700 and the file 0600 (SQLite then
// gives its -wal and -shm files the database file's mode), and takes the
// group's and others' permissions off a folder or files an earlier version
// left open. A folder the process may not change (not its own) is left as
// it is, and so is a shared one (sticky, like /tmp) the file was put in
// directly: the files in it are still the owner's alone.
func ownerOnly(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: create data folder: %w", err)
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode()&os.ModeSticky == 0 {
		if err := private(dir); err != nil && !errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("store: data folder: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: create database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := private(p); err != nil {
			return fmt.Errorf("store: database file: %w", err)
		}
	}
	return nil
}

// private takes the group's and others' permissions off path, if it exists.
func private(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return os.Chmod(path, perm&^0o077)
	}
	return nil
}

func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Writers take the lock at BEGIN, so a transaction that reads and then
	// writes never fails with SQLITE_BUSY_SNAPSHOT; busy_timeout queues them.
	// (No _time_format: the driver's default is already SQLite's format, and
	// setting it makes the driver skip _txlock.)
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Dialect is migrations.Postgres or migrations.SQLite.
func (s *Store) Dialect() string { return s.dialect }

// Migrate brings the schema up to date and returns the steps it applied.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	return migrations.Up(ctx, sqlDB, s.dialect)
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close closes the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Tx runs fn in one transaction: everything fn does through tx lands
// together, or nothing does when fn returns an error.
func (s *Store) Tx(ctx context.Context, fn func(tx *Store) error) error {
	// Nested, the outer transaction's commit is the one that counts.
	outer := s.afterCommit == nil
	after := s.afterCommit
	if outer {
		after = new([]func())
	}
	err := s.db.WithContext(ctx).Transaction(func(gtx *gorm.DB) error {
		return fn(&Store{db: gtx, dialect: s.dialect, keys: s.keys, hooks: s.hooks, sites: s.sites, instance: s.instance, afterCommit: after, clock: s.clock})
	}, &sql.TxOptions{})
	if err == nil && outer {
		for _, f := range *after {
			f()
		}
	}
	return err
}

// forgetKeys clears the ingest and site key caches, which hold the keys'
// accounts too, once the change at hand is committed: at once outside a
// transaction, after the commit inside one. Clearing before the commit
// would let a capture cache the old row again.
func (s *Store) forgetKeys() {
	if s.afterCommit != nil {
		*s.afterCommit = append(*s.afterCommit, s.keys.forget, s.sites.forget)
		return
	}
	s.keys.forget()
	s.sites.forget()
}

// forgetHooks clears the hook connections' cache once the change at hand is
// committed, as forgetKeys clears the keys'.
func (s *Store) forgetHooks() {
	if s.afterCommit != nil {
		*s.afterCommit = append(*s.afterCommit, s.hooks.forget)
		return
	}
	s.hooks.forget()
}

// q is the gorm handle bound to ctx, the start of every query.
func (s *Store) q(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// conn is the database/sql handle under gorm (the pool, or the transaction
// in Tx), for hot statements that pass arrays as one parameter, which gorm
// would expand into lists.
func (s *Store) conn() gorm.ConnPool { return s.db.Statement.ConnPool }

// translate maps driver errors to the store's own.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return ErrNotFound
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return ErrConflict
	}
	// Statements run on the connection itself, not through gorm.
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return ErrConflict
	}
	return err
}

// wrap adds the operation's name to an error, keeping ErrNotFound and
// ErrConflict testable.
func wrap(op string, err error) error {
	if err = translate(err); err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %w", op, err)
}
