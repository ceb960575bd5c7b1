// Package dispatch sends queued events to their destinations, Meta's
// Conversions API and the other platforms (internal/platform): it claims
// due events per dataset (destination) in batches of up to the platform's
// maximum, builds and validates each event on its own, sends one request,
// and records what the platform answered.
// The database row is the truth: a dispatcher that dies mid-batch loses
// nothing, because its lease runs out and another claims the batch again
// with the same event ids, which Meta deduplicates.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/service"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Sender posts one batch to Meta; *capi.Client is the real one.
type Sender interface {
	Send(ctx context.Context, t capi.Target, events []json.RawMessage) (capi.Response, error)
}

// Limits of the dispatcher.
const (
	// MaxBatch is Meta's limit of events per request.
	MaxBatch = 1000
	// MaxAge is how old an event may be; older ones make Meta refuse the
	// whole request, so they are expired instead of sent.
	MaxAge = 7 * 24 * time.Hour
	// expiryMargin keeps events clear of Meta's 7-day edge.
	expiryMargin = 10 * time.Minute
	// firstProbe and maxProbe bound the wait between the tries of a held
	// dataset: 1 s, doubling with each failed try, at most 5 minutes.
	firstProbe = time.Second
	maxProbe   = 5 * time.Minute
	// probeLease is how long the probe of a held dataset, the events it
	// claims included, belongs to the dispatcher that took it, not the batch
	// Lease: a probe makes one request, which the client bounds
	// (capi.DefaultTimeout), and probeMargin covers reading, building and
	// settling its batch. A dispatcher that dies mid-probe holds the
	// dataset up no longer than this.
	probeLease  = capi.DefaultTimeout + probeMargin
	probeMargin = 5 * time.Second
)

// JunkLead is the reason on events held back because a person marked their
// lead junk (decide.JunkLead).
const JunkLead = decide.JunkLead

// NotSent is the reason on an event held back because Meta would refuse
// it, whether capture or the dispatcher finds out (decide.NotSent).
func NotSent(inv *capi.Invalid) string { return decide.NotSent(inv) }

// Options configures a Dispatcher.
type Options struct {
	Store *store.Store
	// Sender posts Meta's batches.
	Sender Sender
	// Platforms post the other kinds' batches: TikTok's (*tiktok.Client)
	// and so on. A destination whose kind has none is paused with the
	// reason.
	Platforms map[models.Kind]destination.Sender
	// Box opens the datasets' sealed tokens.
	Box *seal.Box
	Log *slog.Logger
	// GraphURL is Meta's Graph API base URL (META_GRAPH_URL).
	GraphURL string
	// DefaultVersion is used for datasets that name no API version.
	DefaultVersion string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Lease is how long a claimed batch belongs to this dispatcher; the
	// probe of a held dataset has its own, shorter lease (probeLease).
	Lease time.Duration
	// Idle is how often an idle dispatcher looks for due events.
	Idle time.Duration
	// Metrics receives counts; nil records nothing.
	Metrics *Metrics
	// Matchers keeps the rules of the events built anew compiled, shared
	// with capture and the recorder; nil makes a cache of its own.
	Matchers *decide.Matchers
}

// Dispatcher sends queued events; several may run on one Postgres.
type Dispatcher struct {
	o    Options
	loop *service.Loop
}

// New returns a Dispatcher.
func New(o Options) *Dispatcher {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Lease == 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Idle == 0 {
		o.Idle = time.Second
	}
	if o.DefaultVersion == "" {
		o.DefaultVersion = "v24.0"
	}
	if o.Matchers == nil {
		o.Matchers = &decide.Matchers{}
	}
	d := &Dispatcher{o: o}
	d.loop = service.New(service.Options{Name: "dispatch", Every: o.Idle, Log: o.Log}, func(ctx context.Context) error {
		_, err := d.Drain(ctx)
		return err
	})
	return d
}

// Notify wakes the dispatcher at once, after events were queued in this
// process. Other replicas find them at their next idle tick.
func (d *Dispatcher) Notify() { d.loop.Wake() }

