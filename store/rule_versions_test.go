package store

import (
	"reflect"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// A snapshot's JSON is what versions have stored all along (ruleJSON), and
// reads back as the rule's settings.
func TestRuleSnapshot(t *testing.T) {
	t.Parallel()
	v := 250.0
	tests := []struct {
		name string
		rule models.SendRule
	}{
		{"default rule", models.SendRule{Name: "Completed leads to Main", DatasetID: 7, Mode: "automatic_completed", EventName: "Lead",
			Combinator: "and", Conditions: "[]", Enabled: true}},
		{"every setting", models.SendRule{Name: "Big", DatasetID: 7, Mode: "automatic_match", EventName: "QualifiedLead",
			ActionSource: "system_generated", Value: &v, Currency: "EUR", TestEventCode: "TEST1", Combinator: "or",
			Conditions: `[{"field":"city","match_type":"equals","pattern":"Berlin"}]`}},
		{"value from fields", models.SendRule{Name: "F", DatasetID: 7, Mode: "booking", EventName: "Schedule",
			ValueField: "fields.deal", CurrencyField: "fields.currency", Combinator: "and", Conditions: "[]", Enabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SnapshotOf(tt.rule).JSON()
			if want := ruleJSON(tt.rule); got != want {
				t.Errorf("SnapshotOf(r).JSON() = %s; want %s", got, want)
			}
			back, ok := RuleVersion{SendRuleVersion: models.SendRuleVersion{After: got}}.AfterRule()
			if !ok {
				t.Fatal("AfterRule: not read")
			}
			if !reflect.DeepEqual(back, tt.rule) {
				t.Errorf("the snapshot reads back as %+v; want %+v", back, tt.rule)
			}
		})
	}
	if _, ok := (RuleVersion{}).BeforeRule(); ok {
		t.Error("a version without a before reads one")
	}
}
