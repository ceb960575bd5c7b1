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
	t.Parallel()
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

// The send log's CSV reads its events a batch at a time, never all at
// once, and holds exactly the list's events under the same filter, newest
// first, every one once, across batches that end inside one instant.
func TestEachEventsReadsTheListInBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		store.SetExportBatch(t, 2)
		a, b := twoAccounts(t, s)
		d, db := newDataset(t, s, a, models.ModeLive), newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		var evs []models.Event
		for i := range 9 {
			l := storedLead(t, s, a, now.Add(-time.Duration(i)*time.Hour), fmt.Sprintf("%d@example.com", i))
			e := dueEvent(d, l, fmt.Sprintf("e%d", i), l.CreatedAt, now)
			e.CreatedAt = now // e0..e4: one batch
			if i >= 5 {
				e.CreatedAt = now.Add(-time.Duration(i) * time.Minute)
			}
			if i%3 == 2 {
				e.EventName = "Purchase"
			}
			evs = append(evs, e)
		}
		other := storedLead(t, s, b, now, "other@example.com")
		evs = append(evs, dueEvent(db, other, "b0", now, now))
		enqueue(t, s, evs...)
		for _, f := range []store.EventFilter{{}, {EventName: "Lead"}, {EventName: "NoSuchEvent"}} {
			list, err := s.Events(t.Context(), a.ID, f, nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, e := range list {
				want = append(want, e.EventID)
			}
			err = s.EachEvents(t.Context(), a.ID, f, func(batch []models.Event) error {
				if len(batch) > 2 {
					t.Errorf("filter %+v: a batch of %d events; want at most 2", f, len(batch))
				}
				for _, e := range batch {
					got = append(got, e.EventID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("filter %+v: EachEvents = %v; want the list's %v", f, got, want)
			}
			if f.EventName == "" && fmt.Sprint(got) != "[e4 e3 e2 e1 e0 e5 e6 e7 e8]" {
				t.Errorf("all events = %v; want the account's nine, newest first", got)
			}
		}
	})
}
