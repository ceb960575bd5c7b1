package store_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

func TestDatasetHolds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		acc, err := s.CreateAccount(ctx, models.Account{Slug: "acme", Name: "Acme", Timezone: "UTC", Currency: "USD"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &d); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.TakeProbe(ctx, d.ID, now, time.Minute); err != nil || ok {
			t.Errorf("TakeProbe of a dataset not held = %v, %v; want false", ok, err)
		}
		wait := func(tries int) time.Duration { return time.Duration(tries) * time.Second }

		held, started, err := s.HoldDataset(ctx, d.ID, now, "HTTP 503", wait, nil)
		if err != nil || !started || held.HoldTries != 1 || !held.HeldSince.Equal(now) || !held.HoldUntil.Equal(now.Add(time.Second)) || held.HoldError != "HTTP 503" {
			t.Fatalf("first HoldDataset = %+v, started %v, %v", held, started, err)
		}
		held, started, err = s.HoldDataset(ctx, d.ID, now.Add(5*time.Second), "network: reset", wait, nil)
		if err != nil || started || held.HoldTries != 2 || !held.HeldSince.Equal(now) || !held.HoldUntil.Equal(now.Add(7*time.Second)) {
			t.Fatalf("second HoldDataset = %+v, started %v, %v; want the same hold, 2 tries, next at +7s", held, started, err)
		}

		// The probe is taken once, and only when due.
		if _, ok, _ := s.TakeProbe(ctx, d.ID, now.Add(6*time.Second), time.Minute); ok {
			t.Error("a probe was taken before its time")
		}
		at := now.Add(7 * time.Second)
		var taken atomic.Int32
		var probe store.Lease
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if l, ok, err := s.TakeProbe(ctx, d.ID, at, time.Minute); err != nil {
					t.Error(err)
				} else if ok {
					taken.Add(1)
					probe = l
				}
			})
		}
		wg.Wait()
		if taken.Load() != 1 {
			t.Fatalf("%d dispatchers took the probe; want 1", taken.Load())
		}

		// A person's "try now" while the probe runs gives no second one.
		if held, err := s.ProbeNow(ctx, acc.ID, d.ID, at); err != nil || !held {
			t.Fatalf("ProbeNow of a held dataset = %v, %v; want held", held, err)
		}
		if _, ok, _ := s.TakeProbe(ctx, d.ID, at, time.Minute); ok {
			t.Error("try now gave a second probe while one ran")
		}
		// The probe fails: its try is counted, and its lease ends.
		if held, _, err := s.HoldDataset(ctx, d.ID, at, "HTTP 503", wait, &probe); err != nil || held.HoldTries != 3 || held.LeaseToken != nil {
			t.Fatalf("the probe's HoldDataset = %+v, %v; want 3 tries and no lease", held, err)
		}

		// A person's "try now" is scoped by account.
		other, _ := s.CreateAccount(ctx, models.Account{Slug: "other", Name: "Other", Timezone: "UTC", Currency: "USD"}, 0)
		if _, err := s.ProbeNow(ctx, other.ID, d.ID, at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ProbeNow from another account err = %v; want ErrNotFound", err)
		}
		if held, err := s.ProbeNow(ctx, acc.ID, d.ID, at); err != nil || !held {
			t.Fatalf("ProbeNow of a held dataset = %v, %v; want held", held, err)
		}
		probe, ok, _ := s.TakeProbe(ctx, d.ID, at, time.Minute)
		if !ok {
			t.Error("after try now, no probe could be taken")
		}

		hs, err := s.StalledDatasets(ctx, acc.ID)
		if err != nil || len(hs) != 1 || hs[0].ID != d.ID {
			t.Errorf("StalledDatasets = %+v, %v; want the dataset", hs, err)
		}
		if hs, _ := s.StalledDatasets(ctx, other.ID); len(hs) != 0 {
			t.Errorf("another account sees %d held datasets", len(hs))
		}
		if n, _, err := s.HoldStats(ctx); err != nil || n != 1 {
			t.Errorf("HoldStats held = %d, %v; want 1", n, err)
		}

		since, err := s.LiftHold(ctx, d.ID, probe)
		if err != nil || since == nil || !since.Equal(now) {
			t.Errorf("LiftHold = %v, %v; want the hold's start", since, err)
		}
		got, _ := s.DatasetByID(ctx, d.ID)
		if got.HeldSince != nil || got.HoldUntil != nil || got.HoldTries != 0 || got.HoldError != "" || got.LeaseToken != nil || got.LeaseUntil != nil {
			t.Errorf("after LiftHold: %+v", got)
		}
		if since, err := s.LiftHold(ctx, d.ID, probe); err != nil || since != nil {
			t.Errorf("LiftHold of a dataset not held = %v, %v; want nil", since, err)
		}
		if held, err := s.ProbeNow(ctx, acc.ID, d.ID, at); err != nil || held {
			t.Errorf("ProbeNow of a dataset not held = %v, %v; want not held, no error", held, err)
		}
		if got, _ := s.DatasetByID(ctx, d.ID); got.HoldUntil != nil {
			t.Error("ProbeNow of a dataset not held gave it a next try")
		}
	})
}
