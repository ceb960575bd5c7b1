package rule

import (
	"testing"

	"github.com/leadsignal/leadsignal/models"
)

// A five-condition rule of the kind marketers write, on a typical website
// lead, the way the preview runs it: one Lead reused for every row. Each
// condition reads a different derived value (email, URL, custom fields,
// phone), so this is near the most a lead costs.
func BenchmarkMatchFiveConditions(b *testing.B) {
	m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Conditions: []Condition{
		{"email_is_free", Equals, "false"},
		{"utm_source", InList, "facebook, instagram, fb, ig"},
		{"fields.budget", GT, "5000"},
		{"phone_country", InList, "US, CA"},
		{"message", NotContains, "seo services"},
	}}, Schema{Custom: []string{"budget"}})
	if problems != nil {
		b.Fatal(problems)
	}
	l := lead()
	var v Lead
	for b.Loop() {
		v.Reset(&l)
		if !m.Match(&v).Matched {
			b.Fatal("no match")
		}
	}
}

// What reading one field costs a lead, derived values included: the
// preview's price per lead of a condition on it.
func BenchmarkField(b *testing.B) {
	l := lead()
	l.JunkReasons = `[{"signal":"too_fast","message":"form filled in 0.5 s (under 2 s)"}]`
	for _, name := range []string{
		"email", "email_domain", "email_is_free", "email_is_disposable", "email_is_work", "phone_country",
		"phone_valid", "landing_path", "utm_source", "fields.budget", "junk_reason.too_fast", "fill_seconds",
	} {
		b.Run(name, func(b *testing.B) {
			m, problems := Compile(withCondition(Condition{Field: name, MatchType: NotEmpty}), Schema{Open: true})
			if problems != nil {
				m, problems = Compile(withCondition(Condition{Field: name, MatchType: Equals, Pattern: "true"}), Schema{})
			}
			if problems != nil {
				b.Fatal(problems)
			}
			var v Lead
			for b.Loop() {
				v.Reset(&l)
				m.Match(&v)
			}
		})
	}
}

// A junk lead against the same rule: the gate decides before any condition.
func BenchmarkMatchJunkGate(b *testing.B) {
	m, _ := Compile(Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Conditions: []Condition{
		{"email_is_free", Equals, "false"},
	}}, Schema{})
	l := models.Lead{Junk: true}
	var v Lead
	for b.Loop() {
		v.Reset(&l)
		m.Match(&v)
	}
}
