package store_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func TestEnqueueEventsIsIdempotent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeDryRun)
		now := time.Now().UTC()
		l := storedLead(t, s, a, now, "jane@example.com")
		mk := func(id string) models.Event {
			return models.Event{AccountID: a.ID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault, EventName: "Lead", EventID: id, EventTime: now}
		}
		first, _, err := s.EnqueueEvents(ctx, []models.Event{mk("e1")})
		if err != nil || len(first) != 1 || first[0].ID == 0 || first[0].Status != models.EventQueued {
			t.Fatalf("first enqueue = %+v, %v", first, err)
		}
		again, _, err := s.EnqueueEvents(ctx, []models.Event{mk("e1"), mk("e2")})
		if err != nil || len(again) != 2 || again[0].ID != first[0].ID || again[1].ID == 0 || again[1].ID == first[0].ID {
			t.Fatalf("second enqueue = %+v, %v; want e1 as stored and e2 new", again, err)
		}
		// A large batch (multi-row insert) with repeats.
		var many []models.Event
		for i := range 30 {
			many = append(many, mk(fmt.Sprintf("e%d", i)))
		}
		got, _, err := s.EnqueueEvents(ctx, many)
		if err != nil || len(got) != 30 || got[1].ID != first[0].ID || got[2].ID != again[1].ID {
			t.Fatalf("batch enqueue: %v; e1/e2 ids %d %d, want %d %d", err, got[1].ID, got[2].ID, first[0].ID, again[1].ID)
		}
		n, _ := s.EventCounts(ctx, a.ID, store.EventFilter{}, 1_000_000)
		if n[models.EventQueued] != 30 {
			t.Errorf("%d queued; want 30 (no copies)", n[models.EventQueued])
		}
		if n, err := s.EventCounts(ctx, a.ID, store.EventFilter{}, 10); err != nil || n[models.EventQueued] != 10 {
			t.Errorf("counts up to 10 = %v, %v; want 10 queued", n, err)
		}
	})
}

func TestLookupCaptureOddExternalIDs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		odd := []string{`a,b`, `quo"te`, `back\slash`, `{brace}`, `NULL`, ` space `}
		for _, id := range odd {
			l := lead(a, time.Now(), id+"@example.com")
			l.ExternalID = &id
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
		}
		facts, _, err := s.LookupCapture(ctx, []store.CaptureQuery{{AccountID: a.ID, ExternalIDs: append(odd, "missing")}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := facts[a.ID].Existing
		if len(got) != len(odd) {
			t.Fatalf("LookupCapture found %d leads; want %d", len(got), len(odd))
		}
		for _, id := range odd {
			if _, ok := got[id]; !ok {
				t.Errorf("external_id %q not found", id)
			}
		}
	})
}

func TestClaimLeasesWithoutChangingStatus(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		l := storedLead(t, s, a, now, "jane@example.com")
		evs, _, err := s.EnqueueEvents(ctx, []models.Event{{AccountID: a.ID, DatasetID: d.ID, LeadID: l.ID,
			Origin: models.OriginDefault, EventName: "Lead", EventID: "e1", EventTime: now}})
		if err != nil {
			t.Fatal(err)
		}
		now = time.Now().UTC() // the event is due from when it was queued
		first, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(first.Events) != 1 {
			t.Fatalf("claim = %+v, %v", first, err)
		}
		// People see a leased event as sending.
		if n, _ := s.EventCounts(ctx, a.ID, store.EventFilter{}, 1_000_000); n[models.EventSending] != 1 || n[models.EventQueued] != 0 {
			t.Errorf("counts %v; want 1 sending", n)
		}
		if got, _ := s.Events(ctx, a.ID, store.EventFilter{Status: models.EventSending}, nil, 10); len(got) != 1 || got[0].Status != models.EventSending {
			t.Errorf("sending events = %+v; want e1", got)
		}
		// The lease runs out and another dispatcher claims the event: the
		// first one's settle no longer touches it, and says so. An attempt
		// counts when it is settled, so the first claim counted none.
		later := now.Add(2 * time.Minute)
		second, err := s.ClaimEvents(ctx, d.ID, later, time.Minute, 10, nil)
		if err != nil || len(second.Events) != 1 || second.Events[0].Attempts != 1 {
			t.Fatalf("second claim = %+v, %v", second, err)
		}
		if err := s.SettleEvents(ctx, first, nil, "", later, []store.Outcome{{ID: evs[0].ID, Status: models.EventFailed, Error: "stale"}}); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the first claim's settle = %v; want ErrLeaseLost", err)
		}
		if err := s.SettleEvents(ctx, second, nil, "trace", later, []store.Outcome{{ID: evs[0].ID, Status: models.EventSent}}); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.Event(ctx, a.ID, evs[0].ID); e.Status != models.EventSent || e.LastError != "" || e.LeaseUntil != nil || e.Attempts != 1 {
			t.Errorf("event = %s %q lease %v attempts %d; want sent by the second claim, in 1 attempt", e.Status, e.LastError, e.LeaseUntil, e.Attempts)
		}
	})
}

