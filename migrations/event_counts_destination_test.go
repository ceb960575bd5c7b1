package migrations_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Migration 0043 counts the events there are again by destination: one
// lead's Lead event for Meta and for TikTok, sent and queued, are two rows,
// and the counts agree with their definition.
func TestEventCountsByDestinationMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			_, exec, open := storeBefore(t, dialect, 43)
			const at = "'2026-01-01 00:00:00'"
			exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (1, 'a', 'A', 'UTC', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO datasets (id, account_id, pixel_id, name, created_at, updated_at) VALUES (7, 1, '123456789012345', 'Main', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO datasets (id, account_id, kind, pixel_id, name, created_at, updated_at) VALUES (8, 1, 'tiktok', 'C4TIKTOK1', 'TikTok', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, junk, junk_reasons, stage, created_at, received_at, updated_at)
				VALUES (1, 1, 'website', 'h1', '', false, '[]', '', '2026-01-02 04:00:00', ` + at + `, ` + at + `)`)
			for i, d := range []int{7, 8} {
				id := i + 1
				exec(fmt.Sprintf(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
					VALUES (%d, 1, %d, 1, 'rule', 'Lead', 'e%d', '2026-01-02 00:00:00', %s)`, id, d, id, at))
			}
			exec(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, last_error, event_time, next_attempt_at)
				VALUES (2, 8, 1, 'queued', '', '2026-01-02 00:00:00', ` + at + `)`)
			exec(`INSERT INTO event_sends (event_id, attempts, sent_at) VALUES (1, 1, ` + at + `)`)
			s := open()
			if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
				t.Errorf("after the migration: %v, %v", drift, err)
			}
			c, err := s.Counts(t.Context(), []store.Span{{AccountID: 1, From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
				To: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}}, store.CountFilter{})
			got := map[string]int64{}
			for _, e := range c.Events {
				got[fmt.Sprintf("%d %s", e.DatasetID, e.Status)] += e.N
			}
			want := map[string]int64{"7 " + string(models.EventSent): 1, "8 " + string(models.EventQueued): 1}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("events by destination = %v, %v; want %v", got, err, want)
			}
		})
	}
}
