package decide

import (
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

// stageMapping is a mapping of stage sending event, with conditions.
func stageMapping(id int64, stage, event string, conds ...rule.Condition) models.SendRule {
	r := newRule(id, stage+" to "+event, string(rule.Stage), event, conds...)
	r.Stage = stage
	return r
}

// stageEvents are the events a change to stage with value and currency
// (value nil for none) makes of testLead, which reached no stage before.
func stageEvents(rules []models.SendRule, stage string, value *float64, currency string) []models.Event {
	var ms Matchers
	l := testLead()
	keys := normalize.Normalize(normalize.Input{Email: l.Email, ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent, CapturedAt: l.CreatedAt})
	in := Input{Account: account, Datasets: []models.Dataset{main}, Rules: rules, Lead: l, Keys: keys}
	now := time.Now()
	st := StageInput{
		Change: models.StageChange{AccountID: 1, LeadID: l.ID, Stage: stage, Value: value, Currency: currency, OccurredAt: now.Add(-time.Minute)},
		Stages: []models.Stage{{Name: "qualified"}, {Name: "booked"}, {Name: "won"}},
		Now:    now,
	}
	// StageEvents decides which stages read the change, whatever the
	// caller's Input says.
	in.Change = &st.Change
	return ms.StageEvents(in, st)
}

func names(evs []models.Event) []string {
	var out []string
	for _, e := range evs {
		n := e.EventName
		if e.FilledIn {
			n += " (filled in)"
		}
		out = append(out, n)
	}
	return out
}

// A mapping "won, deal value over 499.99 and currency EUR" queues its
// Purchase for a 600 EUR deal only: not for 300 EUR, another currency, or
// a change without a value.
func TestStageEventsChangeConditions(t *testing.T) {
	purchase := stageMapping(1, "won", "Purchase",
		rule.Condition{Field: "change.value", MatchType: rule.GT, Pattern: "499.99"},
		rule.Condition{Field: "change.currency", MatchType: rule.Equals, Pattern: "EUR"})
	purchase.ValueField = models.StageValueFromChange
	amount := func(f float64) *float64 { return &f }
	tests := []struct {
		name     string
		value    *float64
		currency string
		want     bool
	}{
		{"600 EUR", amount(600), "EUR", true},
		{"500 EUR", amount(500), "EUR", true},
		{"300 EUR", amount(300), "EUR", false},
		{"600 USD", amount(600), "USD", false},
		{"600 without a currency", amount(600), "", false},
		{"no value", nil, "EUR", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := stageEvents([]models.SendRule{purchase}, "won", tt.value, tt.currency)
			if !tt.want {
				if len(evs) != 0 {
					t.Errorf("events = %v; want none", names(evs))
				}
				return
			}
			if len(evs) != 1 || evs[0].EventName != "Purchase" || evs[0].Value == nil || *evs[0].Value != *tt.value ||
				evs[0].Currency != "EUR" || evs[0].Status != models.EventQueued {
				t.Fatalf("events = %+v; want one queued Purchase of %v EUR", evs, *tt.value)
			}
		})
	}
}

// A filled-in stage has no change of its own: the change that skipped it
// is another stage's deal, so to its mappings the change's fields are
// unknown. A condition on the value fails there, one that wants it empty
// holds, and the stage's own mappings read the change.
func TestStageEventsFilledInReadNoChange(t *testing.T) {
	anyValue := rule.Condition{Field: "change.value", MatchType: rule.GT, Pattern: "0"}
	noValue := rule.Condition{Field: "change.value", MatchType: rule.IsEmpty}
	rules := []models.SendRule{
		stageMapping(1, "qualified", "QualifiedLead", anyValue),
		stageMapping(2, "booked", "Schedule", noValue),
		stageMapping(3, "won", "Purchase", anyValue),
	}
	rules[2].ValueField = models.StageValueFromChange
	v := 1200.0
	got := names(stageEvents(rules, "won", &v, "EUR"))
	want := []string{"Schedule (filled in)", "Purchase"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("events = %v; want %v: qualified's mapping reads no value when filled in", got, want)
	}
}
