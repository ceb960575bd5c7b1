package rule

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// ExplainEach names every condition that held in an "or" rule that
// matched, and every one that failed in an "and" rule that did not.
func TestExplainEach(t *testing.T) {
	berlin, paris := models.Lead{City: "Berlin", Fields: `{"budget":"9000"}`}, models.Lead{City: "Paris", Fields: `{"budget":"100"}`}
	junk := berlin
	junk.Junk = true
	city, rich, gmail := Condition{"city", Equals, "berlin"}, Condition{"fields.budget", GT, "5000"}, Condition{"email_domain", Equals, "gmail.com"}
	tests := []struct {
		name  string
		or    bool
		conds []Condition
		lead  models.Lead
		want  string
	}{
		{"or: two of three held", true, []Condition{city, gmail, rich}, berlin,
			`conditions 1 (City is "berlin") and 3 (Form field budget is greater than 5000) matched`},
		{"or: one held", true, []Condition{gmail, rich}, berlin, `condition 2 (Form field budget is greater than 5000) matched`},
		{"or: none held", true, []Condition{city, rich}, paris, "none of the conditions matched"},
		{"and: all three failed", false, []Condition{city, gmail, rich}, paris,
			`conditions 1 (City is "berlin"), 2 (Email domain is "gmail.com") and 3 (Form field budget is greater than 5000) did not match`},
		{"and: one failed", false, []Condition{city, rich}, models.Lead{City: "Paris", Fields: `{"budget":"9000"}`}, `condition 1 (City is "berlin") did not match`},
		{"and: all held", false, []Condition{city, rich}, berlin, "all conditions matched"},
		{"junk gate", true, []Condition{city, rich}, junk, "the lead is junk, and the rule does not require junk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comb := And
			if tt.or {
				comb = Or
			}
			m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "Lead", Combinator: comb, Conditions: tt.conds}, schema)
			if problems != nil {
				t.Fatal(problems)
			}
			l := tt.lead
			r, held := m.MatchEach(NewLead(&l), nil)
			if got := m.ExplainEach(r, held); got != tt.want {
				t.Errorf("ExplainEach = %q; want %q", got, tt.want)
			}
		})
	}
}
