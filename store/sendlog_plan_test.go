package store_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// The send log filtered by an event name reads that name's events of the
// account newest first from events_account_name_idx (migration 0025): a
// name no event has is a look at one place of the index, not at every event
// of the account (2.9 s at a million), and a page of a rare name is read in
// order, not picked out of all events.
func TestEventNameFilterReadsItsIndex(t *testing.T) {
	t.Parallel()
	s, url := postgresStore(t)
	ctx := t.Context()
	a, _ := twoAccounts(t, s)
	d := newDataset(t, s, a, models.ModeLive)
	l := storedLead(t, s, a, time.Now().UTC(), "jane@example.com")
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	// 50,000 events, one in 100 a Purchase, the others Lead.
	exec(`INSERT INTO events (account_id, dataset_id, lead_id, origin, event_name, event_id, event_time, created_at)
		SELECT $1, $2, $3, 'rule', CASE WHEN i % 100 = 0 THEN 'Purchase' ELSE 'Lead' END, 'e' || i,
			now() - i * interval '1 second', now() - i * interval '1 second'
		FROM generate_series(1, 50000) AS i`, a.ID, d.ID, l.ID)
	exec(`ANALYZE events`)
	// Events' page of ids, as store.Events asks for it.
	for _, name := range []string{"NoSuchEvent", "Purchase"} {
		rows, err := conn.QueryContext(ctx, `EXPLAIN SELECT events.id FROM events
			WHERE events.account_id = $1 AND events.event_name = $2 AND (events.created_at, events.id) < (now(), 9223372036854775807)
			ORDER BY events.created_at DESC, events.id DESC LIMIT 51`, a.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		rows.Close()
		if p := plan.String(); !strings.Contains(p, "events_account_name_idx") || strings.Contains(p, "Sort") {
			t.Errorf("%s: the page is not read in order from events_account_name_idx:\n%s", name, p)
		}
	}
}