// Run sends due events until ctx is done: it drains at once, when
// notified, and every Idle. A batch in flight when ctx ends is finished
// (or released) before Run returns.
func (d *Dispatcher) Run(ctx context.Context) error { return d.loop.Run(ctx) }

// InFlight is how many batches a dispatcher works on at once: while one
// waits for Meta or the database, the next is claimed and built. Claims of
// a dataset take turns and never take a lead's event while an earlier one
// is out, so each lead's events still go in event_time order. Three keep
// two cores busier than two do, at about 1.5 MB of payloads per batch.
const InFlight = 3

// Drain sends batches until no dataset has due events, and returns how many
// events it settled. Tests call it directly.
func (d *Dispatcher) Drain(ctx context.Context) (int, error) {
	var (
		wg    sync.WaitGroup
		total atomic.Int64
		errs  = make([]error, InFlight)
		rs    = newRounds(InFlight)
	)
	for i := range InFlight {
		wg.Go(func() {
			n, err := d.drain(ctx, rs)
			total.Add(int64(n))
			errs[i] = err
		})
	}
	wg.Wait()
	return int(total.Load()), errors.Join(errs...)
}

// rounds lets Drain's loops end together. A loop whose round found
// nothing waits while another still sends, and tries again after that
// one's next batch: a batch can make more due at once (the probe of a held
// dataset that lifts the hold), and the backlog then goes InFlight batches
// at a time, not one. When every loop's last round found nothing, all end.
type rounds struct {
	mu   sync.Mutex
	cond *sync.Cond
	busy int // loops in a round
	sent int // batches sent so far, across loops
}

func newRounds(loops int) *rounds {
	r := &rounds{busy: loops}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// progressed records a round that sent something.
func (r *rounds) progressed() {
	r.mu.Lock()
	r.sent++
	r.mu.Unlock()
	r.cond.Broadcast()
}

// quit takes a loop out for good (its context ended, or the database
// failed it).
func (r *rounds) quit() {
	r.mu.Lock()
	r.busy--
	r.mu.Unlock()
	r.cond.Broadcast()
}

// idle records a round that found nothing and waits: true to try another
// round after another loop's batch, false when every loop is idle.
func (r *rounds) idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy--
	if r.busy == 0 {
		r.cond.Broadcast()
		return false
	}
	seen := r.sent
	for r.sent == seen && r.busy > 0 {
		r.cond.Wait()
	}
	if r.busy == 0 {
		return false
	}
	r.busy++
	return true
}

// drain is one of Drain's loops: a batch of each due dataset in turn, while
// a round finds something to send or another loop still sends.
func (d *Dispatcher) drain(ctx context.Context, rs *rounds) (int, error) {
	total := 0
	for {
		if ctx.Err() != nil {
			rs.quit()
			return total, nil
		}
		ids, err := d.o.Store.DueDatasets(ctx, d.o.Now())
		if err != nil {
			rs.quit()
			return total, err
		}
		progress := 0
		for _, id := range ids {
			if ctx.Err() != nil {
				break
			}
			n, err := d.Batch(ctx, id)
			if err != nil {
				// One dataset's trouble must not hold up the others.
				if ctx.Err() == nil {
					d.o.Log.Error("dispatch batch", slog.Int64("dataset_id", id), slog.Any("error", err))
				}
				continue
			}
			progress += n
		}
		total += progress
		if progress > 0 {
			rs.progressed()
			continue
		}
		if !rs.idle() {
			return total, nil
		}
	}
}

