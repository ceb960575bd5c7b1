package crmsync

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/lines"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Inbox stores the stage changes the CRMs post, as they came, for the
// Worker. The deliveries of a connection that arrive at the same time are
// stored in one statement and one commit (group commit, as capture does):
// a CRM posts in bursts, and each delivery is answered only once it is
// stored.
type Inbox struct {
	store  *store.Store
	notify func()
	lines  *lines.Lines[*inboxJob]
	// counts holds, by connection id, the waiting deliveries last
	// counted and those this inbox stored since, for countFor: a
	// connection found full is refused without counting again (a sender
	// that floods a full inbox costs no count per post), and one far
	// from full is not counted again for every batch (a count reads
	// every waiting delivery, up to the limit).
	mu     sync.Mutex
	counts map[int64]waitingCount
}

// countFor is how long a count is used: a connection found full is taken
// as full, and one far from full (under nine tenths of the limit, the
// batch included) is not counted again.
const countFor = time.Second

// waitingCount is a connection's waiting deliveries as counted at a time,
// plus those stored since.
type waitingCount struct {
	n  int
	at time.Time
}

// maxInboxJobs bounds the deliveries one statement stores.
const maxInboxJobs = 64

type inboxJob struct {
	ds   []models.CRMDelivery
	done chan inboxDone
}

type inboxDone struct {
	stored int
	err    error
}

// NewInbox returns the inbox of s; notify, when not nil, wakes the
// worker after deliveries were stored (Worker.Notify).
func NewInbox(s *store.Store, notify func()) *Inbox {
	in := &Inbox{store: s, notify: notify, counts: map[int64]waitingCount{}}
	in.lines = &lines.Lines[*inboxJob]{Max: maxInboxJobs, Write: func(connectionID int64, batch []*inboxJob) time.Duration {
		in.write(connectionID, batch)
		return 0
	}}
	return in
}

// MaxChangeBody bounds the body of one stage change the inbox stores
// (docs/crm.md, "Limits"): a CRM's change is a few hundred bytes, and the
// inbox keeps every body until its change is recorded.
const MaxChangeBody = 64 << 10

// TooLargeError is a delivery refused because one of its changes' body is
// over MaxChangeBody.
type TooLargeError struct {
	// Index is the change's place in the delivery, from 0; Size its
	// body's length in bytes.
	Index, Size int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("a stage change's body is at most %d bytes (64 KiB); change %d of the delivery has %d: nothing was stored",
		MaxChangeBody, e.Index+1, e.Size)
}

// Add stores the stage changes of one delivery to conn, received at now,
// each once per the CRM's idempotency key, with those of the connection's
// other deliveries waiting in its line, and returns how many of its own
// were new (the rest were stored before). A change that tells no time of
// its own happened when it was received. A delivery is stored whole or
// not at all: a *TooLargeError when a change's body is over
// MaxChangeBody, store.ErrInboxFull when its changes would take the
// connection past store.MaxWaitingCRMDeliveries waiting.
func (in *Inbox) Add(conn models.CRMConnection, changes []crm.Change, now time.Time) (int, error) {
	for i, ch := range changes {
		if len(ch.Body) > MaxChangeBody {
			return 0, &TooLargeError{Index: i, Size: len(ch.Body)}
		}
	}
	if in.isFull(conn.ID, now) {
		return 0, store.ErrInboxFull
	}
	now = now.UTC()
	ds := make([]models.CRMDelivery, len(changes))
	for i, ch := range changes {
		at := ch.OccurredAt
		if at.IsZero() {
			at = now
		}
		ds[i] = models.CRMDelivery{AccountID: conn.AccountID, ConnectionID: conn.ID, Key: crm.FitKey(ch.Key), Body: string(ch.Body),
			ReceivedAt: now, ObjectID: crm.Cut(ch.ObjectID), CRMStageID: crm.Cut(ch.StageID), OccurredAt: at.UTC()}
	}
	j := &inboxJob{ds: ds, done: make(chan inboxDone, 1)}
	in.lines.Add(conn.ID, j)
	r := <-j.done
	if r.stored > 0 && in.notify != nil {
		in.notify()
	}
	return r.stored, r.err
}

// write stores a batch of one connection's deliveries and answers each.
// A delivery that would take the connection past
// store.MaxWaitingCRMDeliveries waiting is answered store.ErrInboxFull,
// nothing of it stored. If the batch fails, each is tried alone: one that
// fails never costs the others.
func (in *Inbox) write(connectionID int64, batch []*inboxJob) {
	now, need := batch[0].ds[0].ReceivedAt, 0
	for _, j := range batch {
		need += len(j.ds)
	}
	const limit = store.MaxWaitingCRMDeliveries
	c, ok := in.count(connectionID, now)
	if !ok || c.n+need > limit-limit/10 {
		room, err := in.store.CRMWaitingRoom(context.Background(), connectionID, limit)
		if err != nil {
			for _, j := range batch {
				j.done <- inboxDone{err: err}
			}
			return
		}
		c = waitingCount{n: limit - room, at: now}
	}
	room := limit - c.n
	fits := batch[:0:0]
	for _, j := range batch {
		// Counted as if each change were new: a retry of changes stored
		// already may be refused when the inbox is full, and is taken
		// once it has room.
		if len(j.ds) > room {
			j.done <- inboxDone{err: store.ErrInboxFull}
			continue
		}
		room -= len(j.ds)
		fits = append(fits, j)
	}
	// Counted as if each change were new, as above: the count only ever
	// runs ahead of the waiting deliveries (and the worker takes some).
	c.n = limit - room
	in.mu.Lock()
	in.counts[connectionID] = c
	in.mu.Unlock()
	in.save(fits)
}

// count is the connection's count of waiting deliveries, when it was made
// within countFor before now.
func (in *Inbox) count(connectionID int64, now time.Time) (waitingCount, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.counts[connectionID]
	if ok && (now.Before(c.at) || now.Sub(c.at) >= countFor) {
		delete(in.counts, connectionID)
		return c, false
	}
	return c, ok
}

// isFull reports whether the connection was found full within countFor
// of now.
func (in *Inbox) isFull(connectionID int64, now time.Time) bool {
	c, ok := in.count(connectionID, now)
	return ok && c.n >= store.MaxWaitingCRMDeliveries
}

// save stores the batch's deliveries and answers each.
func (in *Inbox) save(batch []*inboxJob) {
	if len(batch) == 0 {
		return
	}
	var all []models.CRMDelivery
	for _, j := range batch {
		all = append(all, j.ds...)
	}
	_, err := in.store.AddCRMDeliveries(context.Background(), all)
	if err != nil && len(batch) > 1 {
		for _, j := range batch {
			in.save([]*inboxJob{j})
		}
		return
	}
	k := 0
	for _, j := range batch {
		n := 0
		for range j.ds {
			if all[k].ID != 0 {
				n++
			}
			k++
		}
		j.done <- inboxDone{stored: n, err: err}
	}
}
