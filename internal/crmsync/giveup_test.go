package crmsync_test

import (
	"strings"
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

// A HubSpot delivery whose lead cannot be found because its deal has no
// contact, or its deal is gone, is given up 7 days after it came, as one
// whose contact matches no lead is: it does not wait forever.
func TestLeadNeverFoundIsGivenUpAfterSevenDays(t *testing.T) {
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
		fake.AddDeal("1", "closedwon", "", "") // no contact
		// deal 2 is not there (deleted in HubSpot)
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.HubSpot), Name: "Sales", Token: store.NewCRMToken()}
		c.APITokenSealed = box.Seal("token", crm.APITokenLabel(c.Token))
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		received := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.MapCRMStages(ctx, acc.ID, c.ID, map[string]string{"closedwon": "won"}, received); err != nil {
			t.Fatal(err)
		}
		var ds []models.CRMDelivery
		for _, deal := range []string{"1", "2"} {
			changes, _, err := crm.Parse(crm.HubSpot, crmtest.HubSpotDealStage(1, deal, "closedwon", received), nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := changes[0]
			ds = append(ds, models.CRMDelivery{AccountID: acc.ID, ConnectionID: c.ID, Key: ch.Key, Body: string(ch.Body),
				ReceivedAt: received, ObjectID: ch.ObjectID, CRMStageID: ch.StageID, OccurredAt: ch.OccurredAt})
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			at   time.Time
			want models.DeliveryStatus
		}{
			{received, models.DeliveryWaiting},
			{received.Add(8 * 24 * time.Hour), models.DeliveryGaveUp},
		} {
			w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, HubSpotAPIURL: fake.URL(),
				Now: func() time.Time { return tc.at }})
			if _, err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range got {
				if d.Status != tc.want || d.Reason == "" {
					t.Errorf("%v after: deal %s is %s (%q); want %s with its reason", tc.at.Sub(received), d.ObjectID, d.Status, d.Reason, tc.want)
				}
				if tc.want == models.DeliveryGaveUp && !strings.Contains(d.Reason, "7 days") {
					t.Errorf("deal %s given up with %q; want it to say 7 days", d.ObjectID, d.Reason)
				}
			}
		}
	})
}
