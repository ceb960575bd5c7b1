package store_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// waitingForLead stores n deliveries of c and finishes them as the worker
// does when their lead is not found, each with keys(i) as its lookup keys.
func waitingForLead(t *testing.T, s *store.Store, c models.CRMConnection, now time.Time, n int, keys func(i int) []store.LeadKey) []models.CRMDelivery {
	t.Helper()
	ctx := t.Context()
	ds := make([]models.CRMDelivery, n)
	for i := range ds {
		ds[i] = models.CRMDelivery{AccountID: c.AccountID, ConnectionID: c.ID, Key: fmt.Sprintf("k%d-%d", c.ID, i), Body: "{}",
			ReceivedAt: now, OccurredAt: now, CRMStageID: "won"}
	}
	if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimCRMDeliveries(ctx, now, n)
	if err != nil || len(claimed) != n {
		t.Fatalf("claimed %d, %v; want %d", len(claimed), err, n)
	}
	byID := map[int64][]store.LeadKey{}
	for i := range claimed {
		claimed[i].Status, claimed[i].WaitingFor, claimed[i].Attempts = models.DeliveryWaiting, models.WaitingLead, 1
		claimed[i].TriedAt, claimed[i].NextTryAt = &now, now.Add(30*time.Minute)
		for j := range ds {
			if ds[j].ID == claimed[i].ID {
				byID[claimed[i].ID] = keys(j)
			}
		}
	}
	if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCRMDeliveryKeys(ctx, claimed, byID, now); err != nil {
		t.Fatal(err)
	}
	return ds
}

func delivery(t *testing.T, s *store.Store, accountID, id int64) models.CRMDelivery {
	t.Helper()
	d, err := s.CRMDelivery(t.Context(), accountID, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A new lead wakes only the deliveries that wait for a lead of its keys,
// whichever key (lead id, external id, Meta lead id, email or phone hash)
// names it, and only in its account; the others stay as they were.
func TestWakeCRMDeliveriesByKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		last, err := s.LastLeadID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nextID := strconv.FormatInt(last+1, 10) // the id the next lead takes
		keys := [][]store.LeadKey{
			{{Field: "email", Value: "h-ada@example.com"}},
			{{Field: "phone", Value: "h-phone-1"}},
			{{Field: "external_id", Value: "form-1"}},
			{{Field: "meta_lead_id", Value: "meta-1"}},
			{{Field: "id", Value: nextID}},
			{{Field: "email", Value: "h-nobody@example.com"}},
		}
		ds := waitingForLead(t, s, c, now, len(keys), func(i int) []store.LeadKey { return keys[i] })
		later := now.Add(time.Minute)
		wake := func() int {
			t.Helper()
			upTo, err := s.LastLeadID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := s.NewLeadIDs(ctx, last, upTo, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.WakeCRMDeliveriesForLeads(ctx, ids, later)
			if err != nil {
				t.Fatal(err)
			}
			last = upTo
			return n
		}
		// Lead ids are the database's: another account's lead takes the
		// next id, and wakes nothing of this one.
		other := lead(b, now, "ada@example.com")
		other.PhoneHash, other.ExternalID, other.MetaLeadID = "h-phone-1", strp("form-1"), "meta-1"
		if err := s.InsertLead(ctx, &other); err != nil {
			t.Fatal(err)
		}
		if strconv.FormatInt(other.ID, 10) != nextID {
			t.Fatalf("the other account's lead took id %d; want %s", other.ID, nextID)
		}
		if n := wake(); n != 0 {
			t.Fatalf("another account's lead of the same keys woke %d", n)
		}
		// The id key named another account's lead: it stays waiting.
		for i, mk := range []func(l *models.Lead){
			func(l *models.Lead) { l.EmailHash = "h-ada@example.com" },
			func(l *models.Lead) { l.PhoneHash = "h-phone-1" },
			func(l *models.Lead) { l.ExternalID = strp("form-1") },
			func(l *models.Lead) { l.MetaLeadID = "meta-1" },
		} {
			l := lead(a, now, "")
			l.EmailHash = ""
			mk(&l)
			if err := s.InsertLead(ctx, &l); err != nil {
				t.Fatal(err)
			}
			if n := wake(); n != 1 {
				t.Errorf("lead %d woke %d; want its one delivery", i, n)
			}
			if d := delivery(t, s, a.ID, ds[i].ID); !d.NextTryAt.Equal(later) {
				t.Errorf("delivery %d due %s; want %s", i, d.NextTryAt, later)
			}
		}
		for _, i := range []int{4, 5} {
			if d := delivery(t, s, a.ID, ds[i].ID); !d.NextTryAt.Equal(now.Add(30 * time.Minute)) {
				t.Errorf("delivery %d due %s; want its backoff kept", i, d.NextTryAt)
			}
		}
		// Each look takes the leads since the last: none, nothing woken.
		if n := wake(); n != 0 {
			t.Errorf("a look without new leads woke %d", n)
		}
	})
}

