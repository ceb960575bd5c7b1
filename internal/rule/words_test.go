package rule

import "testing"

// With Schema.Words, problems name fields by their labels and match types
// and modes as the rule form shows them; without, as a setup file does.
func TestProblemsInWords(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		path string
		file string // without Words
		form string // with Words
	}{
		{"number for gt", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"fill_seconds", GT, "three"}}},
			"conditions[0].pattern", `gt needs a number, like 1000 or 2.5, not "three"`, `'is greater than' needs a number, like 3 or 2.5, not "three"`},
		{"regex on a flag", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"junk", Regex, "x"}}},
			"conditions[0].match_type", "junk is true or false: use equals or not_equals, with true or false, or is_empty for unknown",
			"Junk is yes or no: choose 'is' or 'is not', then yes or no"},
		{"neither yes nor no", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"partial", Equals, "maybe"}}},
			"conditions[0].pattern", `partial is true or false: write true or false, not "maybe"`, `Partial lead is yes or no: choose yes or no, not "maybe"`},
		{"no value", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"city", Contains, " "}}},
			"conditions[0].pattern", "contains needs a pattern", "'contains' needs a value"},
		{"value for is empty on a flag", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"email_is_free", IsEmpty, "x"}}},
			"conditions[0].pattern", "is_empty takes no pattern: leave it blank", "'is unknown' takes no value: leave it blank"},
		{"match without conditions", Spec{Mode: AutomaticMatch, EventName: "Lead"},
			"conditions", "automatic_match needs at least one condition", "'Leads that meet conditions' needs at least one condition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, words := range []bool{false, true} {
				want := tt.file
				if words {
					want = tt.form
				}
				_, problems := Compile(tt.spec, Schema{Words: words})
				if len(problems) != 1 || problems[0].Path != tt.path || problems[0].Message != want {
					t.Errorf("Compile(%v) with Words %v = %v; want %s: %s", tt.spec, words, problems, tt.path, want)
				}
			}
		})
	}
}
