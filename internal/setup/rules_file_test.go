package setup

import (
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

const rulesJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "send_rules": [
    {"name": "Completed leads", "dataset": "Main", "mode": "automatic_completed", "event_name": "Lead"},
    {"name": "Big budgets", "dataset": "main", "mode": "automatic_match", "event_name": "QualifiedLead",
     "action_source": "system_generated", "combinator": "or",
     "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "5000"},
                    {"field": "email_domain", "match_type": "is_empty"}],
     "value": {"field": "fields.budget"}, "currency": "EUR", "test_event_code": "TEST1", "enabled": false},
    {"name": "Booked", "dataset": "Main", "mode": "booking", "event_name": "Schedule",
     "value": 150.5, "currency": {"field": "fields.currency"}, "enabled": true},
    {"name": "No currency", "dataset": "Main", "mode": "manual", "event_name": "Contact", "value": null, "currency": ""}
  ]
}`

func TestDecodeRules(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(rulesJSON))
	if len(problems) > 0 {
		t.Fatalf("Decode problems = %q; want none", problems)
	}
	want := []RuleSpec{
		{Name: "Completed leads", Dataset: "Main", Mode: rule.AutomaticCompleted, EventName: "Lead", Enabled: true},
		{Name: "Big budgets", Dataset: "main", Mode: rule.AutomaticMatch, EventName: "QualifiedLead", ActionSource: "system_generated",
			Combinator: rule.Or, Conditions: []rule.Condition{{Field: "fields.budget", MatchType: rule.GT, Pattern: "5000"}, {Field: "email_domain", MatchType: rule.IsEmpty}},
			Value: &ValueSpec{Field: "fields.budget"}, Currency: &CurrencySpec{Code: "EUR"}, TestEventCode: "TEST1", Enabled: false},
		{Name: "Booked", Dataset: "Main", Mode: rule.Booking, EventName: "Schedule", Value: &ValueSpec{Fixed: 150.5},
			Currency: &CurrencySpec{Field: "fields.currency"}, Enabled: true},
		{Name: "No currency", Dataset: "Main", Mode: rule.Manual, EventName: "Contact", Enabled: true},
	}
	for i := range f.SendRules {
		if len(f.SendRules[i].Conditions) == 0 {
			f.SendRules[i].Conditions = nil
		}
	}
	if !reflect.DeepEqual(f.SendRules, want) {
		t.Errorf("Decode send_rules =\n%+v\nwant\n%+v", f.SendRules, want)
	}
	if ps := f.Validate(env(nil)); len(ps) > 0 {
		t.Errorf("Validate = %q; want no problems", ps)
	}

	// Absent and null send_rules leave the rules alone; [] replaces them.
	for _, tt := range []struct {
		json    string
		present bool
	}{
		{`{"account": {}}`, false},
		{`{"account": {}, "send_rules": null}`, false},
		{`{"account": {}, "send_rules": []}`, true},
	} {
		f, _ := Decode(strings.NewReader(tt.json))
		if got := f.SendRules != nil; got != tt.present {
			t.Errorf("Decode(%s) send_rules present = %v; want %v", tt.json, got, tt.present)
		}
	}
}

func TestDecodeRuleProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rule string // one send rule's JSON, or the whole send_rules value after "=="
		want []string
	}{
		{"value as a string", `{"name": "R", "value": "100"}`, []string{`send_rules[0].value: must be a number like 250, or {"field": "fields.budget"} to read it from each lead, not a string`}},
		{"value as a list", `{"name": "R", "value": [100]}`, []string{"send_rules[0].value: must be a number like 250, or {\"field\": \"fields.budget\"} to read it from each lead, not a list"}},
		{"value object without field", `{"name": "R", "value": {}}`, []string{"send_rules[0].value.field: required: the lead field to read"}},
		{"value object with another key", `{"name": "R", "value": {"from": "fields.budget"}}`, []string{"send_rules[0].value.from: unknown field; known fields are field"}},
		{"value field not a string", `{"name": "R", "value": {"field": 3}}`, []string{"send_rules[0].value.field: must be a string"}},
		{"value true", `{"name": "R", "value": true}`, []string{"send_rules[0].value: must be a number like 250, or {\"field\": \"fields.budget\"} to read it from each lead, not true or false"}},
		{"currency as a number", `{"name": "R", "currency": 978}`, []string{`send_rules[0].currency: must be an ISO 4217 code like "EUR", or {"field": "fields.currency"} to read it from each lead, not a number`}},
		{"currency object without field", `{"name": "R", "currency": {"code": "EUR"}}`, []string{"send_rules[0].currency.code: unknown field; known fields are field"}},
		{"conditions not a list", `{"name": "R", "conditions": {"field": "email"}}`, []string{"send_rules[0].conditions: must be a list of conditions, not an object"}},
		{"condition not an object", `{"name": "R", "conditions": ["email = x"]}`, []string{"send_rules[0].conditions[0]: must be an object like"}},
		{"condition unknown key", `{"name": "R", "conditions": [{"field": "email", "match_type": "equals", "value": "x"}]}`, []string{"send_rules[0].conditions[0].value: unknown field; known fields are field, match_type, pattern"}},
		{"pattern as a number", `{"name": "R", "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": 5000}]}`, []string{`send_rules[0].conditions[0].pattern: must be a string (numbers too: "5000"), not a number`}},
		{"enabled as a string", `{"name": "R", "enabled": "yes"}`, []string{"send_rules[0].enabled: must be true or false, not a string"}},
		{"unknown rule key", `{"name": "R", "priority": 1}`, []string{"send_rules[0].priority: unknown field; known fields are name, dataset, destinations, mode, event_name, action_source, combinator, conditions, groups, value, currency, test_event_code, enabled"}},
		{"rule not an object", `"R"`, []string{"send_rules[0]: must be an object like"}},
		{"NUL in a name", `{"name": "R\u0000"}`, []string{`send_rules[0].name: contains a NUL character (\u0000); remove it`}},
		{"NUL in a pattern", `{"name": "R", "conditions": [{"field": "email", "match_type": "equals", "pattern": "a\u0000"}]}`, []string{`send_rules[0].conditions[0].pattern: contains a NUL character`}},
		{"send_rules not a list", `=={"name": "R"}`, []string{"send_rules: must be a list of send rules, not an object"}},
		{"too many rules", "==[" + strings.Repeat(`{"name": "R"},`, maxRules) + `{"name": "R"}]`, []string{"send_rules: use at most 200 send rules, not 201"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := "[" + tt.rule + "]"
			if v, ok := strings.CutPrefix(tt.rule, "=="); ok {
				list = v
			}
			doc := `{"account": {"slug": "acme"}, "send_rules": ` + list + `}`
			_, problems := Decode(strings.NewReader(doc))
			if len(problems) != len(tt.want) {
				t.Fatalf("Decode(%.200s) problems = %q; want %d: %q", doc, problems, len(tt.want), tt.want)
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("Decode problem %d = %q; want it to start with %q", i, p, tt.want[i])
				}
			}
		})
	}
}

// TestValidateRuleProblems checks each problem a send rule can have, at
// its JSON path, with rule.Compile's problems under the rule's path.
func TestValidateRuleProblems(t *testing.T) {
	t.Parallel()
	match := func(cs ...rule.Condition) func(*RuleSpec) {
		return func(r *RuleSpec) { r.Mode, r.Conditions = rule.AutomaticMatch, cs }
	}
	tests := []struct {
		name   string
		change func(*RuleSpec)
		want   []string // prefixes; none for a valid rule
	}{
		{"valid", func(*RuleSpec) {}, nil},
		{"dataset of the account, not in the file", func(r *RuleSpec) { r.Dataset = "from ui" }, nil},
		{"dataset of the file, another case", func(r *RuleSpec) { r.Dataset = "DEMO" }, nil},
		{"unknown dataset", func(r *RuleSpec) { r.Dataset = "Nope" },
			[]string{`send_rules[0].dataset: no dataset is named "Nope" in the file or the account; there are "Main", "Demo", "From UI"`}},
		{"no dataset", func(r *RuleSpec) { r.Dataset = " " }, []string{"send_rules[0].dataset: required"}},
		{"no name", func(r *RuleSpec) { r.Name = "" }, []string{"send_rules[0].name: required"}},
		{"long name", func(r *RuleSpec) { r.Name = strings.Repeat("n", 101) }, []string{"send_rules[0].name: use at most 100 characters"}},
		{"bad mode", func(r *RuleSpec) { r.Mode = "sometimes" }, []string{`send_rules[0].mode: "sometimes" is not a send mode; use one of automatic_completed,`}},
		{"bad combinator", func(r *RuleSpec) { r.Combinator = "xor" }, []string{`send_rules[0].combinator: "xor" is not a combinator`}},
		{"bad regex", match(rule.Condition{Field: "email", MatchType: rule.Regex, Pattern: "(["}),
			[]string{"send_rules[0].conditions[0].pattern: this regular expression does not compile"}},
		{"unknown match type", match(rule.Condition{Field: "email", MatchType: "like", Pattern: "x"}),
			[]string{`send_rules[0].conditions[0].match_type: "like" is not a match type`}},
		{"number match on text", match(rule.Condition{Field: "email", MatchType: rule.GT, Pattern: "5"}),
			[]string{"send_rules[0].conditions[0].match_type: email is text: gt compares numbers"}},
		{"not a number for lt", match(rule.Condition{Field: "fields.budget", MatchType: rule.LT, Pattern: "$5,000"}),
			[]string{`send_rules[0].conditions[0].pattern: lt needs a number, like 1000 or 2.5, not "$5,000"`}},
		{"unknown field", match(rule.Condition{Field: "emial", MatchType: rule.Equals, Pattern: "x"}),
			[]string{`send_rules[0].conditions[0].field: unknown field "emial"; did you mean email?`}},
		{"empty pattern", match(rule.Condition{Field: "email", MatchType: rule.Contains}),
			[]string{"send_rules[0].conditions[0].pattern: contains needs a pattern"}},
		{"pattern with is_empty", match(rule.Condition{Field: "email", MatchType: rule.IsEmpty, Pattern: "x"}),
			[]string{"send_rules[0].conditions[0].pattern: is_empty takes no pattern"}},
		{"second condition", match(rule.Condition{Field: "email", MatchType: rule.NotEmpty}, rule.Condition{Field: "junk", MatchType: rule.Equals, Pattern: "maybe"}),
			[]string{"send_rules[0].conditions[1].pattern: junk is true or false"}},
		{"conditions on automatic_completed", func(r *RuleSpec) {
			r.Conditions = []rule.Condition{{Field: "email", MatchType: rule.NotEmpty}}
		}, []string{"send_rules[0].conditions: automatic_completed sends every completed lead, so it takes no conditions"}},
		{"automatic_match without conditions", match(), []string{"send_rules[0].conditions: automatic_match needs at least one condition"}},
		{"no event name", func(r *RuleSpec) { r.EventName = "" }, []string{"send_rules[0].event_name: choose an event"}},
		{"standard event in another case", func(r *RuleSpec) { r.EventName = "lead" }, []string{"send_rules[0].event_name: write Lead for Meta's standard event"}},
		{"event name with a bad character", func(r *RuleSpec) { r.EventName = "Lead!" }, []string{`send_rules[0].event_name: '!' is not allowed in an event name`}},
		{"long event name", func(r *RuleSpec) { r.EventName = strings.Repeat("E", 41) }, []string{"send_rules[0].event_name: use at most 40 characters"}},
		{"automatic_partial with a standard event", func(r *RuleSpec) { r.Mode = rule.AutomaticPartial },
			[]string{"send_rules[0].event_name: partial leads need a custom event name, like PartialLead"}},
		{"automatic_partial with a custom event", func(r *RuleSpec) { r.Mode, r.EventName = rule.AutomaticPartial, "PartialLead" }, nil},
		{"bad action source", func(r *RuleSpec) { r.ActionSource = "crm" }, []string{`send_rules[0].action_source: "crm" is not an action source; use one of website, system_generated,`}},
		{"bad currency", func(r *RuleSpec) { r.Currency = &CurrencySpec{Code: "euro"} }, []string{`send_rules[0].currency: "euro" is not an ISO 4217 code`}},
		{"lower-case currency", func(r *RuleSpec) { r.Currency = &CurrencySpec{Code: "eur"} }, []string{`send_rules[0].currency: "eur" is not an ISO 4217 code; write one like USD or EUR, in upper case`}},
		{"fund code as currency", func(r *RuleSpec) { r.Currency = &CurrencySpec{Code: "CLF"} }, []string{`send_rules[0].currency: "CLF" is not an ISO 4217 code`}},
		{"currency from an unknown field", func(r *RuleSpec) { r.Currency = &CurrencySpec{Field: "currency"} }, []string{`send_rules[0].currency.field: unknown field "currency"`}},
		{"negative value", func(r *RuleSpec) { r.Value = &ValueSpec{Fixed: -5} }, []string{"send_rules[0].value: must be between 0 and 1000000000000"}},
		{"huge value", func(r *RuleSpec) { r.Value = &ValueSpec{Fixed: 2e12} }, []string{"send_rules[0].value: must be between 0 and 1000000000000"}},
		{"value from an unknown field", func(r *RuleSpec) { r.Value = &ValueSpec{Field: "budget"} }, []string{`send_rules[0].value.field: unknown field "budget"`}},
		{"value and currency from fields", func(r *RuleSpec) {
			r.Value, r.Currency = &ValueSpec{Field: "fields.budget"}, &CurrencySpec{Field: "fields.currency"}
		}, nil},
		{"long test event code", func(r *RuleSpec) { r.TestEventCode = strings.Repeat("T", 101) }, []string{"send_rules[0].test_event_code: use at most 100 characters"}},
	}
	k := &known{datasets: map[string]models.Dataset{"from ui": {Name: "From UI"}, "main": {Name: "Main"}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := acmeFile()
			r := RuleSpec{Name: "Qualified", Dataset: "Main", Mode: rule.AutomaticCompleted, EventName: "Lead", Enabled: true}
			tt.change(&r)
			f.SendRules = []RuleSpec{r}
			got := f.validate(env(acmeEnv()), k)
			if len(got) != len(tt.want) {
				t.Fatalf("validate = %q; want %d problems: %q", got, len(tt.want), tt.want)
			}
			for i, p := range got {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("problem %d = %q; want it to start with %q", i, p, tt.want[i])
				}
			}
		})
	}
}

func TestValidateRuleNamesAndDatasets(t *testing.T) {
	t.Parallel()
	f := acmeFile()
	f.SendRules = []RuleSpec{
		{Name: "Qualified", Dataset: "Main", EventName: "Lead", Enabled: true},
		{Name: " qualified ", Dataset: "Elsewhere", EventName: "Lead", Enabled: true},
		{Name: "Other", Dataset: "Demo", EventName: "Lead", Enabled: true},
		{Name: "QUALIFIED", Dataset: "Demo", EventName: "Lead", Enabled: true},
	}
	want := []string{
		`send_rules[1].name: "qualified" is also the name of send_rules[0]; rule names must differ (ignoring case)`,
		`send_rules[1].dataset: no dataset is named "Elsewhere" in the file or the account; there are "Main", "Demo"`,
		`send_rules[3].name: "QUALIFIED" is also the name of send_rules[0]`,
	}
	got := f.validate(env(acmeEnv()), &known{datasets: map[string]models.Dataset{}})
	if len(got) != len(want) {
		t.Fatalf("validate = %q; want %q", got, want)
	}
	for i, p := range got {
		if !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d = %q; want it to start with %q", i, p, want[i])
		}
	}
	// Without the database (the command line's first check), a dataset
	// that is not in the file may be the account's: no problem yet.
	if got := f.Validate(env(acmeEnv())); len(got) != 2 {
		t.Errorf("Validate = %q; want only the two name problems", got)
	}
	// An account without datasets says so.
	f.Datasets = nil
	got = f.validate(env(acmeEnv()), &known{datasets: map[string]models.Dataset{}})
	if len(got) == 0 || got[0].String() != `send_rules[0].dataset: no dataset is named "Main": the account has no dataset yet; add it to datasets` {
		t.Errorf("validate without datasets = %q; want the rule's dataset problem", got)
	}
}
