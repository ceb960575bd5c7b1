package crmsync_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Deliveries that arrive together are each answered with how many of
// their own changes were new: a CRM's retry of one stores nothing, and
// only stored changes wake the worker.
func TestInboxAddCountsEachDeliverysNewChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, c := newConnection(t, s, crm.HubSpot)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		change := func(deal string) []crm.Change {
			changes, _, err := crm.Parse(crm.HubSpot, crmtest.HubSpotDealStage(1, deal, "closedwon", now), nil)
			if err != nil || len(changes) != 1 {
				t.Fatalf("Parse = %v, %v", changes, err)
			}
			return changes
		}
		var wakes atomic.Int32
		in := crmsync.NewInbox(s, func() { wakes.Add(1) })
		var wg sync.WaitGroup
		stored := make([]int, 8)
		for i := range stored {
			wg.Go(func() {
				n, err := in.Add(c, change(string(rune('1'+i))), now)
				if err != nil {
					t.Error(err)
				}
				stored[i] = n
			})
		}
		wg.Wait()
		for i, n := range stored {
			if n != 1 {
				t.Errorf("delivery %d stored %d; want 1", i, n)
			}
		}
		woken := wakes.Load()
		if n, err := in.Add(c, change("1"), now.Add(time.Minute)); err != nil || n != 0 {
			t.Errorf("a retry stored %d, %v; want 0", n, err)
		}
		if wakes.Load() != woken || woken == 0 {
			t.Errorf("woken %d times, then %d after a retry; want some, then none more", woken, wakes.Load())
		}
		got, err := s.CRMDeliveries(ctx, acc.ID, c.ID, 0, 20)
		if err != nil || len(got) != len(stored) {
			t.Fatalf("inbox holds %d deliveries, %v; want %d", len(got), err, len(stored))
		}
		for _, d := range got {
			if !d.ReceivedAt.Equal(now) || d.Status != models.DeliveryWaiting || d.CRMStageID != "closedwon" {
				t.Errorf("delivery %s: received %v, %s, stage %q; want received now, waiting, closedwon", d.ObjectID, d.ReceivedAt, d.Status, d.CRMStageID)
			}
		}
	})
}
