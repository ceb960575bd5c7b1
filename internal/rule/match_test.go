package rule

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
)

// lead is a completed website lead that is not junk, as capture stores it.
func lead() models.Lead {
	ext, fill := "form-123", 37.5
	l := models.Lead{
		ID: 1, AccountID: 1, ExternalID: &ext, Source: models.SourceWebsite,
		Email: "Jane.Doe+ads@Acme-Roofing.com", Phone: "(650) 253-0000", PhoneE164: "16502530000",
		FirstName: "Jane", LastName: "Doe", City: "San Francisco", State: "CA", Zip: "94103", Country: "US",
		Message: "Hi, I'd like a quote for a new roof on a two-storey house.",
		FBCLID:  "IwAR2xyz", FBC: "fb.1.1733054400000.IwAR2xyz", FBP: "fb.1.1733054400000.123456789",
		ClientIP: "203.0.113.7", ClientUserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)",
		EventSourceURL: "https://acme-roofing.com/quote/roof?utm_source=facebook&utm_medium=paid_social" +
			"&utm_campaign=spring%20sale&utm_content=video-1&utm_term=roof+repair",
		FillSeconds: &fill,
		Fields:      `{"budget":"12000","service":"Roofing","Timeline":"ASAP"}`,
		JunkReasons: "[]",
	}
	return keyed(l, "US")
}

// keyed sets l's match keys and PhoneE164 from its raw fields, as capture
// does for an account whose default country is defaultCountry.
func keyed(l models.Lead, defaultCountry string) models.Lead {
	keys := normalize.Normalize(normalize.Input{
		Email: l.Email, Phone: l.Phone, FirstName: l.FirstName, LastName: l.LastName, City: l.City,
		State: l.State, Zip: l.Zip, Country: l.Country, Gender: l.Gender, DateOfBirth: l.DateOfBirth,
		ClientIP: l.ClientIP, UserAgent: l.ClientUserAgent, FBC: l.FBC, FBP: l.FBP, FBCLID: l.FBCLID,
		DefaultCountry: defaultCountry,
	})
	b, err := json.Marshal(keys)
	if err != nil {
		panic(err)
	}
	l.MatchKeys, l.PhoneE164, l.PhoneCountry = string(b), "", ""
	if keys.Phone.Present() {
		l.PhoneE164, l.PhoneCountry = keys.Phone.Normalized, keys.PhoneCountry
	}
	return l
}

// holds reports whether condition c holds for l, in an automatic_match
// rule of its own.
func holds(t *testing.T, c Condition, l models.Lead) bool {
	t.Helper()
	m, problems := Compile(withCondition(c), Schema{Open: true})
	if problems != nil {
		t.Fatalf("Compile(%+v) problems = %v", c, problems)
	}
	return m.Match(NewLead(&l)).Matched
}

// withField is lead() with the custom field x set to value.
func withField(value string) models.Lead {
	l := lead()
	b, _ := json.Marshal(map[string]string{"x": value})
	l.Fields = string(b)
	return l
}