// Keys written after their lead was captured (the worker read no lead,
// the lead committed, then the worker wrote the keys) make the delivery
// due at once: the lead's look found no keys, and would never come again.
// A delivery done keeps no keys.
func TestCRMDeliveryKeysCrossingALead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		storedLead(t, s, a, now, "grace@example.com")
		ds := []models.CRMDelivery{{AccountID: a.ID, ConnectionID: c.ID, Key: "g", Body: "{}", ReceivedAt: now, OccurredAt: now},
			{AccountID: a.ID, ConnectionID: c.ID, Key: "h", Body: "{}", ReceivedAt: now, OccurredAt: now}}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		claimed, err := s.ClaimCRMDeliveries(ctx, now, 2)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		for i := range claimed {
			claimed[i].Status, claimed[i].WaitingFor, claimed[i].NextTryAt = models.DeliveryWaiting, models.WaitingLead, now.Add(time.Hour)
		}
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		keys := map[int64][]store.LeadKey{
			claimed[0].ID: {{Field: "email", Value: "h-grace@example.com"}},
			claimed[1].ID: {{Field: "email", Value: "h-nobody@example.com"}},
		}
		n, err := s.SetCRMDeliveryKeys(ctx, claimed, keys, now)
		if err != nil || n != 1 {
			t.Fatalf("set keys = %d, %v; want grace's delivery due", n, err)
		}
		if d := delivery(t, s, a.ID, claimed[0].ID); !d.NextTryAt.Equal(now) {
			t.Errorf("grace's delivery due %s; want now", d.NextTryAt)
		}
		// Done, it keeps no keys: her next lead wakes nothing.
		claimed, err = s.ClaimCRMDeliveries(ctx, now, 2)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		claimed[0].Status, claimed[0].WaitingFor = models.DeliveryDone, ""
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetCRMDeliveryKeys(ctx, claimed, keys, now); err != nil {
			t.Fatal(err)
		}
		again := storedLead(t, s, a, now, "grace@example.com")
		if n, err := s.WakeCRMDeliveriesForLeads(ctx, []int64{again.ID}, now.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("wake = %d, %v; want nothing for a delivery done", n, err)
		}
	})
}

// The waiting room counts a connection's waiting deliveries up to the
// bound, not its others or another connection's.
func TestCRMWaitingRoom(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		other := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Other"}
		for _, conn := range []*models.CRMConnection{&c, &other} {
			if err := s.CreateCRMConnection(ctx, conn); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		waitingForLead(t, s, c, now, 5, func(int) []store.LeadKey { return nil })
		waitingForLead(t, s, other, now, 3, func(int) []store.LeadKey { return nil })
		for _, tc := range []struct{ limit, want int }{{10, 5}, {5, 0}, {3, 0}} {
			if got, err := s.CRMWaitingRoom(ctx, c.ID, tc.limit); err != nil || got != tc.want {
				t.Errorf("room of %d = %d, %v; want %d", tc.limit, got, err, tc.want)
			}
		}
		claimed, err := s.ClaimCRMDeliveries(ctx, now.Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		for i := range claimed {
			claimed[i].Status = models.DeliveryDone
		}
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		if got, err := s.CRMWaitingRoom(ctx, c.ID, 10); err != nil || got != 10 {
			t.Errorf("room once all are done = %d, %v; want 10", got, err)
		}
	})
}

// NewLeadIDs lists the leads of an id range and the pending ids that
// exist now, in order; ids without a lead are left out.
func TestNewLeadIDs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		first := storedLead(t, s, a, now, "a@example.com")
		second := storedLead(t, s, b, now, "b@example.com")
		third := storedLead(t, s, a, now, "c@example.com")
		ids, err := s.NewLeadIDs(ctx, first.ID, third.ID, []int64{first.ID, third.ID + 100})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{first.ID, second.ID, third.ID}; !slices.Equal(ids, want) {
			t.Errorf("NewLeadIDs = %v; want %v (the range's, every account's, and the pending one there)", ids, want)
		}
	})
}
