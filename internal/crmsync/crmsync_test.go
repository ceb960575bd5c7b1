package crmsync_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A round that has spent its look-up budget leaves the CRM deliveries it
// has not looked up to the next round, untried, rather than hold them past
// their lease.
func TestRoundLeavesLookUpsPastItsBudget(t *testing.T) {
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
		fake := crmtest.NewHubSpot(t, "token")
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.HubSpot), Name: "Sales", Token: store.NewCRMToken()}
		c.APITokenSealed = box.Seal("token", crm.APITokenLabel(c.Token))
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.MapCRMStages(ctx, acc.ID, c.ID, map[string]string{"closedwon": "won"}, now); err != nil {
			t.Fatal(err)
		}
		var ds []models.CRMDelivery
		for i, deal := range []string{"1", "2", "3"} {
			body := crmtest.HubSpotDealStage(1, deal, "closedwon", now.Add(-time.Duration(i)*time.Minute))
			changes, _, err := crm.Parse(crm.HubSpot, body, nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := changes[0]
			ds = append(ds, models.CRMDelivery{AccountID: acc.ID, ConnectionID: c.ID, Key: ch.Key, Body: string(ch.Body),
				ReceivedAt: now, ObjectID: ch.ObjectID, CRMStageID: ch.StageID, OccurredAt: ch.OccurredAt})
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, HubSpotAPIURL: fake.URL(),
			Now: func() time.Time { return now }, LookUpBudget: -1})
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if fake.Calls() != 0 {
			t.Errorf("HubSpot called %d times past the budget; want 0", fake.Calls())
		}
		got, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			if d.Status != models.DeliveryWaiting || d.Attempts != 0 || d.TriedAt != nil || d.WaitingFor != "" || !d.NextTryAt.Equal(now) {
				t.Errorf("delivery %s: %s/%q attempts %d tried %v next %v; want untried and due again", d.ObjectID, d.Status, d.WaitingFor,
					d.Attempts, d.TriedAt, d.NextTryAt)
			}
		}
	})
}
