package capture

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
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
	// lead, keys and signals are built by the caller, off the writer.
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

// pending is one new lead of a batch.
type pending struct {
	job  int
	lead models.Lead
	keys normalize.Keys
}

// captureBatch writes a batch in one transaction. Leads that already exist
// (same external_id) are answered as captureOne would, within the batch
// for the common case and one by one for a partial lead being completed.
func (c *Capturer) captureBatch(batch []*job) ([]jobResult, error) {
	ctx := context.Background()
	results := make([]jobResult, len(batch))
	handled := make([]bool, len(batch))
	// Leads of a batch are grouped by account for the set queries.
	type group struct {
		acc  models.Account
		jobs []int
	}
	groups := map[int64]*group{}
	var order []int64
	for i, j := range batch {
		g := groups[j.acc.ID]
		if g == nil {
			g = &group{acc: j.acc}
			groups[j.acc.ID] = g
			order = append(order, j.acc.ID)
		}
		g.jobs = append(g.jobs, i)
	}

	var created []pending
	err := c.store.Tx(ctx, func(tx *store.Store) error {
		created = created[:0]
		for _, accID := range order {
			g := groups[accID]
			var ext []string
			for _, i := range g.jobs {
				if id := batch[i].v.ExternalID; id != nil {
					ext = append(ext, *id)
				}
			}
			prev, err := tx.LeadsByExternalIDs(ctx, accID, ext)
			if err != nil {
				return err
			}
			seenExt := map[string]bool{}
			var fresh []pending
			for _, i := range g.jobs {
				j := batch[i]
				if id := j.v.ExternalID; id != nil {
					if p, ok := prev[*id]; ok {
						if p.Partial && !j.v.Partial {
							// Completing a partial lead: rare, done alone below.
							continue
						}
						res, err := c.existingIn(ctx, tx, p)
						results[i], handled[i] = jobResult{res, err}, true
						continue
					}
					if seenExt[*id] {
						// A repeat of an external_id new in this batch: it is
						// answered after the commit, finding the first.
						continue
					}
					seenExt[*id] = true
				}
				fresh = append(fresh, pending{job: i, lead: j.lead, keys: j.keys})
			}
			if err := judgeBatch(ctx, tx, accID, fresh, batch); err != nil {
				return err
			}
			created = append(created, fresh...)
		}
		if len(created) == 0 {
			return nil
		}
		leads := make([]models.Lead, len(created))
		for k, p := range created {
			leads[k] = p.lead
		}
		if err := tx.InsertLeads(ctx, leads); err != nil {
			return err
		}
		datasets := map[int64][]models.Dataset{}
		var evs []models.Event
		owner := make([]int, 0)
		for k := range created {
			created[k].lead = leads[k]
			l := leads[k]
			if l.Junk || l.Partial {
				continue
			}
			ds, ok := datasets[l.AccountID]
			if !ok {
				var err error
				if ds, err = tx.Datasets(ctx, l.AccountID); err != nil {
					return err
				}
				datasets[l.AccountID] = ds
			}
			for _, d := range ds {
				evs = append(evs, models.Event{
					AccountID: l.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginDefault,
					EventName: "Lead", EventID: capi.EventID(d.PixelID, "Lead", capi.RecordKey(l)), EventTime: l.CreatedAt,
				})
				owner = append(owner, k)
			}
		}
		if err := tx.InsertEvents(ctx, evs); err != nil {
			return err
		}
		perLead := make([][]models.Event, len(created))
		for e, k := range owner {
			perLead[k] = append(perLead[k], evs[e])
		}
		for k, p := range created {
			var reasons []junk.Reason
			_ = json.Unmarshal([]byte(p.lead.JunkReasons), &reasons)
			results[p.job] = jobResult{res: Result{Lead: p.lead, Outcome: Created, Reasons: reasons,
				Events: describeWith(perLead[k], datasets[p.lead.AccountID])}}
			handled[p.job] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The rest, after the batch committed: completions of partial leads and
	// repeats of an external_id first seen in this batch.
	for i, j := range batch {
		if !handled[i] {
			res, err := c.captureOne(context.WithoutCancel(j.ctx), j.acc, j.v, j.settings)
			results[i] = jobResult{res, err}
		}
	}
	return results, nil
}

// judgeBatch runs the junk signals for new leads of one account, looking
// up earlier leads of the same people in one query. A lead also counts as
// a repeat of an earlier complete lead of the same batch.
func judgeBatch(ctx context.Context, tx *store.Store, accountID int64, fresh []pending, batch []*job) error {
	if len(fresh) == 0 {
		return nil
	}
	var emails, phones []string
	since := time.Time{}
	for _, p := range fresh {
		st := batch[p.job].settings[junk.Duplicate]
		if !st.Enabled || batch[p.job].v.Partial {
			continue
		}
		if p.keys.Email.Hash != "" {
			emails = append(emails, p.keys.Email.Hash)
		}
		if p.keys.Phone.Hash != "" {
			phones = append(phones, p.keys.Phone.Hash)
		}
		if s := p.lead.CreatedAt.Add(-dupWindow(st)); since.IsZero() || s.Before(since) {
			since = s
		}
	}
	var seen []store.Contact
	if len(emails)+len(phones) > 0 {
		var err error
		if seen, err = tx.RecentContacts(ctx, accountID, emails, phones, since); err != nil {
			return err
		}
	}
	for k := range fresh {
		p := &fresh[k]
		j := batch[p.job]
		dup := false
		if st := j.settings[junk.Duplicate]; st.Enabled && !j.v.Partial {
			from := p.lead.CreatedAt.Add(-dupWindow(st))
			same := func(email, phone string, at time.Time) bool {
				return !at.Before(from) && ((email != "" && email == p.keys.Email.Hash) || (phone != "" && phone == p.keys.Phone.Hash))
			}
			for _, c := range seen {
				if same(c.EmailHash, c.PhoneHash, c.CreatedAt) {
					dup = true
					break
				}
			}
			for _, q := range fresh[:k] {
				if !batch[q.job].v.Partial && same(q.keys.Email.Hash, q.keys.Phone.Hash, q.lead.CreatedAt) {
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
