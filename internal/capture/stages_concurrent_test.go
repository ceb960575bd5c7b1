package capture

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// Many stage changes given to Record at once, several of each lead and
// each sent twice, are recorded once each, whichever of the account's
// batches in flight they fall in, and the counts agree with the rows.
func TestRecordAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		acc := setupStages(t, s)
		c := New(s, nil, nil)
		var leads []models.Lead
		for i := range 12 {
			r, err := c.Capture(ctx, acc, valid(t, webLead(fmt.Sprintf("p%d@acme.example", i))))
			if err != nil {
				t.Fatal(err)
			}
			leads = append(leads, r.Lead)
		}
		rec := decide.New(s, nil, nil)
		at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
		var (
			mu       sync.Mutex
			recorded = map[int64]int{}
			replayed = map[int64]int{}
			wg       sync.WaitGroup
		)
		for _, l := range leads {
			for k, stage := range []string{"qualified", "booked"} {
				for range 2 {
					id := fmt.Sprintf("crm-%d-%s", l.ID, stage)
					wg.Go(func() {
						out, err := rec.Record(ctx, acc.ID, decide.Change{Keys: decide.ByID(l.ID), Stage: stage,
							OccurredAt: at.Add(time.Duration(k) * time.Minute), ChangeID: &id})
						if err != nil || out.Refused != nil {
							t.Errorf("lead %d %s: %+v, %v", l.ID, stage, out.Refused, err)
							return
						}
						mu.Lock()
						defer mu.Unlock()
						if out.Replayed {
							replayed[l.ID]++
						} else {
							recorded[l.ID]++
						}
					})
				}
			}
		}
		wg.Wait()
		for _, l := range leads {
			if recorded[l.ID] != 2 || replayed[l.ID] != 2 {
				t.Errorf("lead %d: %d recorded, %d replayed; want 2 and 2", l.ID, recorded[l.ID], replayed[l.ID])
			}
			changes, err := s.StageChanges(ctx, acc.ID, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != 2 {
				t.Errorf("lead %d has %d stage changes; want 2", l.ID, len(changes))
			}
			got, err := s.Lead(ctx, acc.ID, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Stage != "booked" {
				t.Errorf("lead %d stage %q; want booked, its latest change", l.ID, got.Stage)
			}
		}
		if drift, err := s.CountsDrift(ctx); err != nil || len(drift) > 0 {
			t.Errorf("counts drift after the changes: %v, %v", drift, err)
		}
	})
}
