package rule

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// campaignOrPhone is "(campaign A OR a valid phone) AND not junk": the
// rule that one OR list could not say.
func campaignOrPhone() Spec {
	return Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Combinator: And,
		Conditions: []Condition{{"junk", Equals, "false"}},
		Groups: []Group{{Combinator: Or, Conditions: []Condition{
			{"utm_campaign", Equals, "campaign-a"},
			{"phone_valid", Equals, "true"},
		}}}}
}

func groupLead(id int64, campaign, phone string, junk bool) models.Lead {
	l := models.Lead{ID: id, AccountID: 1, Source: models.SourceWebsite, Phone: phone, PhoneE164: strings.NewReplacer("+", "", " ", "").Replace(phone), Junk: junk,
		EventSourceURL: "https://example.com/?utm_campaign=" + campaign, Fields: "{}", JunkReasons: "[]",
		CreatedAt: previewNow.Add(-time.Duration(id) * time.Hour)}
	return l
}

func TestGroupMatch(t *testing.T) {
	m, problems := Compile(campaignOrPhone(), Schema{Open: true})
	if problems != nil {
		t.Fatalf("Compile: %v", problems)
	}
	tests := []struct {
		name string
		lead models.Lead
		want Result
		why  string
	}{
		{"campaign A", groupLead(1, "campaign-a", "", false), Result{Matched: true, Condition: -1, Group: -1},
			"every condition and group held: group 1 by its condition 1 (UTM campaign is \"campaign-a\")"},
		{"valid phone", groupLead(2, "other", "+49 30 901820", false), Result{Matched: true, Condition: -1, Group: -1},
			"every condition and group held: group 1 by its condition 2 (Valid phone number is true)"},
		{"neither", groupLead(3, "other", "", false), Result{Reason: ReasonCondition, Condition: -1, Group: 0},
			"group 1 did not hold: none of its conditions (UTM campaign is \"campaign-a\" OR Valid phone number is true) matched"},
		{"junk with campaign A", groupLead(4, "campaign-a", "", true), Result{Reason: ReasonJunk, Condition: -1, Group: -1},
			"the lead is junk, and the rule does not require junk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, held := m.MatchEach(NewLead(&tt.lead), nil)
			if got != tt.want {
				t.Errorf("MatchEach = %+v; want %+v", got, tt.want)
			}
			if fast := m.Match(NewLead(&tt.lead)); fast != got {
				t.Errorf("Match = %+v; MatchEach = %+v", fast, got)
			}
			if why := m.ExplainEach(got, held); why != tt.why {
				t.Errorf("ExplainEach = %q; want %q", why, tt.why)
			}
		})
	}
}

func TestGroupOrRule(t *testing.T) {
	// "City is Berlin OR (budget over 5000 AND an email)": the group
	// that held is named.
	s := Spec{Mode: AutomaticMatch, EventName: "Lead", Combinator: Or,
		Conditions: []Condition{{"city", Equals, "berlin"}},
		Groups:     []Group{{Combinator: And, Conditions: []Condition{{"fields.budget", GT, "5000"}, {"email", NotEmpty, ""}}}}}
	m, problems := Compile(s, Schema{Open: true})
	if problems != nil {
		t.Fatalf("Compile: %v", problems)
	}
	rich := models.Lead{City: "Paris", Email: "a@b.example", Fields: `{"budget":"9000"}`}
	r := m.Match(NewLead(&rich))
	if want := (Result{Matched: true, Condition: -1, Group: 0}); r != want {
		t.Fatalf("Match = %+v; want %+v", r, want)
	}
	if got, want := m.Explain(r), `group 1 (Form field budget is greater than 5000 AND Email is not empty) held`; got != want {
		t.Errorf("Explain = %q; want %q", got, want)
	}
	both := models.Lead{City: "Berlin", Email: "a@b.example", Fields: `{"budget":"9000"}`}
	r, held := m.MatchEach(NewLead(&both), nil)
	if got, want := m.ExplainEach(r, held), `condition 1 (City is "berlin") and group 1 held`; got != want {
		t.Errorf("ExplainEach = %q; want %q", got, want)
	}
	poor := models.Lead{City: "Paris", Email: "a@b.example", Fields: `{"budget":"10"}`}
	if r := m.Match(NewLead(&poor)); r.Matched || m.Explain(r) != "no condition or group held" {
		t.Errorf("Match(poor) = %+v, %q", r, m.Explain(r))
	}
	if got, want := s.Text(), `City is "berlin" OR (Form field budget is greater than 5000 AND Email is not empty)`; got != want {
		t.Errorf("Text = %q; want %q", got, want)
	}
}

