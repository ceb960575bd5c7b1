package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// A group rule saved through the form is stored with its group, shows
// its group again in the form, counts each group's cut in the preview,
// and the lead page names the group that decided.
func TestRuleGroupsForm(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		htmx := http.Header{"Hx-Request": {"true"}}
		v := withGroup(ruleValues("Paris or gmail, clean", f.d, "automatic_match", "GroupedLead", "and",
			[3]string{"junk", "equals", "false"}), "anykey", "or", [3]string{"city", "equals", "paris"}, [3]string{"email_domain", "equals", "gmail.com"})

		// The preview: the group rules out ann alone (bob and cy pass it).
		pr := f.b.postWith(f.url("/preview"), v, htmx)
		wantStatus(t, "preview", pr, http.StatusOK)
		if got := pr.text("preview-matched"); got != "2" {
			t.Errorf("preview matched %s; want 2", got)
		}
		if got := pr.text("preview-group-rules-out"); got != "1" {
			t.Errorf("the group rules out %s; want 1 (ann)", got)
		}
		if got := pr.doc.Find(`[data-testid="preview-group-condition"]`).Length(); got != 2 {
			t.Errorf("%d group condition rows; want 2", got)
		}
		if pr.has("junk-warning") {
			t.Errorf("the group rule warns of junk in an OR list: %q", pr.text("junk-warning"))
		}

		r := createRuleForm(t, f, v)
		spec, problems := rule.SpecOf(r)
		if problems != nil || spec.Text() != `Junk is false AND (City is "paris" OR Email domain is "gmail.com")` {
			t.Errorf("stored rule = %q, %v", spec.Text(), problems)
		}
		page := f.b.get(f.url("/" + itoa(r.ID)))
		groups := page.doc.Find(`[data-testid="condition-group"]`)
		if groups.Length() != 1 || groups.Find(`[data-testid="condition-row"]`).Length() != 2 {
			t.Fatalf("form shows %d groups; want 1 of 2 rows\n%s", groups.Length(), page.body)
		}
		if c, _ := groups.Find(`select[name="group_combinator"] option[selected]`).Attr("value"); c != "or" {
			t.Errorf("group combinator = %q; want or", c)
		}
		key, _ := groups.Find(`input[name="group_key"]`).Attr("value")
		groups.Find(`input[name="cond_group"]`).Each(func(_ int, s *goquery.Selection) {
			if v, _ := s.Attr("value"); v != key {
				t.Errorf("a group row's cond_group = %q; want the group's key %q", v, key)
			}
		})
		if got := f.b.get(f.url("")).doc.Find(`[data-testid="rule-conditions"]`).Text(); !strings.Contains(got, `(City is "paris" OR Email domain is "gmail.com")`) {
			t.Errorf("rules list says %q; want the group in parentheses", got)
		}

		// The lead page: ann fails the group, cy passes by its first condition.
		lead := func(id int64) string {
			p := f.b.get(views.AccountURL(f.acc.ID, "/leads/"+itoa(id)))
			var why string
			p.doc.Find(`[data-testid="lead-rule"]`).Each(func(_ int, s *goquery.Selection) {
				if strings.Contains(s.Text(), "Paris or gmail, clean") {
					why = strings.TrimSpace(s.Find(`[data-testid="rule-why"]`).Text())
				}
			})
			return why
		}
		if got, want := lead(ids[0]), `group 1 did not hold: none of its conditions (City is "paris" OR Email domain is "gmail.com") matched`; !strings.Contains(got, want) {
			t.Errorf("ann's explanation = %q; want %q", got, want)
		}
		if got, want := lead(ids[2]), `group 1 by its condition 1 (City is "paris")`; !strings.Contains(got, want) {
			t.Errorf("cy's explanation = %q; want %q", got, want)
		}
	})
}

// The form warns, as it changes, of a junk condition in an OR list: one
// OR list with "Junk is no" matches every lead that is not junk.
func TestRuleJunkInOrWarning(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		htmx := http.Header{"Hx-Request": {"true"}}
		v := ruleValues("One list", f.d, "automatic_match", "OneList", "or",
			[3]string{"city", "equals", "paris"}, [3]string{"email_domain", "equals", "gmail.com"}, [3]string{"junk", "equals", "false"})
		pr := f.b.postWith(f.url("/preview"), v, htmx)
		wantStatus(t, "preview", pr, http.StatusOK)
		if got := pr.text("preview-matched"); got != "3" {
			t.Errorf("one OR list matched %s; want 3, every lead that is not junk", got)
		}
		if w := pr.text("junk-warning"); !strings.Contains(w, "“Junk is false” sits in the rule's OR list, and every lead that is not junk meets it") {
			t.Errorf("preview warning = %q; want the junk-in-OR warning", w)
		}
		// Saving is not refused; the saved rule's form warns too.
		r := createRuleForm(t, f, v)
		if page := f.b.get(f.url("/" + itoa(r.ID))); !page.has("junk-warning") {
			t.Error("the saved rule's form does not warn of junk in an OR list")
		}
	})
}

