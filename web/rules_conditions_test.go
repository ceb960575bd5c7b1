package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// rowOptions are the values of the options of sel in the first
// condition row of r.
func rowOptions(r resp, sel string) []string {
	return optionValues(r.doc.Find(`[data-testid="condition-row"]`).First().Find(sel))
}

// A condition row offers what its field takes: asked again as its field
// or match type changes, it answers with the match types of the field,
// in words for its kind, and the input that suits it.
func TestRuleConditionRowFitsField(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		htmx := http.Header{"Hx-Request": {"true"}}
		row := func(field, match, pattern string) resp {
			t.Helper()
			q := url.Values{"cond_field": {field}, "cond_match_type": {match}, "cond_pattern": {pattern}}
			r := f.b.getWith(f.url("/condition-row?"+q.Encode()), htmx)
			wantStatus(t, "condition row", r, http.StatusOK)
			if r.doc.Find(`[data-testid="condition-row"]`).Length() != 1 || strings.Contains(r.body, "<html") {
				t.Fatalf("row for %s: %s", field, r.body)
			}
			if r.header.Get("HX-Trigger-After-Swap") != "rule-changed" {
				t.Errorf("row for %s does not ask the preview to count again: %v", field, r.header)
			}
			return r
		}

		// A true/false field: is or is not, and unknown; yes or no in a
		// picker; nothing to type, no regex. A match type it does not take
		// (regex, kept from a text field) becomes its first.
		free := row("email_is_free", "regex", "gmail")
		if got, want := rowOptions(free, `[data-testid="cond-match"]`), []string{"equals", "not_equals", "is_empty", "not_empty"}; !slices.Equal(got, want) {
			t.Errorf("match types of a true/false field = %v; want %v", got, want)
		}
		if got := free.doc.Find(`[data-testid="cond-match"] option[selected]`).Text(); got != "is" {
			t.Errorf("match type after the field changed = %q; want is", got)
		}
		labels := free.doc.Find(`[data-testid="cond-match"]`).Text()
		if !strings.Contains(labels, "is unknown") || strings.Contains(labels, "regex") || strings.Contains(labels, "greater") {
			t.Errorf("match types of a true/false field read %q", labels)
		}
		yesno := free.doc.Find(`select[data-testid="cond-yesno"][name="cond_pattern"]`)
		if yesno.Length() != 1 || yesno.Find("option").Text() != "yesno" || yesno.Find("option[selected]").AttrOr("value", "") != "true" {
			t.Errorf("a true/false field's value: %s", free.body)
		}
		if free.doc.Find(`input[name="cond_pattern"]`).Length() != 0 {
			t.Error("a true/false field offers a box to type in")
		}

		// A number: comparisons of numbers, a number input.
		fill := row("fill_seconds", "equals", "")
		if got, want := rowOptions(fill, `[data-testid="cond-match"]`), []string{"gt", "gte", "lt", "lte", "is_empty", "not_empty"}; !slices.Equal(got, want) {
			t.Errorf("match types of a number field = %v; want %v", got, want)
		}
		if in := fill.doc.Find(`input[name="cond_pattern"]`); in.AttrOr("type", "") != "number" || in.AttrOr("inputmode", "") != "decimal" {
			t.Errorf("a number field's input: %s", fill.body)
		}

		// Text: text matches, no number comparisons, a line of text.
		city := row("city", "gt", "Berlin")
		types := rowOptions(city, `[data-testid="cond-match"]`)
		if !slices.Contains(types, "regex") || !slices.Contains(types, "in_list") || slices.Contains(types, "gt") {
			t.Errorf("match types of a text field = %v", types)
		}
		if in := city.doc.Find(`input[name="cond_pattern"]`); in.AttrOr("type", "") != "text" || in.AttrOr("value", "") != "Berlin" {
			t.Errorf("a text field's input keeps what was typed: %s", city.body)
		}
		// A list: several lines, and it says how to write them.
		list := row("city", "in_list", "Berlin, Hamburg")
		if ta := list.doc.Find(`textarea[name="cond_pattern"]`); ta.Text() != "Berlin, Hamburg" {
			t.Errorf("a list's input: %s", list.body)
		}
		if hint := list.text("cond-hint"); hint != "One value per line, or separated by commas." {
			t.Errorf("a list's hint = %q", hint)
		}
		// Nothing to type for is empty.
		empty := row("city", "is_empty", "Berlin")
		if in := empty.doc.Find(`[name="cond_pattern"]`); in.Length() != 1 || in.AttrOr("type", "") != "hidden" || in.AttrOr("value", "x") != "" {
			t.Errorf("is empty's value: %s", empty.body)
		}
		// Placeholders are short: the hints say more, below.
		for _, r := range []resp{fill, city, list, row("message", "regex", "")} {
			r.doc.Find(`[name="cond_pattern"][placeholder]`).Each(func(_ int, in *goquery.Selection) {
				if p := in.AttrOr("placeholder", ""); len(p) > 16 {
					t.Errorf("placeholder %q is longer than a narrow input shows", p)
				}
			})
		}
		// A new row offers every match type until its field is chosen.
		fresh := f.b.getWith(f.url("/condition-row"), htmx)
		if got := rowOptions(fresh, `[data-testid="cond-match"]`); len(got) != 15 {
			t.Errorf("a new row offers %v", got)
		}
	})
}

