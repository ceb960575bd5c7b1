package rule

import (
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// value is what a condition on the built-in field name reads from l.
func value(t *testing.T, name string, l models.Lead) string {
	t.Helper()
	i, ok := defIndex[name]
	if !ok {
		t.Fatalf("no built-in field %s", name)
	}
	return defs[i].get(NewLead(&l))
}

func TestLeadFields(t *testing.T) {
	with := func(change func(*models.Lead)) models.Lead {
		l := lead()
		change(&l)
		return l
	}
	tests := []struct {
		name  string
		field string
		lead  models.Lead
		want  string
	}{
		{"source", "source", lead(), "website"},
		{"partial", "partial", with(func(l *models.Lead) { l.Partial = true }), "true"},
		{"junk", "junk", lead(), "false"},
		{"stage", "stage", with(func(l *models.Lead) { l.Stage = "booked" }), "booked"},
		{"external_id", "external_id", lead(), "form-123"},
		{"no external_id", "external_id", with(func(l *models.Lead) { l.ExternalID = nil }), ""},
		{"email", "email", lead(), "Jane.Doe+ads@Acme-Roofing.com"},
		{"phone", "phone", lead(), "(650) 253-0000"},
		{"phone_e164", "phone_e164", lead(), "16502530000"},
		{"first_name", "first_name", lead(), "Jane"},
		{"zip", "zip", lead(), "94103"},
		{"client_ip_address", "client_ip_address", lead(), "203.0.113.7"},
		{"fill_seconds", "fill_seconds", lead(), "37.5"},
		{"fill_seconds unknown", "fill_seconds", with(func(l *models.Lead) { l.FillSeconds = nil }), ""},

		{"email_domain", "email_domain", lead(), "acme-roofing.com"},
		{"email_domain trailing dot", "email_domain", with(func(l *models.Lead) { l.Email = " Jane@Example.COM. " }), "example.com"},
		{"email_domain of no email", "email_domain", with(func(l *models.Lead) { l.Email = "" }), ""},
		{"email_domain without @", "email_domain", with(func(l *models.Lead) { l.Email = "jane" }), ""},
		{"email_is_free work", "email_is_free", lead(), "false"},
		{"email_is_free gmail", "email_is_free", with(func(l *models.Lead) { l.Email = "jane@GMail.com" }), "true"},
		{"email_is_free no email", "email_is_free", with(func(l *models.Lead) { l.Email = "" }), ""},
		{"email_is_role no email", "email_is_role", with(func(l *models.Lead) { l.Email = "" }), ""},
		{"email_is_disposable no email", "email_is_disposable", with(func(l *models.Lead) { l.Email = "" }), ""},
		{"phone_valid no phone", "phone_valid", with(func(l *models.Lead) { l.Phone, l.PhoneE164 = "", "" }), ""},
		{"email_is_role person", "email_is_role", lead(), "false"},
		{"email_is_role info", "email_is_role", with(func(l *models.Lead) { l.Email = "Info@acme.com" }), "true"},
		{"email_is_role tagged", "email_is_role", with(func(l *models.Lead) { l.Email = "sales+web@acme.com" }), "true"},
		{"email_is_disposable", "email_is_disposable", with(func(l *models.Lead) { l.Email = "x@mailinator.com" }), "true"},
		{"email_is_disposable subdomain", "email_is_disposable", with(func(l *models.Lead) { l.Email = "x@eu.mailinator.com" }), "true"},
		{"email_is_disposable not", "email_is_disposable", lead(), "false"},
		{"email_is_work", "email_is_work", lead(), "true"},
		{"email_is_work free", "email_is_work", with(func(l *models.Lead) { l.Email = "jane@gmail.com" }), "false"},
		{"email_is_work disposable", "email_is_work", with(func(l *models.Lead) { l.Email = "x@mailinator.com" }), "false"},
		{"email_is_work broken", "email_is_work", with(func(l *models.Lead) { l.Email = "jane@acme" }), "false"},
		{"email_is_work no email", "email_is_work", with(func(l *models.Lead) { l.Email = "" }), ""},

		{"phone_country", "phone_country", lead(), "US"},
		{"phone_country shared code", "phone_country", phoned("416 222 3333", "", "US"), "CA"},
		{"phone_country lead's country", "phone_country", phoned("030 901820", "Germany", "US"), "DE"},
		{"phone_country account's country", "phone_country", phoned("030 901820", "", "DE"), "DE"},
		{"phone_country own code", "phone_country", phoned("+49 30 901820", "US", "US"), "DE"},
		{"phone_country no phone", "phone_country", phoned("", "US", "US"), ""},
		{"phone_country unusable phone", "phone_country", phoned("12", "US", "US"), ""},
		{"phone_country hashed phone", "phone_country", phoned("2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "US", "US"), ""},
		{"phone_valid", "phone_valid", lead(), "true"},
		{"phone_valid fictional", "phone_valid", with(func(l *models.Lead) { l.PhoneE164 = "15555550100" }), "false"},
		{"phone_valid no phone", "phone_valid", with(func(l *models.Lead) { l.PhoneE164 = "" }), "false"},

		{"landing_path", "landing_path", lead(), "/quote/roof"},
		{"landing_path decoded", "landing_path", with(func(l *models.Lead) { l.EventSourceURL = "https://a.com/caf%C3%A9?x=1" }), "/café"},
		{"landing_path root", "landing_path", with(func(l *models.Lead) { l.EventSourceURL = "https://a.com?utm_source=x" }), "/"},
		{"landing_path no URL", "landing_path", with(func(l *models.Lead) { l.EventSourceURL = "" }), ""},
		{"landing_path broken URL", "landing_path", with(func(l *models.Lead) { l.EventSourceURL = "https://a.com/%zz" }), ""},
		{"utm_source", "utm_source", lead(), "facebook"},
		{"utm_medium", "utm_medium", lead(), "paid_social"},
		{"utm_campaign decoded", "utm_campaign", lead(), "spring sale"},
		{"utm_content", "utm_content", lead(), "video-1"},
		{"utm_term plus", "utm_term", lead(), "roof repair"},
		{"utm first value", "utm_source", with(func(l *models.Lead) { l.EventSourceURL = "https://a.com/?utm_source=a&utm_source=b" }), "a"},
		{"utm missing", "utm_term", with(func(l *models.Lead) { l.EventSourceURL = "https://a.com/" }), ""},

		{"junk_reason fired", "junk_reason.too_fast", with(func(l *models.Lead) {
			l.Junk, l.JunkReasons = true, `[{"signal":"honeypot","message":"x"},{"signal":"too_fast","message":"y"}]`
		}), "true"},
		{"junk_reason overridden", "junk_reason.duplicate", with(func(l *models.Lead) {
			l.JunkOverride, l.JunkReasons = "not_junk", `[{"signal":"duplicate","message":"x"}]`
		}), "true"},
		{"junk_reason other", "junk_reason.fake_phone", with(func(l *models.Lead) {
			l.JunkReasons = `[{"signal":"too_fast","message":"y"}]`
		}), "false"},
		{"junk_reason none", "junk_reason.too_fast", lead(), "false"},
		{"junk_reason unset", "junk_reason.too_fast", with(func(l *models.Lead) { l.JunkReasons = "" }), "false"},
		{"junk_reason broken", "junk_reason.too_fast", with(func(l *models.Lead) { l.JunkReasons = `[{"signal":"too_fast"` }), "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, tt.field, tt.lead); got != tt.want {
				t.Errorf("%s of the lead = %q; want %q", tt.field, got, tt.want)
			}
		})
	}
}

func TestLeadCustomFields(t *testing.T) {
	l := lead()
	tests := []struct {
		field, want string
	}{
		{"fields.budget", "12000"},
		{"fields.service", "Roofing"},
		{"fields.Timeline", "ASAP"},
		{"fields.timeline", ""}, // names are case-sensitive
		{"fields.colour", ""},
	}
	for _, tt := range tests {
		if got := holds(t, Condition{Field: tt.field, MatchType: NotEmpty}, l); got != (tt.want != "") {
			t.Errorf("%s not_empty = %v; want %v", tt.field, got, tt.want != "")
		}
		if tt.want != "" && !holds(t, Condition{Field: tt.field, MatchType: Equals, Pattern: tt.want}, l) {
			t.Errorf("%s equals %q = false; want true", tt.field, tt.want)
		}
	}
	// A value of another type than string reads as "", and the others still read.
	l.Fields = `{"n":12,"s":"ok"}`
	if holds(t, Condition{Field: "fields.n", MatchType: NotEmpty}, l) || !holds(t, Condition{Field: "fields.s", MatchType: Equals, Pattern: "ok"}, l) {
		t.Errorf("fields %s: want n empty and s = ok", l.Fields)
	}
}

// phoned is lead() with its phone and country, keyed for an account whose
// default country is defaultCountry.
func phoned(phone, country, defaultCountry string) models.Lead {
	l := lead()
	l.Phone, l.Country = phone, country
	return keyed(l, defaultCountry)
}

// A Lead works out only what the conditions read, once, and Reset forgets it.
func TestLeadDerivesLazily(t *testing.T) {
	m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{
		{"email_domain", NotEquals, "gmail.com"}, {"email_is_free", Equals, "false"}, {"utm_source", Equals, "facebook"},
	}}, schema)
	if problems != nil {
		t.Fatal(problems)
	}
	l := lead()
	v := NewLead(&l)
	if !m.Match(v).Matched {
		t.Fatal("Match = false; want true")
	}
	if want := haveEmail | haveURL; v.done != want {
		t.Errorf("after Match, derived = %b; want %b (email and URL only)", v.done, want)
	}
	l.EventSourceURL = "https://a.com/?utm_source=google"
	if !m.Match(v).Matched {
		t.Error("Match after the URL changed = false; want true from the values already worked out")
	}
	v.Reset(&l)
	if v.done != 0 || m.Match(v).Matched {
		t.Errorf("after Reset: derived = %b, Match = true; want 0 and false", v.done)
	}

	v.field("service")
	other := lead()
	other.Fields = `{"budget":"1"}`
	v.Reset(&other)
	if got := v.field("service"); got != "" {
		t.Errorf("after Reset, fields.service = %q; want \"\": the previous lead's fields must go", got)
	}
}

