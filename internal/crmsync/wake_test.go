package crmsync_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// genericChange is a generic connection's stage change to won of the lead
// with the email.
func genericChange(t *testing.T, email string, at time.Time) crm.Change {
	t.Helper()
	body := fmt.Sprintf(`{"email":%q,"stage":"won","occurred_at":%d,"change_id":%q}`, email, at.Unix(), "change-"+email)
	changes, _, err := crm.Parse(crm.Generic, []byte(body), nil)
	if err != nil || len(changes) != 1 {
		t.Fatalf("Parse = %v, %v", changes, err)
	}
	return changes[0]
}

// newConnection is a new account of s and a CRM connection of the kind
// to it.
func newConnection(t *testing.T, s *store.Store, kind crm.Kind) (models.Account, models.CRMConnection) {
	t.Helper()
	acc, err := s.CreateAccount(t.Context(), models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := models.CRMConnection{AccountID: acc.ID, Kind: string(kind), Name: "Zap", Token: store.NewCRMToken()}
	if err := s.CreateCRMConnection(t.Context(), &c); err != nil {
		t.Fatal(err)
	}
	return acc, c
}

// A new lead wakes the delivery that waits for it, found by its email's
// hash, and not the deliveries that wait for other leads: they keep their
// backoff.
func TestNewLeadWakesOnlyItsDelivery(t *testing.T) {
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
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Generic), Name: "Zap", Token: store.NewCRMToken()}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		in := crmsync.NewInbox(s, nil)
		emails := []string{"ada@example.com", "grace@example.com", "linus@example.com"}
		for _, e := range emails {
			if _, err := in.Add(c, []crm.Change{genericChange(t, e, now.Add(-time.Hour))}, now); err != nil {
				t.Fatal(err)
			}
		}
		clock := now
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, Now: func() time.Time { return clock }})
		if n, err := w.Drain(ctx); err != nil || n != 3 {
			t.Fatalf("drain = %d, %v; want 3 tried", n, err)
		}
		clock = now.Add(10 * time.Second)
		if n, err := w.WakeForLeads(ctx); err != nil || n != 0 {
			t.Fatalf("wake without a new lead = %d, %v; want 0", n, err)
		}
		keys := normalize.Normalize(normalize.Input{Email: "Grace@Example.com"})
		l := models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, Email: "grace@example.com", EmailHash: keys.Email.Hash,
			CreatedAt: clock, ReceivedAt: clock, UpdatedAt: clock, Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
		if err := s.InsertLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		if n, err := w.WakeForLeads(ctx); err != nil || n != 1 {
			t.Fatalf("wake after grace's lead = %d, %v; want her delivery alone", n, err)
		}
		if n, err := w.Drain(ctx); err != nil || n != 1 {
			t.Fatalf("drain = %d, %v; want her delivery alone tried", n, err)
		}
		ds, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			grace := d.Key == genericChange(t, "grace@example.com", now.Add(-time.Hour)).Key
			switch {
			case grace && (d.Status != models.DeliveryDone || d.LeadID == nil || *d.LeadID != l.ID):
				t.Errorf("grace's delivery: %s %q; want done for her lead", d.Status, d.Reason)
			case !grace && (d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingLead || d.Attempts != 1 ||
				!d.NextTryAt.Equal(now.Add(crmsync.Backoff(models.WaitingLead, 1)))):
				t.Errorf("delivery %s: %s/%s, %d tries, due %s; want still waiting for its lead, tried once, its backoff kept",
					d.Key, d.Status, d.WaitingFor, d.Attempts, d.NextTryAt)
			}
		}
	})
}

// A lead whose id was taken before a higher one but that commits after it
// (captures reserve their ids first) still wakes its delivery: the look
// that saw the higher id notes the lower one missing and takes it in when
// it is there.
func TestLeadCommittedLateWakesItsDelivery(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, c := newConnection(t, s, crm.Generic)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if _, err := crmsync.NewInbox(s, nil).Add(c, []crm.Change{genericChange(t, "grace@example.com", now)}, now); err != nil {
			t.Fatal(err)
		}
		clock := now
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Now: func() time.Time { return clock }})
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		last, err := s.LastLeadID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lead := func(id int64, email string) {
			t.Helper()
			l := models.Lead{ID: id, AccountID: acc.ID, Source: models.SourceWebsite, Email: email,
				EmailHash: normalize.Normalize(normalize.Input{Email: email}).Email.Hash,
				CreatedAt: clock, ReceivedAt: clock, UpdatedAt: clock, Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
		}
		clock = clock.Add(2 * time.Second)
		lead(last+2, "someone@example.com") // committed first
		if n, err := w.WakeForLeads(ctx); err != nil || n != 0 {
			t.Fatalf("wake after another lead = %d, %v; want 0", n, err)
		}
		clock = clock.Add(2 * time.Second)
		lead(last+1, "grace@example.com") // its id taken first, committed after
		if n, err := w.WakeForLeads(ctx); err != nil || n != 1 {
			t.Fatalf("wake after grace's late lead = %d, %v; want her delivery", n, err)
		}
		if n, err := w.WakeForLeads(ctx); err != nil || n != 0 {
			t.Errorf("a look without new leads woke %d; want 0", n)
		}
	})
}

// A HubSpot delivery carries no lead key: the keys of the contacts the
// CRM's API gave when it was tried are recorded, and a new lead with the
// contact's phone wakes it.
func TestNewLeadWakesHubSpotDeliveryByItsContactsKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD", DefaultCountry: "US"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		box, err := seal.New(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		fake := crmtest.NewHubSpot(t, "token")
		fake.AddDeal("7", "closedwon", "1200", "EUR", "c1")
		fake.AddContact("c1", "", "+1 (415) 555-0100", nil)
		c := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.HubSpot), Name: "Sales", Token: store.NewCRMToken()}
		c.APITokenSealed = box.Seal("token", crm.APITokenLabel(c.Token))
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.MapCRMStages(ctx, acc.ID, c.ID, map[string]string{"closedwon": "won"}, now); err != nil {
			t.Fatal(err)
		}
		changes, _, err := crm.Parse(crm.HubSpot, crmtest.HubSpotDealStage(1, "7", "closedwon", now), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crmsync.NewInbox(s, nil).Add(c, changes, now); err != nil {
			t.Fatal(err)
		}
		clock := now
		w := crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, HubSpotAPIURL: fake.URL(),
			Now: func() time.Time { return clock }})
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		clock = now.Add(5 * time.Second)
		phone := normalize.Normalize(normalize.Input{Phone: "415-555-0100", DefaultCountry: "US"}).Phone.Hash
		l := models.Lead{AccountID: acc.ID, Source: models.SourceWebsite, Phone: "415-555-0100", PhoneHash: phone,
			CreatedAt: clock, ReceivedAt: clock, UpdatedAt: clock, Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
		if err := s.InsertLead(ctx, &l); err != nil {
			t.Fatal(err)
		}
		if n, err := w.WakeForLeads(ctx); err != nil || n != 1 {
			t.Fatalf("wake after the contact's lead = %d, %v; want the HubSpot delivery", n, err)
		}
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		ds, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 10)
		if err != nil || len(ds) != 1 || ds[0].Status != models.DeliveryDone || ds[0].LeadID == nil || *ds[0].LeadID != l.ID {
			t.Fatalf("deliveries = %+v, %v; want the one done for the lead", ds, err)
		}
	})
}
