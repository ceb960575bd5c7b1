package rule

import (
	"slices"
	"strings"
	"testing"
)

// valid is a rule that compiles; tests change one part of it.
func valid() Spec {
	return Spec{
		Mode: AutomaticMatch, EventName: "Lead", Combinator: And,
		Conditions: []Condition{{Field: "email_domain", MatchType: Equals, Pattern: "example.com"}},
	}
}

func withCondition(c Condition) Spec {
	s := valid()
	s.Conditions = []Condition{c}
	return s
}

var schema = Schema{Custom: []string{"budget", "service"}}

func TestCompileValid(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"and", valid()},
		{"empty combinator", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: valid().Conditions}},
		{"or", Spec{Mode: AutomaticMatch, EventName: "Lead", Combinator: Or, Conditions: valid().Conditions}},
		{"default mode", Spec{EventName: "Lead"}},
		{"automatic_completed", Spec{Mode: AutomaticCompleted, EventName: "Lead"}},
		{"automatic_partial", Spec{Mode: AutomaticPartial, EventName: "PartialLead"}},
		{"automatic_partial with a condition", Spec{Mode: AutomaticPartial, EventName: "PartialLead",
			Conditions: []Condition{{Field: "phone", MatchType: NotEmpty}}}},
		{"stage mapping", Spec{Mode: Stage, EventName: "Schedule"}},
		{"manual", Spec{Mode: Manual, EventName: "QualifiedLead"}},
		{"known custom field", withCondition(Condition{Field: "fields.budget", MatchType: GT, Pattern: "5000"})},
		{"custom field text match", withCondition(Condition{Field: "fields.service", MatchType: InList, Pattern: "roofing, gutters"})},
		{"bool", withCondition(Condition{Field: "email_is_free", MatchType: Equals, Pattern: " FALSE "})},
		{"number", withCondition(Condition{Field: "fill_seconds", MatchType: LT, Pattern: "2.5"})},
		{"number field empty", withCondition(Condition{Field: "fill_seconds", MatchType: IsEmpty})},
		{"regex", withCondition(Condition{Field: "email", MatchType: Regex, Pattern: `^(info|sales)@`})},
		{"regex turning case off", withCondition(Condition{Field: "email", MatchType: Regex, Pattern: `(?-i)^A`})},
		{"source", withCondition(Condition{Field: "source", MatchType: InList, Pattern: "Website\ninstant_form"})},
		{"phone country", withCondition(Condition{Field: "phone_country", MatchType: NotEquals, Pattern: "us"})},
		{"junk reason", withCondition(Condition{Field: "junk_reason.too_fast", MatchType: Equals, Pattern: "true"})},
		{"longest pattern", withCondition(Condition{Field: "message", MatchType: Contains, Pattern: strings.Repeat("é", MaxPatternLen)})},
		{"most conditions", Spec{Mode: AutomaticMatch, EventName: "Lead",
			Conditions: slices.Repeat(valid().Conditions, MaxConditions)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Compile(tt.spec, schema)
			if problems != nil || m == nil {
				t.Fatalf("Compile(%+v) problems = %v; want none", tt.spec, problems)
			}
		})
	}
}

func TestCompileDefaultMode(t *testing.T) {
	m, _ := Compile(Spec{EventName: "Lead"}, Schema{})
	if m.Mode() != AutomaticCompleted {
		t.Errorf("Mode() of a spec without one = %q; want %q", m.Mode(), AutomaticCompleted)
	}
}

