package setup

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// wonDealsJSON maps won deals over 499.99 EUR to Purchase: conditions on
// the stage change's value and currency.
const wonDealsJSON = `{
  "account": {"slug": "acme", "name": "Acme Inc", "timezone": "UTC", "currency": "EUR"},
  "datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}],
  "stage_mappings": [
    {"stage": "won", "dataset": "Main", "event_name": "Purchase", "value": "from_change", "currency": "from_change",
     "conditions": [{"field": "change.value", "match_type": "gt", "pattern": "499.99"},
                    {"field": "change.currency", "match_type": "equals", "pattern": "EUR"}]}
  ]
}`

// A stage mapping's conditions may name change.value and change.currency:
// the file validates, applies, and exports as it was written.
func TestApplyMappingChangeConditions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f, problems := Decode(strings.NewReader(wonDealsJSON))
		if len(problems) > 0 {
			t.Fatalf("Decode problems = %q; want none", problems)
		}
		if ps := f.Validate(env(nil)); len(ps) > 0 {
			t.Fatalf("Validate = %q; want no problems", ps)
		}
		mustApply(t, s, newBox(t), nil, f)
		ms := mappingsOf(t, s, "acme")
		want := []rule.Condition{{Field: "change.value", MatchType: rule.GT, Pattern: "499.99"},
			{Field: "change.currency", MatchType: rule.Equals, Pattern: "EUR"}}
		if len(ms) != 1 || !slices.Equal(conditionsOf(ms[0]).Conditions, want) {
			t.Fatalf("mappings = %+v; want won to Purchase with the change's conditions", ms)
		}
		back, _, err := Export(t.Context(), s, "acme", "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(back.StageMappings)
		if !bytes.Contains(b, []byte(`{"field":"change.value","match_type":"gt","pattern":"499.99"}`)) {
			t.Errorf("export's stage_mappings = %s; want the change.value condition", b)
		}
	})
}

// The change's fields are a stage mapping's only: a send rule naming one
// is refused at its JSON path, and a mapping's typo or bad pattern too.
func TestValidateChangeConditions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string // replaces stage_mappings' first condition
		want string
	}{
		{"send rule on change.value", `"send_rules": [{"name": "Big", "dataset": "Main", "mode": "automatic_match", "event_name": "Lead",
			"conditions": [{"field": "change.value", "match_type": "gt", "pattern": "500"}]}]`,
			"send_rules[0].conditions[0].field: change.value is the deal value a stage change carries: only a stage mapping's conditions can read it"},
		{"send rule reading its value from the change", `"send_rules": [{"name": "Big", "dataset": "Main", "mode": "automatic_completed",
			"event_name": "Lead", "value": {"field": "change.value"}}]`,
			"send_rules[0].value.field: change.value is the stage change's, not a lead field"},
		{"mapping with a deal value that is no number", `"stage_mappings": [{"stage": "won", "dataset": "Main", "event_name": "Purchase",
			"value": "from_change", "conditions": [{"field": "change.value", "match_type": "gt", "pattern": "500 EUR"}]}]`,
			`stage_mappings[0].conditions[0].pattern: gt needs a number, like 1000 or 2.5, not "500 EUR"`},
		{"mapping with a currency that is no code", `"stage_mappings": [{"stage": "won", "dataset": "Main", "event_name": "Purchase",
			"value": "from_change", "conditions": [{"field": "change.currency", "match_type": "in_list", "pattern": "EUR, euro"}]}]`,
			`stage_mappings[0].conditions[0].pattern: "euro": write a 3-letter currency code`},
		{"mapping with a typo", `"stage_mappings": [{"stage": "won", "dataset": "Main", "event_name": "Purchase",
			"value": "from_change", "conditions": [{"field": "change.vallue", "match_type": "gt", "pattern": "500"}]}]`,
			`stage_mappings[0].conditions[0].field: unknown field "change.vallue"; did you mean change.value?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"account": {"slug": "acme", "name": "Acme Inc", "timezone": "UTC", "currency": "EUR"},
				"datasets": [{"name": "Main", "pixel_id": "123456789012345", "mode": "dry_run"}], ` + tt.json + `}`
			f, problems := Decode(strings.NewReader(doc))
			if len(problems) > 0 {
				t.Fatalf("Decode problems = %q", problems)
			}
			ps := f.Validate(env(nil))
			if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), tt.want) {
				t.Errorf("Validate = %q; want one problem starting %q", ps, tt.want)
			}
		})
	}
}
