package capture

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Leads posted at the same time are written together: a writer goroutine
// takes every capture waiting in line and stores them in one transaction,
// with a few set-at-a-time statements instead of several round trips per
// lead (group commit). Each caller still gets its own answer, and its lead
// and events still land together or not at all. A batch that fails (an
// external_id taken meanwhile by another replica) is retried lead by lead,
// so one conflict never costs the others their capture.

// maxBatch bounds how many captures share one transaction.
const maxBatch = 64

type job struct {
	ctx      context.Context
	acc      models.Account
	v        Validated
	settings junk.Settings
	// lead (with its match keys' hashes) and signals are built by the
	// caller, off the writer.
	lead    models.Lead
	keys    normalize.Keys
	signals junk.Input
	done    chan jobResult
}

type jobResult struct {
	res Result
	err error
}

// batcher owns the writer goroutines.
type batcher struct {
	c       *Capturer
	jobs    chan *job
	once    sync.Once
	writers int
	// observe, when set (tests), learns each batch's size.
	observe func(size int)
}

func (b *batcher) start() {
	b.once.Do(func() {
		for range b.writers {
			go b.loop()
		}
	})
}

func (b *batcher) loop() {
	for first := range b.jobs {
		batch := []*job{first}
	fill:
		for len(batch) < maxBatch {
			select {
			case j := <-b.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		b.run(batch)
	}
}

// submit hands a capture to the writers and waits for its answer.
func (b *batcher) submit(ctx context.Context, j *job) (Result, error) {
	b.start()
	j.ctx, j.done = ctx, make(chan jobResult, 1)
	select {
	case b.jobs <- j:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	// Once queued the capture is written even if the caller gives up: a
	// retry with the same external_id then finds it.
	r := <-j.done
	return r.res, r.err
}

func (b *batcher) run(batch []*job) {
	if b.observe != nil {
		b.observe(len(batch))
	}
	results, err := b.c.captureBatch(batch)
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			slog.Warn("batched capture failed; capturing one by one", slog.Int("leads", len(batch)), slog.Any("error", err))
		}
		for _, j := range batch {
			res, err := b.c.captureOne(context.WithoutCancel(j.ctx), j.acc, j.v, j.settings)
			j.done <- jobResult{res, err}
		}
		return
	}
	notify := false
	for i, j := range batch {
		notify = notify || len(results[i].res.Events) > 0
		j.done <- results[i]
	}
	if notify {
		b.c.notify()
	}
}

// pending is one new lead of a batch, judged on its own copy of the lead.
type pending struct {
	job  int
	lead models.Lead
}

// captureBatch writes a batch with two trips to the database: one to learn
// which leads exist, which contacts are recent and where events go, one to
// store the new leads and their events in one transaction. Leads that
// already exist (same external_id) are answered as captureOne would: within
// the batch for the common case, and one by one for a partial lead being
// completed or an external_id repeated within the batch.
func (c *Capturer) captureBatch(batch []*job) ([]jobResult, error) {
	ctx := context.Background()
	results := make([]jobResult, len(batch))
	handled := make([]bool, len(batch))
	// Leads of a batch are grouped by account for the set queries.
	groups := map[int64][]int{}
	var queries []store.CaptureQuery
	for i, j := range batch {
		if _, ok := groups[j.acc.ID]; !ok {
			queries = append(queries, store.CaptureQuery{AccountID: j.acc.ID})
		}
		groups[j.acc.ID] = append(groups[j.acc.ID], i)
	}
	for k := range queries {
		q := &queries[k]
		for _, i := range groups[q.AccountID] {
			j := batch[i]
			if id := j.v.ExternalID; id != nil {
				q.ExternalIDs = append(q.ExternalIDs, *id)
			}
			st := j.settings[junk.Duplicate]
			if !st.Enabled || j.v.Partial {
				continue
			}
			if h := j.lead.EmailHash; h != "" {
				q.EmailHashes = append(q.EmailHashes, h)
			}
			if h := j.lead.PhoneHash; h != "" {
				q.PhoneHashes = append(q.PhoneHashes, h)
			}
			if since := j.lead.CreatedAt.Add(-dupWindow(st)); q.Since.IsZero() || since.Before(q.Since) {
				q.Since = since
			}
		}
	}
	facts, ids, err := c.store.LookupCapture(ctx, queries, len(batch))
	if err != nil {
		return nil, err
	}

	var created []pending
	for _, q := range queries {
		f := facts[q.AccountID]
		seenExt := map[string]bool{}
		var fresh []pending
		for _, i := range groups[q.AccountID] {
			j := batch[i]
			if id := j.v.ExternalID; id != nil {
				if p, ok := f.Existing[*id]; ok {
					if !p.Partial || j.v.Partial {
						results[i], handled[i] = c.existingByID(ctx, q.AccountID, p.ID), true
					}
					// Else it completes a partial lead: rare, done alone below.
					continue
				}
				if seenExt[*id] {
					// A repeat of an external_id new in this batch: it is
					// answered after the insert, finding the first.
					continue
				}
				seenExt[*id] = true
			}
			fresh = append(fresh, pending{job: i, lead: j.lead})
		}
		if err := judgeBatch(fresh, batch, f.Contacts); err != nil {
			return nil, err
		}
		created = append(created, fresh...)
	}

	if len(created) > 0 {
		leads := make([]models.Lead, len(created))
		for k, p := range created {
			leads[k] = p.lead
			if ids != nil {
				leads[k].ID = ids[k]
			}
		}
		evs, err := c.store.InsertCaptured(ctx, leads, func(leads []models.Lead) []models.Event {
			var evs []models.Event
			for k, l := range leads {
				if l.Junk || l.Partial {
					continue
				}
				j := batch[created[k].job]
				for _, d := range facts[l.AccountID].Datasets {
					evs = append(evs, LeadEvent(j.acc, d, l, j.keys))
				}
			}
			return evs
		})
		lost := err != nil && c.committedAnyway(ctx, err, ids != nil, leads[0])
		if err != nil && !lost {
			return nil, err
		}
		perLead := map[int64][]models.Event{}
		for _, e := range evs {
			perLead[e.LeadID] = append(perLead[e.LeadID], e)
		}
		for k, p := range created {
			l := leads[k]
			if lost {
				// The answer was lost after the commit: writing the lead
				// again, one by one, would store it twice.
				r := c.existingByID(ctx, l.AccountID, l.ID)
				r.res.Outcome = Created
				results[p.job], handled[p.job] = r, true
				continue
			}
			var reasons []junk.Reason
			_ = json.Unmarshal([]byte(l.JunkReasons), &reasons)
			results[p.job] = jobResult{res: Result{Lead: l, Outcome: Created, Reasons: reasons,
				Events: describeWith(perLead[l.ID], facts[l.AccountID].Datasets)}}
			handled[p.job] = true
		}
	}
	// The rest, now that the batch is stored: completions of partial leads
	// and repeats of an external_id first seen in this batch.
	for i, j := range batch {
		if !handled[i] {
			res, err := c.captureOne(context.WithoutCancel(j.ctx), j.acc, j.v, j.settings)
			results[i] = jobResult{res, err}
		}
	}
	return results, nil
}

// committedAnyway tells whether a failed write of leads with reserved ids
// (Postgres) was in fact committed: a connection lost while reading the
// answer fails the call after the commit. The write is all or nothing, so
// its first lead tells. A conflict means nothing was written.
func (c *Capturer) committedAnyway(ctx context.Context, err error, reserved bool, first models.Lead) bool {
	if !reserved || errors.Is(err, store.ErrConflict) {
		return false
	}
	_, lerr := c.store.Lead(ctx, first.AccountID, first.ID)
	return lerr == nil
}

// existingByID answers a capture of a lead already stored.
func (c *Capturer) existingByID(ctx context.Context, accountID, leadID int64) jobResult {
	l, err := c.store.Lead(ctx, accountID, leadID)
	if err != nil {
		return jobResult{err: err}
	}
	res, err := c.existing(ctx, l)
	return jobResult{res, err}
}

// judgeBatch runs the junk signals for new leads of one account, given the
// account's recent complete leads with the same hashes. A lead also counts
// as a repeat of an earlier complete lead of the same batch.
func judgeBatch(fresh []pending, batch []*job, seen []store.Contact) error {
	for k := range fresh {
		p := &fresh[k]
		j := batch[p.job]
		dup := false
		if st := j.settings[junk.Duplicate]; st.Enabled && !j.v.Partial {
			from := p.lead.CreatedAt.Add(-dupWindow(st))
			same := func(email, phone string, at time.Time) bool {
				return !at.Before(from) && ((email != "" && email == p.lead.EmailHash) || (phone != "" && phone == p.lead.PhoneHash))
			}
			for _, c := range seen {
				if same(c.EmailHash, c.PhoneHash, c.CreatedAt) {
					dup = true
					break
				}
			}
			for _, q := range fresh[:k] {
				if !batch[q.job].v.Partial && same(q.lead.EmailHash, q.lead.PhoneHash, q.lead.CreatedAt) {
					dup = true
					break
				}
			}
		}
		if err := verdict(&p.lead, j.signals, j.settings, dup); err != nil {
			return err
		}
	}
	return nil
}

func dupWindow(st junk.Setting) time.Duration {
	days := st.Threshold
	if days <= 0 {
		days = junk.DefaultDuplicateDays
	}
	return time.Duration(days * float64(24*time.Hour))
}