func TestMatchTypes(t *testing.T) {
	tests := []struct {
		name      string
		value     string
		matchType MatchType
		pattern   string
		want      bool
	}{
		{"equals", "Roofing", Equals, "roofing", true},
		{"equals trims", "  Roofing ", Equals, " ROOFING", true},
		{"equals whole value", "Roofing and siding", Equals, "roofing", false},
		{"not_equals", "Roofing", NotEquals, "siding", true},
		{"not_equals same", "Roofing", NotEquals, "ROOFING", false},
		{"contains", "New roof, please", Contains, "ROOF", true},
		{"contains not", "Gutters", Contains, "roof", false},
		{"not_contains", "Gutters", NotContains, "roof", true},
		{"not_contains not", "New roof", NotContains, "Roof", false},
		{"starts_with", "/Quote/roof", StartsWith, "/quote", true},
		{"starts_with not", "/contact", StartsWith, "/quote", false},
		{"ends_with", "jane@GMAIL.com", EndsWith, "@gmail.com", true},
		{"ends_with not", "jane@gmail.co", EndsWith, "@gmail.com", false},
		{"regex", "INFO@acme.com", Regex, `^(info|sales)@`, true},
		{"regex not", "jane@acme.com", Regex, `^(info|sales)@`, false},
		{"regex case on", "Abc", Regex, `(?-i)^abc$`, false},
		{"regex unanchored", "call me at 5pm", Regex, `\d+pm`, true},
		{"in_list", "Gutters", InList, "roofing, gutters\nsiding", true},
		{"in_list whole items", "Gutters repair", InList, "roofing, gutters", false},
		{"in_list skips empty items", "x", InList, ",, x ,\n\n", true},
		{"not_in_list", "Windows", NotInList, "roofing,gutters", true},
		{"not_in_list listed", "ROOFING", NotInList, "roofing,gutters", false},
		{"is_empty", "", IsEmpty, "", true},
		{"is_empty spaces", "   ", IsEmpty, "", true},
		{"is_empty not", "x", IsEmpty, "", false},
		{"not_empty", "x", NotEmpty, "", true},
		{"not_empty not", " ", NotEmpty, "", false},
		{"gt", "12000", GT, "5000", true},
		{"gt equal", "5000", GT, "5000", false},
		{"gt decimals", "2.5", GT, "2.25", true},
		{"gt exponent", "1e4", GT, "5000", true},
		{"gt negative", "-1", GT, "-2", true},
		{"gt spaces", " 6000 ", GT, "5000", true},
		{"gt text", "lots", GT, "5000", false},
		{"gt currency", "$6000", GT, "5000", false},
		{"gt thousands", "6,000", GT, "5000", false},
		{"gt NaN", "NaN", GT, "5000", false},
		{"gt Inf", "Inf", GT, "5000", false},
		{"gt hex", "0x2000", GT, "5000", false},
		{"lt", "1.5", LT, "2", true},
		{"lt equal", "2", LT, "2", false},
		{"lt text", "soon", LT, "2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Condition{Field: "fields.x", MatchType: tt.matchType, Pattern: tt.pattern}
			if got := holds(t, c, withField(tt.value)); got != tt.want {
				t.Errorf("%s %s %q on %q = %v; want %v", c.Field, c.MatchType, c.Pattern, tt.value, got, tt.want)
			}
		})
	}
}

func TestMatchUnicode(t *testing.T) {
	tests := []struct {
		name      string
		value     string
		matchType MatchType
		pattern   string
		want      bool
	}{
		{"upper and lower accents", "ÉCOLE", Equals, "école", true},
		{"composed and decomposed", "e\u0301cole", Equals, "ÉCOLE", true},
		{"decomposed pattern", "École", Equals, "E\u0301COLE", true},
		{"sharp s folds to ss", "Straße", Equals, "STRASSE", true},
		{"greek final sigma", "ΟΔΟΣ", Equals, "οδος", true},
		{"cyrillic", "МОСКВА", Contains, "моск", true},
		{"contains accents", "L'ÉCOLE du Louvre", Contains, "école", true},
		{"accents matter", "ecole", Equals, "école", false},
		{"starts_with accents", "Ærø", StartsWith, "æ", true},
		{"in_list folds", "MÜNCHEN", InList, "Berlin, münchen", true},
		{"not_in_list folds", "MÜNCHEN", NotInList, "Berlin, münchen", false},
		{"regex folds simple case", "École", Regex, "^é", true},
		{"regex on decomposed value", "e\u0301cole", Regex, "^école$", true},
		{"full-width is not ascii", "ＡＢＣ", Equals, "ａｂｃ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Condition{Field: "fields.x", MatchType: tt.matchType, Pattern: tt.pattern}
			if got := holds(t, c, withField(tt.value)); got != tt.want {
				t.Errorf("%s %q on %q = %v; want %v", c.MatchType, c.Pattern, tt.value, got, tt.want)
			}
		})
	}
}