// Batch claims and sends one batch of a dataset and returns how many
// events it claimed.
func (d *Dispatcher) Batch(ctx context.Context, datasetID int64) (int, error) {
	s := d.o.Store
	ds, err := s.DatasetByID(ctx, datasetID)
	if err != nil {
		return 0, err
	}
	now := d.o.Now()
	if ds.PausedAt != nil {
		return 0, nil
	}
	// A held dataset is tried with one batch at a time, its probe, which
	// one dispatcher of all replicas takes when it is due. The probe and
	// its events are leased for probeLease, and it has that long to finish
	// (its request is most of it); any other batch has half its Lease.
	lease, limit := d.o.Lease, d.o.Lease/2
	var probe *store.Lease
	if ds.HeldSince != nil {
		lease, limit = probeLease, probeLease
		l, ok, err := s.TakeProbe(ctx, ds.ID, now, lease)
		if err != nil || !ok {
			return 0, err
		}
		probe = &l
	}
	// A probe's batch is claimed under the probe's lease: c.Lease is the
	// probe's too.
	c, err := s.ClaimEvents(ctx, ds.ID, now, lease, platform.MaxBatch(ds.Of()), probe)
	switch {
	case err != nil && probe != nil:
		return 0, errors.Join(err, s.ReleaseProbe(ctx, ds.ID, *probe, now))
	case err != nil:
		return 0, err
	case len(c.Events) == 0 && probe != nil:
		// Nothing waits, so nothing is at risk: the hold ends, and the
		// next batch tries Meta as any batch does.
		return 0, d.lift(ctx, ds, c)
	case len(c.Events) == 0:
		return 0, nil
	}
	// From here the batch is ours: finish it even when ctx ends (shutdown),
	// within the lease, so nothing waits for the lease to run out.
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	if err := d.process(work, ds, c); err != nil {
		// A fresh context: work may be what ran out.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer rcancel()
		if rerr := s.ReleaseEvents(rctx, c); rerr != nil {
			d.o.Log.Error("release batch", slog.Any("error", rerr))
		}
		if probe != nil {
			// A probe that held or lifted its dataset before it failed
			// has ended its lease: nothing to release then.
			if perr := s.ReleaseProbe(rctx, ds.ID, *probe, d.o.Now()); perr != nil && !errors.Is(perr, store.ErrLeaseLost) {
				d.o.Log.Error("release probe", slog.Any("error", perr))
			}
		}
		if errors.Is(err, store.ErrLeaseLost) {
			// The batch outlived its lease and another dispatcher took it
			// over: the rest is that one's, and Meta deduplicates what both
			// sent.
			d.o.Log.Warn("dispatch batch: lease lost", slog.Int64("dataset_id", ds.ID), slog.Any("error", err))
			return 0, nil
		}
		return 0, err
	}
	return len(c.Events), nil
}

// prepared is a claimed event with its payload.
type prepared struct {
	event   models.Event
	payload json.RawMessage
	// built says the payload was built now, not queued with the event: a
	// send keeps it as the event's payload.
	built bool
}

