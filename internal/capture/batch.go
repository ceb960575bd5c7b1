package capture

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/internal/lines"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Leads posted at the same time are written together: each account has a
// line of waiting captures and, while it is not empty, writer goroutines
// that each take the captures waiting and store them in one transaction,
// with a few set-at-a-time statements instead of several round trips per
// lead (group commit). Each caller still gets its own answer, and its lead
// and events still land together or not at all. A single lead is a batch
// of one: there is one capture path.
//
// A busy account has up to batchWriters batches in flight, so that its
// captures are read and decided while an earlier batch commits. Batches
// written at the same time have no lead in common: a capture waits while
// an earlier one of the same external id, email or phone is written or
// waits (marks), so the later of two leads of one person is the duplicate,
// deterministically, whichever batch they fall in. What one account's send
// rules cost to match is spent in its own writers, never in another
// account's. Replicas still write side by side.

// maxBatch bounds how many captures share one transaction.
const maxBatch = 64

// batchWriters bounds how many batches of one account are written at
// once; sideBatch is how many captures must wait, while one is written,
// for another writer to take them. A batch's statements, triggers and
// commit cost the database much the same whatever its size, so smaller
// batches side by side would cost more per lead than they save in waiting.
const (
	batchWriters = 3
	sideBatch    = 8
)

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

// batcher keeps a line of waiting captures per account, and writers for
// each line that is not empty (lines.Lines).
type batcher struct {
	c     *Capturer
	lines *lines.Lines[*job]
	// observe, when set (tests), learns each batch's account and size
	// before the batch is written.
	observe func(accountID int64, size int)
}

func newBatcher(c *Capturer) *batcher {
	b := &batcher{c: c}
	b.lines = &lines.Lines[*job]{Max: maxBatch, Writers: batchWriters, Side: sideBatch, Marks: marks, Write: b.write}
	return b
}

// marks are what a capture may not share with a capture of another batch
// written at the same time: its external id and its match keys' hashes,
// which the lookup of existing leads and the duplicate check read.
func marks(j *job) []string {
	var ms []string
	if id := j.v.ExternalID; id != nil {
		ms = append(ms, "x"+*id)
	}
	if h := j.lead.EmailHash; h != "" {
		ms = append(ms, "e"+h)
	}
	if h := j.lead.PhoneHash; h != "" {
		ms = append(ms, "p"+h)
	}
	return ms
}

// submit hands a capture to its account's writer and waits for its
// answer.
func (b *batcher) submit(ctx context.Context, j *job) (Result, error) {
	j.ctx, j.done = ctx, make(chan jobResult, 1)
	b.lines.Add(j.acc.ID, j)
	// Once queued the capture is written even if the caller gives up: a
	// retry with the same external_id then finds it.
	r := <-j.done
	return r.res, r.err
}

// write writes a batch of an account's captures on one of its writers.
// When matching the account's rules for the batch took long, the account
// rests as long again before its next batch, with one batch in flight, so
// that it takes at most half of a core, whatever its rules, and leaves the
// rest to the other accounts' writers and the database.
func (b *batcher) write(accountID int64, batch []*job) (rest time.Duration) {
	if b.observe != nil {
		b.observe(accountID, len(batch))
	}
	if spent := b.c.write(batch); spent > costlyMatching {
		return spent
	}
	return 0
}

// costlyMatching is how long matching one batch's leads against their
// account's rules may take before its writer pauses as long again: a few
// milliseconds, where usual rules take microseconds a lead.
const costlyMatching = 5 * time.Millisecond

// conflictTries bounds how often a batch is tried again after another
// replica took one of its external ids between the lookup and the write.
const conflictTries = 3

// write captures a batch and answers each of its jobs, in rounds: a round
// leaves for the next a job whose external_id an earlier job of the round
// also has, which then finds that lead. After a conflict the round is tried
// again, and its lookup finds the lead another replica stored; after any
// other failure each job is tried alone, so one bad lead never costs the
// others their capture.
func (c *Capturer) write(batch []*job) (matching time.Duration) {
	queued := false
	for tries := 0; len(batch) > 0; {
		answers, later, spent, err := c.captureRound(batch)
		matching += spent
		switch {
		case err == nil:
			for _, a := range answers {
				queued = queued || len(a.res.Events) > 0
				a.job.done <- a.jobResult
			}
			batch, tries = later, 0
		case errors.Is(err, store.ErrConflict) && tries < conflictTries:
			tries++
		case len(batch) > 1:
			slog.Warn("batched capture failed; capturing one by one", slog.Int("leads", len(batch)), slog.Any("error", err))
			for _, j := range batch {
				matching += c.write([]*job{j})
			}
			batch = nil
		default:
			batch[0].done <- jobResult{err: err}
			batch = nil
		}
	}
	if queued {
		c.notify()
	}
	return matching
}

// answer is a job's answer, given once its round is stored.
type answer struct {
	job *job
	jobResult
}

// item is a lead a round writes: new, or a partial lead completed.
type item struct {
	job       *job
	lead      models.Lead
	completed bool
	events    []models.Event
}

