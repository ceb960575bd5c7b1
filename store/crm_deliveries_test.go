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
