package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/country"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
)

// matchers keeps the send rules a Capturer met compiled, each until it
// changes (its UpdatedAt).
type matchers struct {
	mu   sync.Mutex
	byID map[int64]compiled
}

type compiled struct {
	at time.Time
	m  *rule.Matcher // nil: the stored rule does not compile
}

// get compiles r, or returns it compiled. A stored rule was checked when
// it was saved, against the custom fields seen then; a capture takes any
// custom field. One that no longer compiles sends nothing, and says so
// once per version.
func (ms *matchers) get(r models.SendRule) *rule.Matcher {
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

// leadEvents are the events a lead makes when it is captured, or marked not
// junk: one per enabled automatic send rule it matches, for the rule's
// dataset. The one place that decides it; the preview and the lead page
// ask the same matchers.
func (c *Capturer) leadEvents(acc models.Account, datasets []models.Dataset, rules []models.SendRule, l models.Lead, keys normalize.Keys) []models.Event {
	in := ruleInput{acc: acc, lead: l, keys: keys, datasets: datasets, rules: rules}
	return c.matchedEvents(in, rule.Mode.OnCapture, capi.RecordKey(l), l.CreatedAt)
}

func datasetOf(ds []models.Dataset, id int64) (models.Dataset, bool) {
	for _, d := range ds {
		if d.ID == id {
			return d, true
		}
	}
	return models.Dataset{}, false
}

// RuleEvent is the event send rule r makes of lead l for dataset d: named
// as the rule says, at, with the event id of recordKey (capi.RecordKey for a
// capture), its value and currency as the rule reads them from v (l's
// view), and its payload prepared. The dispatcher sends it as it is unless
// the account's or dataset's settings change before then.
//
// An event Meta would refuse (a website event without event_source_url,
// say) is held back at once, as the dispatcher would hold it when it came
// to send it: failed, with the reason, and the JSON it would have sent. The
// reply to the capture then tells the truth, and a person's retry builds it
// again from the lead, as for any failed event.
func RuleEvent(acc models.Account, d models.Dataset, r models.SendRule, l models.Lead, keys normalize.Keys, v *rule.Lead,
	recordKey string, at time.Time) models.Event {
	id := r.ID
	e := models.Event{
		AccountID: l.AccountID, DatasetID: d.ID, LeadID: l.ID, Origin: models.OriginRule, OriginID: &id, Status: models.EventQueued,
		EventName: r.EventName, EventID: capi.EventID(d.PixelID, r.EventName, recordKey), EventTime: at,
		ActionSource: r.ActionSource, TestEventCode: r.TestEventCode,
	}
	e.Value, e.Currency = ruleValue(r, v)
	_, body, err := capi.Prepare(capi.BuildInput{Account: acc, Dataset: d, Lead: l, Keys: keys, Event: e})
	var inv *capi.Invalid
	switch {
	case err == nil:
		e.Payload, e.PayloadStamp = string(body), capi.Stamp(acc, d)
	case errors.As(err, &inv):
		e.Status, e.LastError, e.Payload = models.EventFailed, dispatch.NotSent(inv), string(body)
	}
	// Else the JSON could not be encoded: the dispatcher builds it when it
	// sends the event, and holds it back if it must.
	return e
}

// ruleValue is the value and currency r gives an event of the lead v: fixed,
// or read from a field. A field that holds no amount (rule.Amount) gives no value;
// one that holds no currency code gives the account's currency (""), as
// does a rule without one.
func ruleValue(r models.SendRule, v *rule.Lead) (*float64, string) {
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

// ruleInput is what deciding a stored lead's events needs.
type ruleInput struct {
	acc      models.Account
	lead     models.Lead
	keys     normalize.Keys
	datasets []models.Dataset
	rules    []models.SendRule
}

func (c *Capturer) ruleInput(ctx context.Context, s *store.Store, l models.Lead) (ruleInput, error) {
	in := ruleInput{lead: l}
	var err error
	if in.acc, err = s.Account(ctx, l.AccountID); err != nil {
		return in, err
	}
	if in.keys, err = normalize.ParseKeys([]byte(l.MatchKeys)); err != nil {
		return in, fmt.Errorf("capture: lead %d match keys: %w", l.ID, err)
	}
	if in.datasets, err = s.Datasets(ctx, l.AccountID); err != nil {
		return in, err
	}
	in.rules, err = s.SendRules(ctx, l.AccountID)
	return in, err
}

// matchedEvents are the events of the enabled rules of the modes wants that
// the lead matches, under recordKey's event ids, at.
func (c *Capturer) matchedEvents(in ruleInput, wants func(rule.Mode) bool, recordKey string, at time.Time) []models.Event {
	var evs []models.Event
	view := rule.NewLead(&in.lead)
	for _, r := range in.rules {
		if !r.Enabled || !wants(rule.Mode(r.Mode)) {
			continue
		}
		if m := c.rules.get(r); m == nil || !m.Match(view).Matched {
			continue
		}
		if d, ok := datasetOf(in.datasets, r.DatasetID); ok {
			evs = append(evs, RuleEvent(in.acc, d, r, in.lead, in.keys, view, recordKey, at))
		}
	}
	return evs
}

// RecentWindow is how far back "apply to recent leads" and the rule
// preview look: Meta takes events up to 7 days old.
const RecentWindow = 7 * 24 * time.Hour

// ApplyRule queues the events of an account's automatic send rule for the
// leads captured since that it matches, as capture would have: the
// deterministic event ids mean a lead that has the event already, from
// capture or an earlier apply, gets nothing twice. It returns how many
// events it queued.
func (c *Capturer) ApplyRule(ctx context.Context, accountID, ruleID int64, since time.Time) (int, error) {
	r, err := c.store.SendRule(ctx, accountID, ruleID)
	if err != nil {
		return 0, err
	}
	if !rule.Mode(r.Mode).OnCapture() {
		return 0, fmt.Errorf("capture: apply rule %d: a %s rule does not send on capture", r.ID, r.Mode)
	}
	m, problems := rule.CompileRule(r, rule.Schema{Open: true})
	if len(problems) > 0 {
		return 0, fmt.Errorf("capture: apply rule %d: %s", r.ID, problems[0])
	}
	acc, err := c.store.Account(ctx, accountID)
	if err != nil {
		return 0, err
	}
	d, err := c.store.Dataset(ctx, accountID, r.DatasetID)
	if err != nil {
		return 0, err
	}
	var batch []models.Event
	queued := 0
	flush := func() error {
		_, fresh, err := c.store.EnqueueEvents(ctx, batch)
		queued += fresh
		batch = batch[:0]
		return err
	}
	view := rule.NewLead(&models.Lead{})
	err = c.store.EachRecentLead(ctx, accountID, since, func(l *models.Lead) error {
		view.Reset(l)
		if !m.Match(view).Matched {
			return nil
		}
		keys, err := normalize.ParseKeys([]byte(l.MatchKeys))
		if err != nil {
			return fmt.Errorf("capture: lead %d match keys: %w", l.ID, err)
		}
		batch = append(batch, RuleEvent(acc, d, r, *l, keys, view, capi.RecordKey(*l), l.CreatedAt))
		if len(batch) == 500 {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if queued > 0 {
		c.notify()
	}
	return queued, err
}

// ErrNotManual is SendManual's answer for a rule that is not a manual one,
// or is disabled.
var ErrNotManual = errors.New("capture: not an enabled manual send rule")

// SendManual queues the event of an account's manual send rule for one
// lead, when a person clicks its button on the lead page. The lead must
// match the rule's conditions. Clicking again queues nothing twice: the
// event id is the rule's and the lead's. It reports whether it queued.
func (c *Capturer) SendManual(ctx context.Context, accountID, leadID, ruleID int64, at time.Time) (bool, error) {
	queued := false
	err := c.store.Tx(ctx, func(tx *store.Store) error {
		l, err := tx.Lead(ctx, accountID, leadID)
		if err != nil {
			return err
		}
		r, err := tx.SendRule(ctx, accountID, ruleID)
		if err != nil {
			return err
		}
		if !r.Enabled || r.Mode != string(rule.Manual) {
			return ErrNotManual
		}
		in, err := c.ruleInput(ctx, tx, l)
		if err != nil {
			return err
		}
		in.rules = []models.SendRule{r}
		key := capi.RecordKey(l) + ":manual:" + strconv.FormatInt(r.ID, 10)
		evs := c.matchedEvents(in, func(m rule.Mode) bool { return m == rule.Manual }, key, at)
		if len(evs) == 0 {
			return ErrNoMatch
		}
		_, fresh, err := tx.EnqueueEvents(ctx, evs)
		queued = fresh > 0
		return err
	})
	if queued {
		c.notify()
	}
	return queued, err
}

// ErrNoMatch is SendManual's answer for a lead the rule's conditions rule
// out.
var ErrNoMatch = errors.New("capture: the lead does not match the rule")
