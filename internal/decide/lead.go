package decide

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/lines"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// Decider decides leads' events and writes what it decided through the
// store, for every trigger but capture (internal/capture writes a batch of
// captures itself, asking the same Matchers). It is also the recorder of
// stage changes (record.go). cmd/leadsignal builds one and hands it to
// every way in.
type Decider struct {
	store  *store.Store
	notify func()
	// Matchers keeps the account's rules compiled; capture and the
	// dispatcher share it.
	Matchers *Matchers
	// line groups the stage changes of an account that Record is given at
	// the same time into one batch.
	line *lines.Lines[*stageJob]
}

// New returns a Decider writing to s with ms's compiled rules (a new
// cache when nil); notify (may be nil) is called after events were
// queued, to wake the dispatcher.
func New(s *store.Store, ms *Matchers, notify func()) *Decider {
	if notify == nil {
		notify = func() {}
	}
	if ms == nil {
		ms = &Matchers{}
	}
	d := &Decider{store: s, notify: notify, Matchers: ms}
	d.line = &lines.Lines[*stageJob]{Max: stageLine, Writers: stageWriters, Side: stageSide, Marks: stageMarks, Write: func(accountID int64, batch []*stageJob) time.Duration {
		d.writeLine(accountID, batch)
		return 0
	}}
	return d
}

// staleTries bounds how often a batch is decided again because a lead
// changed between its read and its write.
const staleTries = 5

// changes is what the store writes of a decision.
func changes(d Decision) store.EventChanges {
	ch := store.EventChanges{New: d.New, Requeue: d.Requeue}
	for _, c := range d.Cancel {
		ch.Cancel = append(ch.Cancel, store.EventCancel{ID: c.ID, Reason: c.Reason})
	}
	return ch
}

// input reads what deciding the stored lead l's events needs.
func (d *Decider) input(ctx context.Context, l models.Lead) (Input, error) {
	in := Input{Lead: l}
	s := d.store
	var err error
	if in.Account, err = s.Account(ctx, l.AccountID); err != nil {
		return in, err
	}
	if in.Keys, err = normalize.ParseKeys([]byte(l.MatchKeys)); err != nil {
		return in, fmt.Errorf("decide: lead %d match keys: %w", l.ID, err)
	}
	if in.Datasets, err = s.Datasets(ctx, l.AccountID); err != nil {
		return in, err
	}
	if in.Rules, err = s.SendRules(ctx, l.AccountID); err != nil {
		return in, err
	}
	in.Events, err = s.LeadEvents(ctx, l.AccountID, l.ID)
	return in, err
}

// manual are the events of the enabled manual rules of in that the lead
// matches, under recordKey's event ids, at; one per (dataset, event id),
// the first rule's.
func (d *Decider) manual(in Input, recordKey string, at time.Time) []models.Event {
	var evs []models.Event
	seen := eventSet{}
	view := rule.NewLead(&in.Lead)
	for _, r := range d.Matchers.matching(in, func(r models.SendRule) bool { return rule.Mode(r.Mode) == rule.Manual }) {
		for _, ds := range Destinations(in.Datasets, r) {
			if e := Event(in.Account, ds, r, in.Lead, in.Keys, view, recordKey, at); seen.add(e) {
				evs = append(evs, e)
			}
		}
	}
	return evs
}

// ErrNotManual is SendManual's answer for a rule that is not a manual one,
// or is disabled.
var ErrNotManual = errors.New("decide: not an enabled manual send rule")

// ErrNoMatch is SendManual's answer for a lead the rule's conditions rule
// out.
var ErrNoMatch = errors.New("decide: the lead does not match the rule")

// SendManual queues the event of an account's manual send rule for one
// lead, when a person clicks its button on the lead page. The lead must
// match the rule's conditions. Clicking again queues nothing twice: the
// event id is the rule's and the lead's. It reports whether it queued.
func (d *Decider) SendManual(ctx context.Context, accountID, leadID, ruleID int64, at time.Time) (bool, error) {
	l, err := d.store.Lead(ctx, accountID, leadID)
	if err != nil {
		return false, err
	}
	r, err := d.store.SendRule(ctx, accountID, ruleID)
	if err != nil {
		return false, err
	}
	if !r.Enabled || r.Mode != string(rule.Manual) {
		return false, ErrNotManual
	}
	in, err := d.input(ctx, l)
	if err != nil {
		return false, err
	}
	in.Rules = []models.SendRule{r}
	key := capi.RecordKey(l) + ":manual:" + strconv.FormatInt(r.ID, 10)
	evs := d.manual(in, key, at)
	if len(evs) == 0 {
		return false, ErrNoMatch
	}
	_, fresh, err := d.store.EnqueueEvents(ctx, evs)
	if fresh > 0 {
		d.notify()
	}
	return fresh > 0, err
}

