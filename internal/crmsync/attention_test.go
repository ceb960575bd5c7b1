package crmsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A delivery whose body cannot become a stage change waits as needing
// attention, with why, read again daily; saving the connection (a fixed
// field mapping) reads it again at once, and it goes through.
func TestDeliveryNeedingAttentionWaitsForAPerson(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		box, err := seal.New(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		ext := "form-1"
		l := models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, ExternalID: &ext, CreatedAt: now.Add(-time.Hour),
			ReceivedAt: now.Add(-time.Hour), Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
		if err := s.InsertLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Generic), Name: "Zap", Token: store.NewCRMToken(),
			Fields: `{"stage":"deal.stage"}`}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		// The sender nests the lead's key where the mapping does not look.
		changes, _, err := crm.Parse(crm.Generic, []byte(`{"form":{"id":"form-1"},"deal":{"stage":"qualified"}}`), nil)
		if err != nil || len(changes) != 1 || changes[0].Problem == "" {
			t.Fatalf("Parse = %+v, %v; want one change needing attention", changes, err)
		}
		inbox := crmsync.NewInbox(s, nil)
		if n, err := inbox.Add(c, changes, now); err != nil || n != 1 {
			t.Fatalf("inbox.Add = %d, %v; want 1 stored", n, err)
		}
		clock := now
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, Now: func() time.Time { return clock }})
		drain := func() models.CRMDelivery {
			t.Helper()
			if _, err := w.Drain(ctx); err != nil {
				t.Fatalf("drain: %v", err)
			}
			ds, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
			if err != nil || len(ds) != 1 {
				t.Fatalf("deliveries = %+v, %v; want 1", ds, err)
			}
			return ds[0]
		}
		d := drain()
		if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingAttention || !strings.Contains(d.Reason, "no lead key") ||
			!d.NextTryAt.Equal(now.Add(24*time.Hour)) {
			t.Fatalf("delivery = %s/%s %q next %v; want needing attention (no lead key), read again in a day", d.Status, d.WaitingFor, d.Reason, d.NextTryAt)
		}
		clock = now.Add(25 * time.Hour)
		if d = drain(); d.WaitingFor != models.WaitingAttention || d.Attempts != 2 {
			t.Fatalf("a day later: %s/%s attempts %d; want read again, still needing attention", d.Status, d.WaitingFor, d.Attempts)
		}
		c.Fields = `{"stage":"deal.stage","external_id":"form.id"}`
		if err := s.SaveCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if d = drain(); d.Status != models.DeliveryDone || d.LeadID == nil || *d.LeadID != l.ID || d.Stage != models.StageQualified {
			t.Fatalf("after the mapping is fixed: %s/%s %q; want done as qualified on the lead", d.Status, d.WaitingFor, d.Reason)
		}
	})
}
