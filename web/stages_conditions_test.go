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
)

// optionValues are the values of the options a selection holds.
func optionValues(s *goquery.Selection) []string {
	var out []string
	s.Find("option").Each(func(_ int, o *goquery.Selection) { out = append(out, o.AttrOr("value", "")) })
	return out
}

// The mapping form offers the stage change's deal value and currency in
// its conditions, saves "won deals over 499.99 EUR", and refuses a deal
// value that is no number inline, keeping what was typed. The Rules form
// neither offers them nor saves a rule naming one.
func TestStageMappingChangeConditions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		won := stageID(t, s, f.acc, "won")

		page := f.b.get(stagesURL(f.acc, "/mappings/new?stage="+itoa(won)))
		wantStatus(t, "new mapping", page, http.StatusOK)
		if !strings.Contains(page.text("mapping-conditions-help"), "won deals of at least 500 EUR") {
			t.Errorf("the conditions' help says %q; want the won deals example", page.text("mapping-conditions-help"))
		}
		addURL := page.doc.Find(`[data-testid="add-condition"]`).AttrOr("hx-get", "")
		if addURL != f.url("/condition-row?form=mapping") {
			t.Errorf("Add condition fetches %q; want the mapping's own row", addURL)
		}

		row := f.b.getWith(addURL, htmx)
		wantStatus(t, "new condition row", row, http.StatusOK)
		groups := row.doc.Find(`select[name="cond_field"] optgroup`)
		if got := strings.Join(optionValues(groups.First()), ","); groups.First().AttrOr("label", "") != "Stage change" || got != "change.value,change.currency" {
			t.Errorf("the first field group offers %q; want Stage change: change.value,change.currency", got)
		}
		if n := row.doc.Find(`select[name="cond_match_type"] option`).Length(); n != len(rule.MatchTypes) {
			t.Errorf("a new row offers %d match types; want all %d until a field is chosen", n, len(rule.MatchTypes))
		}

		// A row fetched again for change.value offers numbers' match types
		// and a decimal input, keeping the pattern typed.
		row = f.b.getWith(addURL+"&"+url.Values{"cond_field": {"change.value"}, "cond_match_type": {"equals"}, "cond_pattern": {"500"}}.Encode(), htmx)
		wantStatus(t, "condition row", row, http.StatusOK)
		match := row.doc.Find(`select[name="cond_match_type"]`)
		if got := strings.Join(optionValues(match), ","); got != "gt,gte,lt,lte,is_empty,not_empty" {
			t.Errorf("change.value's row offers match types %q; want gt,gte,lt,lte,is_empty,not_empty", got)
		}
		if v := match.Find("option[selected]").AttrOr("value", ""); v != "gt" {
			t.Errorf("change.value's row selects %q; want gt, equals being no number's", v)
		}
		pattern := row.doc.Find(`input[name="cond_pattern"]`)
		if pattern.AttrOr("inputmode", "") != "decimal" || pattern.AttrOr("value", "") != "500" {
			t.Errorf("change.value's pattern input: inputmode %q, value %q; want decimal, 500", pattern.AttrOr("inputmode", ""), pattern.AttrOr("value", ""))
		}
		if v := row.doc.Find(`select[name="cond_field"] option[selected]`).AttrOr("value", ""); v != "change.value" {
			t.Errorf("the row's field is %q; want change.value", v)
		}
		if hx := row.doc.Find(`select[name="cond_field"]`).AttrOr("hx-get", ""); hx != addURL {
			t.Errorf("the row's field select fetches %q; want %q when it changes", hx, addURL)
		}
		row = f.b.getWith(addURL+"&"+url.Values{"cond_field": {"change.currency"}, "cond_match_type": {"gt"}}.Encode(), htmx)
		if v := row.doc.Find(`select[name="cond_match_type"] option[selected]`).AttrOr("value", ""); v != "equals" {
			t.Errorf("change.currency's row selects %q; want equals", v)
		}

		// A deal value that is no number: 422, the error at its pattern,
		// what was typed kept, nothing stored.
		v := mappingValues("won", f.d, "Purchase", "change",
			[3]string{"change.value", "gt", "500 EUR"}, [3]string{"change.currency", "equals", "EUR"})
		r := f.b.post(stagesURL(f.acc, "/mappings"), v)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-cond-pattern"), "needs a number") {
			t.Fatalf("a deal value of 500 EUR = %d, %q; want 422 with the error inline", r.status, r.text("error-cond-pattern"))
		}
		patterns := r.doc.Find(`input[name="cond_pattern"]`)
		if patterns.Eq(0).AttrOr("value", "") != "500 EUR" || patterns.Eq(1).AttrOr("value", "") != "EUR" ||
			r.doc.Find(`select[name="cond_field"]`).Eq(0).Find("option[selected]").AttrOr("value", "") != "change.value" {
			t.Error("the refused form did not keep the conditions typed")
		}
		if patterns.Eq(0).AttrOr("inputmode", "") != "decimal" {
			t.Error("the refused form's deal value input is not a number's")
		}
		v = mappingValues("won", f.d, "Purchase", "change", [3]string{"change.currency", "equals", "euro"})
		if r = f.b.post(stagesURL(f.acc, "/mappings"), v); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(r.text("error-cond-pattern"), "currency code") {
			t.Errorf("a deal currency of euro = %d, %q; want 422 asking for a currency code", r.status, r.text("error-cond-pattern"))
		}
		if ms := stageMappings(t, s, f.acc); len(ms) != 0 {
			t.Fatalf("refused forms stored %d mappings", len(ms))
		}

		// Won deals over 499.99 EUR: saved, listed in words, shown again.
		v = mappingValues("won", f.d, "Purchase", "change",
			[3]string{"change.value", "gt", "499.99"}, [3]string{"change.currency", "equals", "EUR"})
		m := createMappingForm(t, f, v)
		spec, _ := rule.SpecOf(m)
		if len(spec.Conditions) != 2 || spec.Conditions[0] != (rule.Condition{Field: "change.value", MatchType: rule.GT, Pattern: "499.99"}) {
			t.Errorf("stored conditions %+v", spec.Conditions)
		}
		r = f.b.get(stagesURL(f.acc, ""))
		want := `leads where Deal value is greater than 499.99 AND Deal currency is "EUR"`
		if got := mappingLines(r, "won"); len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("the list shows %q; want it to say %q", got, want)
		}
		page = f.b.get(stagesURL(f.acc, "/mappings/"+itoa(m.ID)))
		if got := page.doc.Find(`select[name="cond_field"] option[selected]`).First().AttrOr("value", ""); got != "change.value" {
			t.Errorf("the edit page's first condition is on %q; want change.value", got)
		}

		// The Rules form: not offered, and refused at the field.
		page = f.b.get(f.url("/new"))
		if page.doc.Find(`select[name="cond_field"] option[value^="change."]`).Length() != 0 {
			t.Error("the Rules form offers the stage change's fields")
		}
		r = f.b.post(f.url(""), ruleValues("Big deals", f.d, "automatic_match", "Lead", "and", [3]string{"change.value", "gt", "500"}))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-cond-field"), "only a stage mapping") {
			t.Errorf("a rule on change.value = %d, %q; want 422 at the field, saying only stage mappings read it", r.status, r.text("error-cond-field"))
		}
	})
}

