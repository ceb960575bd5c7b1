package decide

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// Reasons on events that are not sent because of what the lead became.
const (
	// JunkLead is the reason on an event held back because its lead is
	// junk and its rule does not require junk.
	JunkLead = models.ReasonJunkLead
	// noLongerPrefix starts the reason on an event cancelled because its
	// lead no longer matches its rule (NoLonger).
	noLongerPrefix = models.ReasonNoLonger
)

// NoLonger is the reason on an unsent event cancelled because its lead no
// longer matches rule r, why being the matcher's explanation: `not sent:
// no longer matches Qualified: condition 1 (Junk is "false") did not
// match`.
func NoLonger(r models.SendRule, why string) string {
	return noLongerPrefix + r.Name + ": " + why
}

// Cancelled reports whether reason is one a decision gave an event it
// cancelled (NoLonger, JunkLead): such an event is queued again, with its
// id, when its lead matches once more.
func Cancelled(reason string) bool { return models.Cancelled(reason) }

// NotSent is the reason on an event held back because Meta would refuse
// it, whether a decision or the dispatcher finds out.
func NotSent(inv *capi.Invalid) string { return models.ReasonNotSent + inv.Error() }

// Input is what deciding a lead's events reads.
type Input struct {
	Account  models.Account
	Datasets []models.Dataset
	// Rules are the account's send rules, in their order: the first rule
	// that makes an event owns it.
	Rules []models.SendRule
	Lead  models.Lead
	Keys  normalize.Keys
	// Events are the lead's stored events; nil for a lead not yet stored.
	Events []models.Event
	// Change is the stage change whose stage's mappings are matched: their
	// conditions on change.value and change.currency read it. nil
	// otherwise, and then those fields are unknown (see StageEvents).
	Change *models.StageChange
}

// Decision is what a lead's events become.
type Decision struct {
	// New are the events to queue; an event already stored with the same
	// (dataset, event id) is left as it is.
	New []models.Event
	// Requeue are stored events that a decision cancelled and the lead
	// matches again: they are queued again with their ids.
	Requeue []int64
	// Cancel are unsent events whose lead no longer matches their rule,
	// with the reason.
	Cancel []Cancel
}

// Cancel is an event to cancel and why.
type Cancel struct {
	ID     int64
	Reason string
}

// Empty reports whether d changes nothing.
func (d Decision) Empty() bool { return len(d.New)+len(d.Requeue)+len(d.Cancel) == 0 }

// Matchers keeps send rules compiled, each until it changes (its
// UpdatedAt). The zero value is ready; it is safe for concurrent use.
type Matchers struct {
	mu   sync.Mutex
	byID map[int64]compiled
}

type compiled struct {
	at time.Time
	m  *rule.Matcher // nil: the stored rule does not compile
}

// Get compiles r, or returns it compiled. A stored rule was checked when
// it was saved, against the custom fields seen then; a lead may carry any
// custom field. One that no longer compiles sends nothing (nil), and says
// so once per version.
func (ms *Matchers) Get(r models.SendRule) *rule.Matcher {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if c, ok := ms.byID[r.ID]; ok && c.at.Equal(r.UpdatedAt) {
		return c.m
	}
	m, problems := rule.CompileRule(r, rule.Schema{Open: true})
	if len(problems) > 0 {
		slog.Warn("send rule does not compile; it sends nothing", slog.Int64("rule_id", r.ID), slog.String("problem", problems[0].String()))
		m = nil
	}
	if ms.byID == nil {
		ms.byID = map[int64]compiled{}
	}
	ms.byID[r.ID] = compiled{at: r.UpdatedAt, m: m}
	return m
}

// Decide works out what the lead's events become now: the events of the
// enabled automatic rules it matches (at its capture time, under its
// record key), the cancelled ones it matches again, and the unsent events
// of automatic rules it no longer matches. Events of several rules with
// the same (dataset, event id) are one event, owned by the first rule in
// order. A partial lead that is completed keeps the events of its partial
// rules: completing a form is no reason to take back "started it".
func (ms *Matchers) Decide(in Input) Decision {
	view := rule.NewLead(&in.Lead)
	var d Decision
	wanted := eventSet{}
	for _, r := range ms.matching(in, automatic) {
		for _, ds := range Destinations(in.Datasets, r) {
			if e := Event(in.Account, ds, r, in.Lead, in.Keys, view, capi.RecordKey(in.Lead), in.Lead.CreatedAt); wanted.add(e) {
				d.New = append(d.New, e)
			}
		}
	}
	stored := map[eventKey]bool{}
	for _, e := range in.Events {
		k := eventKey{e.DatasetID, e.EventID}
		stored[k] = true
		switch {
		case e.Status == models.EventFailed && Cancelled(e.LastError) && wanted[k]:
			d.Requeue = append(d.Requeue, e.ID)
		case e.Status == models.EventFailed && e.LastError == JunkLead && !automaticEvent(in.Rules, e) && ms.Holds(in.Rules, in.Lead, e) == "":
			// A manual or stage event held back while the lead
			// was junk goes once it is not.
			d.Requeue = append(d.Requeue, e.ID)
		case e.Status == models.EventQueued && !wanted[k]:
			if reason := ms.unwanted(in, view, e); reason != "" {
				d.Cancel = append(d.Cancel, Cancel{ID: e.ID, Reason: reason})
			}
		}
	}
	if len(stored) > 0 {
		fresh := d.New[:0]
		for _, e := range d.New {
			if !stored[eventKey{e.DatasetID, e.EventID}] {
				fresh = append(fresh, e)
			}
		}
		d.New = fresh
	}
	return d
}

