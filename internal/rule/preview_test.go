package rule

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

var previewNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// previewLeads are six leads of the last week, newest first, named by
// their ids:
//
//	1 Berlin, budget 9000, em ph fbc fbp external_id ip ua
//	2 Berlin, budget 100, em only
//	3 Paris, budget 9000, ph only
//	4 Paris, budget 100, no key at all
//	5 Berlin, budget 9000, junk, em
//	6 Berlin, budget 9000, partial, em
func previewLeads() []models.Lead {
	ext := "crm-1"
	base := func(id int64, city, budget string) models.Lead {
		return models.Lead{ID: id, AccountID: 1, Source: models.SourceWebsite, City: city,
			CreatedAt: previewNow.Add(-time.Duration(id) * time.Hour), Fields: `{"budget":"` + budget + `"}`, JunkReasons: "[]"}
	}
	l1 := base(1, "Berlin", "9000")
	l1.Email, l1.EmailHash, l1.PhoneHash, l1.FBC, l1.FBP, l1.ExternalID = "one@example.com", "h1", "p1", "fb.1.1.x", "fb.1.1.y", &ext
	l1.ClientIP, l1.ClientUserAgent = "203.0.113.7", "Mozilla/5.0"
	l2 := base(2, "Berlin", "100")
	l2.EmailHash = "h2"
	l3 := base(3, "Paris", "9000")
	l3.PhoneHash, l3.FirstName, l3.LastName = "p3", "Ada", "Lovelace"
	l4 := base(4, "Paris", "100")
	l5 := base(5, "Berlin", "9000")
	l5.EmailHash, l5.Junk, l5.JunkReasons = "h5", true, `[{"signal":"too_fast","message":"form filled in 0.5 s (under 2 s)"}]`
	l6 := base(6, "Berlin", "9000")
	l6.EmailHash, l6.Partial = "h6", true
	return []models.Lead{l1, l2, l3, l4, l5, l6}
}

func ids(ls []PreviewLead) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

func TestPreview(t *testing.T) {
	berlin := Condition{"city", Equals, "berlin"}
	rich := Condition{"fields.budget", GT, "5000"}
	tooFast := Condition{"junk_reason.too_fast", Equals, "true"}
	tests := []struct {
		name  string
		spec  Spec
		want  PreviewResult // examples are checked by id only
		match []int64
		miss  []int64
	}{
		{
			name: "completed: gates only",
			spec: Spec{Mode: AutomaticCompleted, EventName: "Lead"},
			want: PreviewResult{Leads: 6, Matched: 4, OutJunk: 1, OutPartial: 1, Conditions: []ConditionCount{},
				Keys: KeyCounts{Email: 2, Phone: 2, FBC: 1, FBP: 1, ExternalID: 1, IP: 1, UserAgent: 1}},
			match: []int64{1, 2, 3, 4}, miss: []int64{5, 6},
		},
		{
			name: "and: each condition alone",
			spec: Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Combinator: And, Conditions: []Condition{berlin, rich}},
			want: PreviewResult{Leads: 6, Matched: 1, OutJunk: 1, OutPartial: 1,
				Conditions: []ConditionCount{{Condition: berlin, Holds: 2, Alone: 1}, {Condition: rich, Holds: 2, Alone: 1}},
				Keys:       KeyCounts{Email: 1, Phone: 1, FBC: 1, FBP: 1, ExternalID: 1, IP: 1, UserAgent: 1}},
			match: []int64{1}, miss: []int64{2, 3, 4, 5, 6},
		},
		{
			name: "or: each condition alone",
			spec: Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Combinator: Or, Conditions: []Condition{berlin, rich}},
			want: PreviewResult{Leads: 6, Matched: 3, OutJunk: 1, OutPartial: 1,
				Conditions: []ConditionCount{{Condition: berlin, Holds: 2, Alone: 1}, {Condition: rich, Holds: 2, Alone: 1}},
				Keys:       KeyCounts{Email: 2, Phone: 2, FBC: 1, FBP: 1, ExternalID: 1, IP: 1, UserAgent: 1}},
			match: []int64{1, 2, 3}, miss: []int64{4, 5, 6},
		},
		{
			name: "naming junk lets junk in",
			spec: Spec{Mode: AutomaticMatch, EventName: "JunkLead", Conditions: []Condition{tooFast}},
			want: PreviewResult{Leads: 6, Matched: 1, MatchedJunk: 1, OutPartial: 1,
				Conditions: []ConditionCount{{Condition: tooFast, Holds: 1, Alone: 4}},
				Keys:       KeyCounts{Email: 1}},
			match: []int64{5}, miss: []int64{1, 2, 3, 4, 6},
		},
		{
			name: "partial",
			spec: Spec{Mode: AutomaticPartial, EventName: "PartialLead"},
			want: PreviewResult{Leads: 6, Matched: 1, MatchedPartial: 1, OutJunk: 1, OutCompleted: 4, Conditions: []ConditionCount{},
				Keys: KeyCounts{Email: 1}},
			match: []int64{6}, miss: []int64{1, 2, 3, 4, 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Compile(tt.spec, schema)
			if problems != nil {
				t.Fatal(problems)
			}
			p := NewPreview(m, previewNow)
			leads := previewLeads()
			// One lead value reused for every row, as the store passes them.
			var row models.Lead
			for _, l := range leads {
				row = l
				p.Add(&row)
			}
			got := p.Result()
			if g, w := ids(got.Matches), tt.match; !slices.Equal(g, w) {
				t.Errorf("Matches = %v; want %v", g, w)
			}
			if g, w := ids(got.Misses), tt.miss; !slices.Equal(g, w) {
				t.Errorf("Misses = %v; want %v", g, w)
			}
			got.Matches, got.Misses = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Result =\n%+v\nwant\n%+v", got, tt.want)
			}
			// What the preview counts is what Match decides, lead by lead.
			n := 0
			for _, l := range leads {
				if m.Match(NewLead(&l)).Matched {
					n++
				}
			}
			if got.Matched != n {
				t.Errorf("Matched = %d; Match matches %d", got.Matched, n)
			}
		})
	}
}

