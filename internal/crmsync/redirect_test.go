package crmsync_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
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

// The worker's look-ups never follow a redirect: the CRM API token travels
// in a header (Pipedrive's x-api-token is not one Go drops on another
// host), and would go wherever the redirect points.
func TestLookUpsFollowNoRedirect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		var leaked atomic.Value
		elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			leaked.Store(r.Header.Get("x-api-token"))
			w.WriteHeader(http.StatusNotFound)
		}))
		defer elsewhere.Close()
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		defer api.Close()

		acc, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		box, err := seal.New(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Pipedrive), Name: "Deals", Token: store.NewCRMToken()}
		c.APITokenSealed = box.Seal("pd-token", crm.APITokenLabel(c.Token))
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.MapCRMStages(ctx, acc.ID, c.ID, map[string]string{"3": "won"}, now); err != nil {
			t.Fatal(err)
		}
		changes, _, err := crm.Parse(crm.Pipedrive, crmtest.PipedriveV2StageChange(8, 3, 2, 5, 100, "EUR", now, "e-1"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ch := changes[0]
		if _, err := s.AddCRMDeliveries(ctx, []models.CRMDelivery{{AccountID: acc.ID, ConnectionID: c.ID, Key: ch.Key, Body: string(ch.Body),
			ReceivedAt: now, ObjectID: ch.ObjectID, CRMStageID: ch.StageID, OccurredAt: ch.OccurredAt}}); err != nil {
			t.Fatal(err)
		}
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, PipedriveAPIURL: api.URL,
			Now: func() time.Time { return now }})
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := leaked.Load().(string); got != "" {
			t.Errorf("the API token went to the redirect's host: %q", got)
		}
	})
}