func (d *Dispatcher) process(ctx context.Context, ds models.Dataset, c store.Claim) error {
	s := d.o.Store
	now := d.o.Now()
	acc, err := s.Account(ctx, ds.AccountID)
	if err != nil {
		return err
	}
	// Payloads prepared when the events were queued go as they are; the
	// others are built now from their leads.
	stamp := platform.Stamp(acc, ds)
	name := platform.Name(ds.Of())
	var leads map[int64]models.Lead
	var rules []models.SendRule
	if ids := unprepared(c.Events, stamp); len(ids) > 0 {
		if leads, err = s.PayloadLeads(ctx, ds.AccountID, ids); err != nil {
			return err
		}
		if rules, err = s.SendRules(ctx, ds.AccountID); err != nil {
			return err
		}
	}

	var outs []store.Outcome
	var ready []prepared
	for _, e := range c.Events {
		// A margin: an event just under 7 days old may be over by the time
		// Meta reads it, and would sink the whole request.
		if now.Sub(e.EventTime) > MaxAge-expiryMargin {
			reason := fmt.Sprintf("event_time %s is more than 7 days ago; %s would refuse the whole batch", e.EventTime.UTC().Format(time.RFC3339), name)
			if ds.HeldSince != nil {
				reason = fmt.Sprintf("%s unreachable since %s: %s", name, ds.HeldSince.UTC().Format(time.RFC3339), reason)
			}
			outs = append(outs, store.Outcome{ID: e.ID, Status: models.EventExpired, Error: reason})
			continue
		}
		if inv := (*capi.Invalid)(nil); errors.As(capi.CheckTime(e.EventTime.Unix(), now), &inv) {
			if inv.Future() {
				// A clock ahead of ours: the event becomes valid soon.
				outs = append(outs, store.Outcome{ID: e.ID, Status: models.EventQueued, Error: "event_time is in the future; waiting",
					NextAttemptAt: e.EventTime.Add(time.Second)})
				continue
			}
			outs = append(outs, store.Outcome{ID: e.ID, Status: models.EventFailed, Error: NotSent(inv)})
			continue
		}
		if capi.Prepared(e, stamp) {
			ready = append(ready, prepared{event: e, payload: json.RawMessage(e.Payload)})
			continue
		}
		body, held, err := d.build(acc, ds, e, leads, rules)
		if err != nil {
			return err
		}
		if held != nil {
			outs = append(outs, *held)
			continue
		}
		ready = append(ready, prepared{event: e, payload: body, built: true})
	}

	if ds.Mode == models.ModeDryRun {
		for _, p := range ready {
			outs = append(outs, store.Outcome{ID: p.event.ID, Status: models.EventDryRun, Payload: string(p.payload)})
		}
		d.o.Metrics.settled(ds.Of(), outs)
		return s.SettleEvents(ctx, c, nil, "", now, outs)
	}
	if len(outs) > 0 {
		d.o.Metrics.settled(ds.Of(), outs)
		if err := s.SettleEvents(ctx, c, nil, "", now, outs); err != nil {
			return err
		}
	}
	if len(ready) == 0 {
		if ds.HeldSince != nil {
			// The probe's events were all expired or held back: Meta was
			// not tried, so the next probe may go at once.
			return s.ReleaseProbe(ctx, ds.ID, c.Lease, now)
		}
		return nil
	}
	target, err := d.target(ds)
	if err != nil {
		return d.pause(ctx, ds, c, ready, err.Error())
	}
	// A send rule's test code goes with its events only: one request per
	// code, the dataset's own first.
	for _, group := range byTestCode(ready) {
		t := target
		if code := group[0].event.TestEventCode; code != "" {
			t.meta.TestEventCode = code
			t.dest.Test, t.dest.TestEventCode = true, code
		}
		held, err := d.send(ctx, ds, c, t, group)
		if err != nil {
			return err
		}
		if held {
			// The rest of the claim waits for the hold, untried.
			return s.ReleaseEvents(ctx, c)
		}
	}
	return nil
}

// byTestCode groups a batch by its events' test codes, in their order.
func byTestCode(batch []prepared) [][]prepared {
	var groups [][]prepared
	at := map[string]int{}
	for _, p := range batch {
		i, ok := at[p.event.TestEventCode]
		if !ok {
			i = len(groups)
			at[p.event.TestEventCode] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	return groups
}

// build makes the JSON of an event that has no prepared payload from its
// lead, as capture prepares it. An event that cannot be sent comes back as
// the outcome that holds it back, with the reason.
//
// Its lead changed since it was queued (or a person retried it): what the
// lead became may hold it back (decide.Matchers.Holds: a junk lead feeds
// only rules that require junk, an automatic rule's event goes only while
// the lead matches it).
func (d *Dispatcher) build(acc models.Account, ds models.Dataset, e models.Event, leads map[int64]models.Lead, rules []models.SendRule) (json.RawMessage, *store.Outcome, error) {
	held := func(reason, payload string) (json.RawMessage, *store.Outcome, error) {
		return nil, &store.Outcome{ID: e.ID, Status: models.EventFailed, Error: reason, Payload: payload}, nil
	}
	l, ok := leads[e.LeadID]
	if !ok {
		return held(models.ReasonLeadGone, "")
	}
	if reason := d.o.Matchers.Holds(rules, l, e); reason != "" {
		return held(reason, "")
	}
	keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
	if err != nil {
		return held(notSent+"the lead's match keys cannot be read: "+err.Error(), "")
	}
	body, err := platform.Prepare(capi.BuildInput{Account: acc, Dataset: ds, Lead: l, Keys: keys, Event: e})
	if inv := (*capi.Invalid)(nil); errors.As(err, &inv) {
		return held(NotSent(inv), string(body))
	}
	return body, nil, err
}

// unprepared lists the leads of the events that have no payload prepared
// with stamp.
func unprepared(evs []models.Event, stamp int64) []int64 {
	var ids []int64
	for _, e := range evs {
		if !capi.Prepared(e, stamp) {
			ids = append(ids, e.LeadID)
		}
	}
	return ids
}