// A group's problems show at its rows and under it; rows and groups
// beyond the limits, odd keys and text that is not UTF-8 get answers in
// words (a NUL byte is refused before any form reads it: nul_test.go).
func TestRuleGroupsProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		base := func() url.Values {
			return ruleValues("Grouped", f.d, "automatic_match", "GroupedLead", "and", [3]string{"email", "not_empty", ""})
		}
		v := withGroup(base(), "a", "or", [3]string{"email", "regex", "(["}, [3]string{"city", "equals", "a\xffb"})
		v.Add("group_key", "empty")
		v.Add("group_combinator", "xor")
		r := f.b.post(f.url(""), v)
		wantStatus(t, "create", r, http.StatusUnprocessableEntity)
		groups := r.doc.Find(`[data-testid="condition-group"]`)
		if groups.Length() != 2 {
			t.Fatalf("%d groups shown; want both back\n%s", groups.Length(), r.body)
		}
		first := groups.First()
		if got := first.Find(`[data-testid="error-cond-pattern"]`).Length(); got != 2 {
			t.Errorf("%d pattern errors in group 1; want 2 (the regex, the text that is not UTF-8)", got)
		}
		second := groups.Eq(1)
		if got := strings.TrimSpace(second.Find(`[data-testid="error-group"]`).Text()); !strings.Contains(got, "A group needs at least one condition") {
			t.Errorf("group 2 error = %q", got)
		}
		if got := second.Find(`.field-error`).First().Text(); !strings.Contains(got, "Choose whether every condition of the group must hold") {
			t.Errorf("group 2 combinator error = %q", got)
		}
		rules, _ := s.SendRules(t.Context(), f.acc.ID)
		for _, r := range rules {
			if r.Name == "Grouped" {
				t.Fatal("a rule with problems was saved")
			}
		}

		// The preview says which group a problem is about, as the form
		// numbers them.
		pr := f.b.postWith(f.url("/preview"), v, http.Header{"Hx-Request": {"true"}})
		problems := pr.doc.Find(`[data-testid="preview-problems"] li`).Text()
		for _, want := range []string{"Group 1, condition 1: This regular expression does not compile", "Group 2: A group needs at least one condition"} {
			if !strings.Contains(problems, want) {
				t.Errorf("preview problems %q; want %q", problems, want)
			}
		}

		// Eleven groups: refused, in words.
		many := base()
		for i := range rule.MaxGroups + 1 {
			many = withGroup(many, "k"+itoa(int64(i)), "or", [3]string{"email", "not_empty", ""})
		}
		r = f.b.post(f.url(""), many)
		wantStatus(t, "create with too many groups", r, http.StatusUnprocessableEntity)
		if got := r.text("error-groups"); !strings.Contains(got, "Use at most 10 groups") {
			t.Errorf("groups error = %q", got)
		}

		// A row naming a group that is not there is the rule's own.
		stray := base()
		stray.Add("cond_field", "city")
		stray.Add("cond_match_type", "equals")
		stray.Add("cond_pattern", "berlin")
		stray.Add("cond_group", "nosuchgroup")
		saved := createRuleForm(t, f, stray)
		if spec, _ := rule.SpecOf(saved); len(spec.Conditions) != 2 || len(spec.Groups) != 0 {
			t.Errorf("stray row stored as %+v; want the rule's own second condition", spec)
		}

		// The row and group fragments keep a key safe for ids, and drop
		// any other.
		row := f.b.getWith(f.url("/condition-row?cond_group=%22%3E%3Cscript%3E"), http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "row", row, http.StatusOK)
		if v, _ := row.doc.Find(`input[name="cond_group"]`).Attr("value"); v != "" {
			t.Errorf("row's cond_group = %q; want none for an unsafe key", v)
		}
		g := f.b.getWith(f.url("/condition-group"), http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "group", g, http.StatusOK)
		key, _ := g.doc.Find(`input[name="group_key"]`).Attr("value")
		rowKey, _ := g.doc.Find(`input[name="cond_group"]`).Attr("value")
		if key == "" || key != rowKey || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
			t.Errorf("new group key %q, its row's %q", key, rowKey)
		}
	})
}
