// Package migrations holds leadsignal's versioned SQL schema, one folder per
// dialect with the same numbered steps, and applies the steps that a database
// has not seen yet.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Dialects this package has migrations for.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// advisoryLockKey is the pg_advisory_lock key that serialises migrations
// between replicas starting at the same time ("leadsign" in ASCII).
const advisoryLockKey int64 = 0x6c65616473696e67

// Step is one numbered migration.
type Step struct {
	Version int
	Name    string
	SQL     string
}

// Steps returns the migrations of a dialect in version order.
func Steps(dialect string) ([]Step, error) {
	entries, err := fs.ReadDir(files, dialect)
	if err != nil {
		return nil, fmt.Errorf("migrations: unknown dialect %q", dialect)
	}
	var steps []Step
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".up.sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migrations: %s/%s: name must start with a number and _", dialect, name)
		}
		body, err := fs.ReadFile(files, path.Join(dialect, name))
		if err != nil {
			return nil, err
		}
		steps = append(steps, Step{Version: v, Name: strings.TrimSuffix(name, ".up.sql"), SQL: string(body)})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Version < steps[j].Version })
	for i := 1; i < len(steps); i++ {
		if steps[i].Version == steps[i-1].Version {
			return nil, fmt.Errorf("migrations: %s: version %d used twice", dialect, steps[i].Version)
		}
	}
	return steps, nil
}

// Up applies every step of the dialect that the database has not recorded
// yet, each in its own transaction, and returns the names of the steps it
// applied. On Postgres it holds an advisory lock for the whole run, so that
// replicas starting together migrate one after the other. It also creates
// schema_backfills, where the backfills that follow some steps keep their
// progress (docs/operations.md, "Migrations").
func Up(ctx context.Context, db *sql.DB, dialect string) ([]string, error) {
	steps, err := Steps(dialect)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close()

	if dialect == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, advisoryLockKey); err != nil {
			return nil, fmt.Errorf("migrations: lock: %w", err)
		}
		defer func() {
			// A fresh context: the unlock must happen even when ctx is done,
			// or the session keeps the lock until the connection closes.
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, advisoryLockKey)
		}()
	}

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamp NOT NULL
	)`); err != nil {
		return nil, fmt.Errorf("migrations: create schema_migrations: %w", err)
	}
	// A step never rewrites a big table in its one transaction: the rows
	// it adds a value to are filled after start, in batches, by a backfill
	// (store.BackfillNext, run by internal/upkeep), whose progress and end
	// are kept here. A backfill without a row has not started.
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_backfills (
		name text PRIMARY KEY,
		after_id bigint NOT NULL DEFAULT 0,
		done_at timestamp
	)`); err != nil {
		return nil, fmt.Errorf("migrations: create schema_backfills: %w", err)
	}

	done := map[int]bool{}
	rows, err := conn.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrations: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, err
		}
		done[v] = true
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}

	var applied []string
	for _, s := range steps {
		if done[s.Version] {
			continue
		}
		if err := apply(ctx, conn, dialect, s); err != nil {
			return applied, err
		}
		applied = append(applied, s.Name)
	}
	return applied, nil
}

func apply(ctx context.Context, conn *sql.Conn, dialect string, s Step) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrations: %s: begin: %w", s.Name, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, s.SQL); err != nil {
		return fmt.Errorf("migrations: %s: %w", s.Name, err)
	}
	insert := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
	if dialect == Postgres {
		insert = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
	}
	if _, err := tx.ExecContext(ctx, insert, s.Version, s.Name, time.Now().UTC()); err != nil {
		return fmt.Errorf("migrations: %s: record: %w", s.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: %s: commit: %w", s.Name, err)
	}
	return nil
}
