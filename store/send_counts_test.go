package store_test

import (
	"fmt"
	"testing"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A send is counted once, as a move from the event's unsent state to
// sent, whatever the order of its two writes (the send's row and the
// unsent row's delete); so is a send with no unsent row (a seeded
// history), an unsent row deleted without a send, a failed event sent
// after all, and a claim that changes only a lease.
func TestSendCountedOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		exec := func(q string) {
			t.Helper()
			if err := s.ExecSQL(t.Context(), q); err != nil {
				t.Fatalf("%.80s: %v", q, err)
			}
		}
		const at = "'2026-01-01 00:00:00'"
		exec(`INSERT INTO accounts (id, slug, name, timezone, created_at, updated_at) VALUES (1, 'a', 'A', 'Europe/Berlin', ` + at + `, ` + at + `)`)
		exec(`INSERT INTO datasets (id, account_id, pixel_id, name, created_at, updated_at) VALUES (7, 1, '123456789012345', 'Main', ` + at + `, ` + at + `)`)
		for i := 1; i <= 6; i++ {
			exec(fmt.Sprintf(`INSERT INTO leads (id, account_id, source, email_hash, event_source_url, created_at, received_at, updated_at)
					VALUES (%d, 1, 'website', 'h%d', 'https://x.com/?utm_campaign=c%d', '2026-01-0%d 04:00:00', %s, %s)`, i, i, i%2, i, at, at))
			exec(fmt.Sprintf(`INSERT INTO events (id, account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
					VALUES (%d, 1, 7, %d, 'rule', 'Lead', 'e%d', '2026-01-02 00:00:00', %s)`, i, i, i, at))
		}
		unsent := func(id int, status, reason string) {
			exec(fmt.Sprintf(`INSERT INTO unsent_events (event_id, dataset_id, lead_id, status, event_time, next_attempt_at, last_error)
					VALUES (%d, 7, %d, '%s', '2026-01-02 00:00:00', %s, '%s')`, id, id, status, at, reason))
		}
		send := func(id int) {
			exec(fmt.Sprintf(`INSERT INTO event_sends (event_id, attempts, sent_at) VALUES (%d, 1, %s)`, id, at))
		}
		drop := func(id int) { exec(fmt.Sprintf(`DELETE FROM unsent_events WHERE event_id = %d`, id)) }
		check := func(step string) {
			t.Helper()
			drift, err := s.CountsDrift(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drift {
				t.Errorf("after %s: %s", step, d)
			}
		}
		for i := 1; i <= 5; i++ {
			unsent(i, "queued", "")
		}
		check("queueing")
		exec(`UPDATE unsent_events SET lease_token = 9, lease_until = ` + at + ` WHERE event_id IN (1, 2)`)
		check("a claim")
		send(1)
		drop(1)
		check("a send, then its unsent row deleted")
		drop(2)
		send(2)
		check("an unsent row deleted, then its send")
		drop(3)
		check("an unsent row deleted without a send")
		exec(`UPDATE unsent_events SET status = 'failed', last_error = 'Meta refused: bad' WHERE event_id = 4`)
		check("a failure")
		send(4)
		drop(4)
		check("a failed event sent after all")
		send(6)
		check("a send with no unsent row")
		if err := s.CompactCounts(t.Context()); err != nil {
			t.Fatal(err)
		}
		check("a merge")
	})
}
