package migrations_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/glebarez/go-sqlite"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Migration 0006 gives every event that is not sent, as an earlier version
// left it, its row in unsent_events with its status and schedule; an event
// that was being sent ("sending" before 0004) is queued again.
func TestUnsentEventsMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, unsent := migratedBefore(t, dialect, 6)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (7, 1, 'Main', '1', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, created_at, received_at, updated_at) VALUES (3, 1, 'website', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			for i, st := range []string{"queued", "sending", "sent", "failed", "expired", "dry_run"} {
				lease := "NULL"
				if st == "sending" {
					lease = "'2026-01-03 00:00:00'"
				}
				exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, status, next_attempt_at, lease_until, created_at, updated_at)
					VALUES (` + string(rune('1'+i)) + `, 1, 7, 3, 'default', 'Lead', 'e` + string(rune('1'+i)) + `', '2026-01-01 00:00:00', '` + st + `', '2026-01-02 00:00:00',
					` + lease + `, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			}
			exec(unsent.SQL)
			rows, err := db.QueryContext(t.Context(), `SELECT event_id, dataset_id, lead_id, status, lease_until IS NOT NULL FROM unsent_events ORDER BY event_id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			type row struct {
				event, dataset, lead int64
				status               string
				leased               bool
			}
			var got []row
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.event, &r.dataset, &r.lead, &r.status, &r.leased); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			want := []row{{1, 7, 3, "queued", false}, {2, 7, 3, "queued", true}, {4, 7, 3, "failed", false}, {5, 7, 3, "expired", false}, {6, 7, 3, "dry_run", false}}
			if len(got) != len(want) {
				t.Fatalf("unsent_events = %+v; want %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("unsent_events[%d] = %+v; want %+v", i, got[i], want[i])
				}
			}
			var status string
			if err := db.QueryRowContext(t.Context(), "SELECT status FROM events WHERE id = 2").Scan(&status); err != nil || status != "queued" {
				t.Errorf("the event left sending: %q, %v; want queued", status, err)
			}
		})
	}
}

// Migration 0010 gives every event sent before it its send, as events
// recorded it, and no other event one.
func TestEventSendsMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, sends := migratedBefore(t, dialect, 10)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (7, 1, 'Main', '1', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, created_at, received_at, updated_at) VALUES (3, 1, 'website', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO send_requests (id, account_id, dataset_id, started_at) VALUES (9, 1, 7, '2026-01-02 00:00:00')`)
			exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, status, attempts, fbtrace_id, request_id, sent_at, created_at, updated_at)
				VALUES (1, 1, 7, 3, 'default', 'Lead', 'e1', '2026-01-01 00:00:00', 'sent', 2, 'AbC', 9, '2026-01-02 00:00:01', '2026-01-01 00:00:00', '2026-01-02 00:00:01')`)
			exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, status, created_at, updated_at)
				VALUES (2, 1, 7, 3, 'default', 'Lead', 'e2', '2026-01-01 00:00:00', 'failed', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(sends.SQL)
			var id, request, attempts int64
			var trace string
			var n int
			if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM event_sends").Scan(&n); err != nil || n != 1 {
				t.Fatalf("event_sends has %d rows, %v; want the sent event's only", n, err)
			}
			err := db.QueryRowContext(t.Context(), "SELECT event_id, request_id, attempts, fbtrace_id FROM event_sends").Scan(&id, &request, &attempts, &trace)
			if err != nil || id != 1 || request != 9 || attempts != 2 || trace != "AbC" {
				t.Errorf("send = %d %d %d %q, %v; want event 1, request 9, attempt 2, trace AbC", id, request, attempts, trace, err)
			}
		})
	}
}

// Migration 0014 moves an unsent event's state to its unsent_events row
// and drops the copies on events: a failed event keeps its attempts, error
// and request; a sent one stays sent, whatever its stale row said.
func TestEventStateMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			db, exec, state := migratedBefore(t, dialect, 14)
			exec(`INSERT INTO accounts (id, slug, name, created_at, updated_at) VALUES (1, 'a', 'A', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO datasets (id, account_id, name, pixel_id, created_at, updated_at) VALUES (7, 1, 'Main', '1', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO leads (id, account_id, source, created_at, received_at, updated_at) VALUES (3, 1, 'website', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, status, attempts, created_at, updated_at)
				VALUES (1, 1, 7, 3, 'default', 'Lead', 'e1', '2026-01-01 00:00:00', 'queued', 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(`INSERT INTO event_sends (event_id, request_id, attempts, fbtrace_id, sent_at) VALUES (1, 9, 1, 'AbC', '2026-01-02 00:00:00')`)
			exec(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, status, attempts, last_error, request_id, created_at, updated_at)
				VALUES (2, 1, 7, 3, 'default', 'Contact', 'e2', '2026-01-01 00:00:00', 'failed', 3, 'Meta refused', 9, '2026-01-01 00:00:00', '2026-01-03 00:00:00')`)
			exec(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at)
				VALUES (2, 7, 3, 'failed', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
			exec(state.SQL)
			var attempts, request int
			var lastError string
			var updated sql.NullString
			err := db.QueryRowContext(t.Context(), "SELECT attempts, last_error, request_id, CAST(updated_at AS text) FROM unsent_events WHERE event_id = 2").
				Scan(&attempts, &lastError, &request, &updated)
			if err != nil || attempts != 3 || lastError != "Meta refused" || request != 9 || !strings.HasPrefix(updated.String, "2026-01-03") {
				t.Errorf("failed event's state = %d %q %d %q, %v; want 3 attempts, its error, request 9, updated 2026-01-03", attempts, lastError, request, updated.String, err)
			}
			var n int
			if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM unsent_events WHERE event_id = 1").Scan(&n); err != nil || n != 0 {
				t.Errorf("the sent event has %d unsent rows, %v; want none", n, err)
			}
			for _, col := range []string{"status", "attempts", "last_error", "fbtrace_id", "request_id", "sent_at", "updated_at"} {
				if _, err := db.ExecContext(t.Context(), "SELECT "+col+" FROM events"); err == nil {
					t.Errorf("events still has %s", col)
				}
			}
		})
	}
}

// migratedBefore opens a fresh database of dialect migrated up to, not
// including, version, and returns it, a way to run SQL on it and that
// version's step.
func migratedBefore(t *testing.T, dialect string, version int) (*sql.DB, func(string), migrations.Step) {
	t.Helper()
	var db *sql.DB
	var err error
	if dialect == migrations.SQLite {
		db, err = sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	} else {
		db, err = sql.Open("pgx", storetest.PostgresURL(t))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	steps, err := migrations.Steps(dialect)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	var step migrations.Step
	for _, s := range steps {
		if s.Version < version {
			exec(s.SQL)
		} else if s.Version == version {
			step = s
		}
	}
	if step.Version != version {
		t.Fatalf("no migration %d", version)
	}
	return db, exec, step
}