// The examples say why, are the newest whatever the order of the leads,
// and stop at PreviewExamples.
func TestPreviewExamples(t *testing.T) {
	m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "QualifiedLead", Conditions: []Condition{
		{"city", Equals, "berlin"}, {"fields.budget", GT, "5000"},
	}}, schema)
	if problems != nil {
		t.Fatal(problems)
	}
	p := NewPreview(m, previewNow)
	var row models.Lead
	// 30 leads oldest first: the even ones match.
	for i := 30; i >= 1; i-- {
		row = models.Lead{ID: int64(i), City: "Berlin", Fields: `{"budget":"9000"}`, JunkReasons: "[]",
			FirstName: "Lead", LastName: fmt.Sprint(i), CreatedAt: previewNow.Add(-time.Duration(i) * time.Minute)}
		if i%2 == 1 {
			row.City = "Paris"
		}
		p.Add(&row)
	}
	r := p.Result()
	if g, w := ids(r.Matches), []int64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}; !slices.Equal(g, w) {
		t.Errorf("Matches = %v; want %v", g, w)
	}
	if g, w := ids(r.Misses), []int64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}; !slices.Equal(g, w) {
		t.Errorf("Misses = %v; want %v", g, w)
	}
	if e := r.Matches[0]; e.Why != "all conditions matched" || e.Name != "Lead 2" {
		t.Errorf("first match = %+v", e)
	}
	if e := r.Misses[0]; e.Why != `condition 1 (City is "berlin") did not match` {
		t.Errorf("first miss says %q", e.Why)
	}
	// Result is a copy: adding more does not change it.
	row = models.Lead{ID: 99, City: "Berlin", Fields: `{"budget":"9000"}`, CreatedAt: previewNow}
	p.Add(&row)
	if r.Matches[0].ID != 2 || p.Result().Matches[0].ID != 99 {
		t.Error("Result shares its examples with the Preview")
	}
}

// Sendable counts, for each destination, the matches its CanSend says
// could be sent now; each is asked about matches only, with the lead's
// view and the preview's time. Without one no match counts.
func TestPreviewSendable(t *testing.T) {
	m, problems := Compile(Spec{Mode: AutomaticMatch, EventName: "Lead", Conditions: []Condition{{"city", Equals, "berlin"}}}, schema)
	if problems != nil {
		t.Fatal(problems)
	}
	var asked []int64
	p := NewPreview(m, previewNow)
	p.CanSend = append(p.CanSend, func(l *models.Lead, v *Lead, now time.Time) bool {
		asked = append(asked, l.ID)
		if !now.Equal(previewNow) || v.Value("city") != l.City {
			t.Errorf("CanSend(lead %d) at %v with the view of %q", l.ID, now, v.Value("city"))
		}
		return l.EmailHash != ""
	}, func(l *models.Lead, _ *Lead, _ time.Time) bool { return l.ID == 2 })
	bare := NewPreview(m, previewNow)
	for _, l := range previewLeads() {
		p.Add(&l)
		bare.Add(&l)
	}
	// Berlin: 1 and 2 match (both with an email); 5 is junk, 6 partial.
	if r := p.Result(); r.Matched != 2 || !slices.Equal(r.Sendable, []int{2, 1}) || !slices.Equal(asked, []int64{1, 2}) {
		t.Errorf("matched %d, sendable %v, asked about %v; want 2, [2 1], [1 2]", r.Matched, r.Sendable, asked)
	}
	if r := bare.Result(); len(r.Sendable) != 0 {
		t.Errorf("without CanSend, sendable %v; want none", r.Sendable)
	}
}

// The preview of a week of leads costs what matching them costs.
func BenchmarkPreviewFiveConditions(b *testing.B) {
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
	p := NewPreview(m, previewNow)
	for b.Loop() {
		p.Add(&l)
	}
}
