package crmsync

import (
	"context"
	"sync"
	"time"
)

// wakeSlack is how far back in leads each look for new leads starts
// again: lead ids are taken before their capture commits, so a lead may
// become visible after a higher id did. A capture whose commit takes
// longer than this wakes nothing; its deliveries come to it with their
// backoff (at most 30 minutes).
const wakeSlack = 10 * time.Second

// wakeForLeads looks, every Idle, at the leads captured since it last
// looked, and makes due the deliveries waiting for a lead whose lookup
// keys one of them has (store.WakeCRMDeliveriesForLeads): its cost
// follows the new leads, never the waiting deliveries. Each process
// looks on its own; a delivery woken twice is due once.
type wakeForLeads struct {
	mu sync.Mutex
	// marks are the newest lead id seen at each look of the last
	// wakeSlack, oldest first; a look starts after the oldest.
	marks []leadMark
}

type leadMark struct {
	at time.Time
	id int64
}

// round makes due the deliveries the leads new since the last looks may
// be for, and reports how many. The first look only notes where the leads
// are: leads captured before the worker started wake nothing, and the
// deliveries waiting come to them with their backoff.
func (wk *wakeForLeads) round(ctx context.Context, w *Worker) (int, error) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	last, err := w.o.Store.LastLeadID(ctx)
	if err != nil {
		return 0, err
	}
	now, n := w.o.Now(), 0
	if len(wk.marks) > 0 {
		if n, err = w.o.Store.WakeCRMDeliveriesForLeads(ctx, wk.marks[0].id, last, now); err != nil {
			return 0, err
		}
	}
	wk.marks = append(wk.marks, leadMark{at: now, id: last})
	for len(wk.marks) > 1 && now.Sub(wk.marks[1].at) >= wakeSlack {
		wk.marks = wk.marks[1:]
	}
	return n, nil
}

// start notes where the leads are, unless a look did already.
func (wk *wakeForLeads) start(ctx context.Context, w *Worker) error {
	wk.mu.Lock()
	started := len(wk.marks) > 0
	wk.mu.Unlock()
	if started {
		return nil
	}
	_, err := wk.round(ctx, w)
	return err
}