// The send log filtered by a status but sent lists the same events, newest
// first and a page at a time, whether it reads them by id (a few) or looks
// for them among all events (many), and never another account's.
func TestEventsWithStatusBothWays(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		other := newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		var evs []models.Event
		for i := range 5 {
			l := storedLead(t, s, a, now, fmt.Sprintf("%d@example.com", i))
			e := dueEvent(d, l, fmt.Sprintf("e%d", i), now, now)
			// Queued later the lower the id: newest first is not id order.
			e.CreatedAt = now.Add(-time.Duration(i) * time.Minute)
			evs = append(evs, e)
		}
		l := storedLead(t, s, b, now, "b@example.com")
		stored := enqueue(t, s, append(evs, dueEvent(other, l, "b", now, now))...)
		// Events 0, 2 and 4 fail; 1 and 3 stay queued.
		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(c.Events) != 5 {
			t.Fatalf("claim = %d, %v", len(c.Events), err)
		}
		var outs []store.Outcome
		for _, e := range stored[:5] {
			o := store.Outcome{ID: e.ID, Status: models.EventQueued, NextAttemptAt: now, Untried: true}
			if e.EventID != "e1" && e.EventID != "e3" {
				o = store.Outcome{ID: e.ID, Status: models.EventFailed, Error: "Meta refused"}
			}
			outs = append(outs, o)
		}
		if err := s.SettleEvents(ctx, c, nil, "", now, outs); err != nil {
			t.Fatal(err)
		}
		for _, few := range []int{2000, 1} {
			store.SetFewUnsent(t, few)
			var got []string
			var after *store.EventCursor
			for range 3 {
				page, err := s.Events(ctx, a.ID, store.EventFilter{Status: models.EventFailed}, after, 2)
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
			if fmt.Sprint(got) != "[e0 e2 e4]" {
				t.Errorf("failed events, %d read by id at most = %v; want [e0 e2 e4]", few, got)
			}
			if page, err := s.Events(ctx, b.ID, store.EventFilter{Status: models.EventFailed, DatasetID: d.ID}, nil, 10); err != nil || len(page) != 0 {
				t.Errorf("another account naming the dataset = %v, %v; want nothing", page, err)
			}
			if page, err := s.Events(ctx, a.ID, store.EventFilter{Status: models.EventQueued, EventName: "Lead"}, nil, 10); err != nil || len(page) != 2 || page[0].EventID != "e1" {
				t.Errorf("queued Lead events = %v, %v; want e1 then e3", page, err)
			}
		}
	})
}

// threeDestinations makes two accounts, the first with the destinations
// Main and Backup, the second with Theirs.
func threeDestinations(t *testing.T, s *store.Store) (a, b models.Account, main, backup, theirs models.Dataset) {
	t.Helper()
	a, b = twoAccounts(t, s)
	return a, b, testDataset(t, s, a, "Main", "111111111111111"), testDataset(t, s, a, "Backup", "222222222222222"),
		testDataset(t, s, b, "Theirs", "333333333333333")
}

