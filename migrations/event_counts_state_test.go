package migrations_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/migrations"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Migration 0036 counts the events stored failed again by the state people
// read: Meta refused, held back by our check, cancelled. The others keep
// their counts.
func TestEventCountsByStateMigration(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{migrations.SQLite, migrations.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			_, exec, open := storeBefore(t, dialect, 36)
			const at = "'2026-01-01 00:00:00'"
			exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (1, 'a', 'A', 'UTC', ` + at + `, ` + at + `)`)
			exec(`INSERT INTO datasets (id, account_id, pixel_id, name, created_at, updated_at) VALUES (7, 1, '123456789012345', 'Main', ` + at + `, ` + at + `)`)
			for i, st := range []struct{ status, reason string }{
				{"queued", ""},
				{"failed", models.ReasonMetaRefused + "(#100) Invalid parameter"},
				{"failed", models.ReasonNotSent + "user_data.client_user_agent: required"},
				{"failed", models.ReasonJunkLead},
				{"failed", models.ReasonNoLonger + "Quote: condition 1 did not match"},
				{"failed", ""},
			} {
				id := i + 1
				exec(fmt.Sprintf(`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, junk, junk_reasons, stage, created_at, received_at, updated_at)
					VALUES (%d, 1, 'website', 'h%d', '', false, '[]', '', '2026-01-02 04:00:00', %s, %s)`, id, id, at, at))
				exec(fmt.Sprintf(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
					VALUES (%d, 1, 7, %d, 'rule', 'Lead', 'e%d', '2026-01-02 00:00:00', %s)`, id, id, id, at))
				exec(fmt.Sprintf(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, last_error, event_time, next_attempt_at)
					VALUES (%d, 7, %d, '%s', '%s', '2026-01-02 00:00:00', %s)`, id, id, st.status, st.reason, at))
			}
			s := open()
			if drift, err := s.CountsDrift(t.Context()); err != nil || len(drift) > 0 {
				t.Errorf("after the migration: %v, %v", drift, err)
			}
			c, err := s.Counts(t.Context(), []store.Span{{AccountID: 1, From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
				To: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}}, store.CountFilter{})
			got := map[models.EventStatus]int64{}
			for _, e := range c.Events {
				got[e.Status] += e.N
			}
			want := map[models.EventStatus]int64{models.EventQueued: 1, models.EventFailed: 2, models.EventHeldBack: 1, models.EventNotSent: 2}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("events by state = %v, %v; want %v", got, err, want)
			}
		})
	}
}
