package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A delivery may carry thousands of stage changes (a generic sender's
// array, up to 1 MiB): they are all stored, however many bind parameters
// one statement would need (Postgres takes at most 65,535, SQLite 32,766).
func TestAddCRMDeliveriesManyChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		const n = 7000
		ds := make([]models.CRMDelivery, n+1)
		for i := range ds {
			ds[i] = models.CRMDelivery{AccountID: a.ID, ConnectionID: c.ID, Key: fmt.Sprintf("change:%d", i%n), Body: "{}",
				ReceivedAt: now, CRMStageID: "won", OccurredAt: now}
		}
		stored, err := s.AddCRMDeliveries(ctx, ds)
		if err != nil || stored != n {
			t.Fatalf("stored %d, %v; want %d (the last one repeats the first)", stored, err, n)
		}
		if ds[0].ID == 0 || ds[n-1].ID == 0 || ds[n].ID != 0 {
			t.Errorf("ids %d, %d, %d; want the first and last new set, the repeat's 0", ds[0].ID, ds[n-1].ID, ds[n].ID)
		}
		again, err := s.AddCRMDeliveries(ctx, ds[:10])
		if err != nil || again != 0 {
			t.Errorf("stored again %d, %v; want 0", again, err)
		}
	})
}

// The worker's clock is time.Now, in the server's zone: deliveries are due,
// leased and woken by the instant, whatever zone the times come in (SQLite
// compares times as text).
func TestCRMDeliveriesDueInAnyZone(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		c := models.CRMConnection{AccountID: a.ID, Kind: "generic", Name: "Zap"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		west, east := time.FixedZone("west", -5*3600), time.FixedZone("east", 9*3600)
		received := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		ds := []models.CRMDelivery{{AccountID: a.ID, ConnectionID: c.ID, Key: "k", Body: "{}", ReceivedAt: received,
			CRMStageID: "won", OccurredAt: received}}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		claimed, err := s.ClaimCRMDeliveries(ctx, received.Add(time.Second).In(west), 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d, %v a second after it came, on a clock 5 h west of UTC; want it", len(claimed), err)
		}
		// Leased for 2 minutes: not due a minute later, on a clock east of UTC.
		if again, err := s.ClaimCRMDeliveries(ctx, received.Add(time.Minute).In(east), 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed %d, %v while leased; want none", len(again), err)
		}
		// It waits an hour, as the worker writes it in its own zone.
		tried := received.Add(time.Second).In(east)
		claimed[0].Status, claimed[0].WaitingFor, claimed[0].Attempts = models.DeliveryWaiting, models.WaitingLead, 1
		claimed[0].TriedAt, claimed[0].NextTryAt = &tried, tried.Add(time.Hour)
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			at   time.Time
			want int
		}{
			{received.Add(30 * time.Minute).In(west), 0},
			{received.Add(30 * time.Minute).UTC(), 0},
			{received.Add(2 * time.Hour).In(west), 1},
		} {
			got, err := s.ClaimCRMDeliveries(ctx, tc.at, 10)
			if err != nil || len(got) != tc.want {
				t.Errorf("at %s: claimed %d, %v; want %d", tc.at, len(got), err, tc.want)
			}
		}
	})
}
