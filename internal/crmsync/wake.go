package crmsync

import (
	"context"
	"sync"
	"time"
)

// Lead ids are taken before their capture commits: a lead may become
// visible after a higher id did. A look notes the ids it finds missing
// below the newest, and takes each of them in once it is there, for
// pendingFor; one that never comes (its capture failed) is forgotten then.
// A capture slower than that wakes nothing: its deliveries come to it with
// their backoff (at most 30 minutes).
const (
	pendingFor = time.Minute
	maxPending = 10000
)

// wakeForLeads looks, every Idle, at the leads captured since it last
// looked, each once, and makes due the deliveries waiting for a lead whose
// lookup keys one of them has (store.WakeCRMDeliveriesForLeads): its cost
// follows the new leads, never the waiting deliveries. Each process looks
// on its own; a delivery woken twice is due once.
type wakeForLeads struct {
	mu      sync.Mutex
	started bool
	// last is the newest lead id seen; pending are the ids below it not
	// seen yet, with when they were first missed.
	last    int64
	pending map[int64]time.Time
}

// round makes due the deliveries the leads new since the last look may
// be for, and reports how many. The first look only notes where the leads
// are: leads captured before the worker started wake nothing, and the
// deliveries waiting come to them with their backoff.
func (wk *wakeForLeads) round(ctx context.Context, w *Worker) (int, error) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	upTo, err := w.o.Store.LastLeadID(ctx)
	if err != nil || !wk.started {
		wk.started, wk.last, wk.pending = err == nil, upTo, map[int64]time.Time{}
		return 0, err
	}
	if upTo <= wk.last && len(wk.pending) == 0 {
		return 0, nil
	}
	pending := make([]int64, 0, len(wk.pending))
	for id := range wk.pending {
		pending = append(pending, id)
	}
	ids, err := w.o.Store.NewLeadIDs(ctx, wk.last, upTo, pending)
	if err != nil {
		return 0, err
	}
	now := w.o.Now()
	next := wk.last + 1
	for _, id := range ids {
		delete(wk.pending, id)
		for ; next < id && len(wk.pending) < maxPending; next++ {
			wk.pending[next] = now
		}
		next = max(next, id+1)
	}
	for ; next <= upTo && len(wk.pending) < maxPending; next++ {
		wk.pending[next] = now
	}
	for id, at := range wk.pending {
		if now.Sub(at) >= pendingFor {
			delete(wk.pending, id)
		}
	}
	wk.last = max(wk.last, upTo)
	return w.o.Store.WakeCRMDeliveriesForLeads(ctx, ids, now)
}

// start notes where the leads are, unless a look did already.
func (wk *wakeForLeads) start(ctx context.Context, w *Worker) error {
	wk.mu.Lock()
	started := wk.started
	wk.mu.Unlock()
	if started {
		return nil
	}
	_, err := wk.round(ctx, w)
	return err
}