// unwanted says why a queued event that no automatic rule the lead
// matches makes must be cancelled, or "" when it stays: only an event of
// an enabled automatic rule the lead fails is cancelled. A disabled or
// deleted rule's events, and those of the other modes, stay as they are
// (Holds still keeps a junk lead's from Meta).
func (ms *Matchers) unwanted(in Input, view *rule.Lead, e models.Event) string {
	r, ok := ruleOf(in.Rules, e)
	if !ok || !r.Enabled || !automatic(r) {
		return ""
	}
	m := ms.Get(r)
	if m == nil {
		return ""
	}
	res := m.Match(view)
	switch {
	case res.Matched:
		return "" // its dataset changed: the event stays where it was queued
	case res.Reason == rule.ReasonCompleted:
		return ""
	case res.Reason == rule.ReasonJunk:
		return JunkLead
	}
	return NoLonger(r, m.Explain(res))
}

// automatic reports whether r is an automatic rule, one Decide's
// matches decide.
func automatic(r models.SendRule) bool { return rule.Mode(r.Mode).OnCapture() }

// automaticEvent reports whether e is the event of an automatic rule.
func automaticEvent(rules []models.SendRule, e models.Event) bool {
	r, ok := ruleOf(rules, e)
	return ok && automatic(r)
}

// matching are the enabled rules of in that keep says, with a destination
// of the account's, that the lead (and in.Change) matches, in order.
func (ms *Matchers) matching(in Input, keep func(models.SendRule) bool) []models.SendRule {
	view := rule.NewLead(&in.Lead)
	view.SetChange(in.Change)
	var out []models.SendRule
	for _, r := range in.Rules {
		if !r.Enabled || !keep(r) {
			continue
		}
		if !slices.ContainsFunc(in.Datasets, func(d models.Dataset) bool { return r.SendsTo(d.ID) }) {
			continue
		}
		if m := ms.Get(r); m != nil && m.Match(view).Matched {
			out = append(out, r)
		}
	}
	return out
}

// eventSet is the (dataset, event id) of the events a decision made: of
// several rules making one, the first owns it.
type eventSet map[eventKey]bool

// add adds e, and reports whether it is the first with its id.
func (s eventSet) add(e models.Event) bool {
	k := eventKey{e.DatasetID, e.EventID}
	if s[k] {
		return false
	}
	s[k] = true
	return true
}

// Holds says why the dispatcher must not send event e of lead l, built
// anew because the lead changed, or "" when it may: never a test lead's;
// a junk lead's event
// goes only for a rule that requires junk, and an automatic rule's event
// only while the lead still matches it. rules are the account's.
func (ms *Matchers) Holds(rules []models.SendRule, l models.Lead, e models.Event) string {
	if l.Test {
		return models.ReasonTestLead
	}
	r, ok := ruleOf(rules, e)
	if !ok {
		if l.Junk {
			return JunkLead
		}
		return ""
	}
	m := ms.Get(r)
	if m == nil {
		if l.Junk {
			return JunkLead
		}
		return ""
	}
	if l.Junk && !m.RequiresJunk() {
		return JunkLead
	}
	if !r.Enabled || !rule.Mode(r.Mode).OnCapture() {
		return ""
	}
	if res := m.Match(rule.NewLead(&l)); !res.Matched && res.Reason != rule.ReasonCompleted {
		return NoLonger(r, m.Explain(res))
	}
	return ""
}

// eventKey is an event's identity: its dataset and event id.
type eventKey struct {
	dataset int64
	id      string
}

func ruleOf(rules []models.SendRule, e models.Event) (models.SendRule, bool) {
	if (e.Origin != models.OriginRule && e.Origin != models.OriginStage) || e.OriginID == nil {
		return models.SendRule{}, false
	}
	for _, r := range rules {
		if r.ID == *e.OriginID {
			return r, true
		}
	}
	return models.SendRule{}, false
}

