package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A connection is known by kind and name within its account, finds by its
// token, and is another account's 404.
func TestCRMConnections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "hubspot", Name: "Sales"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Token) < 40 || c.ID == 0 {
			t.Fatalf("created %+v; want an id and a long token", c)
		}
		dup := models.CRMConnection{AccountID: a.ID, Kind: "hubspot", Name: "SALES"}
		if err := s.CreateCRMConnection(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same kind and name: err = %v; want ErrConflict", err)
		}
		other := models.CRMConnection{AccountID: a.ID, Kind: "pipedrive", Name: "Sales"}
		if err := s.CreateCRMConnection(ctx, &other); err != nil {
			t.Errorf("another kind, same name: %v", err)
		}
		got, err := s.CRMConnectionByToken(ctx, "hubspot", c.Token)
		if err != nil || got.ID != c.ID {
			t.Errorf("by token = %+v, %v; want connection %d", got, err, c.ID)
		}
		if _, err := s.CRMConnectionByToken(ctx, "pipedrive", c.Token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("token under another kind: err = %v; want ErrNotFound", err)
		}
		if _, err := s.CRMConnection(ctx, b.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's: err = %v; want ErrNotFound", err)
		}
		c.Name, c.SecretSealed = "Sales EU", "sealed"
		token := c.Token
		c.Token = "changed"
		if err := s.SaveCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.CRMConnection(ctx, a.ID, c.ID); got.Name != "Sales EU" || got.Token != token || got.SecretSealed != "sealed" {
			t.Errorf("saved = %+v; want the new name and secret, the token kept", got)
		}
		c.AccountID = b.ID
		if err := s.SaveCRMConnection(ctx, &c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("save as another account: err = %v; want ErrNotFound", err)
		}
		if err := s.DeleteCRMConnection(ctx, b.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete as another account: err = %v; want ErrNotFound", err)
		}
		if err := s.DeleteCRMConnection(ctx, a.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CRMConnectionByToken(ctx, "hubspot", token); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted connection by token: err = %v; want ErrNotFound", err)
		}
	})
}

// The stage table keeps a mapping when the pipelines are listed again, and
// a stage seen in a delivery is added unmapped.
func TestCRMStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "hubspot", Name: "Sales"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if err := s.MapCRMStages(ctx, a.ID, c.ID, map[string]string{"closedwon": "won"}, now); err != nil {
			t.Fatal(err)
		}
		listed := []models.CRMStage{
			{CRMStageID: "appointmentscheduled", Label: "Appointment scheduled", Pipeline: "Sales", Position: 0},
			{CRMStageID: "closedwon", Label: "Closed won", Pipeline: "Sales", Position: 6},
		}
		if err := s.ListCRMStages(ctx, a.ID, c.ID, listed); err != nil {
			t.Fatal(err)
		}
		if err := s.SeeCRMStage(ctx, a.ID, c.ID, "12345", now); err != nil {
			t.Fatal(err)
		}
		ss, err := s.CRMStages(ctx, a.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 3 || ss[0].CRMStageID != "appointmentscheduled" || ss[1].Stage != "won" || ss[1].Label != "Closed won" ||
			ss[2].CRMStageID != "12345" || ss[2].SeenAt == nil || ss[2].Stage != "" {
			t.Errorf("stages = %+v; want the two listed (closedwon still won) and the seen one last", ss)
		}
	})
}

