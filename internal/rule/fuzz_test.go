package rule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// FuzzCompileAndMatch compiles any condition and evaluates what compiles
// on leads made of any value: nothing may panic, a Spec either compiles or
// says why, and Match agrees with MatchEach.
func FuzzCompileAndMatch(f *testing.F) {
	f.Add("email_domain", "equals", "gmail.com", "and", "jane@gmail.com")
	f.Add("fields.x", "regex", `^(a|b)+$`, "or", "abab")
	f.Add("fields.x", "gt", "1e3", "", "1001")
	f.Add("fields.x", "in_list", "a,\nb, ,c", "and", "B")
	f.Add("utm_source", "starts_with", "face", "or", "https://a.com/p?utm_source=facebook")
	f.Add("junk_reason.too_fast", "equals", "true", "and", `[{"signal":"too_fast"}]`)
	f.Add("fill_seconds", "lt", "2", "and", "1.5")
	f.Add("phone_country", "not_in_list", "US, ca", "or", "4930901820")
	f.Add("landing_path", "contains", "ÉCOLE", "and", "https://a.com/e\u0301cole")
	f.Add("fields.x", "regex", "(abc", "and", "")
	f.Add("junk", "equals", "yes", "xor", "\xff")
	f.Fuzz(func(t *testing.T, field, matchType, pattern, combinator, value string) {
		spec := Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Combinator: Combinator(combinator), Conditions: []Condition{
			{Field: field, MatchType: MatchType(matchType), Pattern: pattern},
			{Field: "fields.x", MatchType: NotContains, Pattern: "zz"},
		}}
		m, problems := Compile(spec, Schema{Custom: []string{"x"}, Open: strings.HasPrefix(value, "o")})
		for _, p := range problems {
			if p.Path == "" || p.Message == "" {
				t.Errorf("Compile(%+v) problem %+v has no path or message", spec, p)
			}
		}
		if (m == nil) == (problems == nil) {
			t.Fatalf("Compile(%+v) = %v, %v; want a Matcher or problems", spec, m, problems)
		}
		_ = spec.Conditions[0].String()
		if m == nil {
			return
		}
		fields, _ := json.Marshal(map[string]string{"x": value, strings.TrimPrefix(field, CustomPrefix): value})
		fill := float64(len(value))
		leads := []models.Lead{
			{Email: value, PhoneE164: value, EventSourceURL: value, Fields: string(fields), JunkReasons: value, FillSeconds: &fill},
			{Email: value + "@" + value, Phone: value, Message: value, Fields: value, JunkReasons: value, Junk: true},
			{Partial: true, Fields: "{}", EventSourceURL: "https://a.com/?" + value},
		}
		var held []bool
		for _, l := range leads {
			v := NewLead(&l)
			r := m.Match(v)
			each, h := m.MatchEach(NewLead(&l), held)
			held = h
			if r != each {
				t.Errorf("Match = %+v; MatchEach = %+v", r, each)
			}
			if r.Matched != (r.Reason == "") || r.Condition < -1 || r.Condition >= len(spec.Conditions) {
				t.Errorf("Match = %+v: inconsistent", r)
			}
			if m.Explain(r) == "" {
				t.Errorf("Explain(%+v) is empty", r)
			}
		}
	})
}

// FuzzStoredGroups reads any conditions column: nothing may panic, what
// reads back stores the same, and what compiles matches, explains and
// previews alike, groups included.
func FuzzStoredGroups(f *testing.F) {
	f.Add(`[{"field":"junk","match_type":"equals","pattern":"false"},{"combinator":"or","conditions":[{"field":"city","match_type":"equals","pattern":"a"},{"field":"email","match_type":"not_empty"}]}]`, "and", "a")
	f.Add(`[{"combinator":"and","conditions":[]}]`, "or", "")
	f.Add(`[{"combinator":"or","conditions":[{"combinator":"or","conditions":[]}]}]`, "or", "x")
	f.Add(`[{"conditions":null},{"field":"fields.x","match_type":"gt","pattern":"1"}]`, "", "2")
	f.Add(`{"conditions":[]}`, "and", "")
	f.Fuzz(func(t *testing.T, stored, combinator, value string) {
		spec, problems := SpecOf(models.SendRule{Mode: string(AutomaticMatch), EventName: "Lead", Combinator: combinator, Conditions: stored})
		if problems != nil {
			return
		}
		back, problems := SpecOf(models.SendRule{Mode: string(AutomaticMatch), EventName: "Lead", Combinator: combinator, Conditions: spec.StoredConditions()})
		if problems != nil || back.StoredConditions() != spec.StoredConditions() {
			t.Fatalf("stored %s reads back as %s, %v", spec.StoredConditions(), back.StoredConditions(), problems)
		}
		_ = spec.Text()
		_ = JunkInOr(spec)
		m, problems := Compile(spec, Schema{Open: true})
		if m == nil {
			if problems == nil {
				t.Fatal("no Matcher and no problems")
			}
			return
		}
		fields, _ := json.Marshal(map[string]string{"x": value})
		leads := []models.Lead{{City: value, Email: value, Fields: string(fields), JunkReasons: "[]"}, {Junk: true, City: value, Fields: "{}"}}
		p := NewPreview(m, time.Time{})
		for i := range leads {
			r := m.Match(NewLead(&leads[i]))
			each, held := m.MatchEach(NewLead(&leads[i]), nil)
			if r != each {
				t.Errorf("Match = %+v; MatchEach = %+v", r, each)
			}
			if r.Group < -1 || r.Group >= len(spec.Groups) || r.Condition < -1 || r.Condition >= spec.Count() {
				t.Errorf("Match = %+v: out of range", r)
			}
			if m.Explain(r) == "" || m.ExplainEach(r, held) == "" {
				t.Errorf("no explanation of %+v", r)
			}
			p.Add(&leads[i])
		}
		if res := p.Result(); len(res.Groups) != len(spec.Groups) {
			t.Errorf("preview counts %d groups; want %d", len(res.Groups), len(spec.Groups))
		}
	})
}