func TestCompileProblems(t *testing.T) {
	type want struct{ path, message string } // message: a part of it
	tests := []struct {
		name   string
		spec   Spec
		schema Schema
		want   []want
	}{
		{"unknown mode", Spec{Mode: "automatic", EventName: "Lead"}, schema,
			[]want{{"mode", `"automatic" is not a send mode; use one of automatic_completed, automatic_partial, automatic_match, manual`}}},
		// A booking rule became the stage mapping of the booking stage
		// (migration 0019); the message says where it went.
		{"booking mode", Spec{Mode: Booking, EventName: "Schedule"}, schema,
			[]want{{"mode", "booking is no longer a send mode: a lead reaching the booking stage is sent by a stage mapping of that stage; map it to the event on the Stages page"}}},
		{"no event", Spec{Mode: AutomaticCompleted}, schema,
			[]want{{"event_name", "choose an event"}}},
		{"partial under Lead", Spec{Mode: AutomaticPartial, EventName: "Lead"}, schema,
			[]want{{"event_name", "partial leads need a custom event name, like PartialLead: under the standard Lead event, Meta would count unfinished forms"}}},
		{"partial under Schedule", Spec{Mode: AutomaticPartial, EventName: "Schedule"}, schema,
			[]want{{"event_name", "standard Schedule event"}}},
		{"partial under lead", Spec{Mode: AutomaticPartial, EventName: "lead"}, schema,
			[]want{{"event_name", "case-sensitive"}}},
		{"combinator", Spec{Mode: AutomaticMatch, EventName: "Lead", Combinator: "xor", Conditions: valid().Conditions}, schema,
			[]want{{"combinator", `"xor" is not a combinator`}}},
		{"completed with conditions", Spec{Mode: AutomaticCompleted, EventName: "Lead", Conditions: valid().Conditions}, schema,
			[]want{{"conditions", "choose automatic_match"}}},
		{"match without conditions", Spec{Mode: AutomaticMatch, EventName: "Lead"}, schema,
			[]want{{"conditions", "at least one condition"}}},
		{"too many conditions", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: slices.Repeat(valid().Conditions, MaxConditions+1)}, schema,
			[]want{{"conditions", "at most 50 conditions, not 51"}}},
		{"no field", withCondition(Condition{MatchType: Equals, Pattern: "x"}), schema,
			[]want{{"conditions[0].field", "choose a field"}}},
		{"unknown field", withCondition(Condition{Field: "emial", MatchType: Equals, Pattern: "x"}), schema,
			[]want{{"conditions[0].field", `unknown field "emial"; did you mean email?`}}},
		{"unknown field in another case", withCondition(Condition{Field: "Email_Domain", MatchType: Equals, Pattern: "x"}), schema,
			[]want{{"conditions[0].field", "did you mean email_domain?"}}},
		{"custom field typo", withCondition(Condition{Field: "fields.budgt", MatchType: Equals, Pattern: "x"}), schema,
			[]want{{"conditions[0].field", `unknown field "fields.budgt"; did you mean fields.budget?`}}},
		{"unknown custom field", withCondition(Condition{Field: "fields.colour", MatchType: Equals, Pattern: "x"}), schema,
			[]want{{"conditions[0].field", `no lead has had a custom field "colour" yet`}}},
		{"custom field without a name", withCondition(Condition{Field: "fields.", MatchType: Equals, Pattern: "x"}), Schema{Open: true},
			[]want{{"conditions[0].field", "write the form field's name after fields."}}},
		{"unknown junk reason", withCondition(Condition{Field: "junk_reason.too_slow", MatchType: Equals, Pattern: "true"}), schema,
			[]want{{"conditions[0].field", "did you mean junk_reason.too_fast?"}}},
		{"no match type", withCondition(Condition{Field: "email", Pattern: "x"}), schema,
			[]want{{"conditions[0].match_type", "choose a match type"}}},
		{"unknown match type", withCondition(Condition{Field: "email", MatchType: "equal", Pattern: "x"}), schema,
			[]want{{"conditions[0].match_type", `"equal" is not a match type`}}},
		{"gt on text", withCondition(Condition{Field: "zip", MatchType: GT, Pattern: "1000"}), schema,
			[]want{{"conditions[0].match_type", "zip is text: gt compares numbers"}}},
		{"contains on a bool", withCondition(Condition{Field: "partial", MatchType: Contains, Pattern: "t"}), schema,
			[]want{{"conditions[0].match_type", "partial is true or false: use equals or not_equals"}}},
		{"equals on a number", withCondition(Condition{Field: "fill_seconds", MatchType: Equals, Pattern: "2"}), schema,
			[]want{{"conditions[0].match_type", "fill_seconds is a number: use gt, gte, lt, lte"}}},
		{"bool pattern", withCondition(Condition{Field: "junk", MatchType: Equals, Pattern: "yes"}), schema,
			[]want{{"conditions[0].pattern", `junk is true or false: write true or false, not "yes"`}}},
		{"no pattern", withCondition(Condition{Field: "email", MatchType: Contains, Pattern: "  "}), schema,
			[]want{{"conditions[0].pattern", "contains needs a pattern"}}},
		{"is_empty with a pattern", withCondition(Condition{Field: "email", MatchType: IsEmpty, Pattern: "x"}), schema,
			[]want{{"conditions[0].pattern", "is_empty takes no pattern"}}},
		{"gt without a number", withCondition(Condition{Field: "fields.budget", MatchType: GT, Pattern: "$5,000"}), schema,
			[]want{{"conditions[0].pattern", `gt needs a number, like 1000 or 2.5, not "$5,000"`}}},
		{"gt with infinity", withCondition(Condition{Field: "fill_seconds", MatchType: GT, Pattern: "1e999"}), schema,
			[]want{{"conditions[0].pattern", "gt needs a number"}}},
		{"lt with NaN", withCondition(Condition{Field: "fill_seconds", MatchType: LT, Pattern: "NaN"}), schema,
			[]want{{"conditions[0].pattern", "lt needs a number"}}},
		{"bad regex", withCondition(Condition{Field: "email", MatchType: Regex, Pattern: "(abc"}), schema,
			[]want{{"conditions[0].pattern", "this regular expression does not compile: missing closing )"}}},
		{"bad repetition", withCondition(Condition{Field: "email", MatchType: Regex, Pattern: "a**"}), schema,
			[]want{{"conditions[0].pattern", "does not compile: invalid nested repetition operator"}}},
		{"huge regex", withCondition(Condition{Field: "email", MatchType: Regex, Pattern: "[a-z]{1000}"}), schema,
			[]want{{"conditions[0].pattern", "too complex"}}},
		{"long pattern", withCondition(Condition{Field: "email", MatchType: Contains, Pattern: strings.Repeat("a", MaxPatternLen+1)}), schema,
			[]want{{"conditions[0].pattern", "at most 2000 characters"}}},
		{"empty list", withCondition(Condition{Field: "email_domain", MatchType: InList, Pattern: " , \n ,"}), schema,
			[]want{{"conditions[0].pattern", "in_list needs at least one value; separate values with commas or new lines"}}},
		{"long list", withCondition(Condition{Field: "email_domain", MatchType: NotInList, Pattern: strings.Repeat("a,", MaxListItems+1)}), schema,
			[]want{{"conditions[0].pattern", "at most 1000 values, not 1001"}}},
		{"unknown source", withCondition(Condition{Field: "source", MatchType: Equals, Pattern: "webiste"}), schema,
			[]want{{"conditions[0].pattern", `"webiste": use one of website, instant_form, crm, whatsapp, phone`}}},
		{"unknown source in a list", withCondition(Condition{Field: "source", MatchType: NotInList, Pattern: "crm, facebook"}), schema,
			[]want{{"conditions[0].pattern", `"facebook": use one of`}}},
		{"phone country name", withCondition(Condition{Field: "phone_country", MatchType: Equals, Pattern: "USA"}), schema,
			[]want{{"conditions[0].pattern", "2-letter country code"}}},
		{"every problem at once", Spec{Mode: "x", EventName: "Lead!", Combinator: "both", Conditions: []Condition{
			{Field: "email", MatchType: Equals, Pattern: "ok"},
			{Field: "nope", MatchType: "same", Pattern: "x"},
			{Field: "email", MatchType: Regex, Pattern: "[z-a]"},
		}}, schema, []want{
			{"mode", "not a send mode"},
			{"event_name", `'!' is not allowed`},
			{"combinator", "not a combinator"},
			{"conditions[1].field", `unknown field "nope"`},
			{"conditions[1].match_type", `"same" is not a match type`},
			{"conditions[2].pattern", "invalid character class range"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Compile(tt.spec, tt.schema)
			if m != nil {
				t.Errorf("Compile returned a Matcher along with problems %v", problems)
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("Compile problems = %v; want %d: %v", problems, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if p := problems[i]; p.Path != w.path || !strings.Contains(p.Message, w.message) {
					t.Errorf("problem %d = %q; want %s: ...%s...", i, p, w.path, w.message)
				}
			}
		})
	}
}

func TestCompileOpenSchema(t *testing.T) {
	s := withCondition(Condition{Field: "fields.colour", MatchType: Equals, Pattern: "red"})
	if _, problems := Compile(s, Schema{Open: true}); problems != nil {
		t.Errorf("Compile(fields.colour, open schema) problems = %v; want none", problems)
	}
	if _, problems := Compile(s, Schema{}); problems == nil {
		t.Error("Compile(fields.colour, closed schema without custom fields) = no problems; want one")
	}
}

func TestRequiresJunk(t *testing.T) {
	cond := func(field string, mt MatchType, pattern string) Condition {
		return Condition{Field: field, MatchType: mt, Pattern: pattern}
	}
	tests := []struct {
		name  string
		comb  Combinator
		conds []Condition
		want  bool
	}{
		{"email only", And, []Condition{cond("email", Equals, "x")}, false},
		{"junk equals true", And, []Condition{cond("junk", Equals, "true")}, true},
		{"junk equals TRUE", And, []Condition{cond("junk", Equals, "TRUE")}, true},
		{"junk not_equals false", And, []Condition{cond("junk", NotEquals, "false")}, true},
		{"junk equals false", And, []Condition{cond("junk", Equals, "false")}, false},
		{"junk_reason equals true", And, []Condition{cond("junk_reason.duplicate", Equals, "true")}, true},
		{"junk_reason equals false", And, []Condition{cond("junk_reason.duplicate", Equals, "false")}, false},
		{"a custom field named junk", And, []Condition{cond("fields.junk", Equals, "true")}, false},
		{"and: one condition requires junk", And, []Condition{cond("email", NotEmpty, ""), cond("junk", Equals, "true")}, true},
		{"or: one of two requires junk", Or, []Condition{cond("email", NotEmpty, ""), cond("junk", Equals, "true")}, false},
		{"or: every condition requires junk", Or, []Condition{cond("junk_reason.too_fast", Equals, "true"), cond("junk", Equals, "true")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Mode: AutomaticMatch, EventName: "JunkLead", Combinator: tt.comb, Conditions: tt.conds}
			m, problems := Compile(s, Schema{Open: true})
			if problems != nil {
				t.Fatal(problems)
			}
			if got := m.RequiresJunk(); got != tt.want {
				t.Errorf("RequiresJunk() = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestFields(t *testing.T) {
	fs := Schema{Custom: []string{"service", "budget", "service", ""}}.Fields()
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.Name] {
			t.Errorf("Fields lists %s twice", f.Name)
		}
		seen[f.Name] = true
		if f.Label == "" || f.Kind == "" || len(f.MatchTypes()) == 0 {
			t.Errorf("Fields: %+v has no label, kind or match types", f)
		}
	}
	for _, name := range []string{
		"email", "phone", "phone_e164", "first_name", "last_name", "city", "state", "zip", "country",
		"gender", "date_of_birth", "message", "fbclid", "fbc", "fbp", "client_ip_address",
		"client_user_agent", "event_source_url", "fill_seconds", "honeypot", "meta_lead_id", "source",
		"partial", "junk", "stage", "external_id", "email_domain", "email_is_free", "email_is_role",
		"email_is_disposable", "email_is_work", "phone_country", "phone_valid", "landing_path",
		"utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term",
		"junk_reason.too_fast", "junk_reason.honeypot", "junk_reason.fake_phone", "junk_reason.vendor_pitch",
		"junk_reason.job_application", "junk_reason.duplicate", "junk_reason.bad_email",
		"junk_reason.disposable_email", "fields.budget", "fields.service",
	} {
		if !seen[name] {
			t.Errorf("Fields lacks %s", name)
		}
	}
	if n := len(fs); n != len(seen) || fs[n-2].Name != "fields.budget" || fs[n-1].Name != "fields.service" {
		t.Errorf("Fields ends with %v; want the custom fields sorted, once each", fs[n-2:])
	}
}

func TestFieldMatchTypes(t *testing.T) {
	tests := []struct {
		field  Field
		has    []MatchType
		hasNot []MatchType
	}{
		{Field{Name: "email", Kind: Text}, []MatchType{Equals, Regex, InList, IsEmpty}, []MatchType{GT, LT}},
		{Field{Name: "fields.budget", Kind: Text}, MatchTypes, nil},
		{Field{Name: "fill_seconds", Kind: Number}, []MatchType{GT, LT, IsEmpty, NotEmpty}, []MatchType{Equals, Contains}},
		{Field{Name: "junk", Kind: Bool}, []MatchType{Equals, NotEquals}, []MatchType{IsEmpty, Contains, GT}},
	}
	for _, tt := range tests {
		t.Run(tt.field.Name, func(t *testing.T) {
			got := tt.field.MatchTypes()
			for _, m := range tt.has {
				if !slices.Contains(got, m) {
					t.Errorf("MatchTypes() = %v; want it to have %s", got, m)
				}
			}
			for _, m := range tt.hasNot {
				if slices.Contains(got, m) {
					t.Errorf("MatchTypes() = %v; want it without %s", got, m)
				}
			}
		})
	}
}

func TestConditionString(t *testing.T) {
	tests := []struct {
		c    Condition
		want string
	}{
		{Condition{"email_domain", Equals, "gmail.com"}, `Email domain is "gmail.com"`},
		{Condition{"email", NotEquals, " a@b.co "}, `Email is not "a@b.co"`},
		{Condition{"message", NotContains, "seo"}, `Message does not contain "seo"`},
		{Condition{"landing_path", StartsWith, "/quote"}, `Landing page path starts with "/quote"`},
		{Condition{"email", Regex, `^info@`}, `Email matches the regular expression "^info@"`},
		{Condition{"utm_source", InList, "fb,\nig , google,a,b,c,d"}, `UTM source is one of "fb", "ig", "google", "a", "b" and 2 more`},
		{Condition{"phone", IsEmpty, ""}, "Phone is empty"},
		{Condition{"fields.budget", GT, " 5000 "}, "Form field budget is greater than 5000"},
		{Condition{"fill_seconds", LT, "2"}, "Seconds to fill the form is less than 2"},
		{Condition{"junk", Equals, "FALSE"}, "Junk is false"},
		{Condition{"junk_reason.too_fast", NotEquals, "true"}, "Junk signal: Filled too fast is not true"},
		{Condition{"nope", Equals, "x"}, `nope is "x"`},
		{Condition{"message", Contains, strings.Repeat("x", 70)}, `Message contains "` + strings.Repeat("x", 60) + `…"`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#v.String() = %q; want %q", tt.c, got, tt.want)
		}
	}
}
