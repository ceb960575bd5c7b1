package migrations_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/store"
)

// Migration 0033 counts the stage changes there are again: each lead's
// first change to each stage (not a second one, nor a junk marker), by
// the change's own date, as the store's definition has it.
func TestStageCountsByReachMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			_, exec, open := storeBefore(t, dialect, 33)
			const at = "'2026-01-01 00:00:00'"
			exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (1, 'a', 'A', 'America/New_York', ` + at + `, ` + at + `)`)
			for _, q := range []string{
				`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, junk, junk_reasons, stage, created_at, received_at, updated_at)
					VALUES (1, 1, 'website', 'h1', '', false, '[]', 'booked', '2026-01-02 04:00:00', ` + at + `, ` + at + `)`,
				`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, junk, junk_reasons, stage, created_at, received_at, updated_at)
					VALUES (2, 1, 'website', 'h2', '', false, '[]', 'qualified', '2026-01-03 04:00:00', ` + at + `, ` + at + `)`,
				`INSERT INTO stage_changes (id, account_id, lead_id, stage, occurred_at, created_at) VALUES (1, 1, 1, 'qualified', '2026-01-09 10:00:00', ` + at + `)`,
				`INSERT INTO stage_changes (id, account_id, lead_id, stage, occurred_at, created_at) VALUES (2, 1, 1, 'qualified', '2026-01-05 10:00:00', ` + at + `)`,
				`INSERT INTO stage_changes (id, account_id, lead_id, stage, occurred_at, created_at) VALUES (3, 1, 1, 'booked', '2026-01-10 10:00:00', ` + at + `)`,
				`INSERT INTO stage_changes (id, account_id, lead_id, stage, occurred_at, created_at) VALUES (4, 1, 2, 'qualified', '2026-01-12 10:00:00', ` + at + `)`,
				`INSERT INTO stage_changes (id, account_id, lead_id, stage, occurred_at, created_at) VALUES (5, 1, 2, 'junk', '2026-01-12 11:00:00', ` + at + `)`,
			} {
				exec(q)
			}
			s := open()
			if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
				t.Errorf("after the migration: %v, %v", drift, err)
			}
			ny, err := time.LoadLocation("America/New_York")
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.Counts(t.Context(), []store.Span{{AccountID: 1, Loc: ny,
				From: time.Date(2026, 1, 1, 0, 0, 0, 0, ny), To: time.Date(2026, 2, 1, 0, 0, 0, 0, ny)}}, store.CountFilter{NoDelays: true})
			var n int64
			for _, r := range c.Stages {
				n += r.N
			}
			if err != nil || n != 3 {
				t.Errorf("stage counts = %d, %v; want 3 first reaches", n, err)
			}
			if err := s.CompactCounts(t.Context()); err != nil {
				t.Fatal(err)
			}
			if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
				t.Errorf("after a merge: %v, %v", drift, err)
			}
		})
	}
}