// Applied says what applying a rule to recent leads found and did.
type Applied struct {
	// Matched is how many recent leads the rule matches now, and Events
	// how many events they make: one for each of the rule's destinations.
	Matched int
	Events  int
	// Had is how many of those events were stored already.
	Had int
	// Queued is how many events applying queued (Events - Had when it
	// ran; 0 for a dry count).
	Queued int
}

// ApplyRule queues the events of an account's automatic send rule for the
// leads captured since that it matches as they are now, as deciding each
// lead's events would: the deterministic event ids mean a lead that has
// the event already gets nothing twice. With dry set it only counts.
func (d *Decider) ApplyRule(ctx context.Context, accountID, ruleID int64, since time.Time, dry bool) (Applied, error) {
	var out Applied
	r, err := d.store.SendRule(ctx, accountID, ruleID)
	if err != nil {
		return out, err
	}
	if !rule.Mode(r.Mode).OnCapture() {
		return out, fmt.Errorf("decide: apply rule %d: a %s rule does not send on capture", r.ID, r.Mode)
	}
	m, problems := rule.CompileRule(r, rule.Schema{Open: true})
	if len(problems) > 0 {
		return out, fmt.Errorf("decide: apply rule %d: %s", r.ID, problems[0])
	}
	acc, err := d.store.Account(ctx, accountID)
	if err != nil {
		return out, err
	}
	datasets, err := d.store.Datasets(ctx, accountID)
	if err != nil {
		return out, err
	}
	dss := Destinations(datasets, r)
	if len(dss) == 0 {
		return out, store.ErrNotFound
	}
	var batch []models.Event
	flush := func() error {
		defer func() { batch = batch[:0] }()
		if dry {
			had, err := d.store.StoredEvents(ctx, batch)
			out.Had += had
			return err
		}
		_, fresh, err := d.store.EnqueueEvents(ctx, batch)
		out.Had += len(batch) - fresh
		out.Queued += fresh
		return err
	}
	view := rule.NewLead(&models.Lead{})
	err = d.store.EachRecentLead(ctx, accountID, since, func(l *models.Lead) error {
		view.Reset(l)
		if !m.Match(view).Matched {
			return nil
		}
		out.Matched++
		keys, err := view.Keys()
		if err != nil {
			return fmt.Errorf("decide: lead %d match keys: %w", l.ID, err)
		}
		for _, ds := range dss {
			batch = append(batch, Event(acc, ds, r, *l, keys, view, capi.RecordKey(*l), l.CreatedAt))
			out.Events++
		}
		if len(batch) >= 500 {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if out.Queued > 0 {
		d.notify()
	}
	return out, err
}

// Preview counts what rule r, compiled as m, makes of the account's leads
// captured in the last 7 days (RecentWindow), as they are now: what
// ApplyRule would queue. A match is sendable to each of the rule's
// destinations (Destinations, the order of the result's Sendable) when
// Sendable says so, the check that holds events back when they are
// queued. It stops at ctx's end with ctx's error and the counts so far: a
// costly rule spends its time here, one lead at a time.
func Preview(ctx context.Context, s *store.Store, acc models.Account, datasets []models.Dataset, r models.SendRule,
	m *rule.Matcher, now time.Time) (rule.PreviewResult, error) {
	p := rule.NewPreview(m, now)
	for _, ds := range Destinations(datasets, r) {
		p.CanSend = append(p.CanSend, func(l *models.Lead, v *rule.Lead, now time.Time) bool {
			keys, err := v.Keys()
			return err == nil && Sendable(acc, ds, r, *l, keys, v, now)
		})
	}
	err := s.EachRecentLead(ctx, acc.ID, now.Add(-RecentWindow), func(l *models.Lead) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.Add(l)
		return nil
	})
	return p.Result(), err
}
