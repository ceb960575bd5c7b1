package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// An event refused once, retried and then sent with a payload built at
// send time shows that JSON, as its send: not the refused attempt's. One
// sent with the payload it was queued with keeps it. Both settle paths (one
// event, and a batch) are covered.
func TestSentEventKeepsTheJSONSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for _, n := range []int{1, 2} {
			ctx := t.Context()
			a, err := s.CreateAccount(ctx, models.Account{Slug: "acct" + string(rune('0'+n)), Name: "Acct"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := newDataset(t, s, a, models.ModeLive)
			now := time.Now().UTC()
			var evs []models.Event
			for i := range n {
				l := storedLead(t, s, a, now, string(rune('a'+i))+"@example.com")
				e := dueEvent(d, l, string(rune('x'+i)), now.Add(-time.Hour), now)
				e.Payload, e.PayloadStamp = `{"queued":true}`, 7
				evs = append(evs, e)
			}
			enqueue(t, s, evs...)
			settle := func(at time.Time, req *int64, o store.Outcome) store.Claim {
				t.Helper()
				c, err := s.ClaimEvents(ctx, d.ID, at, time.Minute, 10, nil)
				if err != nil || len(c.Events) != n {
					t.Fatalf("claim = %d events, %v; want %d", len(c.Events), err, n)
				}
				var outs []store.Outcome
				for _, e := range c.Events {
					o.ID = e.ID
					outs = append(outs, o)
				}
				if err := s.SettleEvents(ctx, c, req, "trace", at, outs); err != nil {
					t.Fatal(err)
				}
				return c
			}
			request := func() *int64 {
				req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: now}
				if err := s.InsertSendRequest(ctx, &req); err != nil {
					t.Fatal(err)
				}
				return &req.ID
			}

			refused := request()
			settle(now, refused, store.Outcome{Status: models.EventFailed, Error: "Meta refused", Payload: `{"refused":true}`})
			if got, err := s.RetryEvents(ctx, a.ID, nil, now); err != nil || got != int64(n) {
				t.Fatalf("retry = %d, %v", got, err)
			}
			sent := request()
			at := now.Add(time.Second)
			c := settle(at, sent, store.Outcome{Status: models.EventSent, Payload: `{"built":true}`})
			for _, ce := range c.Events {
				e, err := s.Event(ctx, a.ID, ce.ID)
				if err != nil || e.Status != models.EventSent || e.Payload != `{"built":true}` || e.RequestID == nil || *e.RequestID != *sent ||
					e.Attempts != 1 || e.LastError != "" || e.FBTraceID != "trace" || e.SentAt == nil || !near(*e.SentAt, at) {
					t.Errorf("%d event(s): sent event %+v, %v; want sent on attempt 1 by request %d, with the JSON built for it", n, e, err, *sent)
				}
			}

			// Queued with a payload and sent as it is: the payload stays.
			l := storedLead(t, s, a, now, "prepared@example.com")
			e := dueEvent(d, l, "prepared", now.Add(-time.Hour), now)
			e.Payload, e.PayloadStamp = `{"queued":true}`, 7
			enqueue(t, s, e)
			c, err = s.ClaimEvents(ctx, d.ID, at, time.Minute, 10, nil)
			if err != nil || len(c.Events) != 1 || c.Events[0].Attempts != 1 {
				t.Fatalf("claim = %+v, %v; want the prepared event, on its first attempt", c.Events, err)
			}
			if err := s.SettleEvents(ctx, c, sent, "trace", at, []store.Outcome{{ID: c.Events[0].ID, Status: models.EventSent}}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Event(ctx, a.ID, c.Events[0].ID); err != nil || got.Status != models.EventSent || got.Payload != `{"queued":true}` || got.Attempts != 1 {
				t.Errorf("prepared event after its send = %+v, %v; want sent with the payload it was queued with", got, err)
			}
		}
	})
}

