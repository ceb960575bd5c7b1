package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// noDrift fails the test when a counts table differs from its definition.
func noDrift(t *testing.T, s *store.Store, when string) {
	t.Helper()
	drift, err := s.CountsDrift(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Errorf("%s: %s", when, d)
	}
}

func TestCampaign(t *testing.T) {
	tests := []struct{ url, want string }{
		{"", ""},
		{"https://a.com/p", ""},
		{"https://a.com/p?utm_campaign=spring", "spring"},
		{"https://a.com/p?utm_source=fb&utm_campaign=spring%20sale&x=1", "spring%20sale"},
		{"https://a.com/p?xutm_campaign=no&utm_campaign=yes#frag", "yes"},
		{"https://a.com/p?utm_campaign=a#b&utm_campaign=c", "a"},
		{"https://a.com/p?utm_campaign=", ""},
	}
	for _, tt := range tests {
		if got := store.Campaign(tt.url); got != tt.want {
			t.Errorf("Campaign(%q) = %q; want %q", tt.url, got, tt.want)
		}
	}
	// The database's utm_campaign is the same function.
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, _ := twoAccounts(t, s)
		for _, tt := range tests {
			l := lead(a, time.Now().UTC(), "c@example.com")
			l.EventSourceURL = tt.url
			if err := s.InsertLead(t.Context(), &l); err != nil {
				t.Fatal(err)
			}
			n, err := s.CountLeads(t.Context(), a.ID, store.LeadFilter{Campaign: tt.want}, 100)
			if err != nil || tt.want != "" && n != 1 {
				t.Errorf("leads with campaign %q = %d, %v; want 1 (%q)", tt.want, n, err, tt.url)
			}
		}
	})
}

func TestJunkSignals(t *testing.T) {
	tests := []struct{ reasons, want string }{
		{"", ""}, {"[]", ""}, {"null", ""}, {`{"signal":"x"}`, ""},
		{`[{"signal":"too_fast","message":"Filled in 0.8 s"}]`, "too_fast"},
		{`[{"signal":"too_fast","message":"a"},{"signal":"honeypot","message":"b"}]`, "too_fast,honeypot"},
	}
	for _, tt := range tests {
		if got := store.JunkSignals(tt.reasons); got != tt.want {
			t.Errorf("JunkSignals(%q) = %q; want %q", tt.reasons, got, tt.want)
		}
	}
}

// Every way a lead, a stage change or an event is written keeps the counts
// equal to their definitions: capture, stage changes, the verdict, a
// partial lead completed (its capture time, URL and keys move its events
// and stage changes), and every status an event can settle in.
func TestCountsFollowEveryWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		db := newDataset(t, s, b, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Second)
		noDrift(t, s, "empty")

		var leads []models.Lead
		for i, email := range []string{"a@x.com", "b@x.com", "c@x.com", "d@x.com", "e@x.com"} {
			l := lead(a, now.Add(-time.Duration(i)*26*time.Hour), email)
			l.EventSourceURL = "https://x.com/?utm_campaign=c" + string(rune('0'+i%2))
			l.FBP = "fb.1.1.1"
			if i == 3 {
				l.Junk, l.JunkReasons = true, `[{"signal":"too_fast","message":"Filled in 0.8 s"},{"signal":"honeypot","message":"x"}]`
			}
			if i == 4 {
				l.Partial = true
			}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			leads = append(leads, l)
		}
		other := storedLead(t, s, b, now, "z@x.com")
		noDrift(t, s, "leads inserted")

		var evs []models.Event
		for i, l := range leads {
			evs = append(evs, dueEvent(d, l, "lead-"+l.Email, now.Add(-time.Duration(i)*time.Minute), now))
		}
		evs = append(evs, dueEvent(db, other, "other", now, now))
		stored := enqueue(t, s, evs...)
		noDrift(t, s, "events queued")

		c, err := s.ClaimEvents(ctx, d.ID, now, time.Minute, 10, false)
		if err != nil || len(c.Events) != 5 {
			t.Fatalf("claim = %d, %v; want 5", len(c.Events), err)
		}
		noDrift(t, s, "events claimed")
		req := models.SendRequest{AccountID: a.ID, DatasetID: d.ID, Kind: "batch", StartedAt: now, Payload: `[]`}
		if err := s.InsertSendRequest(ctx, &req); err != nil {
			t.Fatal(err)
		}
		outs := []store.Outcome{
			{ID: stored[0].ID, Status: models.EventSent},
			{ID: stored[1].ID, Status: models.EventFailed, Error: "refused"},
			{ID: stored[2].ID, Status: models.EventExpired, Error: "too old"},
			{ID: stored[3].ID, Status: models.EventQueued, Error: "HTTP 500", NextAttemptAt: now.Add(time.Hour)},
			{ID: stored[4].ID, Status: models.EventDryRun, Payload: `{}`},
		}
		if err := s.SettleEvents(ctx, c, &req.ID, "trace", now, outs); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "events settled")

		for _, st := range []string{models.StageQualified, models.StageWon, models.StageJunk} {
			if _, err := s.AddStageChange(ctx, &models.StageChange{AccountID: a.ID, LeadID: leads[0].ID, Stage: st,
				OccurredAt: now.Add(3 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		noDrift(t, s, "stage changes")

		// The partial lead completed: a new capture time, URL and keys.
		l := leads[4]
		l.Partial, l.CreatedAt = false, now.Add(-time.Hour)
		l.EventSourceURL, l.EmailHash, l.FBC = "https://x.com/?utm_campaign=late", "", "fb.1.2.3"
		if err := s.SaveLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		l = leads[0]
		l.CreatedAt, l.Source = now.Add(-2*time.Hour), models.SourceInstantForm
		if err := s.SaveLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		noDrift(t, s, "leads completed")
	})
}