func TestParseFields(t *testing.T) {
	tests := []struct {
		name, json string
		want       map[string]string
	}{
		{"compact", `{"a":"1","b":""}`, map[string]string{"a": "1", "b": ""}},
		{"empty", `{}`, map[string]string{}},
		{"unicode", `{"stadt":"München"}`, map[string]string{"stadt": "München"}},
		{"escapes", `{"q":"say \"hi\" \u003cb\u003e","a\\b":"x"}`, map[string]string{"q": `say "hi" <b>`, `a\b`: "x"}},
		{"spaces", `{ "a" : "1" , "b":"2" }`, map[string]string{"a": "1", "b": "2"}},
		{"other types", `{"n":12,"t":true,"s":"ok","z":null}`, map[string]string{"n": "", "t": "", "s": "ok", "z": ""}},
		{"repeated name", `{"a":"1","a":"2"}`, map[string]string{"a": "2"}},
		{"trailing comma", `{"a":"1",}`, map[string]string{}},
		{"not json", `{"a":"1"`, map[string]string{}},
		{"array", `["a","b"]`, map[string]string{}},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", map[string]string{"a": "\uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := models.Lead{Fields: tt.json}
			v := NewLead(&l)
			for name, want := range tt.want {
				if got := v.field(name); got != want {
					t.Errorf("field %q of %s = %q; want %q", name, tt.json, got, want)
				}
			}
			for _, f := range v.fields {
				if _, ok := tt.want[f.name]; !ok {
					t.Errorf("fields of %s has %q; want only %v", tt.json, f.name, tt.want)
				}
			}
		})
	}
}

