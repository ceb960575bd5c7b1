package migrations_test

import (
	"fmt"
	"testing"

	"github.com/leadsignal/leadsignal/migrations"
)

// Migration 0021 counts the leads, stage changes and events there are, by
// each account's dates, with the definitions the store checks them by.
func TestCountsMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			_, exec, open := storeBefore(t, dialect, 21)
			const at = "'2026-01-01 00:00:00'"
			exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (1, 'a', 'A', 'America/New_York', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (2, 'b', 'B', 'No/Such_Zone', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO datasets (id, account_id, pixel_id, name, created_at, updated_at) VALUES (7, 1, '123456789012345', 'Main', ` + at + `, ` + at + `)`)
			for i := 1; i <= 30; i++ {
				acc := 1 + i%2
				junk := i%5 == 0
				exec(fmt.Sprintf(`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, junk, junk_reasons, stage, created_at, received_at, updated_at)
					VALUES (%d, %d, 'website', 'h%d', 'https://x.com/?utm_campaign=c%d', %v, '[{"signal":"honeypot","message":"m%d"}]', '%s',
					'2026-01-%02d 04:%02d:00', %s, %s)`, i, acc, i, i%3, junk, i, map[bool]string{true: "qualified", false: ""}[i%4 == 0], 1+i%9, i, at, at))
			}
			for i := 1; i <= 10; i++ {
				exec(fmt.Sprintf(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
					VALUES (%d, 1, 7, %d, 'rule', 'Lead', 'e%d', '2026-01-02 00:00:00', %s)`, i, 2*i-1, i, at))
				if i%2 == 0 {
					exec(fmt.Sprintf(`INSERT INTO event_sends (event_id, attempts, sent_at) VALUES (%d, 1, %s)`, i, at))
				} else {
					exec(fmt.Sprintf(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at)
						VALUES (%d, 7, %d, 'queued', '2026-01-02 00:00:00', %s)`, i, 2*i-1, at))
				}
			}
			exec(`INSERT INTO stage_changes (account_id, lead_id, stage, occurred_at, created_at) VALUES (1, 4, 'qualified', '2026-01-06 10:00:00', ` + at + `)`)
			s := open()
			drift, err := s.CountsDrift(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drift {
				t.Errorf("after the migration: %s", d)
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
