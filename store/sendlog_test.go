package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The send log pages newest first by the time events were queued, and
// events queued at the same instant (a rule applied to older leads, in one
// transaction) by id, newest first too: every event once, none skipped at
// a page's edge.
func TestEventsPageThroughOneInstant(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		var evs []models.Event
		for i := range 7 {
			l := storedLead(t, s, a, now.Add(-time.Duration(i)*time.Hour), fmt.Sprintf("%d@example.com", i))
			e := dueEvent(d, l, fmt.Sprintf("e%d", i), l.CreatedAt, now)
			e.CreatedAt = now // e0..e4: one batch
			if i >= 5 {
				e.CreatedAt = now.Add(-time.Duration(i) * time.Minute)
			}
			evs = append(evs, e)
		}
		enqueue(t, s, evs...)
		var got []string
		var after *store.EventCursor
		for range 5 {
			page, err := s.Events(t.Context(), a.ID, store.EventFilter{}, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				got = append(got, e.EventID)
			}
			if len(page) < 2 {
				break
			}
			after = &store.EventCursor{CreatedAt: page[len(page)-1].CreatedAt, ID: page[len(page)-1].ID}
		}
		if want := "[e4 e3 e2 e1 e0 e5 e6]"; fmt.Sprint(got) != want {
			t.Errorf("pages = %v; want %s (one batch by id, newest first, then older)", got, want)
		}
	})
}
