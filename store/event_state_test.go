package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Each state of a failed event reads the same in Go (models.Event.State)
// and in SQL (the send log's filter and counts): Meta's refusal is failed,
// our own check's is held back, a decision's cancel is not sent.
func TestFailedEventStatesReadTheSameInGoAndSQL(t *testing.T) {
	t.Parallel()
	reasons := []struct {
		reason string
		want   models.EventStatus
	}{
		{"Meta refused: (#100) Invalid parameter", models.EventFailed},
		{"", models.EventFailed},
		{"not sent: user_data.client_user_agent: required for website events", models.EventHeldBack},
		{"not sent: the lead's match keys cannot be read: EOF", models.EventHeldBack},
		{models.ReasonJunkLead, models.EventNotSent},
		{models.ReasonNoLonger + "Qualified: condition 1 (Junk is \"false\") did not match", models.EventNotSent},
		{models.ReasonLeadGone, models.EventNotSent},
		// Case matters: SQLite's LIKE would ignore it; substr does not.
		{"NOT SENT: shouting", models.EventFailed},
		{"not sent: it's quoted 'like this' and 100% _odd_", models.EventHeldBack},
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		other := newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC()
		want := map[models.EventStatus]int64{}
		for i, r := range reasons {
			l := storedLead(t, s, a, now, "l"+string(rune('a'+i))+"@example.com")
			e := dueEvent(d, l, "e-"+string(rune('a'+i)), now, now)
			e.Status, e.LastError = models.EventFailed, r.reason
			enqueue(t, s, e)
			want[r.want]++
		}
		// Another account's held-back event counts in neither.
		ol := storedLead(t, s, b, now, "other@example.com")
		oe := dueEvent(other, ol, "e-other", now, now)
		oe.Status, oe.LastError = models.EventFailed, "not sent: user_data: missing"
		enqueue(t, s, oe)

		evs, err := s.Events(ctx, a.ID, store.EventFilter{}, nil, 100)
		if err != nil || len(evs) != len(reasons) {
			t.Fatalf("events = %d, %v; want %d", len(evs), err, len(reasons))
		}
		for _, e := range evs {
			for _, r := range reasons {
				if r.reason == e.LastError && e.State() != r.want {
					t.Errorf("State() of %q = %s; want %s", e.LastError, e.State(), r.want)
				}
			}
		}
		counts, err := s.EventCounts(ctx, a.ID, store.EventFilter{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// The counts filtered by time take the per-state filter's path.
		filtered, err := s.EventCounts(ctx, a.ID, store.EventFilter{From: now.Add(-time.Hour)}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []models.EventStatus{models.EventFailed, models.EventHeldBack, models.EventNotSent} {
			if counts[st] != want[st] || filtered[st] != want[st] {
				t.Errorf("counts of %s = %d, by time %d; want %d", st, counts[st], filtered[st], want[st])
			}
			got, err := s.Events(ctx, a.ID, store.EventFilter{Status: st}, nil, 100)
			if err != nil || int64(len(got)) != want[st] {
				t.Errorf("events filtered %s = %d, %v; want %d", st, len(got), err, want[st])
			}
			for _, e := range got {
				if e.State() != st {
					t.Errorf("filter %s kept %q, which reads %s", st, e.LastError, e.State())
				}
			}
		}
		if counts[models.EventQueued] != 0 {
			t.Errorf("counts = %v; want none waiting", counts)
		}
	})
}
