package setup

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
)

const mappingsJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "stage_mappings": [
    {"stage": "qualified", "dataset": "Main", "event_name": "QualifiedLead"},
    {"name": "Big wins", "stage": "won", "dataset": "main", "event_name": "Purchase", "order": 1,
     "combinator": "or", "conditions": [{"field": "fields.budget", "match_type": "gt", "pattern": "500"}],
     "value": "from_change", "currency": "from_change", "repeatable": true},
    {"stage": "booked", "dataset": "Main", "event_name": "Schedule", "order": 2, "value": 150, "currency": "USD", "enabled": false},
    {"stage": "won", "dataset": "Main", "event_name": "Purchase", "value": {"field": "fields.deal"}, "currency": {"field": "fields.cur"}},
    {"stage": "lost", "dataset": "Main", "event_name": "Lost", "value": null, "currency": ""}
  ]
}`

func TestDecodeMappings(t *testing.T) {
	t.Parallel()
	f, problems := Decode(strings.NewReader(mappingsJSON))
	if len(problems) > 0 {
		t.Fatalf("Decode problems = %q; want none", problems)
	}
	want := []MappingSpec{
		{Stage: "qualified", Dataset: "Main", EventName: "QualifiedLead", Enabled: true},
		{Name: "Big wins", Stage: "won", Dataset: "main", EventName: "Purchase", Order: 1, Combinator: rule.Or,
			Conditions: []rule.Condition{{Field: "fields.budget", MatchType: rule.GT, Pattern: "500"}},
			Value:      &ValueSpec{FromChange: true}, Currency: &CurrencySpec{FromChange: true}, Repeatable: true, Enabled: true},
		{Stage: "booked", Dataset: "Main", EventName: "Schedule", Order: 2, Value: &ValueSpec{Fixed: 150}, Currency: &CurrencySpec{Code: "USD"}},
		{Stage: "won", Dataset: "Main", EventName: "Purchase", Value: &ValueSpec{Field: "fields.deal"}, Currency: &CurrencySpec{Field: "fields.cur"}, Enabled: true},
		{Stage: "lost", Dataset: "Main", EventName: "Lost", Enabled: true},
	}
	for i := range f.StageMappings {
		if len(f.StageMappings[i].Conditions) == 0 {
			f.StageMappings[i].Conditions = nil
		}
	}
	if !reflect.DeepEqual(f.StageMappings, want) {
		t.Errorf("Decode stage_mappings =\n%+v\nwant\n%+v", f.StageMappings, want)
	}
	if ps := f.Validate(env(nil)); len(ps) > 0 {
		t.Errorf("Validate = %q; want no problems", ps)
	}

	// The clean file names the mappings that have no name and orders
	// them: by order, equal orders (and the list's place for those
	// without one) in the list's order.
	c := f.clean()
	var names []string
	for _, i := range mappingOrder(c.StageMappings) {
		names = append(names, c.StageMappings[i].Name)
	}
	if want := []string{"qualified to QualifiedLead", "Big wins", "booked to Schedule", "won to Purchase", "lost to Lost"}; !reflect.DeepEqual(names, want) {
		t.Errorf("mappings in order = %q; want %q", names, want)
	}

	// The file writes what it reads.
	b, err := json.Marshal(f.StageMappings[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"value":"from_change"`, `"currency":"from_change"`, `"order":1`, `"repeatable":true`} {
		if !strings.Contains(string(b), part) {
			t.Errorf("Marshal = %s; want %s in it", b, part)
		}
	}

	// Absent and null stage_mappings leave the mappings alone; []
	// replaces them.
	for _, tt := range []struct {
		json    string
		present bool
	}{
		{`{"account": {}}`, false},
		{`{"account": {}, "stage_mappings": null}`, false},
		{`{"account": {}, "stage_mappings": []}`, true},
	} {
		f, _ := Decode(strings.NewReader(tt.json))
		if got := f.StageMappings != nil; got != tt.present {
			t.Errorf("Decode(%s) stage_mappings present = %v; want %v", tt.json, got, tt.present)
		}
	}
}

func TestDecodeMappingProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string // the file after "account"; a mapping alone is wrapped in stage_mappings
		want []string
	}{
		{"value as another string", `{"stage": "won", "value": "deal"}`, []string{`stage_mappings[0].value: must be a number like 250, "from_change" to take the value the stage change carries (a deal's), or {"field": "fields.budget"} to read it from the lead, not a string`}},
		{"currency as a number", `{"stage": "won", "currency": 978}`, []string{`stage_mappings[0].currency: must be an ISO 4217 code like "EUR", "from_change" to take the currency the stage change carries, or {"field": "fields.currency"} to read it from the lead, not a number`}},
		{"order 0", `{"stage": "won", "order": 0}`, []string{"stage_mappings[0].order: must be a whole number from 1"}},
		{"order as a fraction", `{"stage": "won", "order": 1.5}`, []string{"stage_mappings[0].order: must be a whole number from 1: the mapping's place among the stage mappings"}},
		{"order as a string", `{"stage": "won", "order": "1"}`, []string{"stage_mappings[0].order: must be a whole number from 1: the mapping's place among the stage mappings, not a string"}},
		{"repeatable as a string", `{"stage": "won", "repeatable": "yes"}`, []string{"stage_mappings[0].repeatable: must be true or false, not a string"}},
		{"unknown key", `{"stage": "won", "mode": "stage"}`, []string{"stage_mappings[0].mode: unknown field; known fields are name, stage, dataset, destinations, event_name, order, combinator, conditions, groups, value, currency, repeatable, action_source, test_event_code, enabled"}},
		{"condition unknown key", `{"stage": "won", "conditions": [{"field": "email", "value": "x"}]}`, []string{"stage_mappings[0].conditions[0].value: unknown field"}},
		{"NUL in a stage", `{"stage": "won\u0000"}`, []string{`stage_mappings[0].stage: contains a NUL character`}},
		{"not an object", `"won"`, []string{"stage_mappings[0]: must be an object like"}},
		{"not a list", `=="stage_mappings": {"stage": "won"}`, []string{"stage_mappings: must be a list of stage mappings, not an object"}},
		{"too many", `=="stage_mappings": [` + strings.Repeat(`{"stage": "won"},`, maxMappings) + `{"stage": "won"}]`, []string{"stage_mappings: use at most 200 stage mappings, not 201"}},
		{"a send rule's value from the change", `=="send_rules": [{"name": "R", "value": "from_change"}]`, []string{`send_rules[0].value: "from_change" takes the value or currency of a CRM stage change, which only stage_mappings have`}},
		{"a send rule's currency from the change", `=="send_rules": [{"name": "R", "currency": " from_change "}]`, []string{`send_rules[0].currency: "from_change" takes the value or currency of a CRM stage change`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest := `"stage_mappings": [` + tt.doc + `]`
			if v, ok := strings.CutPrefix(tt.doc, "=="); ok {
				rest = v
			}
			doc := `{"account": {"slug": "acme"}, ` + rest + `}`
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

// TestValidateMappingProblems checks each problem a stage mapping can
// have, at its JSON path, with rule.CheckRule's under the mapping's path;
// and the names send rules and stage mappings share.
func TestValidateMappingProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(f *File)
		want   []string // prefixes; none for a valid file
	}{
		{"valid", func(*File) {}, nil},
		{"stage of another case, dataset of the account", func(f *File) { f.StageMappings[0].Stage, f.StageMappings[0].Dataset = "WON", "from ui" }, nil},
		{"a stage the account lacks", func(f *File) { f.StageMappings[0].Stage = "proposal sent" }, nil},
		{"no stage", func(f *File) { f.StageMappings[0].Stage = " " }, []string{"stage_mappings[0].stage: required: the CRM stage"}},
		{"junk is no stage", func(f *File) { f.StageMappings[0].Stage = "Junk" }, []string{"stage_mappings[0].stage: Junk is a person's verdict, set on the lead page; it is not a CRM stage"}},
		{"invisible character in a stage", func(f *File) { f.StageMappings[0].Stage = "won\u200b" }, []string{"stage_mappings[0].stage: remove the invisible character U+200B"}},
		{"long stage", func(f *File) { f.StageMappings[0].Stage = strings.Repeat("s", 101) }, []string{"stage_mappings[0].stage: use at most 100 characters"}},
		{"unknown dataset", func(f *File) { f.StageMappings[0].Dataset = "Nope" },
			[]string{`stage_mappings[0].dataset: no dataset is named "Nope" in the file or the account; there are "Main", "Demo", "From UI"`}},
		{"no dataset", func(f *File) { f.StageMappings[0].Dataset = "" }, []string{"stage_mappings[0].dataset: required"}},
		{"a Purchase without a value", func(f *File) { f.StageMappings[0].Value = nil },
			[]string{"stage_mappings[0].value: a Purchase needs a value, and Meta refuses one without it: take it from the stage change"}},
		{"a Purchase with a fixed value", func(f *File) { f.StageMappings[0].Value = &ValueSpec{Fixed: 99} }, nil},
		{"a Purchase with a value from a lead field", func(f *File) { f.StageMappings[0].Value = &ValueSpec{Field: "fields.deal"} }, nil},
		{"value from an unknown field", func(f *File) { f.StageMappings[0].Value = &ValueSpec{Field: "deal"} }, []string{`stage_mappings[0].value.field: unknown field "deal"`}},
		{"negative value", func(f *File) { f.StageMappings[0].Value = &ValueSpec{Fixed: -1} }, []string{"stage_mappings[0].value: must be between 0"}},
		{"lower-case currency", func(f *File) { f.StageMappings[0].Currency = &CurrencySpec{Code: "usd"} }, []string{`stage_mappings[0].currency: "usd" is not an ISO 4217 code`}},
		{"currency from an unknown field", func(f *File) { f.StageMappings[0].Currency = &CurrencySpec{Field: "cur"} }, []string{`stage_mappings[0].currency.field: unknown field "cur"`}},
		{"standard event in another case", func(f *File) { f.StageMappings[1].EventName = "schedule" },
			[]string{"stage_mappings[1].event_name: write Schedule for Meta's standard event"}},
		{"bad condition", func(f *File) {
			f.StageMappings[1].Conditions = []rule.Condition{{Field: "fields.budget", MatchType: rule.Regex, Pattern: "(["}}
		}, []string{"stage_mappings[1].conditions[0].pattern: this regular expression does not compile"}},
		{"bad combinator", func(f *File) { f.StageMappings[1].Combinator = "xor" }, []string{`stage_mappings[1].combinator: "xor" is not a combinator`}},
		{"order too large", func(f *File) { f.StageMappings[1].Order = 10001 }, []string{"stage_mappings[1].order: must be a whole number from 1 to 10000"}},
		{"two default names alike", func(f *File) {
			f.StageMappings[1] = f.StageMappings[0]
			f.StageMappings[1].Dataset = "Demo"
		}, []string{`stage_mappings[1].name: "won to Purchase" is also the name of stage_mappings[0]; mapping names must differ (ignoring case): give this mapping a "name"`}},
		{"two given names alike", func(f *File) { f.StageMappings[0].Name, f.StageMappings[1].Name = "Sales", "SALES" },
			[]string{`stage_mappings[1].name: "SALES" is also the name of stage_mappings[0]; mapping names must differ (ignoring case)`}},
		{"a name with a bidi override", func(f *File) { f.StageMappings[1].Name = "Booked \u202e" }, []string{"stage_mappings[1].name: remove the invisible character U+202E"}},
		{"a send rule's name", func(f *File) { f.StageMappings[1].Name = "completed LEADS" },
			[]string{`stage_mappings[1].name: "completed LEADS" is also the name of send_rules[0]; send rules and stage mappings share their names`}},
		{"a send rule of mode stage", func(f *File) { f.SendRules[0].Mode = rule.Stage },
			[]string{"send_rules[0].mode: a send rule of mode stage is a stage mapping: move it to stage_mappings, with its stage"}},
		{"an account's send rule kept, without send_rules", func(f *File) {
			f.SendRules = nil
			f.StageMappings[1].Name = "From the web"
		}, []string{`stage_mappings[1].name: "From the web" is the name of a send rule of the account, which the file leaves as it is (it has no send_rules)`}},
		{"an account's send rule replaced by send_rules", func(f *File) { f.StageMappings[1].Name = "From the web" }, nil},
		{"an account's mapping kept, without stage_mappings", func(f *File) {
			f.StageMappings = nil
			f.SendRules[0].Name = "Old mapping"
		}, []string{`send_rules[0].name: "Old mapping" is the name of the account's stage mapping of stage qualified, which the file leaves as it is (it has no stage_mappings)`}},
		{"an account's mapping replaced by stage_mappings", func(f *File) { f.SendRules[0].Name = "Old mapping" }, nil},
	}
	k := &known{
		datasets: map[string]models.Dataset{"from ui": {Name: "From UI"}, "main": {Name: "Main"}},
		rules: map[string]models.SendRule{
			"from the web": {Name: "From the web", Mode: string(rule.Manual), EventName: "Contact"},
			"old mapping":  {Name: "Old mapping", Mode: string(rule.Stage), Stage: "qualified", EventName: "QualifiedLead"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := acmeFile()
			f.SendRules = []RuleSpec{{Name: "Completed leads", Dataset: "Main", EventName: "Lead", Enabled: true}}
			f.StageMappings = []MappingSpec{
				{Stage: "won", Dataset: "Main", EventName: "Purchase", Value: &ValueSpec{FromChange: true}, Enabled: true},
				{Name: "Booked", Stage: "booked", Dataset: "Main", EventName: "Schedule", Enabled: true},
			}
			tt.change(&f)
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

// The mappings' conditions count in the account's cost, with the send
// rules': a file over the budget is refused at the list it gives.
func TestValidateMappingCost(t *testing.T) {
	t.Parallel()
	costly := func(n int) []rule.Condition {
		var cs []rule.Condition
		for i := range n {
			cs = append(cs, rule.Condition{Field: "message", MatchType: rule.Regex, Pattern: strings.Repeat("[a-z]x", 100) + string(rune('a'+i))})
		}
		return cs
	}
	f := acmeFile()
	f.StageMappings = []MappingSpec{{Stage: "won", Dataset: "Main", EventName: "Won", Conditions: costly(30), Enabled: true}}
	got := f.Validate(env(acmeEnv()))
	if len(got) != 1 || got[0].Path != "stage_mappings" || !strings.HasPrefix(got[0].Message, "the account's enabled rules together would cost") {
		t.Errorf("Validate = %q; want the cost problem at stage_mappings", got)
	}
	f.StageMappings[0].Enabled = false
	if got := f.Validate(env(acmeEnv())); len(got) != 0 {
		t.Errorf("Validate of a disabled costly mapping = %q; want none", got)
	}
}