func TestGroupCompileProblems(t *testing.T) {
	many := make([]Group, MaxGroups+1)
	for i := range many {
		many[i] = Group{Conditions: []Condition{{"email", NotEmpty, ""}}}
	}
	tests := []struct {
		name string
		spec Spec
		want []Problem
	}{
		{"empty group", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"email", NotEmpty, ""}},
			Groups: []Group{{Combinator: Or}}},
			[]Problem{{"groups[0].conditions", "a group needs at least one condition: add one, or remove the group"}}},
		{"bad group combinator and pattern", Spec{Mode: AutomaticMatch, EventName: "Lead",
			Groups: []Group{{Combinator: "xor", Conditions: []Condition{{"email", Regex, "(["}}}}},
			[]Problem{{"groups[0].combinator", `"xor" is not a combinator; use and (every condition of the group must match) or or (one is enough)`},
				{"groups[0].conditions[0].pattern", "this regular expression does not compile: missing closing ]"}}},
		{"groups alone are conditions", Spec{Mode: AutomaticMatch, EventName: "Lead",
			Groups: []Group{{Combinator: Or, Conditions: []Condition{{"email", NotEmpty, ""}}}}}, nil},
		{"completed takes no group", Spec{Mode: AutomaticCompleted, EventName: "Lead",
			Groups: []Group{{Conditions: []Condition{{"email", NotEmpty, ""}}}}},
			[]Problem{{"conditions", "automatic_completed sends every completed lead, so it takes no conditions: choose automatic_match to send only the leads that meet them"}}},
		{"too many groups", Spec{Mode: AutomaticMatch, EventName: "Lead", Groups: many},
			[]Problem{{"groups", "use at most 10 groups, not 11"}}},
		{"conditions counted across groups", Spec{Mode: AutomaticMatch, EventName: "Lead",
			Conditions: make([]Condition, 30), Groups: []Group{{Conditions: make([]Condition, 21)}}},
			[]Problem{{"conditions", "use at most 50 conditions, not 51"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := Compile(tt.spec, Schema{Open: true})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Compile problems = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestGroupRequiresJunk(t *testing.T) {
	isJunk := Condition{"junk", Equals, "true"}
	tooFast := Condition{"junk_reason.too_fast", Equals, "true"}
	city := Condition{"city", Equals, "berlin"}
	tests := []struct {
		name string
		spec Spec
		want bool
	}{
		{"or group of junk signals, and", Spec{Combinator: And, Conditions: []Condition{city},
			Groups: []Group{{Combinator: Or, Conditions: []Condition{isJunk, tooFast}}}}, true},
		{"or group with a non-junk condition", Spec{Combinator: And,
			Groups: []Group{{Combinator: Or, Conditions: []Condition{isJunk, city}}}}, false},
		{"or rule, every item requires junk", Spec{Combinator: Or, Conditions: []Condition{isJunk},
			Groups: []Group{{Combinator: And, Conditions: []Condition{tooFast, city}}}}, true},
	}
	for _, tt := range tests {
		tt.spec.Mode, tt.spec.EventName = AutomaticMatch, "JunkLead"
		m, problems := Compile(tt.spec, Schema{Open: true})
		if problems != nil {
			t.Fatalf("%s: Compile: %v", tt.name, problems)
		}
		if m.RequiresJunk() != tt.want {
			t.Errorf("%s: RequiresJunk = %v; want %v", tt.name, m.RequiresJunk(), tt.want)
		}
	}
}

func TestGroupPreview(t *testing.T) {
	m, problems := Compile(campaignOrPhone(), Schema{Open: true})
	if problems != nil {
		t.Fatalf("Compile: %v", problems)
	}
	leads := []models.Lead{
		groupLead(1, "campaign-a", "+49 30 901820", false), // both
		groupLead(2, "campaign-a", "", false),              // campaign only
		groupLead(3, "other", "+49 30 901820", false),      // phone only
		groupLead(4, "other", "", false),                   // neither
		groupLead(5, "campaign-a", "", true),               // junk
	}
	p := NewPreview(m, previewNow)
	matched := 0
	for i := range leads {
		p.Add(&leads[i])
		if m.Match(NewLead(&leads[i])).Matched {
			matched++
		}
	}
	res := p.Result()
	if res.Matched != matched || matched != 3 {
		t.Fatalf("Preview matched %d, Match %d; want 3", res.Matched, matched)
	}
	// "Junk is false" holds for every lead past the gate: it rules none
	// out. The group rules out lead 4 alone.
	want := []ConditionCount{{Condition: Condition{"junk", Equals, "false"}, Holds: 4, Alone: 0}}
	if !reflect.DeepEqual(res.Conditions, want) {
		t.Errorf("Conditions = %+v; want %+v", res.Conditions, want)
	}
	wantGroups := []GroupCount{{Group: campaignOrPhone().Groups[0], Holds: 3, Alone: 1, Conditions: []ConditionCount{
		{Condition: Condition{"utm_campaign", Equals, "campaign-a"}, Holds: 2, Alone: 1},
		{Condition: Condition{"phone_valid", Equals, "true"}, Holds: 2, Alone: 1},
	}}}
	if !reflect.DeepEqual(res.Groups, wantGroups) {
		t.Errorf("Groups = %+v; want %+v", res.Groups, wantGroups)
	}
}

func TestStoredConditions(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		stored string
	}{
		{"plain", Spec{Conditions: []Condition{{"city", Equals, "Berlin"}}},
			`[{"field":"city","match_type":"equals","pattern":"Berlin"}]`},
		{"none", Spec{}, `[]`},
		{"groups", campaignOrPhone(),
			`[{"field":"junk","match_type":"equals","pattern":"false"},{"combinator":"or","conditions":[` +
				`{"field":"utm_campaign","match_type":"equals","pattern":"campaign-a"},{"field":"phone_valid","match_type":"equals","pattern":"true"}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.spec.StoredConditions()
			if got != tt.stored {
				t.Fatalf("StoredConditions = %s; want %s", got, tt.stored)
			}
			back, problems := SpecOf(models.SendRule{Conditions: got, Combinator: string(tt.spec.Combinator)})
			if problems != nil {
				t.Fatalf("SpecOf: %v", problems)
			}
			if !reflect.DeepEqual(back.All(), tt.spec.All()) || len(back.Groups) != len(tt.spec.Groups) {
				t.Errorf("SpecOf(StoredConditions) = %+v; want %+v", back, tt.spec)
			}
		})
	}
	if _, problems := SpecOf(models.SendRule{Conditions: `[{"combinator":"or","conditions":"x"}]`}); problems == nil {
		t.Error("SpecOf of a group whose conditions are no list: no problem")
	}
}

func TestJunkInOr(t *testing.T) {
	notJunk := Condition{"junk", Equals, "false"}
	campaign := Condition{"utm_campaign", Equals, "campaign-a"}
	phone := Condition{"phone_valid", Equals, "true"}
	tests := []struct {
		name string
		spec Spec
		want []string // a part of each warning
	}{
		{"one OR list with Junk is no", Spec{Combinator: Or, Conditions: []Condition{campaign, phone, notJunk}},
			[]string{"“Junk is false” sits in the rule's OR list, and every lead that is not junk meets it"}},
		{"the group way", campaignOrPhone(), nil},
		{"junk in an OR group", Spec{Combinator: And, Conditions: []Condition{campaign},
			Groups: []Group{{Combinator: Or, Conditions: []Condition{phone, {"junk_reason.too_fast", Equals, "true"}}}}},
			[]string{"sits in group 1's OR list beside conditions that do not ask for junk"}},
		{"every item asks for junk", Spec{Combinator: Or, Conditions: []Condition{{"junk_reason.honeypot", Equals, "true"}, {"junk_reason.too_fast", Equals, " TRUE "}}}, nil},
		{"every item asks for junk, a group too", Spec{Combinator: Or, Conditions: []Condition{{"junk", Equals, "true"}},
			Groups: []Group{{Combinator: And, Conditions: []Condition{phone, {"junk_reason.fake_phone", NotEquals, "false"}}}}}, nil},
		{"a junk signal that asks for no junk", Spec{Combinator: Or, Conditions: []Condition{campaign, {"junk_reason.too_fast", Equals, "false"}}}, nil},
		{"junk beside a group that does not ask for it", Spec{Combinator: Or, Conditions: []Condition{{"junk", Equals, "true"}},
			Groups: []Group{{Combinator: Or, Conditions: []Condition{phone, {"junk_reason.fake_phone", Equals, "true"}}}}},
			[]string{"“Junk is true” sits in the rule's OR list beside", "sits in group 1's OR list beside"}},
		{"alone, or is and", Spec{Combinator: Or, Conditions: []Condition{notJunk}}, nil},
		{"AND list", Spec{Combinator: And, Conditions: []Condition{campaign, notJunk}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JunkInOr(tt.spec)
			if len(got) != len(tt.want) {
				t.Fatalf("JunkInOr = %q; want %d warnings", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("JunkInOr[%d] = %q; want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
