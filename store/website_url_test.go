package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Saving a Website URL fills in event_source_url for the account's website
// leads that have none and an event still unsent, and for no other lead.
func TestWebsiteURLFillsLeadsWaitingForIt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		da, db := newDataset(t, s, a, models.ModeLive), newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC()
		withEvent := func(acc models.Account, d models.Dataset, email string, edit func(*models.Lead)) models.Lead {
			t.Helper()
			l := lead(acc, now, email)
			if edit != nil {
				edit(&l)
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			e := dueEvent(d, l, "e-"+email, now, now)
			e.Status, e.LastError = models.EventFailed, "not sent: event_source_url: required for website events"
			enqueue(t, s, e)
			return l
		}
		waiting := withEvent(a, da, "waiting@example.com", nil)
		queued := storedLead(t, s, a, now, "queued@example.com")
		enqueue(t, s, dueEvent(da, queued, "e-queued", now, now))
		own := withEvent(a, da, "own@example.com", func(l *models.Lead) { l.EventSourceURL = "https://own.example/" })
		crm := withEvent(a, da, "crm@example.com", func(l *models.Lead) { l.Source = models.SourceCRM })
		none := storedLead(t, s, a, now, "none@example.com")
		other := withEvent(b, db, "other@example.com", nil)
		sent := storedLead(t, s, a, now, "sent@example.com")
		enqueue(t, s, dueEvent(da, sent, "e-sent", now, now))
		c, err := s.ClaimEvents(ctx, da.ID, now, time.Minute, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var outs []store.Outcome
		for _, e := range c.Events {
			st := models.EventQueued
			if e.LeadID == sent.ID {
				st = models.EventSent
			}
			outs = append(outs, store.Outcome{ID: e.ID, Status: st, Untried: true})
		}
		if err := s.SettleEvents(ctx, c, nil, "", now, outs); err != nil {
			t.Fatal(err)
		}

		// No Website URL: nothing is filled.
		a.WebsiteURL = ""
		if _, err := s.UpdateAccountSettings(ctx, a); err != nil {
			t.Fatal(err)
		}
		if l, _ := s.Lead(ctx, a.ID, waiting.ID); l.EventSourceURL != "" {
			t.Fatalf("without a Website URL, the lead got %q", l.EventSourceURL)
		}

		a.WebsiteURL = "https://acme.example/contact"
		saved, err := s.UpdateAccountSettings(ctx, a)
		if err != nil || saved.WebsiteURL != a.WebsiteURL {
			t.Fatalf("UpdateAccountSettings = %+v, %v; want the Website URL saved", saved, err)
		}
		for _, tt := range []struct {
			name string
			l    models.Lead
			want string
		}{
			{"held back for it", waiting, a.WebsiteURL},
			{"queued", queued, a.WebsiteURL},
			{"own URL", own, "https://own.example/"},
			{"crm", crm, ""},
			{"no event", none, ""},
			{"sent", sent, ""},
			{"other account", other, ""},
		} {
			got, err := s.Lead(ctx, tt.l.AccountID, tt.l.ID)
			if err != nil || got.EventSourceURL != tt.want {
				t.Errorf("%s: event_source_url = %q, %v; want %q", tt.name, got.EventSourceURL, err, tt.want)
			}
		}
	})
}

// An event held back when it is queued (failed, with its reason and JSON)
// is stored that way by both insert paths: unsent, never claimed, counted
// as failed, and queued again by a retry.
func TestHeldBackEventsAreStoredFailed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC()
		const reason = "not sent: event_source_url: required for website events"
		held := func(e models.Event) models.Event {
			e.Status, e.LastError, e.Payload = models.EventFailed, reason, `{"event_name":"Lead"}`
			return e
		}
		one := storedLead(t, s, a, now, "one@example.com")
		enqueue(t, s, held(dueEvent(d, one, "e-one", now, now)))

		_, ids, err := s.LookupCapture(ctx, []store.CaptureQuery{{AccountID: a.ID}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		batched := lead(a, now, "batch@example.com")
		batched.ID = ids[0]
		if err := s.SaveCaptured(ctx, store.Captured{New: []models.Lead{batched},
			Events: []models.Event{held(dueEvent(d, batched, "e-batch", now, now))}}); err != nil {
			t.Fatal(err)
		}

		for _, l := range []models.Lead{one, batched} {
			evs, err := s.LeadEvents(ctx, a.ID, l.ID)
			if err != nil || len(evs) != 1 || evs[0].Status != models.EventFailed || evs[0].LastError != reason ||
				evs[0].Payload != `{"event_name":"Lead"}` || evs[0].Attempts != 0 {
				t.Errorf("%s: events %+v, %v; want one failed with the reason and the JSON, no attempt made", l.Email, evs, err)
			}
		}
		if c, err := s.ClaimEvents(ctx, d.ID, now.Add(time.Minute), time.Minute, 10, nil); err != nil || len(c.Events) != 0 {
			t.Errorf("claim = %+v, %v; want nothing", c.Events, err)
		}
		if counts, err := s.EventCounts(ctx, a.ID, store.EventFilter{}, 1000); err != nil || counts[models.EventHeldBack] != 2 {
			t.Errorf("counts = %v, %v; want 2 held back", counts, err)
		}
		if n, err := s.RetryEvents(ctx, a.ID, nil, now); err != nil || n != 2 {
			t.Errorf("retry = %d, %v; want 2", n, err)
		}
		if c, err := s.ClaimEvents(ctx, d.ID, now.Add(time.Minute), time.Minute, 10, nil); err != nil || len(c.Events) != 2 {
			t.Errorf("claim after the retry = %d events, %v; want 2", len(c.Events), err)
		}
	})
}