// internalName is a word of a setup file that a person at the form never
// chose: a match type, a mode or a field as stored.
var internalName = regexp.MustCompile(`\b(gt|gte|lt|lte|not_equals|in_list|is_empty|regex\b|automatic_\w+|email_is_\w+|fill_seconds|junk_reason\.\w+)`)

// The server checks each condition against its field's type, whatever the
// form offered: a request made by hand gets 422 with the problem at the
// input, in words with the field's label, and nothing is stored.
func TestRuleRefusesMatchTypeForFieldType(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		tests := []struct {
			name   string
			cond   [3]string
			testid string
			says   string
		}{
			{"regex on true/false", [3]string{"email_is_free", "regex", "yes"}, "error-cond-match",
				"Free email provider (gmail.com, ...) is yes or no: choose 'is' or 'is not', then yes or no, or 'is unknown'."},
			{"greater than on true/false", [3]string{"junk", "gt", "3"}, "error-cond-match",
				"Junk is yes or no: choose 'is' or 'is not', then yes or no."},
			{"neither yes nor no", [3]string{"partial", "equals", "maybe"}, "error-cond-pattern",
				`Partial lead is yes or no: choose yes or no, not "maybe".`},
			{"contains on a number", [3]string{"fill_seconds", "contains", "3"}, "error-cond-match",
				"Seconds to fill the form is a number: compare it with 'is greater than', 'is at least', 'is less than' or 'is at most'."},
			{"words for a number", [3]string{"fill_seconds", "gt", "three"}, "error-cond-pattern",
				`'is greater than' needs a number, like 3 or 2.5, not "three".`},
			{"greater than on text", [3]string{"city", "gt", "3"}, "error-cond-match",
				"City is text: 'is greater than' compares numbers, which only form fields and number fields hold."},
			{"an empty list", [3]string{"city", "in_list", " , "}, "error-cond-pattern",
				"'is one of' needs at least one value: one per line, or separated by commas."},
			{"a value for is empty", [3]string{"city", "is_empty", "x"}, "error-cond-pattern", "'is empty' takes no value: leave it blank."},
			{"no such match type", [3]string{"city", "sounds_like", "x"}, "error-cond-match", `"sounds_like" is no way to compare: choose one from the list.`},
		}
		before, _ := s.SendRules(t.Context(), f.acc.ID)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", tt.cond)
				r := f.b.post(f.url(""), v)
				wantStatus(t, tt.name, r, http.StatusUnprocessableEntity)
				if got := r.text(tt.testid); got != tt.says {
					t.Errorf("%s = %q; want %q", tt.testid, got, tt.says)
				}
				if m := internalName.FindString(r.text(tt.testid)); m != "" {
					t.Errorf("the message names %q, which the form never shows", m)
				}
				// The preview says the same, in the same words.
				p := f.b.postWith(f.url("/preview"), v, http.Header{"Hx-Request": {"true"}})
				if got := p.text("preview-problems"); !strings.Contains(got, tt.says) {
					t.Errorf("preview says %q; want %q", got, tt.says)
				}
				if !strings.Contains(p.text("preview-summary"), "1 problem to fix") {
					t.Errorf("the preview's summary says %q", p.text("preview-summary"))
				}
			})
		}
		if after, _ := s.SendRules(t.Context(), f.acc.ID); len(after) != len(before) {
			t.Errorf("a rule with a wrong match type was stored: %d rules, %d before", len(after), len(before))
		}
		// What the form offers saves.
		createRuleForm(t, f, ruleValues("Work emails", f.d, "automatic_match", "QualifiedLead", "and",
			[3]string{"email_is_free", "equals", "false"}, [3]string{"fill_seconds", "gte", "3"}))
	})
}