// A stage mapping takes groups as a rule does: "won deals (over 499.99 OR
// in EUR) AND with an email", saved from the form, listed in words and
// shown again with its group; Add group fetches the mapping's own group.
func TestStageMappingGroups(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		won := stageID(t, s, f.acc, "won")
		page := f.b.get(stagesURL(f.acc, "/mappings/new?stage="+itoa(won)))
		addGroup := page.doc.Find(`[data-testid="add-group"]`).AttrOr("hx-get", "")
		if addGroup != f.url("/condition-group?form=mapping") {
			t.Errorf("Add group fetches %q; want the mapping's own group", addGroup)
		}
		g := f.b.getWith(addGroup, htmx)
		wantStatus(t, "new group", g, http.StatusOK)
		if first := g.doc.Find(`select[name="cond_field"] optgroup`).First().AttrOr("label", ""); first != "Stage change" {
			t.Errorf("a new mapping group's row offers %q first; want the stage change's fields", first)
		}

		v := mappingValues("won", f.d, "Purchase", "change", [3]string{"email", "not_empty", ""})
		v.Add("cond_group", "") // the mapping's own condition, as the form posts it
		v = withGroup(v, "g", "or",
			[3]string{"change.value", "gt", "499.99"}, [3]string{"change.currency", "equals", "EUR"})
		m := createMappingForm(t, f, v)
		spec, _ := rule.SpecOf(m)
		want := `Email is not empty AND (Deal value is greater than 499.99 OR Deal currency is "EUR")`
		if spec.Text() != want {
			t.Errorf("stored mapping %q; want %q", spec.Text(), want)
		}
		if got := mappingLines(f.b.get(stagesURL(f.acc, "")), "won"); len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("the list shows %q; want %q", got, want)
		}
		page = f.b.get(stagesURL(f.acc, "/mappings/"+itoa(m.ID)))
		if n := page.doc.Find(`[data-testid="condition-group"] [data-testid="condition-row"]`).Length(); n != 2 {
			t.Errorf("the edit page shows %d rows in a group; want 2", n)
		}
	})
}