// A delivery is stored once per key; a claim leases it; finishing writes
// its outcome; a lead captured after a try wakes the deliveries waiting
// for a lead.
func TestCRMDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "pipedrive", Name: "Deals"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		d := func(key string) models.CRMDelivery {
			return models.CRMDelivery{AccountID: a.ID, ConnectionID: c.ID, Key: key, Body: `{"k":"` + key + `"}`,
				ReceivedAt: now, OccurredAt: now.Add(-time.Minute), CRMStageID: "3"}
		}
		n, err := s.AddCRMDeliveries(ctx, []models.CRMDelivery{d("a"), d("b")})
		if err != nil || n != 2 {
			t.Fatalf("add = %d, %v; want 2", n, err)
		}
		if n, err := s.AddCRMDeliveries(ctx, []models.CRMDelivery{d("a"), d("c")}); err != nil || n != 1 {
			t.Fatalf("add a again and c = %d, %v; want 1 new", n, err)
		}
		gone := d("x")
		gone.ConnectionID = c.ID + 100 // deleted by another replica while its token was cached here
		if _, err := s.AddCRMDeliveries(ctx, []models.CRMDelivery{gone}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delivery of a deleted connection: err = %v; want ErrNotFound", err)
		}
		claimed, err := s.ClaimCRMDeliveries(ctx, now, 10)
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claim = %d, %v; want 3", len(claimed), err)
		}
		if again, _ := s.ClaimCRMDeliveries(ctx, now.Add(time.Second), 10); len(again) != 0 {
			t.Errorf("claimed again while leased: %d", len(again))
		}
		for i := range claimed {
			claimed[i].Status, claimed[i].WaitingFor, claimed[i].Reason = models.DeliveryWaiting, models.WaitingLead, "no lead yet"
			claimed[i].Attempts, claimed[i].NextTryAt, claimed[i].TriedAt = 1, now.Add(time.Hour), &now
		}
		claimed[2].Status, claimed[2].WaitingFor, claimed[2].Reason = models.DeliveryDone, "", ""
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		// The two waiting for their lead keep its keys; the done one none.
		keys := map[int64][]store.LeadKey{
			claimed[0].ID: {{Field: "email", Value: "h-ada@example.com"}},
			claimed[1].ID: {{Field: "external_id", Value: "form-7"}, {Field: "email", Value: "h-grace@example.com"}},
			claimed[2].ID: {{Field: "email", Value: "h-ada@example.com"}},
		}
		if n, err := s.SetCRMDeliveryKeys(ctx, claimed, keys, now); err != nil || n != 0 {
			t.Fatalf("set keys = %d, %v; want none due (no lead has them)", n, err)
		}
		last, err := s.LastLeadID(ctx)
		if err != nil {
			t.Fatal(err)
		}
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
			n, err := s.WakeCRMDeliveriesForLeads(ctx, ids, now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			last = upTo
			return n
		}
		if n := wake(); n != 0 {
			t.Errorf("wake with no new lead = %d; want 0", n)
		}
		storedLead(t, s, b, now.Add(time.Second), "ada@example.com") // another account's lead wakes nothing
		if n := wake(); n != 0 {
			t.Errorf("another account's lead woke %d", n)
		}
		storedLead(t, s, a, now.Add(time.Second), "someone@example.com") // a lead of other keys wakes nothing
		if n := wake(); n != 0 {
			t.Errorf("a lead of other keys woke %d", n)
		}
		storedLead(t, s, a, now.Add(time.Second), "ada@example.com")
		if n := wake(); n != 1 {
			t.Errorf("wake after ada's lead = %d; want her delivery alone", n)
		}
		form := lead(a, now.Add(time.Second), "")
		form.EmailHash, form.ExternalID = "", strp("form-7")
		if err := s.InsertLead(ctx, &form); err != nil {
			t.Fatal(err)
		}
		if n := wake(); n != 1 {
			t.Errorf("wake after form-7's lead = %d; want its delivery (by external id)", n)
		}
		list, err := s.CRMDeliveries(ctx, a.ID, c.ID, 0, 50)
		if err != nil || len(list) != 3 || list[0].Key != "c" || list[0].Status != models.DeliveryDone {
			t.Errorf("list = %+v, %v; want c (done) first of 3", list, err)
		}
		if err := s.RetryCRMDelivery(ctx, b.ID, list[0].ID, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retry another account's: err = %v; want ErrNotFound", err)
		}
		counts, err := s.CRMDeliveryCounts(ctx, a.ID)
		if err != nil || counts[c.ID].Waiting != 2 || counts[c.ID].Done != 1 || counts[c.ID].Last == nil || !counts[c.ID].Last.Equal(now) {
			t.Errorf("counts = %+v, %v; want 2 waiting, 1 done, last at %s", counts, err, now)
		}
		twice := []models.CRMDelivery{d("e"), d("a"), d("e")}
		if n, err := s.AddCRMDeliveries(ctx, twice); err != nil || n != 1 || twice[0].ID == 0 || twice[1].ID != 0 || twice[2].ID != 0 {
			t.Fatalf("add e, a (stored before), e again = %d, %v, ids %d %d %d; want 1 stored, the first e's id only",
				n, err, twice[0].ID, twice[1].ID, twice[2].ID)
		}
	})
}

// An account's connections with deliveries waiting for a mapping, or for a
// CRM that failed them three times, are stuck; other accounts' are not
// counted.
func TestStuckCRMConnections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := twoAccounts(t, s)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		conn := func(acc models.Account, name string) models.CRMConnection {
			c := models.CRMConnection{AccountID: acc.ID, Kind: "hubspot", Name: name}
			if err := s.CreateCRMConnection(ctx, &c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		sales, quiet, theirs := conn(a, "Sales"), conn(a, "Quiet"), conn(b, "Theirs")
		var ds []models.CRMDelivery
		add := func(c models.CRMConnection, key, waitingFor string, attempts int) {
			ds = append(ds, models.CRMDelivery{AccountID: c.AccountID, ConnectionID: c.ID, Key: key, Body: "{}", ReceivedAt: now,
				OccurredAt: now, WaitingFor: waitingFor, Attempts: attempts})
		}
		add(sales, "m1", models.WaitingMapping, 1)
		add(sales, "m2", models.WaitingMapping, 1)
		add(sales, "c1", models.WaitingCRM, 3)
		add(sales, "c2", models.WaitingCRM, 1) // a blip
		add(quiet, "l1", models.WaitingLead, 9)
		add(quiet, "c3", models.WaitingCRM, 2)
		add(theirs, "m3", models.WaitingMapping, 1)
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		// AddCRMDeliveries stores new deliveries untried: set what the
		// worker would have, under its claim.
		claimed, err := s.ClaimCRMDeliveries(ctx, now, len(ds))
		if err != nil || len(claimed) != len(ds) {
			t.Fatalf("claimed %d, %v; want %d", len(claimed), err, len(ds))
		}
		for i := range ds {
			ds[i].Status, ds[i].LeaseToken = models.DeliveryWaiting, claimed[0].LeaseToken
		}
		if err := s.FinishCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		got, err := s.StuckCRMConnections(ctx, []int64{a.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ConnectionID != sales.ID || got[0].Mapping != 2 || got[0].CRM != 1 || got[0].Name != "Sales" {
			t.Errorf("stuck = %+v; want Sales with 2 waiting for a mapping and 1 for its CRM", got)
		}
		if w, err := s.CRMWaiting(ctx); err != nil || w[models.WaitingMapping] != 3 || w[models.WaitingCRM] != 3 || w[models.WaitingLead] != 1 {
			t.Errorf("waiting = %v, %v; want 3 for a mapping, 3 for the CRM, 1 for a lead", w, err)
		}
		if both, _ := s.StuckCRMConnections(ctx, []int64{a.ID, b.ID}); len(both) != 2 || both[1].AccountID != b.ID || both[1].Mapping != 1 {
			t.Errorf("stuck of both accounts = %+v; want Sales, then Theirs with 1 waiting for a mapping", both)
		}
	})
}