// A new rule form opens without an error: not in the form, not in the
// preview, which asks for a condition instead; a row half filled in is
// left out of the count, not called wrong.
func TestRuleNewFormOpensWithoutErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		page := f.b.get(f.url("/new"))
		wantStatus(t, "new rule", page, http.StatusOK)
		if n := page.doc.Find(`.field-error, .flash.error, [aria-invalid="true"]`).Length(); n != 0 {
			t.Errorf("a new form shows %d errors", n)
		}
		// The form as it opens, posted to the preview on load.
		v := ruleValues("", f.d, "automatic_match", "Lead", "and", [3]string{"", "equals", ""})
		htmx := http.Header{"Hx-Request": {"true"}}
		p := f.b.postWith(f.url("/preview"), v, htmx)
		if p.has("preview-problems") || p.doc.Find(".field-error, .flash.error").Length() != 0 {
			t.Errorf("the preview of a new form shows errors: %s", p.body)
		}
		if got := p.text("preview-waiting"); got != "Choose a field and type a value for a condition to see the leads it matches." {
			t.Errorf("the preview of a new form says %q", got)
		}
		if sum := p.doc.Find(`[data-testid="preview-summary"]`); sum.AttrOr("hx-swap-oob", "") != "true" || !strings.Contains(sum.Text(), "Choose a field") {
			t.Errorf("the preview's summary: %s", p.body)
		}
		// One condition filled in, a second not yet: counted without it.
		v = ruleValues("", f.d, "automatic_match", "Lead", "and", [3]string{"city", "equals", "berlin"}, [3]string{"fields.budget", "gt", ""})
		p = f.b.postWith(f.url("/preview"), v, htmx)
		if p.text("preview-matched") != "2" || p.text("preview-unfinished") != "Condition 2 is not filled in yet: the numbers leave it out." {
			t.Errorf("half-filled preview: %q / %q", p.text("preview-headline"), p.text("preview-unfinished"))
		}
		if got := strings.Join(strings.Fields(p.text("preview-summary")), " "); got != "Matches 2 of 5 leads of the last 7 days. Details" {
			t.Errorf("summary %q", got)
		}
		// A problem of a later row names that row as the form numbers it,
		// an unfinished row before it notwithstanding.
		v2 := ruleValues("", f.d, "automatic_match", "Lead", "and", [3]string{"", "equals", ""}, [3]string{"junk", "regex", "x"})
		p = f.b.postWith(f.url("/preview"), v2, htmx)
		if got := p.text("preview-problems"); !strings.Contains(got, "Condition 2: Junk is yes or no") {
			t.Errorf("problems of the second row: %q", got)
		}
		// Saved as it is, the unfinished row is an error at its input.
		r := f.b.post(f.url(""), url.Values(v))
		wantStatus(t, "save half filled", r, http.StatusUnprocessableEntity)
		if got := r.doc.Find(`[data-testid="condition-row"]`).Eq(1).Find(`[data-testid="error-cond-pattern"]`).Text(); got != "'is greater than' needs a value." {
			t.Errorf("the unfinished row says %q", got)
		}
	})
}

// The list is one line a rule: a long name is cut, whole on hover; when
// each rule changed; statuses in words.
func TestRulesListOneLine(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		long := strings.Repeat("Qualified roofing leads from Berlin ", 3)[:99]
		v := ruleValues(long, f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "Berlin"})
		v.Del("enabled")
		createRuleForm(t, f, v)
		r := f.b.get(f.url(""))
		wantStatus(t, "rules", r, http.StatusOK)
		if cls := r.doc.Find(`[data-testid="rules-table"]`).AttrOr("class", ""); !strings.Contains(cls, "list") {
			t.Errorf("rules table class %q; want a list", cls)
		}
		row := r.doc.Find(`[data-testid="rule-row"]`).Eq(1)
		name := row.Find(`[data-testid="rule-name"]`)
		if name.AttrOr("title", "") != long || !strings.Contains(name.AttrOr("class", ""), "cut") {
			t.Errorf("long name: class %q, title %q", name.AttrOr("class", ""), name.AttrOr("title", ""))
		}
		if c := row.Find(`[data-testid="rule-conditions"]`); c.AttrOr("title", "") != `Completed leads where City is "Berlin"` {
			t.Errorf("conditions title %q", c.AttrOr("title", ""))
		}
		if got := row.Find(`[data-testid="rule-enabled"]`).Text(); got != "Disabled" {
			t.Errorf("status %q", got)
		}
		if tm := row.Find(`[data-testid="rule-changed"] time`); tm.AttrOr("datetime", "") == "" || tm.AttrOr("title", "") == "" || tm.Text() == "" {
			t.Errorf("changed: %s", r.body)
		}
		if r.doc.Find(`[data-testid="rules-table"] br`).Length() != 0 {
			t.Error("a row breaks its line")
		}
	})
}
