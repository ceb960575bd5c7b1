package decide

import (
	"fmt"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// A stage change is sent by the account's stage mappings (send rules of
// mode stage) of the stage the lead reached. When it reached a stage whose
// earlier mapped stages, in the account's order, it never reached, those
// are queued first, filled in, with event times strictly increasing and
// never before the lead: Meta wants a lead's stages in order.

// StageInput is what deciding a stage change's events reads, beside the
// lead's Input.
type StageInput struct {
	Change models.StageChange
	// Stages are the account's stages, in order.
	Stages []models.Stage
	// Reached are the stages the lead reached before this change,
	// lower-cased.
	Reached map[string]bool
	Now     time.Time
}

// mappingOf says whether a rule is a stage mapping of stage.
func mappingOf(stage string) func(models.SendRule) bool {
	return func(r models.SendRule) bool {
		return rule.Mode(r.Mode) == rule.Stage && strings.EqualFold(r.Stage, stage)
	}
}

// PurchaseProblem says why stage change c cannot be sent by mapping r, a
// Purchase that takes its value from the change, when c has no value; ""
// when it can. Meta refuses a Purchase without a value.
func PurchaseProblem(r models.SendRule, c models.StageChange) string {
	if r.EventName != "Purchase" || r.ValueField != models.StageValueFromChange || c.Value != nil {
		return ""
	}
	return fmt.Sprintf("stage %s sends a Purchase, which needs the deal's value: send value (and currency)", c.Stage)
}

// ChangeProblem says why the account cannot take stage change c as it
// is, or "": one of the stage's mappings is a Purchase that needs the
// change's value (PurchaseProblem).
func ChangeProblem(rules []models.SendRule, c models.StageChange) string {
	for _, r := range rules {
		if !r.Enabled || !mappingOf(c.Stage)(r) {
			continue
		}
		if msg := PurchaseProblem(r, c); msg != "" {
			return msg
		}
	}
	return ""
}

// StageEvents are the events stage change st.Change makes of the lead in
// in (as the change leaves it): those of the stage's mappings the lead
// and the change match, after those of the earlier mapped stages it
// skipped, filled in. Several mappings making the same (dataset, event id)
// make one event, the first mapping's.
//
// The stage's mappings read the change's value and currency in their
// conditions (change.value, change.currency). A filled-in stage had no
// change of its own, and the one that skipped it carries another stage's
// deal: to its mappings those fields are unknown, so a condition on the
// value (gt, lt) fails there, as it does for a change without a value.
func (ms *Matchers) StageEvents(in Input, st StageInput) []models.Event {
	c := st.Change
	own := in
	own.Change = &c
	target := ms.matching(own, mappingOf(c.Stage))
	if len(target) == 0 {
		return nil
	}
	in.Change = nil // for the filled-in stages
	var skipped [][]models.SendRule
	if pos := stagePosition(st.Stages, c.Stage); pos >= 0 {
		for _, s := range st.Stages[:pos] {
			if st.Reached[strings.ToLower(s.Name)] || strings.EqualFold(s.Name, c.Stage) {
				continue
			}
			if ms := ms.matching(in, mappingOf(s.Name)); len(ms) > 0 {
				skipped = append(skipped, ms)
			}
		}
	}

	// Times in whole seconds, as Meta reads them: the skipped stages just
	// before the change, one second apart, but never before the lead.
	at := c.OccurredAt.UTC().Truncate(time.Second)
	first := in.Lead.CreatedAt.UTC().Truncate(time.Second)
	if in.Lead.CreatedAt.After(first) {
		first = first.Add(time.Second)
	}
	n := time.Duration(len(skipped)) * time.Second
	start := at.Add(-n)
	if start.Before(first) {
		start = first
	}
	if len(skipped) > 0 && at.Before(start.Add(n)) {
		at = start.Add(n)
	}

	view := rule.NewLead(&in.Lead)
	seen := eventSet{}
	var evs []models.Event
	add := func(e models.Event) {
		if seen.add(e) {
			evs = append(evs, e)
		}
	}
	for i, group := range skipped {
		t := start.Add(time.Duration(i) * time.Second)
		for _, r := range group {
			for _, ds := range Destinations(in.Datasets, r) {
				e := newEvent(ds, r, in.Lead, capi.StageRecordKey(in.Lead, r.Stage, ""), t)
				e.FilledIn = true
				e.LeadEventSource = c.Source
				if r.ValueField != models.StageValueFromChange {
					e.Value, e.Currency = value(r, view)
				}
				ms.finish(in, ds, &e, st.Now)
				add(e)
			}
		}
	}
	for _, r := range target {
		key := ""
		if r.Repeatable {
			key = changeKey(c)
		}
		for _, ds := range Destinations(in.Datasets, r) {
			e := newEvent(ds, r, in.Lead, capi.StageRecordKey(in.Lead, r.Stage, key), at)
			e.Value, e.Currency = stageValue(r, c, view)
			e.LeadEventSource = c.Source
			ms.finish(in, ds, &e, st.Now)
			add(e)
		}
	}
	return evs
}

// finish prepares a stage event's payload, or expires it at once when it
// is older than Meta's 7 days: the change still counts in the funnel.
func (ms *Matchers) finish(in Input, ds models.Dataset, e *models.Event, now time.Time) {
	if now.Sub(e.EventTime) > RecentWindow {
		e.Status = models.EventExpired
		e.LastError = fmt.Sprintf("event_time %s is more than 7 days ago; Meta takes events up to 7 days old",
			e.EventTime.UTC().Format(time.RFC3339))
		return
	}
	prepare(in.Account, ds, in.Lead, in.Keys, e)
}

// stageValue is the value and currency mapping r gives the event of
// change c: the change's own when r takes them from it (a value from the
// change takes its currency too, unless r fixes one), else as a rule's.
func stageValue(r models.SendRule, c models.StageChange, v *rule.Lead) (*float64, string) {
	fixed := r
	if r.ValueField == models.StageValueFromChange {
		fixed.Value, fixed.ValueField = c.Value, ""
	}
	fromChange := r.CurrencyField == models.StageValueFromChange ||
		r.ValueField == models.StageValueFromChange && r.CurrencyField == "" && r.Currency == ""
	if fromChange {
		fixed.Currency, fixed.CurrencyField = strings.ToUpper(strings.TrimSpace(c.Currency)), ""
	}
	return value(fixed, v)
}

// changeKey is a stage change's own key, for a repeatable mapping's event
// id: its change_id, else its time to the microsecond (the natural key's
// part that tells two changes to one stage apart).
func changeKey(c models.StageChange) string {
	if c.ChangeID != nil {
		return "change:" + *c.ChangeID
	}
	return "at:" + c.OccurredAt.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// stagePosition is the index of stage in ss, by name ignoring case; -1
// when it is not one of them.
func stagePosition(ss []models.Stage, stage string) int {
	for i, s := range ss {
		if strings.EqualFold(s.Name, stage) {
			return i
		}
	}
	return -1
}