func TestPageURLQuery(t *testing.T) {
	tests := []struct {
		url, want string // want: utm_source
	}{
		{"https://a.com/?utm_source=fb", "fb"},
		{"https://a.com/?x=1&utm_source=a%20b&utm_source=c", "a b"},
		{"https://a.com/?utm_source=&utm_source=c", ""},
		{"https://a.com/?utm%5Fsource=enc", "enc"},
		{"https://a.com/?utm_source=%zz&utm_source=ok", "ok"},
		{"https://a.com/?utm_source;x=no&utm_source=yes", "yes"},
		{"https://a.com/?UTM_SOURCE=upper", ""},
		{"https://a.com/#utm_source=fragment", ""},
		{"/quote?utm_source=relative", "relative"},
	}
	for _, tt := range tests {
		l := models.Lead{EventSourceURL: tt.url}
		if got := value(t, "utm_source", l); got != tt.want {
			t.Errorf("utm_source of %s = %q; want %q", tt.url, got, tt.want)
		}
	}
}

func TestValue(t *testing.T) {
	l := models.Lead{Email: "Ann@Example.com", Fields: `{"budget":"5000","plan":"pro"}`, Source: models.SourceWebsite}
	v := NewLead(&l)
	for name, want := range map[string]string{"email_domain": "example.com", "fields.budget": "5000", "source": "website", "fields.none": "", "nope": ""} {
		if got := v.Value(name); got != want {
			t.Errorf("Value(%q) = %q; want %q", name, got, want)
		}
	}
	s := Schema{Custom: []string{"budget"}}
	if p := s.ValueProblem("fields.budget"); p != "" {
		t.Errorf("ValueProblem(fields.budget) = %q; want none", p)
	}
	if p := s.ValueProblem("fields.budgt"); !strings.Contains(p, "did you mean fields.budget") {
		t.Errorf("ValueProblem(fields.budgt) = %q; want a suggestion", p)
	}
}