// While a lead's earlier event is out (leased, or waiting to retry), a
// second claim, as a second batch in flight makes, does not take its
// later event.
func TestSecondClaimWaitsForLeadsEarlierEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		l := storedLead(t, s, a, now, "jane@example.com")
		queue := func(id, name string, at time.Time) {
			t.Helper()
			e := dueEvent(d, l, id, at, now)
			e.EventName = name
			enqueue(t, s, e)
		}
		queue("e1", "Lead", now.Add(-2*time.Hour))
		first, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(first.Events) != 1 {
			t.Fatalf("first claim = %+v, %v", first.Events, err)
		}
		queue("e2", "Schedule", now.Add(-time.Hour))
		if c, err := s.ClaimEvents(ctx, d.ID, now.Add(time.Second), time.Minute, 10, nil); err != nil || len(c.Events) != 0 {
			t.Errorf("claim while e1 is leased = %+v, %v; want nothing", c.Events, err)
		}
		retry := []store.Outcome{{ID: first.Events[0].ID, Status: models.EventQueued, Error: "HTTP 500", NextAttemptAt: now.Add(time.Hour)}}
		if err := s.SettleEvents(ctx, first, nil, "", now, retry); err != nil {
			t.Fatal(err)
		}
		if c, err := s.ClaimEvents(ctx, d.ID, now.Add(2*time.Second), time.Minute, 10, nil); err != nil || len(c.Events) != 0 {
			t.Errorf("claim while e1 waits to retry = %+v, %v; want nothing", c.Events, err)
		}
	})
}

// A claim whose lease ran out, and whose events another claim took, settles
// nothing: the newer claim decides, whether the batch was sent whole (one
// statement on Postgres) or not.
func TestSettleAfterTheLeaseRanOutChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		var evs []models.Event
		for _, id := range []string{"e1", "e2", "e3"} {
			evs = append(evs, dueEvent(d, storedLead(t, s, a, now, id+"@example.com"), id, now.Add(-time.Hour), now))
		}
		evs = enqueue(t, s, evs...)
		old, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, nil)
		if err != nil || len(old.Events) != 3 {
			t.Fatalf("first claim = %d, %v", len(old.Events), err)
		}
		later := now.Add(2 * time.Minute)
		current, err := s.ClaimEvents(ctx, d.ID, later, time.Minute, 10, nil)
		if err != nil || len(current.Events) != 3 {
			t.Fatalf("claim after the lease ran out = %d, %v", len(current.Events), err)
		}
		sent := func(c store.Claim, trace string, at time.Time, want error) {
			t.Helper()
			req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: at, Payload: `[]`}
			if err := s.InsertSendRequest(ctx, &req); err != nil {
				t.Fatal(err)
			}
			outs := make([]store.Outcome, len(c.Events))
			for i, e := range c.Events {
				outs[i] = store.Outcome{ID: e.ID, Status: models.EventSent}
			}
			if err := s.SettleEvents(ctx, c, &req.ID, trace, at, outs); !errors.Is(err, want) {
				t.Fatalf("SettleEvents = %v; want %v", err, want)
			}
		}
		// The old claim learns it lost its lease, and neither its settle nor
		// its release touches the events the newer claim holds.
		sent(old, "old-trace", later, store.ErrLeaseLost)
		if err := s.ReleaseEvents(ctx, old); err != nil {
			t.Fatal(err)
		}
		if again, err := s.ClaimEvents(ctx, d.ID, later, time.Minute, 10, nil); err != nil || len(again.Events) != 0 {
			t.Errorf("a claim after the old one's release = %d events, %v; want none: the newer claim holds them", len(again.Events), err)
		}
		for _, e := range evs {
			if got, _ := s.Event(ctx, a.ID, e.ID); got.Status == models.EventSent || got.FBTraceID != "" {
				t.Errorf("after the old claim settled: %s %s; want it left to the newer claim", got.Status, got.FBTraceID)
			}
		}
		sent(current, "new-trace", later, nil)
		for _, e := range evs {
			if got, _ := s.Event(ctx, a.ID, e.ID); got.Status != models.EventSent || got.FBTraceID != "new-trace" || got.Attempts != 1 {
				t.Errorf("after the newer claim settled: %s %s after %d attempts; want sent with new-trace after 1", got.Status, got.FBTraceID, got.Attempts)
			}
		}
		if depth, err := s.QueueDepth(ctx); err != nil || depth[models.EventQueued]+depth[models.EventSending] != 0 {
			t.Errorf("queue depth = %v, %v; want empty", depth, err)
		}
	})
}
