package store_test

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// TestDeadProbeEndsWithItsLease: a dispatcher takes the probe of a held
// dataset and claims its batch with one lease, then dies. At the instant
// that lease ends, the next probe is due and finds the batch claimable:
// "sending" ends for the claim as it ends for the probe, so the next probe
// never sees an empty dataset (which would lift the hold) while the dead
// one's events still wait.
func TestDeadProbeEndsWithItsLease(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, _ := twoAccounts(t, s)
		d := newDataset(t, s, a, models.ModeLive)
		now := time.Now().UTC().Truncate(time.Microsecond)
		l := storedLead(t, s, a, now, "jane@example.com")
		enqueue(t, s, dueEvent(d, l, "e1", now.Add(-time.Hour), now), dueEvent(d, l, "e2", now.Add(-time.Minute), now))
		if _, _, err := s.HoldDataset(ctx, d.ID, now, "HTTP 503", func(int) time.Duration { return 0 }, nil); err != nil {
			t.Fatal(err)
		}
		const lease = 20 * time.Second
		probe, ok, err := s.TakeProbe(ctx, d.ID, now, lease)
		if err != nil || !ok {
			t.Fatalf("TakeProbe = %v, %v; want the probe", ok, err)
		}
		if c, err := s.ClaimEvents(ctx, d.ID, now, lease, 10, &probe); err != nil || len(c.Events) != 2 {
			t.Fatalf("probe's claim = %d events, %v; want 2", len(c.Events), err)
		}

		// Just before the lease ends the probe and its events are the dead
		// dispatcher's.
		before := now.Add(lease - time.Microsecond)
		if ids, err := s.DueDatasets(ctx, before); err != nil || len(ids) != 0 {
			t.Errorf("DueDatasets under the lease = %v, %v; want none", ids, err)
		}
		if _, ok, _ := s.TakeProbe(ctx, d.ID, before, lease); ok {
			t.Error("a probe was taken while the dead one's lease ran")
		}

		end := now.Add(lease)
		if ids, err := s.DueDatasets(ctx, end); err != nil || len(ids) != 1 || ids[0] != d.ID {
			t.Errorf("DueDatasets as the lease ends = %v, %v; want the dataset", ids, err)
		}
		next, ok, err := s.TakeProbe(ctx, d.ID, end, lease)
		if err != nil || !ok {
			t.Fatalf("TakeProbe as the lease ends = %v, %v; want the probe", ok, err)
		}
		c, err := s.ClaimEvents(ctx, d.ID, end, lease, 10, &next)
		if err != nil || len(c.Events) != 2 || c.Events[0].EventID != "e1" {
			t.Fatalf("next probe's claim = %+v, %v; want e1 and e2 again", c.Events, err)
		}
	})
}