// An empty value: the "not" match types hold, the others and numbers fail.
func TestMatchEmptyValue(t *testing.T) {
	want := map[MatchType]bool{
		Equals: false, NotEquals: true, Contains: false, NotContains: true, StartsWith: false,
		EndsWith: false, Regex: false, InList: false, NotInList: true, IsEmpty: true, NotEmpty: false,
		GT: false, LT: false,
	}
	for _, mt := range MatchTypes {
		pattern := "5"
		if !mt.TakesPattern() {
			pattern = ""
		}
		for _, l := range []models.Lead{withField(""), {Fields: "{}"}, {Fields: ""}, {Fields: "not json"}} {
			c := Condition{Field: "fields.x", MatchType: mt, Pattern: pattern}
			if got := holds(t, c, l); got != want[mt] {
				t.Errorf("%s %q on an empty value (fields %q) = %v; want %v", mt, pattern, l.Fields, got, want[mt])
			}
		}
	}
	if !holds(t, Condition{Field: "fields.x", MatchType: Regex, Pattern: "^$"}, withField("")) {
		t.Error(`regex "^$" on an empty value = false; want true: a regex sees the empty value as ""`)
	}
}

func TestMatchBoolAndNumberFields(t *testing.T) {
	noFill := lead()
	noFill.FillSeconds = nil
	tests := []struct {
		name string
		c    Condition
		l    models.Lead
		want bool
	}{
		{"bool equals", Condition{"phone_valid", Equals, "TRUE"}, lead(), true},
		{"bool not_equals", Condition{"email_is_free", NotEquals, "true"}, lead(), true},
		{"partial", Condition{"partial", Equals, "false"}, lead(), true},
		{"fill_seconds gt", Condition{"fill_seconds", GT, "30"}, lead(), true},
		{"fill_seconds lt", Condition{"fill_seconds", LT, "30"}, lead(), false},
		{"fill_seconds unknown lt", Condition{"fill_seconds", LT, "30"}, noFill, false},
		{"fill_seconds unknown is_empty", Condition{"fill_seconds", IsEmpty, ""}, noFill, true},
		{"fill_seconds is_empty", Condition{"fill_seconds", IsEmpty, ""}, lead(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := holds(t, tt.c, tt.l); got != tt.want {
				t.Errorf("%s on the lead = %v; want %v", tt.c, got, tt.want)
			}
		})
	}
}

func TestMatchCombinators(t *testing.T) {
	conds := []Condition{
		{"email_domain", Equals, "acme-roofing.com"}, // holds
		{"utm_source", Equals, "google"},             // fails
		{"fields.budget", GT, "5000"},                // holds
		{"city", Equals, "Berlin"},                   // fails
	}
	tests := []struct {
		name       string
		combinator Combinator
		conds      []int
		want       Result
		explain    string
	}{
		{"and all hold", And, []int{0, 2}, Result{Matched: true, Condition: -1, Group: -1}, "all conditions matched"},
		{"and one holds", And, []int{0}, Result{Matched: true, Condition: -1, Group: -1}, "the condition matched"},
		{"and first failure decides", And, []int{0, 1, 2, 3}, Result{Reason: ReasonCondition, Condition: 1, Group: -1},
			`condition 2 (UTM source is "google") did not match`},
		{"empty combinator is and", "", []int{2, 3}, Result{Reason: ReasonCondition, Condition: 1, Group: -1},
			`condition 2 (City is "Berlin") did not match`},
		{"or first hold decides", Or, []int{1, 3, 2, 0}, Result{Matched: true, Condition: 2, Group: -1},
			"condition 3 (Form field budget is greater than 5000) matched"},
		{"or none holds", Or, []int{1, 3}, Result{Reason: ReasonNoCondition, Condition: -1, Group: -1}, "none of the conditions matched"},
		{"or one fails", Or, []int{1}, Result{Reason: ReasonNoCondition, Condition: -1, Group: -1}, "none of the conditions matched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Combinator: tt.combinator}
			for _, i := range tt.conds {
				s.Conditions = append(s.Conditions, conds[i])
			}
			m, problems := Compile(s, schema)
			if problems != nil {
				t.Fatal(problems)
			}
			l := lead()
			got := m.Match(NewLead(&l))
			if got != tt.want {
				t.Errorf("Match = %+v; want %+v", got, tt.want)
			}
			if e := m.Explain(got); e != tt.explain {
				t.Errorf("Explain(%+v) = %q; want %q", got, e, tt.explain)
			}
			each, held := m.MatchEach(NewLead(&l), nil)
			if each != got {
				t.Errorf("MatchEach = %+v; want Match's %+v", each, got)
			}
			var want []bool
			for _, i := range tt.conds {
				want = append(want, i == 0 || i == 2)
			}
			if !slices.Equal(held, want) {
				t.Errorf("MatchEach held = %v; want %v", held, want)
			}
		})
	}
}

