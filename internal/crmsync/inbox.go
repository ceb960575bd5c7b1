package crmsync

import (
	"context"
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
	in := &Inbox{store: s, notify: notify}
	in.lines = &lines.Lines[*inboxJob]{Max: maxInboxJobs, Write: in.write}
	return in
}

// Add stores the stage changes of one delivery to conn, received at now,
// each once per the CRM's idempotency key, with those of the connection's
// other deliveries waiting in its line, and returns how many of its own
// were new (the rest were stored before). A change that tells no time of
// its own happened when it was received.
func (in *Inbox) Add(conn models.CRMConnection, changes []crm.Change, now time.Time) (int, error) {
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
	room, err := in.store.CRMWaitingRoom(context.Background(), connectionID, store.MaxWaitingCRMDeliveries)
	if err != nil {
		for _, j := range batch {
			j.done <- inboxDone{err: err}
		}
		return
	}
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
	in.save(fits)
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