// EventCounts' sent count is a destination's own when the filter names
// one, counted up to the limit; another account's destination counts
// nothing.
func TestEventCountsSentByDestination(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b, main, backup, theirs := threeDestinations(t, s)
		now := time.Now().UTC()
		send := func(d models.Dataset, n int) {
			t.Helper()
			l := storedLead(t, s, models.Account{ID: d.AccountID}, now, fmt.Sprintf("%d-%s@example.com", n, d.Name))
			var evs []models.Event
			for i := range n {
				evs = append(evs, models.Event{AccountID: d.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault,
					EventName: "Lead", EventID: fmt.Sprintf("%s-%d", d.Name, i), EventTime: now})
			}
			if _, _, err := s.EnqueueEvents(ctx, evs); err != nil {
				t.Fatal(err)
			}
			c, err := s.ClaimEvents(ctx, d.ID, time.Now().UTC(), time.Minute, 100, nil)
			if err != nil || len(c.Events) != n {
				t.Fatalf("claim = %d, %v; want %d", len(c.Events), err, n)
			}
			var outs []store.Outcome
			for _, e := range c.Events[:n-1] {
				outs = append(outs, store.Outcome{ID: e.ID, Status: models.EventSent})
			}
			outs = append(outs, store.Outcome{ID: c.Events[n-1].ID, Status: models.EventFailed, Error: models.ReasonMetaRefused + "(#100) Invalid parameter"})
			if err := s.SettleEvents(ctx, c, nil, "", time.Now().UTC(), outs); err != nil {
				t.Fatal(err)
			}
		}
		send(main, 5)
		send(backup, 3)
		send(theirs, 7)
		for _, tc := range []struct {
			name    string
			account int64
			dataset int64
			limit   int
			sent    int64
			failed  int64
		}{
			{"the account", a.ID, 0, 1000, 6, 2},
			{"Main", a.ID, main.ID, 1000, 4, 1},
			{"Backup", a.ID, backup.ID, 1000, 2, 1},
			{"Main, up to 3", a.ID, main.ID, 3, 3, 1},
			{"another account's destination", a.ID, theirs.ID, 1000, 0, 0},
			{"the other account", b.ID, 0, 1000, 6, 1},
		} {
			n, err := s.EventCounts(ctx, tc.account, store.EventFilter{DatasetID: tc.dataset}, tc.limit)
			if err != nil || n[models.EventSent] != tc.sent || n[models.EventFailed] != tc.failed {
				t.Errorf("%s: counts %v, %v; want %d sent and %d failed", tc.name, n, err, tc.sent, tc.failed)
			}
		}
	})
}

