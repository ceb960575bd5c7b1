package setup

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// groupsJSON has "(campaign A OR a valid phone) AND not junk" as a send
// rule, written with groups beside conditions, and a stage mapping with
// groups instead of conditions.
const groupsJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "send_rules": [
    {"name": "Qualified", "dataset": "Main", "mode": "automatic_match", "event_name": "QualifiedLead", "combinator": "and",
     "conditions": [{"field": "junk", "match_type": "equals", "pattern": "false"}],
     "groups": [{"combinator": "or", "conditions": [
        {"field": "utm_campaign", "match_type": "equals", "pattern": "campaign-a"},
        {"field": "phone_valid", "match_type": "equals", "pattern": "true"}]}]}
  ],
  "stage_mappings": [
    {"stage": "won", "dataset": "Main", "event_name": "Purchase", "value": "from_change",
     "groups": [{"combinator": " or ", "conditions": [
        {"field": "change.value", "match_type": "gt", "pattern": "499.99"},
        {"field": "change.currency", "match_type": "equals", "pattern": "EUR"}]}]}
  ]
}`

func TestGroupsRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f, problems := Decode(strings.NewReader(groupsJSON))
		if len(problems) > 0 {
			t.Fatalf("Decode problems = %q", problems)
		}
		if ps := f.Validate(env(nil)); len(ps) > 0 {
			t.Fatalf("Validate = %q; want none", ps)
		}
		box := newBox(t)
		r := mustApply(t, s, box, nil, f)
		var created []string
		for _, c := range r.Changes {
			created = append(created, c.String())
		}
		if !strings.Contains(strings.Join(created, "\n"), `created "Qualified" (QualifiedLead to Main, automatic_match, 3 conditions)`) {
			t.Errorf("changes = %q; want the rule created with its 3 conditions", created)
		}
		rs := rulesOf(t, s, "acme")
		var qualified rule.Spec
		for _, r := range rs {
			if r.Name == "Qualified" {
				qualified, _ = rule.SpecOf(r)
			}
		}
		if got, want := qualified.Text(), `Junk is false AND (UTM campaign is "campaign-a" OR Valid phone number is true)`; got != want {
			t.Errorf("stored rule = %q; want %q", got, want)
		}

		// Export writes the groups back, and applying the export changes
		// nothing.
		exp, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatalf("Export: %v", err)
		}
		if len(exp.SendRules) != 1 || len(exp.SendRules[0].Groups) != 1 || exp.SendRules[0].Groups[0].Combinator != rule.Or ||
			len(exp.SendRules[0].Groups[0].Conditions) != 2 || len(exp.SendRules[0].Conditions) != 1 {
			t.Errorf("exported send rules = %+v; want the rule's condition and its group", exp.SendRules)
		}
		if len(exp.StageMappings) != 1 || len(exp.StageMappings[0].Groups) != 1 || exp.StageMappings[0].Groups[0].Combinator != rule.Or {
			t.Errorf("exported stage mappings = %+v; want the mapping's group, its combinator trimmed", exp.StageMappings)
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(exp); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"groups":[{"combinator":"or","conditions":[{"field":"utm_campaign"`) {
			t.Errorf("export JSON = %s; want the groups key", buf.String())
		}
		again, problems := Decode(&buf)
		if len(problems) > 0 {
			t.Fatalf("Decode(export) problems = %q", problems)
		}
		before := rulesOf(t, s, "acme")
		if r := mustApply(t, s, box, nil, again); len(r.Changes) != 0 {
			t.Errorf("Apply(export) changes = %q; want none", r.Changes)
		}
		if after := rulesOf(t, s, "acme"); !reflect.DeepEqual(after, before) {
			t.Errorf("Apply(export) changed the rules")
		}

		// Moving the campaign condition out of the group is a change,
		// said in words.
		again.SendRules[0].Conditions = append(again.SendRules[0].Conditions, again.SendRules[0].Groups[0].Conditions[0])
		again.SendRules[0].Groups[0].Conditions = again.SendRules[0].Groups[0].Conditions[1:]
		r = mustApply(t, s, box, nil, again)
		want := `send_rules[0].conditions: Junk is false AND (UTM campaign is "campaign-a" OR Valid phone number is true) → ` +
			`Junk is false AND UTM campaign is "campaign-a" AND Valid phone number is true`
		if len(r.Changes) != 1 || r.Changes[0].String() != want {
			t.Errorf("changes = %q; want %q", r.Changes, want)
		}
	})
}

func TestGroupsProblems(t *testing.T) {
	t.Parallel()
	rule := func(groups string) string {
		return `{"account": {"slug": "acme", "name": "Acme", "timezone": "UTC", "currency": "EUR"}, "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
		"send_rules": [{"name": "R", "dataset": "Main", "mode": "automatic_match", "event_name": "Lead", "groups": ` + groups + `}]}`
	}
	tests := []struct {
		name string
		json string
		want []string
	}{
		{"groups not a list", rule(`{"combinator": "or"}`), []string{"send_rules[0].groups: must be a list of groups like"}},
		{"group not an object", rule(`["x"]`), []string{`send_rules[0].groups[0]: must be an object like {"combinator": "or"`}},
		{"conditions not a list", rule(`[{"combinator": "or", "conditions": {}}]`), []string{"send_rules[0].groups[0].conditions: must be a list of conditions"}},
		{"nested group", rule(`[{"combinator": "or", "conditions": [{"combinator": "and", "conditions": []}]}]`),
			[]string{"send_rules[0].groups[0].conditions[0].combinator: unknown field", "send_rules[0].groups[0].conditions[0].conditions: unknown field"}},
		{"empty group", rule(`[{"combinator": "or", "conditions": []}]`),
			[]string{"send_rules[0].groups[0].conditions: a group needs at least one condition: add one, or remove the group"}},
		{"bad combinator", rule(`[{"combinator": "xor", "conditions": [{"field": "email", "match_type": "not_empty"}]}]`),
			[]string{`send_rules[0].groups[0].combinator: "xor" is not a combinator`}},
		{"bad pattern in a group", rule(`[{"combinator": "or", "conditions": [{"field": "email", "match_type": "regex", "pattern": "(["}]}]`),
			[]string{"send_rules[0].groups[0].conditions[0].pattern: this regular expression does not compile"}},
		{"NUL in a group's pattern", rule(`[{"conditions": [{"field": "email", "match_type": "contains", "pattern": "a\u0000b"}]}]`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, problems := Decode(strings.NewReader(tt.json))
			if len(problems) == 0 {
				problems = f.Validate(env(nil))
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if len(tt.want) == 0 {
				return // decoded or refused in words; never a panic
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %q; want %d like %q", got, len(tt.want), tt.want)
			}
			for i := range tt.want {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q; want it to start %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