// captureRound captures a batch with two trips to the database: one to
// learn which leads exist, which contacts are recent and where events go,
// and to reserve the new leads' ids; one to store the new and completed
// leads and their events in one transaction. It returns the answers, the
// jobs left for the next round, and how long deciding the leads' events
// took (matching their account's rules).
func (c *Capturer) captureRound(batch []*job) ([]answer, []*job, time.Duration, error) {
	ctx := context.Background()
	queries, groups := captureQueries(batch)
	facts, ids, err := c.store.LookupCapture(ctx, queries, len(batch))
	if err != nil {
		return nil, nil, 0, err
	}
	var (
		matching time.Duration
		items    []item
		existing []answer // answered after the write, with the stored lead
		later    []*job
		w        store.Captured
	)
	for _, q := range queries {
		f := facts[q.AccountID]
		seen := map[string]bool{}
		first := len(items)
		for _, i := range groups[q.AccountID] {
			j := batch[i]
			it := item{job: j, lead: j.lead}
			if ext := j.v.ExternalID; ext != nil {
				if seen[*ext] {
					later = append(later, j)
					continue
				}
				seen[*ext] = true
				if p, ok := f.Existing[*ext]; ok {
					if !p.Partial || j.v.Partial {
						existing = append(existing, answer{job: j, jobResult: jobResult{res: Result{Lead: models.Lead{ID: p.ID, AccountID: q.AccountID}}}})
						continue
					}
					it.completed = true
					it.lead.ID, it.lead.ReceivedAt, it.lead.Stage, it.lead.JunkOverride = p.ID, p.ReceivedAt, p.Stage, p.JunkOverride
				}
			}
			if !it.completed {
				it.lead.ID, ids = ids[0], ids[1:]
			}
			items = append(items, it)
		}
		if err := judgeBatch(items[first:], f.Contacts); err != nil {
			return nil, nil, 0, err
		}
		for k := first; k < len(items); k++ {
			it := &items[k]
			start := time.Now()
			it.events = c.matchers.Decide(decide.Input{Account: it.job.acc, Datasets: f.Datasets, Rules: f.Rules,
				Lead: it.lead, Keys: it.job.keys}).New
			matching += time.Since(start)
			w.Events = append(w.Events, it.events...)
			if it.completed {
				w.Completed = append(w.Completed, it.lead)
			} else {
				w.New = append(w.New, it.lead)
			}
		}
	}

	err = c.store.SaveCaptured(ctx, w)
	lost := err != nil && len(w.New) > 0 && c.committedAnyway(ctx, err, w.New[0])
	if err != nil && !lost {
		return nil, nil, 0, err
	}
	answers := make([]answer, 0, len(batch)-len(later))
	for _, it := range items {
		outcome := Created
		if it.completed {
			outcome = Upgraded
		}
		if lost {
			// The answer was lost after the commit: read what was stored.
			r := c.existingByID(ctx, it.lead.AccountID, it.lead.ID)
			r.res.Outcome = outcome
			answers = append(answers, answer{job: it.job, jobResult: r})
			continue
		}
		var reasons []junk.Reason
		_ = json.Unmarshal([]byte(it.lead.JunkReasons), &reasons)
		answers = append(answers, answer{job: it.job, jobResult: jobResult{res: Result{Lead: it.lead, Outcome: outcome, Reasons: reasons,
			Events: Describe(it.events, facts[it.lead.AccountID].Datasets)}}})
	}
	for _, a := range existing {
		answers = append(answers, answer{job: a.job, jobResult: c.existingByID(ctx, a.res.Lead.AccountID, a.res.Lead.ID)})
	}
	return answers, later, matching, nil
}

// captureQueries groups a batch's jobs by account (groups maps an account
// to its jobs' indexes) and says what to look up for each.
func captureQueries(batch []*job) ([]store.CaptureQuery, map[int64][]int) {
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
	return queries, groups
}

// committedAnyway tells whether a failed write was in fact committed: a
// connection lost while reading the answer fails the call after the
// commit. The write is all or nothing, so its first new lead tells. A
// conflict means nothing was written.
func (c *Capturer) committedAnyway(ctx context.Context, err error, first models.Lead) bool {
	if errors.Is(err, store.ErrConflict) {
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

// judgeBatch runs the junk signals for the leads of one account that a
// round writes, given the account's recent complete leads with the same
// hashes (the one duplicate check). A lead also counts as a repeat of an
// earlier complete lead of the same round.
func judgeBatch(items []item, seen []store.Contact) error {
	for k := range items {
		it := &items[k]
		j := it.job
		dup := false
		if st := j.settings[junk.Duplicate]; st.Enabled && !j.v.Partial {
			from := it.lead.CreatedAt.Add(-dupWindow(st))
			same := func(email, phone string, at time.Time) bool {
				return !at.Before(from) && ((email != "" && email == it.lead.EmailHash) || (phone != "" && phone == it.lead.PhoneHash))
			}
			for _, c := range seen {
				if same(c.EmailHash, c.PhoneHash, c.CreatedAt) {
					dup = true
					break
				}
			}
			for _, q := range items[:k] {
				if !q.job.v.Partial && same(q.lead.EmailHash, q.lead.PhoneHash, q.lead.CreatedAt) {
					dup = true
					break
				}
			}
		}
		if err := verdict(&it.lead, j.signals, j.settings, dup); err != nil {
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