// The send log's counts by state without a filter (event_counts, and the
// leases in unsent_events) agree with the counts the per-state filters
// make, event by event, for every state: a claimed event is sending until
// its lease runs out, then queued again.
func TestEventCountsByStateAgreeWithTheFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _, main, backup, theirs := threeDestinations(t, s)
		now := time.Now().UTC()
		n := 0
		queue := func(d models.Dataset, count int, status models.EventStatus, reason string) []models.Event {
			t.Helper()
			var evs []models.Event
			for range count {
				n++
				l := storedLead(t, s, models.Account{ID: d.AccountID}, now, fmt.Sprintf("%d@example.com", n))
				e := dueEvent(d, l, fmt.Sprintf("e-%d", n), now, now)
				e.Status, e.LastError = status, reason
				evs = append(evs, e)
			}
			return enqueue(t, s, evs...)
		}
		claim := func(d models.Dataset, count int) store.Claim {
			t.Helper()
			c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, count, nil)
			if err != nil || len(c.Events) != count {
				t.Fatalf("claim = %d, %v; want %d", len(c.Events), err, count)
			}
			return c
		}
		queue(main, 5, models.EventQueued, "")
		queue(backup, 2, models.EventQueued, "")
		queue(theirs, 4, models.EventQueued, "")
		queue(main, 2, models.EventFailed, models.ReasonMetaRefused+"(#100) Invalid parameter")
		queue(main, 3, models.EventFailed, "not sent: user_data: missing")
		queue(backup, 1, models.EventFailed, models.ReasonJunkLead)
		queue(main, 1, models.EventExpired, "")
		queue(backup, 2, models.EventDryRun, "")
		// Three of Main's queued events are claimed and one of them sent
		// (the other two keep their lease), then Main's last two, one of
		// Backup's and three of the other account's.
		c := claim(main, 3)
		if err := s.SettleEvents(ctx, c, nil, "", now, []store.Outcome{{ID: c.Events[0].ID, Status: models.EventSent}}); err != nil {
			t.Fatal(err)
		}
		claim(main, 2)
		claim(backup, 1)
		claim(theirs, 3)

		check := func(name string, s *store.Store, dataset int64, limit int, want map[models.EventStatus]int64) {
			t.Helper()
			got, err := s.EventCounts(ctx, a.ID, store.EventFilter{DatasetID: dataset}, limit)
			if err != nil {
				t.Fatal(err)
			}
			// The same counts through the per-state filters: a time filter
			// takes that path.
			filtered, err := s.EventCounts(ctx, a.ID, store.EventFilter{DatasetID: dataset, From: now.Add(-time.Hour)}, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) || !maps.Equal(filtered, want) {
				t.Errorf("%s: counts %v, filtered %v; want %v", name, got, filtered, want)
			}
		}
		check("the account", s, 0, 1000, map[models.EventStatus]int64{models.EventQueued: 1, models.EventSending: 5, models.EventSent: 1,
			models.EventFailed: 2, models.EventHeldBack: 3, models.EventNotSent: 1, models.EventExpired: 1, models.EventDryRun: 2})
		check("Main", s, main.ID, 1000, map[models.EventStatus]int64{models.EventSending: 4, models.EventSent: 1,
			models.EventFailed: 2, models.EventHeldBack: 3, models.EventExpired: 1})
		check("Backup", s, backup.ID, 1000, map[models.EventStatus]int64{models.EventQueued: 1, models.EventSending: 1,
			models.EventNotSent: 1, models.EventDryRun: 2})
		check("the account, up to 2", s, 0, 2, map[models.EventStatus]int64{models.EventQueued: 1, models.EventSending: 2, models.EventSent: 1,
			models.EventFailed: 2, models.EventHeldBack: 2, models.EventNotSent: 1, models.EventExpired: 1, models.EventDryRun: 2})
		check("another account's destination", s, theirs.ID, 1000, map[models.EventStatus]int64{})
		// The Destinations page reads every destination's counts at once:
		// each is what the send log filtered by it counts.
		byDest, err := s.DestinationCounts(ctx, a.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []models.Dataset{main, backup} {
			one, err := s.EventCounts(ctx, a.ID, store.EventFilter{DatasetID: d.ID}, 2)
			if err != nil || len(one) == 0 || !maps.Equal(byDest[d.ID], one) {
				t.Errorf("destination counts of %s: %v; want %v (%v)", d.Name, byDest[d.ID], one, err)
			}
		}
		if len(byDest) != 2 {
			t.Errorf("destination counts of %d destinations (%v); want Main's and Backup's", len(byDest), byDest)
		}
		// Once the leases run out, the claimed events are queued again.
		later := s.WithClock(func() time.Time { return now.Add(2 * time.Minute) })
		check("after the leases", later, 0, 1000, map[models.EventStatus]int64{models.EventQueued: 6, models.EventSent: 1,
			models.EventFailed: 2, models.EventHeldBack: 3, models.EventNotSent: 1, models.EventExpired: 1, models.EventDryRun: 2})
	})
}