func TestMatchGates(t *testing.T) {
	l := lead()
	junk, partial, both := l, l, l
	junk.Junk, junk.JunkReasons = true, `[{"signal":"too_fast","message":"form filled in 0.5 s (under 2 s)"}]`
	partial.Partial = true
	both.Junk, both.Partial = true, true
	anyLead := []Condition{{"email", NotEmpty, ""}}
	junkOnly := []Condition{{"junk_reason.too_fast", Equals, "true"}}
	tests := []struct {
		name    string
		spec    Spec
		lead    models.Lead
		want    Result
		explain string
	}{
		{"completed takes completed", Spec{Mode: AutomaticCompleted, EventName: "Lead"}, l, Result{Matched: true, Condition: -1, Group: -1}, "the rule has no conditions"},
		{"completed skips junk", Spec{Mode: AutomaticCompleted, EventName: "Lead"}, junk, Result{Reason: ReasonJunk, Condition: -1, Group: -1},
			"the lead is junk, and the rule does not require junk"},
		{"completed skips partial", Spec{Mode: AutomaticCompleted, EventName: "Lead"}, partial, Result{Reason: ReasonPartial, Condition: -1, Group: -1},
			"the lead is partial, and this rule sends completed leads"},
		{"junk comes first", Spec{Mode: AutomaticCompleted, EventName: "Lead"}, both, Result{Reason: ReasonJunk, Condition: -1, Group: -1},
			"the lead is junk, and the rule does not require junk"},
		{"match skips partial", Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: anyLead}, partial, Result{Reason: ReasonPartial, Condition: -1, Group: -1},
			"the lead is partial, and this rule sends completed leads"},
		{"match naming junk takes junk", Spec{Mode: AutomaticMatch, EventName: "JunkLead", Conditions: junkOnly}, junk, Result{Matched: true, Condition: -1, Group: -1},
			"the condition matched"},
		{"match naming junk decides on it", Spec{Mode: AutomaticMatch, EventName: "JunkLead", Conditions: junkOnly}, l, Result{Reason: ReasonCondition, Condition: 0, Group: -1},
			"condition 1 (Junk signal: Filled too fast is true) did not match"},
		{"partial takes partial", Spec{Mode: AutomaticPartial, EventName: "PartialLead"}, partial, Result{Matched: true, Condition: -1, Group: -1}, "the rule has no conditions"},
		{"partial skips completed", Spec{Mode: AutomaticPartial, EventName: "PartialLead"}, l, Result{Reason: ReasonCompleted, Condition: -1, Group: -1},
			"the lead is completed, and this rule sends partial leads"},
		{"partial skips junk", Spec{Mode: AutomaticPartial, EventName: "PartialLead"}, both, Result{Reason: ReasonJunk, Condition: -1, Group: -1},
			"the lead is junk, and the rule does not require junk"},
		{"stage mapping takes partial", Spec{Mode: Stage, EventName: "Schedule"}, partial, Result{Matched: true, Condition: -1, Group: -1}, "the rule has no conditions"},
		{"manual takes completed", Spec{Mode: Manual, EventName: "Contact", Conditions: anyLead}, l, Result{Matched: true, Condition: -1, Group: -1}, "the condition matched"},
		{"manual skips junk", Spec{Mode: Manual, EventName: "Contact"}, junk, Result{Reason: ReasonJunk, Condition: -1, Group: -1},
			"the lead is junk, and the rule does not require junk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Compile(tt.spec, schema)
			if problems != nil {
				t.Fatal(problems)
			}
			got := m.Match(NewLead(&tt.lead))
			if got != tt.want {
				t.Errorf("Match = %+v; want %+v", got, tt.want)
			}
			if e := m.Explain(got); e != tt.explain {
				t.Errorf("Explain(%+v) = %q; want %q", got, e, tt.explain)
			}
			if each, _ := m.MatchEach(NewLead(&tt.lead), nil); each != got {
				t.Errorf("MatchEach = %+v; want Match's %+v", each, got)
			}
		})
	}
}

