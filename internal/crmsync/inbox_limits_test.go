package crmsync_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// A connection holds at most store.MaxWaitingCRMDeliveries waiting
// deliveries: past it a delivery is refused whole (ErrInboxFull) and
// nothing of it is stored; once some are done, deliveries are taken again.
func TestInboxRefusesPastTheWaitingLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, c := newConnection(t, s, crm.Generic)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		fill(t, s, acc, c, store.MaxWaitingCRMDeliveries-1, now)
		in := crmsync.NewInbox(s, nil)
		two := []crm.Change{genericChange(t, "a@example.com", now), genericChange(t, "b@example.com", now)}
		if n, err := in.Add(c, two, now); !errors.Is(err, store.ErrInboxFull) || n != 0 {
			t.Errorf("two changes with room for one: %d, %v; want ErrInboxFull", n, err)
		}
		if n, err := in.Add(c, two[:1], now); err != nil || n != 1 {
			t.Errorf("one change with room for one: %d, %v; want stored", n, err)
		}
		if n, err := in.Add(c, two[1:], now); !errors.Is(err, store.ErrInboxFull) || n != 0 {
			t.Errorf("one more when full: %d, %v; want ErrInboxFull", n, err)
		}
		if room, err := s.CRMWaitingRoom(ctx, c.ID, store.MaxWaitingCRMDeliveries); err != nil || room != 0 {
			t.Errorf("room = %d, %v; want 0: nothing of the refused stored", room, err)
		}
		claimed, err := s.ClaimCRMDeliveries(ctx, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		for i := range claimed {
			claimed[i].Status = models.DeliveryDone
		}
		if err := s.FinishCRMDeliveries(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		if n, err := in.Add(c, two, now); !errors.Is(err, store.ErrInboxFull) || n != 0 {
			t.Errorf("after 10 done, at once: %d, %v; want ErrInboxFull: found full a moment ago", n, err)
		}
		if n, err := in.Add(c, two, now.Add(time.Second)); err != nil || n != 1 {
			t.Errorf("after 10 done, a second later: %d, %v; want b's change stored (a's was before)", n, err)
		}
	})
}

// A connection far from the limit is counted at most once a second: what
// another replica stores meanwhile is seen at the next count, and near the
// limit every batch is counted.
func TestInboxCountsAgainWithinASecond(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc, c := newConnection(t, s, crm.Generic)
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		in := crmsync.NewInbox(s, nil)
		change := func(i int) []crm.Change {
			return []crm.Change{genericChange(t, fmt.Sprintf("c%d@example.com", i), now)}
		}
		if n, err := in.Add(c, change(0), now); err != nil || n != 1 {
			t.Fatalf("the first change: %d, %v", n, err)
		}
		// Another replica's inbox fills the connection up to one short
		// of the limit.
		fill(t, s, acc, c, store.MaxWaitingCRMDeliveries-2, now)
		later := now.Add(time.Second)
		if n, err := in.Add(c, append(change(1), change(2)...), later); !errors.Is(err, store.ErrInboxFull) || n != 0 {
			t.Errorf("two changes a second later, with room for one: %d, %v; want ErrInboxFull", n, err)
		}
		if n, err := in.Add(c, change(1), later); err != nil || n != 1 {
			t.Errorf("one change with room for one: %d, %v; want stored", n, err)
		}
		if n, err := in.Add(c, change(2), later); !errors.Is(err, store.ErrInboxFull) || n != 0 {
			t.Errorf("one more, counted again near the limit: %d, %v; want ErrInboxFull", n, err)
		}
		if room, err := s.CRMWaitingRoom(ctx, c.ID, store.MaxWaitingCRMDeliveries+10); err != nil || room != 10 {
			t.Errorf("room past the limit = %d, %v; want 10: exactly the limit waiting", room, err)
		}
	})
}

// fill stores n waiting deliveries to connection c, received at now, as
// another replica's inbox does.
func fill(t *testing.T, s *store.Store, acc models.Account, c models.CRMConnection, n int, now time.Time) {
	t.Helper()
	ds := make([]models.CRMDelivery, n)
	for i := range ds {
		ds[i] = models.CRMDelivery{AccountID: acc.ID, ConnectionID: c.ID, Key: fmt.Sprintf("k%d", i), Body: "{}",
			ReceivedAt: now, OccurredAt: now, CRMStageID: "won"}
	}
	if _, err := s.AddCRMDeliveries(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
}