// Destinations are the destinations of ds (an account's) that rule r
// sends to, in the rule's order.
func Destinations(ds []models.Dataset, r models.SendRule) []models.Dataset {
	var out []models.Dataset
	for _, id := range r.Destinations() {
		for _, d := range ds {
			if d.ID == id {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// Event is the event send rule r makes of lead l for dataset d: named as
// the rule says, at, with the event id of recordKey (capi.RecordKey for an
// automatic rule), its value and currency as the rule reads them from v
// (l's view), and its payload prepared. The dispatcher sends it as it is
// unless the account's or dataset's settings change before then.
//
// An event Meta would refuse (a website event without event_source_url,
// say) is held back at once, as the dispatcher would hold it when it came
// to send it: failed, with the reason, and the JSON it would have sent. The
// reply to a capture then tells the truth, and a person's retry builds it
// again from the lead, as for any failed event.
func Event(acc models.Account, d models.Dataset, r models.SendRule, l models.Lead, keys normalize.Keys, v *rule.Lead,
	recordKey string, at time.Time) models.Event {
	e := newEvent(d, r, l, recordKey, at)
	e.Value, e.Currency = value(r, v)
	prepare(acc, d, l, keys, &e)
	return e
}

// newEvent is the event rule r makes of lead l for dataset d, under
// recordKey's event id, at, with neither value nor payload yet. A stage
// mapping's events are stage events (models.OriginStage).
func newEvent(d models.Dataset, r models.SendRule, l models.Lead, recordKey string, at time.Time) models.Event {
	id := r.ID
	origin := models.OriginRule
	if rule.Mode(r.Mode) == rule.Stage {
		origin = models.OriginStage
	}
	e := models.Event{
		AccountID: l.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: origin, OriginID: &id, Status: models.EventQueued,
		EventName: r.EventName, EventID: capi.EventID(d.PixelID, r.EventName, recordKey), EventTime: at,
		ActionSource: r.ActionSource,
	}
	// A rule's test event code is Meta's Test Events tool's: another
	// platform's test mode is its destination's (a Google event in
	// validateOnly is never recorded).
	if d.Of() == models.KindMeta {
		e.TestEventCode = r.TestEventCode
	}
	return e
}

// prepare builds e's payload for its destination's platform, or holds e
// back with the reason when the platform would refuse it. A test lead's event is not sent, and has no payload.
func prepare(acc models.Account, d models.Dataset, l models.Lead, keys normalize.Keys, e *models.Event) {
	if l.Test {
		e.Status, e.LastError = models.EventFailed, models.ReasonTestLead
		return
	}
	body, err := platform.Prepare(capi.BuildInput{Account: acc, Dataset: d, Lead: l, Keys: keys, Event: *e})
	var inv *capi.Invalid
	switch {
	case err == nil:
		e.Payload, e.PayloadStamp = string(body), platform.Stamp(acc, d)
	case errors.As(err, &inv):
		e.Status, e.LastError, e.Payload = models.EventFailed, NotSent(inv), string(body)
	}
	// Else the JSON could not be encoded: the dispatcher builds it when it
	// sends the event, and holds it back if it must.
}

// value is the value and currency r gives an event of the lead v: fixed,
// or read from a field. A field that holds no amount (rule.Amount) gives
// no value; one that holds no currency code gives the account's currency
// (""), as does a rule without one.
func value(r models.SendRule, v *rule.Lead) (*float64, string) {
	value := r.Value
	if r.ValueField != "" {
		value = nil
		if f, ok := rule.Amount(v.Value(r.ValueField)); ok {
			value = &f
		}
	}
	if value == nil {
		return nil, ""
	}
	currency := r.Currency
	if r.CurrencyField != "" {
		currency = strings.ToUpper(strings.TrimSpace(v.Value(r.CurrencyField)))
		if !country.ValidCurrency(currency) {
			currency = ""
		}
	}
	return value, currency
}

// Sendable reports whether an event of rule r for lead l could be sent
// now: what Event holds back at once (Meta would refuse it: capi.Check,
// the check capi.Prepare makes) is not, nor is an event older than Meta's
// 7 days, nor a test lead's.
func Sendable(acc models.Account, d models.Dataset, r models.SendRule, l models.Lead, keys normalize.Keys, v *rule.Lead, now time.Time) bool {
	if l.Test || now.Sub(l.CreatedAt) > RecentWindow {
		return false
	}
	e := newEvent(d, r, l, capi.RecordKey(l), l.CreatedAt)
	e.Value, e.Currency = value(r, v)
	return platform.Check(capi.BuildInput{Account: acc, Dataset: d, Lead: l, Keys: keys, Event: e}) == nil
}

// RecentWindow is how far back "apply to recent leads" and the rule
// preview look: Meta takes events up to 7 days old.
const RecentWindow = 7 * 24 * time.Hour