// MatchEach reports each condition on its own even when a gate rules the
// lead out, and reuses the slice it is given.
func TestMatchEachGatedAndReused(t *testing.T) {
	m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "Lead", Combinator: Or, Conditions: []Condition{
		{"city", Equals, "Berlin"}, {"state", Equals, "ca"},
	}}, schema)
	if problems != nil {
		t.Fatal(problems)
	}
	l := lead()
	l.Junk = true
	buf := make([]bool, 0, 8)
	r, held := m.MatchEach(NewLead(&l), buf)
	if r.Reason != ReasonJunk || !slices.Equal(held, []bool{false, true}) {
		t.Errorf("MatchEach(junk lead) = %+v, %v; want reason junk, [false true]", r, held)
	}
	if &held[0] != &buf[:1][0] {
		t.Error("MatchEach did not reuse the slice it was given")
	}
}

func TestExplainForeignResult(t *testing.T) {
	m, _ := Compile(valid(), schema)
	if got := m.Explain(Result{Reason: ReasonCondition, Condition: 7, Group: -1}); got != "a condition did not match" {
		t.Errorf("Explain(result naming condition 7 of 1) = %q", got)
	}
}

// A derived true/false field of a lead that lacks what it derives from is
// unknown: it fails equals and not_equals, true or false, and passes
// is_empty.
func TestMatchUnknownBool(t *testing.T) {
	phoneOnly := lead()
	phoneOnly.Email = ""
	noPhone := lead()
	noPhone.Phone, noPhone.PhoneE164 = "", ""
	tests := []struct {
		c    Condition
		l    models.Lead
		want bool
	}{
		{Condition{"email_is_free", Equals, "false"}, phoneOnly, false},
		{Condition{"email_is_free", Equals, "true"}, phoneOnly, false},
		{Condition{"email_is_free", NotEquals, "true"}, phoneOnly, false},
		{Condition{"email_is_work", NotEquals, "false"}, phoneOnly, false},
		{Condition{"email_is_free", IsEmpty, ""}, phoneOnly, true},
		{Condition{"email_is_free", NotEmpty, ""}, phoneOnly, false},
		{Condition{"email_is_free", Equals, "false"}, lead(), true},
		{Condition{"email_is_free", NotEmpty, ""}, lead(), true},
		{Condition{"phone_valid", Equals, "false"}, noPhone, false},
		{Condition{"phone_valid", IsEmpty, ""}, noPhone, true},
	}
	for _, tt := range tests {
		t.Run(tt.c.String(), func(t *testing.T) {
			if got := holds(t, tt.c, tt.l); got != tt.want {
				t.Errorf("%s holds = %v; want %v", tt.c, got, tt.want)
			}
		})
	}
}

// A condition reads at most MaxFieldRead bytes of a field: what comes
// after is never matched, however costly the pattern.
func TestMatchReadsAPrefix(t *testing.T) {
	long := withField("")
	long.Message = strings.Repeat("é", MaxFieldRead) + "needle"
	if holds(t, Condition{"message", Contains, "needle"}, long) {
		t.Error("a condition read past MaxFieldRead bytes")
	}
	short := withField("")
	short.Message = "hay needle"
	if !holds(t, Condition{"message", Contains, "needle"}, short) {
		t.Error("a short message lost its end")
	}
	if got := prefix(strings.Repeat("é", MaxFieldRead)); len(got) > MaxFieldRead || !utf8.ValidString(got) {
		t.Errorf("prefix cut into a character: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
