package rule

import (
	"slices"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// stageSpec is a stage mapping's Spec with conditions cs, joined by and.
func stageSpec(cs ...Condition) Spec {
	return Spec{Mode: Stage, EventName: "Purchase", Combinator: And, Conditions: cs}
}

func amount(f float64) *float64 { return &f }

// A stage mapping's conditions read the stage change's value and currency;
// without a change, or a value, they are unknown.
func TestMatchChangeFields(t *testing.T) {
	eur := func(v float64) *models.StageChange {
		return &models.StageChange{Stage: "won", Value: amount(v), Currency: "EUR"}
	}
	tests := []struct {
		name   string
		cond   Condition
		change *models.StageChange
		want   bool
	}{
		{"value above", Condition{"change.value", GT, "499.99"}, eur(600), true},
		{"value at the bound", Condition{"change.value", GT, "499.99"}, eur(500), true},
		{"value below", Condition{"change.value", GT, "499.99"}, eur(300), false},
		{"at least, at the bound", Condition{"change.value", GTE, "500"}, eur(500), true},
		{"at least, just below", Condition{"change.value", GTE, "500"}, eur(499.99), false},
		{"at most, at the bound", Condition{"change.value", LTE, "500"}, eur(500), true},
		{"at most, above", Condition{"change.value", LTE, "500"}, eur(500.01), false},
		{"no value fails gte", Condition{"change.value", GTE, "0"}, &models.StageChange{Currency: "EUR"}, false},
		{"no value fails lte", Condition{"change.value", LTE, "1e12"}, &models.StageChange{Currency: "EUR"}, false},
		{"value with cents", Condition{"change.value", LT, "100"}, eur(99.5), true},
		{"zero is a value", Condition{"change.value", LT, "1"}, eur(0), true},
		{"big value", Condition{"change.value", GT, "999999"}, eur(1e9), true},
		{"no value fails gt", Condition{"change.value", GT, "0"}, &models.StageChange{Currency: "EUR"}, false},
		{"no value fails lt", Condition{"change.value", LT, "1000"}, &models.StageChange{Currency: "EUR"}, false},
		{"no value is empty", Condition{"change.value", IsEmpty, ""}, &models.StageChange{}, true},
		{"a value is not empty", Condition{"change.value", NotEmpty, ""}, eur(1), true},
		{"no change fails gt", Condition{"change.value", GT, "0"}, nil, false},
		{"no change is empty", Condition{"change.value", IsEmpty, ""}, nil, true},
		{"currency", Condition{"change.currency", Equals, "EUR"}, eur(1), true},
		{"currency ignores case", Condition{"change.currency", Equals, "eur"}, &models.StageChange{Currency: " eur "}, true},
		{"other currency", Condition{"change.currency", Equals, "EUR"}, &models.StageChange{Currency: "USD"}, false},
		{"currency in list", Condition{"change.currency", InList, "EUR, CHF"}, eur(1), true},
		{"no currency is none", Condition{"change.currency", Equals, "EUR"}, &models.StageChange{Value: amount(5)}, false},
		{"no currency is empty", Condition{"change.currency", IsEmpty, ""}, &models.StageChange{Value: amount(5)}, true},
		{"no change: not_equals holds", Condition{"change.currency", NotEquals, "EUR"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Compile(stageSpec(tt.cond), schema)
			if problems != nil {
				t.Fatalf("Compile(%+v) problems = %v", tt.cond, problems)
			}
			l := lead()
			v := NewLead(&l)
			v.SetChange(tt.change)
			if got := m.Match(v).Matched; got != tt.want {
				t.Errorf("Match(%+v) with change %+v = %v; want %v", tt.cond, tt.change, got, tt.want)
			}
		})
	}
}

// "Won deals of more than 499.99 EUR": both conditions, and Reset forgets
// the change.
func TestMatchChangeAndReset(t *testing.T) {
	m, problems := Compile(stageSpec(Condition{"change.value", GT, "499.99"}, Condition{"change.currency", Equals, "EUR"}), schema)
	if problems != nil {
		t.Fatal(problems)
	}
	l := lead()
	v := NewLead(&l)
	for _, tt := range []struct {
		change models.StageChange
		want   bool
	}{
		{models.StageChange{Value: amount(600), Currency: "EUR"}, true},
		{models.StageChange{Value: amount(600), Currency: "USD"}, false},
		{models.StageChange{Value: amount(300), Currency: "EUR"}, false},
		{models.StageChange{Currency: "EUR"}, false},
	} {
		v.SetChange(&tt.change)
		if got := m.Match(v).Matched; got != tt.want {
			t.Errorf("Match with change %+v = %v; want %v", tt.change, got, tt.want)
		}
	}
	v.SetChange(&models.StageChange{Value: amount(600), Currency: "EUR"})
	v.Reset(&l)
	if res := m.Match(v); res.Matched {
		t.Errorf("Match after Reset = %+v; want no match: Reset forgets the change", res)
	}
	if got, want := m.Explain(m.Match(v)), "condition 1 (Deal value is greater than 499.99) did not match"; got != want {
		t.Errorf("Explain = %q; want %q", got, want)
	}
}

// The change's fields are a stage mapping's only: a rule of any other mode
// naming one is refused at the field, saying why; their patterns are
// checked as their kinds want.
func TestCompileChangeFields(t *testing.T) {
	for _, mode := range Modes {
		s := stageSpec(Condition{"change.value", GT, "500"})
		s.Mode, s.EventName = mode, "Lead"
		if mode == AutomaticPartial {
			s.EventName = "PartialLead"
		}
		_, problems := Compile(s, Schema{Open: true})
		i := slices.IndexFunc(problems, func(p Problem) bool { return p.Path == "conditions[0].field" })
		if i < 0 || !strings.Contains(problems[i].Message, "only a stage mapping's conditions can read it") {
			t.Errorf("Compile(%s rule on change.value) problems = %v; want conditions[0].field saying only stage mappings read it", mode, problems)
		}
	}
	tests := []struct {
		name string
		cond Condition
		path string // "" for none
		want string
	}{
		{"value gt", Condition{"change.value", GT, "500"}, "", ""},
		{"value is_empty", Condition{"change.value", IsEmpty, ""}, "", ""},
		{"currency equals", Condition{"change.currency", Equals, "eur"}, "", ""},
		{"currency regex", Condition{"change.currency", Regex, "^E"}, "", ""},
		{"value not a number", Condition{"change.value", GT, "500 EUR"}, "conditions[0].pattern", `gt needs a number, like 1000 or 2.5, not "500 EUR"`},
		{"value equals", Condition{"change.value", Equals, "500"}, "conditions[0].match_type", "change.value is a number: use gt, gte, lt, lte, is_empty or not_empty"},
		{"currency not a code", Condition{"change.currency", Equals, "euro"}, "conditions[0].pattern", `"euro": write a 3-letter currency code, like EUR or USD`},
		{"currency list item", Condition{"change.currency", InList, "EUR, dollars"}, "conditions[0].pattern", `"dollars": write a 3-letter currency code`},
		{"currency gt", Condition{"change.currency", GT, "5"}, "conditions[0].match_type", "change.currency is text"},
		{"typo", Condition{"change.valeu", GT, "5"}, "conditions[0].field", `unknown field "change.valeu"; did you mean change.value?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Compile(stageSpec(tt.cond), schema)
			if tt.path == "" {
				if problems != nil {
					t.Fatalf("Compile(%+v) problems = %v; want none", tt.cond, problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Path != tt.path || !strings.Contains(problems[0].Message, tt.want) {
				t.Errorf("Compile(%+v) problems = %v; want one at %s containing %q", tt.cond, problems, tt.path, tt.want)
			}
		})
	}
}

// A capture rule's typo is never "did you mean change.value?": it could
// not use it.
func TestCompileChangeSuggestedForStageOnly(t *testing.T) {
	_, problems := Compile(withCondition(Condition{"change.valeu", GT, "5"}), schema)
	if len(problems) != 1 || strings.Contains(problems[0].Message, "change.value") {
		t.Errorf("Compile(automatic_match on change.valeu) problems = %v; want unknown field without a suggestion", problems)
	}
}

// The Rules form's picker leaves the change's fields out; ChangeFields
// lists them, with their kinds; a rule's value cannot be read from them.
func TestChangeFieldsListed(t *testing.T) {
	for _, f := range (Schema{Custom: []string{"budget"}}).Fields() {
		if strings.HasPrefix(f.Name, ChangePrefix) || f.Change {
			t.Errorf("Fields lists %s; want the change's fields left out", f.Name)
		}
	}
	got := ChangeFields()
	want := []Field{
		{Name: "change.value", Label: "Deal value", Kind: Number, Change: true},
		{Name: "change.currency", Label: "Deal currency", Kind: Text, Change: true},
	}
	if !slices.EqualFunc(got, want, func(a, b Field) bool {
		return a.Name == b.Name && a.Label == b.Label && a.Kind == b.Kind && a.Change == b.Change
	}) {
		t.Errorf("ChangeFields() = %+v; want %+v", got, want)
	}
	if got := ChangeFields()[0].MatchTypes(); !slices.Equal(got, []MatchType{GT, GTE, LT, LTE, IsEmpty, NotEmpty}) {
		t.Errorf("change.value MatchTypes() = %v; want gt, gte, lt, lte, is_empty, not_empty", got)
	}
	for _, name := range []string{"change.value", "change.currency"} {
		if msg := (Schema{Open: true}).ValueProblem(name); !strings.Contains(msg, "from the change") {
			t.Errorf("ValueProblem(%q) = %q; want it refused, pointing to the value from the change", name, msg)
		}
	}
}

func TestChangeConditionString(t *testing.T) {
	tests := []struct {
		c    Condition
		want string
	}{
		{Condition{"change.value", GT, " 499.99 "}, "Deal value is greater than 499.99"},
		{Condition{"change.value", GTE, "500"}, "Deal value is at least 500"},
		{Condition{"change.value", LTE, "500"}, "Deal value is at most 500"},
		{Condition{"change.value", LT, "10000"}, "Deal value is less than 10000"},
		{Condition{"change.value", IsEmpty, ""}, "Deal value is empty"},
		{Condition{"change.currency", Equals, "EUR"}, `Deal currency is "EUR"`},
		{Condition{"change.currency", InList, "EUR, CHF"}, `Deal currency is one of "EUR", "CHF"`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#v.String() = %q; want %q", tt.c, got, tt.want)
		}
	}
}

// Value reads the change's fields as conditions do.
func TestChangeValue(t *testing.T) {
	l := lead()
	v := NewLead(&l)
	if got := v.Value("change.value") + v.Value("change.currency"); got != "" {
		t.Errorf("Value of the change's fields without a change = %q; want empty", got)
	}
	v.SetChange(&models.StageChange{Value: amount(1234.5), Currency: "chf"})
	if got := v.Value("change.value"); got != "1234.5" {
		t.Errorf(`Value("change.value") = %q; want "1234.5"`, got)
	}
	v.SetChange(&models.StageChange{Value: amount(2e6), Currency: "chf"})
	if got := v.Value("change.value"); got != "2000000" {
		t.Errorf(`Value("change.value") = %q; want "2000000"`, got)
	}
	if got := v.Value("change.currency"); got != "CHF" {
		t.Errorf(`Value("change.currency") = %q; want "CHF"`, got)
	}
}
