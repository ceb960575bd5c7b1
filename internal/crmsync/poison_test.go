package crmsync_test

import (
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

// A delivery whose lead key holds a NUL character (Postgres keeps none in
// text) matches no lead and waits with its reason; it does not fail the
// look-up, or the writing of the outcomes, of the account's other
// deliveries taken with it.
func TestNULInALeadKeyHoldsUpNoOtherDelivery(t *testing.T) {
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
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Generic), Name: "Zap", Token: store.NewCRMToken()}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		var ds []models.CRMDelivery
		for _, body := range []string{
			`{"external_id":"bad\u0000id","email":"x\u0000@example.com","stage":"qualified","change_id":"c-1"}`,
			`{"external_id":"form-1","stage":"qualified","change_id":"c-2"}`,
		} {
			changes, _, err := crm.Parse(crm.Generic, []byte(body), nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := changes[0]
			ds = append(ds, models.CRMDelivery{AccountID: acc.ID, ConnectionID: c.ID, Key: ch.Key, Body: string(ch.Body),
				ReceivedAt: now, CRMStageID: ch.StageID, OccurredAt: now})
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, Now: func() time.Time { return now }})
		if _, err := w.Drain(ctx); err != nil {
			t.Fatalf("drain: %v", err)
		}
		got, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			switch d.Key {
			case "change:c-1":
				if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingLead || d.Attempts != 1 {
					t.Errorf("the NUL one: %s/%s attempts %d %q; want waiting for its lead, tried once", d.Status, d.WaitingFor, d.Attempts, d.Reason)
				}
			case "change:c-2":
				if d.Status != models.DeliveryDone || d.LeadID == nil || *d.LeadID != l.ID {
					t.Errorf("the other: %s %q lead %v; want done on lead %d", d.Status, d.Reason, d.LeadID, l.ID)
				}
			}
		}
	})
}
