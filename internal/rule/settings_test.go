package rule

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

func TestAmount(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"250", 250, true}, {" 99.50 ", 99.5, true}, {"0", 0, true}, {"1000000000000", 1e12, true},
		{"1000000000001", 0, false}, {"$250", 0, false}, {"1,000", 0, false}, {"-5", 0, false}, {"1e3", 0, false},
		{"NaN", 0, false}, {"Inf", 0, false}, {"0x10", 0, false}, {"", 0, false}, {".5", 0, false},
	} {
		if got, ok := Amount(tt.in); ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("Amount(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// CheckRule checks what a rule sets beyond its Spec, each problem at the
// column at fault, and compiles the rule when there is none.
func TestCheckRule(t *testing.T) {
	ok := models.SendRule{Mode: string(AutomaticCompleted), EventName: "Lead", Conditions: "[]"}
	big, neg := 2e12, -1.0
	for _, tt := range []struct {
		name string
		edit func(*models.SendRule)
		path string
		want string
	}{
		{"fine", func(*models.SendRule) {}, "", ""},
		{"action source", func(r *models.SendRule) { r.ActionSource = "carrier_pigeon" }, "action_source", `"carrier_pigeon" is not an action source; use one of website, system_generated,`},
		{"value too big", func(r *models.SendRule) { r.Value = &big }, "value", "must be between 0 and 1000000000000"},
		{"negative value", func(r *models.SendRule) { r.Value = &neg }, "value", "must be between 0"},
		{"value field", func(r *models.SendRule) { r.ValueField = "budget" }, "value_field", `unknown field "budget"`},
		{"currency field", func(r *models.SendRule) { r.CurrencyField = "fields.cur" }, "currency_field", `unknown field "fields.cur"`},
		{"currency", func(r *models.SendRule) { r.Currency = "eur" }, "currency", `"eur" is not an ISO 4217 code`},
		{"fund code", func(r *models.SendRule) { r.Currency = "CLF" }, "currency", `"CLF" is not an ISO 4217 code`},
		{"long test code", func(r *models.SendRule) { r.TestEventCode = strings.Repeat("T", 101) }, "test_event_code", "use at most 100 characters"},
		{"test code with a space", func(r *models.SendRule) { r.TestEventCode = "TEST 1" }, "test_event_code", "no spaces"},
		{"event name, as Compile says", func(r *models.SendRule) { r.EventName = "" }, "event_name", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			m, problems := CheckRule(r, Schema{Custom: []string{"budget"}})
			if tt.path == "" {
				if m == nil || problems != nil {
					t.Fatalf("CheckRule = %v, %v; want a matcher", m, problems)
				}
				return
			}
			if m != nil || len(problems) != 1 || problems[0].Path != tt.path || !strings.Contains(problems[0].Message, tt.want) {
				t.Errorf("CheckRule = %v; want one problem at %s saying %q", problems, tt.path, tt.want)
			}
		})
	}
}

// A Purchase needs a value: fixed, from a lead field, or for a stage
// mapping from the stage change; its currency may come from anywhere, the
// account's last. Only a stage mapping takes its value or currency from
// the change.
func TestCheckRulePurchaseValue(t *testing.T) {
	fixed := 250.0
	for _, tt := range []struct {
		name string
		r    models.SendRule
		path string
		want string
	}{
		{"purchase with a fixed value", models.SendRule{Mode: string(Manual), EventName: "Purchase", Value: &fixed}, "", ""},
		{"purchase with a value from a field", models.SendRule{Mode: string(Manual), EventName: "Purchase", ValueField: "fields.budget"}, "", ""},
		{"purchase with a value and a currency from fields", models.SendRule{Mode: string(Manual), EventName: "Purchase",
			ValueField: "fields.budget", CurrencyField: "fields.budget"}, "", ""},
		{"purchase without a value", models.SendRule{Mode: string(Manual), EventName: "Purchase"}, "value",
			"a Purchase needs a value, and Meta refuses one without it: read it from a lead field"},
		{"automatic purchase without a value", models.SendRule{Mode: string(AutomaticCompleted), EventName: "Purchase", Currency: "EUR"}, "value",
			"a Purchase needs a value"},
		{"stage purchase from the change", models.SendRule{Mode: string(Stage), Stage: "won", EventName: "Purchase",
			ValueField: models.StageValueFromChange}, "", ""},
		{"stage purchase with value and currency from the change", models.SendRule{Mode: string(Stage), Stage: "won", EventName: "Purchase",
			ValueField: models.StageValueFromChange, CurrencyField: models.StageValueFromChange}, "", ""},
		{"stage purchase with a fixed value, the change's currency", models.SendRule{Mode: string(Stage), Stage: "won", EventName: "Purchase",
			Value: &fixed, CurrencyField: models.StageValueFromChange}, "", ""},
		{"stage purchase without a value", models.SendRule{Mode: string(Stage), Stage: "won", EventName: "Purchase", Currency: "USD"}, "value",
			"take it from the stage change (the deal's value)"},
		{"stage mapping of another event needs no value", models.SendRule{Mode: string(Stage), Stage: "qualified", EventName: "QualifiedLead"}, "", ""},
		{"purchase is case-sensitive", models.SendRule{Mode: string(Manual), EventName: "purchase_done"}, "", ""},
		{"only a stage mapping takes the change's value", models.SendRule{Mode: string(Manual), EventName: "Purchase",
			ValueField: models.StageValueFromChange}, "value_field", `unknown field "change"`},
		{"only a stage mapping takes the change's currency", models.SendRule{Mode: string(Manual), EventName: "Lead",
			CurrencyField: models.StageValueFromChange}, "currency_field", `unknown field "change"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Conditions = "[]"
			m, problems := CheckRule(tt.r, Schema{Custom: []string{"budget"}})
			if tt.path == "" {
				if m == nil || problems != nil {
					t.Fatalf("CheckRule = %v, %v; want a matcher", m, problems)
				}
				return
			}
			if m != nil || len(problems) != 1 || problems[0].Path != tt.path || !strings.Contains(problems[0].Message, tt.want) {
				t.Errorf("CheckRule = %v; want one problem at %s saying %q", problems, tt.path, tt.want)
			}
		})
	}
}
