package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/rule"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// rulesFixture is an account with a dry-run dataset (and so its default
// rule), its owner logged in, and an ingest key.
type rulesFixture struct {
	a   *app
	acc models.Account
	key string
	d   models.Dataset
	b   *browser
}

// base is the account's Rules URL, with rest appended.
func (f rulesFixture) url(rest string) string { return views.AccountURL(f.acc.ID, "/rules"+rest) }

func newRulesFixture(t *testing.T, s *store.Store) rulesFixture {
	t.Helper()
	a := newApp(t, s)
	acc, key := a.ingestAccount("acme", "US")
	d := models.Dataset{AccountID: acc.ID, Name: "Main", PixelID: "123456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	b := a.browser()
	b.login("acme-owner@example.com")
	return rulesFixture{a: a, acc: acc, key: key, d: d, b: b}
}

// ruleValues is the rule form with conditions given as {field, match
// type, pattern}.
func ruleValues(name string, d models.Dataset, mode, event, combinator string, conds ...[3]string) url.Values {
	v := url.Values{"name": {name}, "dataset_id": {itoa(d.ID)}, "mode": {mode}, "event_name": {event},
		"combinator": {combinator}, "action_source": {""}, "value_mode": {"none"}, "currency_mode": {"account"},
		"test_event_code": {""}, "enabled": {"on"}}
	for _, c := range conds {
		v.Add("cond_field", c[0])
		v.Add("cond_match_type", c[1])
		v.Add("cond_pattern", c[2])
		v.Add("cond_group", "")
	}
	return v
}

// ruleLead is an ingest body: a website lead of the given city and budget
// captured at the given time, unique by n.
func ruleLead(n int, email, city, budget, createdAt string, extra map[string]any) string {
	m := map[string]any{"external_id": fmt.Sprintf("rule-lead-%d", n), "email": email, "phone": fmt.Sprintf("+1 415 692 %04d", 4200+n),
		"city": city, "client_ip_address": "203.0.113.7", "client_user_agent": "Mozilla/5.0 (Test)",
		"event_source_url": "https://example.com/quote", "fill_seconds": 30, "created_at": createdAt, "fbclid": fmt.Sprintf("IwAR_%d", n),
		"fields": map[string]string{"budget": budget}}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// postRuleLeads posts five leads of the last 7 days (of the app's clock,
// 2026-12-01 12:00 UTC), newest first, and one older:
//
//	1 ann, Berlin, budget 9000
//	2 bob, Berlin, budget 100 (gmail)
//	3 cy, Paris, budget 9000
//	4 junk (honeypot), Berlin, budget 9000
//	5 partial, Berlin, budget 9000
//	6 Berlin, budget 9000, 11 days old
func postRuleLeads(t *testing.T, f rulesFixture) []int64 {
	t.Helper()
	bodies := []string{
		ruleLead(1, "ann@acme-roofing.com", "Berlin", "9000", "2026-11-30T10:00:00Z", nil),
		ruleLead(2, "bob@gmail.com", "Berlin", "100", "2026-11-29T10:00:00Z", nil),
		ruleLead(3, "cy@acme-roofing.com", "Paris", "9000", "2026-11-28T10:00:00Z", nil),
		ruleLead(4, "dee@acme-roofing.com", "Berlin", "9000", "2026-11-27T10:00:00Z", map[string]any{"honeypot": "http://spam.example"}),
		ruleLead(5, "eve@acme-roofing.com", "Berlin", "9000", "2026-11-26T10:00:00Z", map[string]any{"partial": true}),
		ruleLead(6, "fay@acme-roofing.com", "Berlin", "9000", "2026-11-20T10:00:00Z", nil),
	}
	var ids []int64
	for i, body := range bodies {
		r := f.a.postLead(f.key, body)
		if r.status != http.StatusCreated {
			t.Fatalf("lead %d: %d %s", i+1, r.status, r.raw)
		}
		if (i == 3) != r.Junk {
			t.Fatalf("lead %d junk = %v: %s", i+1, r.Junk, r.raw)
		}
		ids = append(ids, r.LeadID)
	}
	return ids
}

// createRuleForm creates a rule through the form and returns it.
func createRuleForm(t *testing.T, f rulesFixture, v url.Values) models.SendRule {
	t.Helper()
	r := f.b.post(f.url(""), v)
	if r.status != http.StatusSeeOther {
		t.Fatalf("create rule = %d\n%s", r.status, r.body)
	}
	rules, err := f.a.store.SendRules(t.Context(), f.acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := rules[len(rules)-1]
	if want := f.url("/" + itoa(got.ID)); r.location() != want {
		t.Errorf("created rule redirects to %q; want %q", r.location(), want)
	}
	return got
}

func TestRulesListShowsDefaultRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		r := f.b.get(f.url(""))
		wantStatus(t, "rules page", r, http.StatusOK)
		if n := r.doc.Find(`[data-testid="rule-row"]`).Length(); n != 1 {
			t.Fatalf("%d rules listed; want the dataset's default rule", n)
		}
		if got := r.text("rule-name"); got != "Completed leads to Main" {
			t.Errorf("rule name %q", got)
		}
		if !r.has("rule-default") || r.text("rule-event") != "Lead" || r.text("rule-enabled") != "Enabled" {
			t.Errorf("default rule row: default %v, event %q, %q", r.has("rule-default"), r.text("rule-event"), r.text("rule-enabled"))
		}
		if got := r.text("rule-conditions"); got != "Every completed lead that is not junk" {
			t.Errorf("conditions in words %q", got)
		}
		if a, ok := r.doc.Find(`[data-testid="nav-rules"]`).Attr("aria-current"); !ok || a != "page" {
			t.Error("the Rules link of the account navigation is not current")
		}
		if !r.has("new-rule") {
			t.Error("no New rule button")
		}
	})
}

// Create, edit, and each change listed with who and what changed.
func TestRuleCreateEditVersions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		page := f.b.get(f.url("/new"))
		wantStatus(t, "new rule", page, http.StatusOK)
		if page.doc.Find(`[data-testid="condition-row"]`).Length() != 1 || !page.has("rule-preview") {
			t.Error("the new rule form should start with one condition and a preview")
		}
		if page.doc.Find(`select[name="cond_field"] option[value="fields.budget"]`).Length() != 1 {
			t.Error("the field picker does not offer the custom field budget that leads carried")
		}
		if page.doc.Find(`#rule-events option[value="Purchase"]`).Length() != 1 {
			t.Error("the event picker does not offer Meta's standard events")
		}
		if !strings.Contains(page.text("rule-form"), "PartialLead") {
			t.Error("the form does not explain why partial leads need a custom event name")
		}

		v := ruleValues("Berlin big budgets", f.d, "automatic_match", "QualifiedLead", "or",
			[3]string{"city", "equals", "Berlin"}, [3]string{"fields.budget", "gt", "5000"})
		v.Set("value_mode", "fixed")
		v.Set("value", "250")
		v.Set("currency_mode", "fixed")
		v.Set("currency", "eur")
		v.Set("action_source", "system_generated")
		v.Set("test_event_code", "TEST123")
		created := createRuleForm(t, f, v)
		if created.Mode != "automatic_match" || created.EventName != "QualifiedLead" || created.Combinator != "or" ||
			created.Value == nil || *created.Value != 250 || created.Currency != "EUR" || created.ActionSource != "system_generated" ||
			created.TestEventCode != "TEST123" || !created.Enabled {
			t.Errorf("stored rule %+v", created)
		}
		spec, problems := rule.SpecOf(created)
		if problems != nil || len(spec.Conditions) != 2 || spec.Conditions[1] != (rule.Condition{Field: "fields.budget", MatchType: rule.GT, Pattern: "5000"}) {
			t.Errorf("stored conditions %+v %v", spec.Conditions, problems)
		}

		page = f.b.get(f.url("/" + itoa(created.ID)))
		wantStatus(t, "rule page", page, http.StatusOK)
		if !strings.HasPrefix(page.text("flash"), "Rule Berlin big budgets created. It checks the leads captured from now on") {
			t.Errorf("flash %q", page.text("flash"))
		}
		if page.inputValue("event_name") != "QualifiedLead" || page.inputValue("value") != "250" ||
			page.doc.Find(`input[name="cond_pattern"]`).Eq(1).AttrOr("value", "") != "5000" {
			t.Error("the rule page does not show the saved rule")
		}

		// An edit: a third condition, another event name, disabled.
		v = ruleValues("Berlin big budgets", f.d, "automatic_match", "BigLead", "or",
			[3]string{"city", "equals", "Berlin"}, [3]string{"fields.budget", "gt", "5000"}, [3]string{"email_domain", "equals", "acme-roofing.com"})
		v.Del("enabled")
		r := f.b.post(f.url("/"+itoa(created.ID)), v)
		wantStatus(t, "save rule", r, http.StatusSeeOther)
		saved, err := s.SendRule(t.Context(), f.acc.ID, created.ID)
		if err != nil || saved.EventName != "BigLead" || saved.Enabled || saved.Value != nil || saved.Currency != "" {
			t.Errorf("saved rule %+v, %v", saved, err)
		}
		page = f.b.get(f.url("/" + itoa(created.ID)))
		versions := page.doc.Find(`[data-testid="rule-version"]`)
		if versions.Length() != 2 {
			t.Fatalf("%d versions listed; want created and changed", versions.Length())
		}
		newest := versions.First()
		if head := newest.Find("p").First().Text(); !strings.Contains(head, "acme-owner@example.com") || !strings.Contains(head, "changed") {
			t.Errorf("newest version says %q; want who and changed", head)
		}
		changes := map[string][2]string{}
		newest.Find(`[data-testid="rule-change"]`).Each(func(_ int, row *goquery.Selection) {
			changes[row.Find("th").Text()] = [2]string{row.Find("td").Eq(0).Text(), row.Find("td").Eq(1).Text()}
		})
		for setting, want := range map[string][2]string{
			"Event name": {"QualifiedLead", "BigLead"}, "Enabled": {"yes", "no"}, "Value": {"250", "none"},
			"Conditions": {`City is "Berlin" OR Form field budget is greater than 5000`,
				`City is "Berlin" OR Form field budget is greater than 5000 OR Email domain is "acme-roofing.com"`},
		} {
			if changes[setting] != want {
				t.Errorf("change of %s = %q; want %q", setting, changes[setting], want)
			}
		}
		if _, ok := changes["Dataset"]; ok || strings.Contains(newest.Text(), "{") {
			t.Errorf("newest version lists an unchanged setting or raw JSON: %v", changes)
		}
		if oldest := versions.Last().Text(); !strings.Contains(oldest, "created") || !strings.Contains(oldest, "QualifiedLead") {
			t.Errorf("oldest version %q", oldest)
		}
		// Saving without a change keeps no version.
		f.b.post(f.url("/"+itoa(created.ID)), v)
		if vs, _ := s.SendRuleVersions(t.Context(), f.acc.ID, created.ID, 10); len(vs) != 2 {
			t.Errorf("%d versions after saving unchanged; want 2", len(vs))
		}

		// The list shows the new rule, its conditions in words.
		list := f.b.get(f.url(""))
		rows := list.doc.Find(`[data-testid="rule-row"]`)
		if rows.Length() != 2 {
			t.Fatalf("%d rules listed", rows.Length())
		}
		words := strings.Join(strings.Fields(rows.Eq(1).Find(`[data-testid="rule-conditions"]`).Text()), " ")
		if want := `Completed leads where City is "Berlin" OR Form field budget is greater than 5000 OR Email domain is "acme-roofing.com"`; words != want {
			t.Errorf("conditions in words %q; want %q", words, want)
		}
		if rows.Eq(1).Find(`[data-testid="rule-enabled"]`).Text() != "Disabled" {
			t.Error("the disabled rule is listed as enabled")
		}
	})
}

// Every kind of problem is shown at its input, with what was typed kept,
// and nothing is stored.
func TestRuleInvalidInputKeepsValues(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		good := [3]string{"city", "equals", "Berlin"}
		tests := []struct {
			name   string
			values url.Values
			// testid of the error, the row it is in (-1: not a row), and
			// a word it says.
			testid string
			row    int
			says   string
		}{
			{"bad regex", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good, [3]string{"message", "regex", "roof(ing"}),
				"error-cond-pattern", 1, "does not compile"},
			{"unknown field", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"fields.budgte", "equals", "5"}, good),
				"error-cond-field", 0, "did you mean Form field budget (fields.budget)?"},
			{"empty pattern", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good, [3]string{"city", "contains", "  "}),
				"error-cond-pattern", 1, "'contains' needs a value."},
			{"number match type on text", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "gt", "5"}),
				"error-cond-match", 0, "City is text: 'is greater than' compares numbers"},
			{"non-number for gt", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"fields.budget", "gt", "lots"}),
				"error-cond-pattern", 0, "needs a number"},
			{"no field chosen", ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"", "equals", "x"}),
				"error-cond-field", 0, "Choose a field"},
			{"bad event name", ruleValues("R", f.d, "automatic_match", "Qualified!", "and", good), "error-event_name", -1, "not allowed"},
			{"standard event in another case", ruleValues("R", f.d, "automatic_match", "lead", "and", good), "error-event_name", -1, "Lead"},
			{"partial under Lead", ruleValues("R", f.d, "automatic_partial", "Lead", "and"), "error-event_name", -1, "custom event name"},
			{"completed with conditions", ruleValues("R", f.d, "automatic_completed", "Lead", "and", good), "error-conditions", -1, "'Every completed lead' sends every completed lead, so it takes no conditions: choose 'Leads that meet conditions'"},
			{"match without conditions", ruleValues("R", f.d, "automatic_match", "Lead", "and"), "error-conditions", -1, "'Leads that meet conditions' needs at least one condition."},
			{"no name", ruleValues(" ", f.d, "automatic_match", "QualifiedLead", "and", good), "error-name", -1, "Enter a name"},
			{"bad value", func() url.Values {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good)
				v.Set("value_mode", "fixed")
				v.Set("value", "$250")
				return v
			}(), "error-value", -1, "number"},
			{"bad currency", func() url.Values {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good)
				v.Set("value_mode", "fixed")
				v.Set("value", "250")
				v.Set("currency_mode", "fixed")
				v.Set("currency", "XYZ")
				return v
			}(), "error-currency", -1, "ISO 4217"},
			{"unknown value field", func() url.Values {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good)
				v.Set("value_mode", "field")
				v.Set("value_field", "fields.deal")
				return v
			}(), "error-value_field", -1, `Unknown field "fields.deal"`},
			{"bad action source", func() url.Values {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good)
				v.Set("action_source", "carrier_pigeon")
				return v
			}(), "error-action_source", -1, "action sources"},
			{"bad test code", func() url.Values {
				v := ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", good)
				v.Set("test_event_code", "TEST 1")
				return v
			}(), "error-test_event_code", -1, "no spaces"},
		}
		before, _ := s.SendRules(t.Context(), f.acc.ID)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := f.b.post(f.url(""), tt.values)
				wantStatus(t, tt.name, r, http.StatusUnprocessableEntity)
				sel := r.doc.Find(`[data-testid="` + tt.testid + `"]`)
				if tt.row >= 0 {
					sel = r.doc.Find(`[data-testid="condition-row"]`).Eq(tt.row).Find(`[data-testid="` + tt.testid + `"]`)
				}
				if msg := sel.Text(); !strings.Contains(msg, tt.says) {
					t.Errorf("%s = %q; want it to say %q\n%s", tt.testid, msg, tt.says, r.doc.Find("form").Text())
				}
				if errs := r.doc.Find(`.field-error`).Length(); errs != 1 {
					t.Errorf("%d inline errors; want 1", errs)
				}
				// What was typed is kept.
				if got := r.inputValue("event_name"); got != tt.values.Get("event_name") {
					t.Errorf("event name kept as %q; want %q", got, tt.values.Get("event_name"))
				}
				rows := r.doc.Find(`[data-testid="condition-row"]`)
				if rows.Length() != len(tt.values["cond_field"]) {
					t.Fatalf("%d condition rows; want %d", rows.Length(), len(tt.values["cond_field"]))
				}
				for i, field := range tt.values["cond_field"] {
					row := rows.Eq(i)
					if got, _ := row.Find(`select[name="cond_field"] option[selected]`).Attr("value"); got != field {
						t.Errorf("row %d field %q; want %q", i, got, field)
					}
					if got, _ := row.Find(`select[name="cond_match_type"] option[selected]`).Attr("value"); got != tt.values["cond_match_type"][i] {
						t.Errorf("row %d match type %q; want %q", i, got, tt.values["cond_match_type"][i])
					}
					if got := row.Find(`input[name="cond_pattern"]`).AttrOr("value", ""); got != tt.values["cond_pattern"][i] {
						t.Errorf("row %d pattern %q; want %q", i, got, tt.values["cond_pattern"][i])
					}
				}
				for _, name := range []string{"value", "currency", "value_field", "test_event_code"} {
					if want := tt.values.Get(name); want != "" && !strings.EqualFold(r.inputValue(name), want) {
						t.Errorf("%s kept as %q; want %q", name, r.inputValue(name), want)
					}
				}
				if after, _ := s.SendRules(t.Context(), f.acc.ID); len(after) != len(before) {
					t.Errorf("an invalid rule was stored: %d rules, %d before", len(after), len(before))
				}
			})
		}
	})
}

func TestRuleNameConflict(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		cond := [3]string{"email_domain", "equals", "gmail.com"}
		first := createRuleForm(t, f, ruleValues("Gmail", f.d, "automatic_match", "GmailLead", "and", cond))
		// Names are unique without regard to case.
		r := f.b.post(f.url(""), ruleValues("GMAIL", f.d, "automatic_match", "Other", "and", cond))
		wantStatus(t, "same name", r, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text("error-name"), "Another rule") || r.inputValue("name") != "GMAIL" || r.inputValue("event_name") != "Other" {
			t.Errorf("name error %q, kept %q", r.text("error-name"), r.inputValue("name"))
		}
		// Renaming the default rule to it, too.
		rules, _ := s.SendRules(t.Context(), f.acc.ID)
		r = f.b.post(f.url("/"+itoa(rules[0].ID)), ruleValues("gmail", f.d, "automatic_completed", "Lead", "and"))
		wantStatus(t, "rename to a taken name", r, http.StatusUnprocessableEntity)
		if !r.has("error-name") {
			t.Error("no inline error on the name")
		}
		if got, _ := s.SendRule(t.Context(), f.acc.ID, rules[0].ID); got.Name != "Completed leads to Main" {
			t.Errorf("default rule renamed to %q", got.Name)
		}
		if got, _ := s.SendRule(t.Context(), f.acc.ID, first.ID); got.EventName != "GmailLead" {
			t.Errorf("first rule changed: %+v", got)
		}
	})
}

func TestRuleDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		r := createRuleForm(t, f, ruleValues("Gmail", f.d, "automatic_match", "GmailLead", "and", [3]string{"email_domain", "equals", "gmail.com"}))
		path := f.url("/" + itoa(r.ID) + "/delete")
		ask := f.b.post(path, nil)
		wantStatus(t, "delete without confirming", ask, http.StatusOK)
		if !strings.Contains(ask.text("rule-confirm"), "Delete the rule Gmail?") {
			t.Errorf("confirmation %q", ask.text("rule-confirm"))
		}
		if _, err := s.SendRule(t.Context(), f.acc.ID, r.ID); err != nil {
			t.Fatalf("the rule is gone before the confirmation: %v", err)
		}
		done := f.b.post(path, url.Values{"confirm": {"yes"}})
		wantStatus(t, "delete", done, http.StatusSeeOther)
		if done.location() != f.url("") {
			t.Errorf("delete redirects to %q", done.location())
		}
		if _, err := s.SendRule(t.Context(), f.acc.ID, r.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rule after delete: %v", err)
		}
		list := f.b.get(f.url(""))
		if list.text("flash") != "Rule Gmail deleted." || list.doc.Find(`[data-testid="rule-row"]`).Length() != 1 {
			t.Errorf("after delete: flash %q, %d rules", list.text("flash"), list.doc.Find(`[data-testid="rule-row"]`).Length())
		}
		vs, _ := s.SendRuleVersions(t.Context(), f.acc.ID, r.ID, 10)
		if len(vs) != 2 || vs[0].After != "" || vs[0].UserID == nil {
			t.Errorf("versions after delete %+v; want the deletion, by the owner", vs)
		}
		wantStatus(t, "the deleted rule's page", f.b.get(f.url("/"+itoa(r.ID))), http.StatusNotFound)
	})
}

func TestRuleMove(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		second := createRuleForm(t, f, ruleValues("Gmail", f.d, "automatic_match", "GmailLead", "and", [3]string{"email_domain", "equals", "gmail.com"}))
		order := func() []string {
			rs, _ := s.SendRules(t.Context(), f.acc.ID)
			var names []string
			for _, r := range rs {
				names = append(names, r.Name)
			}
			return names
		}
		r := f.b.post(f.url("/"+itoa(second.ID)+"/move"), url.Values{"direction": {"up"}})
		wantStatus(t, "move up", r, http.StatusSeeOther)
		if got := strings.Join(order(), ","); got != "Gmail,Completed leads to Main" {
			t.Errorf("order after moving up: %s", got)
		}
		// htmx: the list comes back to be swapped in place.
		r = f.b.postWith(f.url("/"+itoa(second.ID)+"/move"), url.Values{"direction": {"down"}}, http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "move down (htmx)", r, http.StatusOK)
		if got := strings.Join(order(), ","); got != "Completed leads to Main,Gmail" {
			t.Errorf("order after moving down: %s", got)
		}
		if strings.Contains(r.body, "<html") || !r.has("rules-table") {
			t.Errorf("htmx move answers %q; want the list alone", r.body)
		}
		names := r.doc.Find(`[data-testid="rule-name"]`)
		if names.Length() != 2 || names.Eq(1).Text() != "Gmail" {
			t.Errorf("list fragment %q", names.Text())
		}
		if _, ok := r.doc.Find(`[data-testid="move-down"]`).Eq(1).Attr("disabled"); !ok {
			t.Error("the last rule can still move down")
		}
		wantStatus(t, "move sideways", f.b.post(f.url("/"+itoa(second.ID)+"/move"), url.Values{"direction": {"left"}}), http.StatusBadRequest)
	})
}

// The preview counts every lead of the last 7 days with the matcher
// capture uses, and the htmx endpoints answer fragments.
func TestRulePreview(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		htmx := http.Header{"Hx-Request": {"true"}}
		preview := func(v url.Values) resp {
			t.Helper()
			r := f.b.postWith(f.url("/preview"), v, htmx)
			wantStatus(t, "preview", r, http.StatusOK)
			if strings.Contains(r.body, "<html") {
				t.Fatalf("the preview is a whole page: %s", r.body)
			}
			return r
		}

		and := preview(ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and",
			[3]string{"city", "equals", "berlin"}, [3]string{"fields.budget", "gt", "5000"}))
		if and.text("preview-matched") != "1" || and.text("preview-total") != "5" {
			t.Errorf("AND preview: %q", and.text("preview-headline"))
		}
		// Each condition alone rules out one of the three leads past the
		// junk and partial gates (Paris; budget 100).
		conds := and.doc.Find(`[data-testid="preview-condition"]`)
		if conds.Length() != 2 || conds.Eq(0).Find(`[data-testid="preview-rules-out"]`).Text() != "1" ||
			conds.Eq(1).Find(`[data-testid="preview-rules-out"]`).Text() != "1" {
			t.Errorf("per condition: %q", conds.Text())
		}
		if !strings.Contains(and.text("preview-out-junk"), "1 junk") || !strings.Contains(and.text("preview-out-partial"), "1 partial") {
			t.Errorf("gates: %q / %q", and.text("preview-out-junk"), and.text("preview-out-partial"))
		}
		if got := and.text("preview-sendable"); !strings.HasPrefix(got, "1 ") {
			t.Errorf("sendable: %q", got)
		}
		for key, want := range map[string]string{"em": "100%", "ph": "100%", "fbc": "100%", "fbp": "0%", "external_id": "100%",
			"client_ip_address": "100%", "client_user_agent": "100%"} {
			if got := and.doc.Find(`[data-key="` + key + `"] strong`).Text(); got != want {
				t.Errorf("share of %s = %q; want %s", key, got, want)
			}
		}
		match := and.doc.Find(`[data-testid="preview-matches"] li`)
		if match.Length() != 1 || !strings.Contains(match.Text(), "ann@acme-roofing.com") || !strings.Contains(match.Text(), "All conditions matched.") {
			t.Errorf("matched examples %q", match.Text())
		}
		if href, _ := match.Find("a").Attr("href"); href != views.AccountURL(f.acc.ID, "/leads/"+itoa(ids[0])) {
			t.Errorf("example links to %q", href)
		}
		misses := and.doc.Find(`[data-testid="preview-misses"] li`)
		if misses.Length() != 4 || !strings.Contains(misses.Eq(0).Text(), `Condition 2 (Form field budget is greater than 5000) did not match.`) ||
			!strings.Contains(misses.Eq(2).Text(), "junk") {
			t.Errorf("unmatched examples %q", misses.Text())
		}

		// OR: either condition lets a lead in.
		or := preview(ruleValues("R", f.d, "automatic_match", "QualifiedLead", "or",
			[3]string{"city", "equals", "berlin"}, [3]string{"fields.budget", "gt", "5000"}))
		if or.text("preview-matched") != "3" {
			t.Errorf("OR preview: %q", or.text("preview-headline"))
		}
		// A rule that requires junk counts the junk lead among its matches.
		junk := preview(ruleValues("R", f.d, "automatic_match", "JunkLead", "and", [3]string{"junk", "equals", "true"}))
		if junk.text("preview-matched") != "1" || !strings.Contains(junk.text("preview-matched-junk"), "1 junk") {
			t.Errorf("junk rule preview: %q %q", junk.text("preview-headline"), junk.text("preview-matched-junk"))
		}
		partial := preview(ruleValues("R", f.d, "automatic_partial", "PartialLead", "and"))
		if partial.text("preview-matched") != "1" || !strings.Contains(partial.text("preview-matched-junk"), "1 partial") {
			t.Errorf("partial rule preview: %q %q", partial.text("preview-headline"), partial.text("preview-matched-junk"))
		}

		// An invalid rule shows its problems instead of numbers.
		bad := preview(ruleValues("R", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"message", "regex", "roof(ing"}))
		if !strings.Contains(bad.text("preview-problems"), "does not compile") || bad.has("preview-matched") {
			t.Errorf("invalid rule preview: %q", bad.body)
		}

		// What the preview counts is what capture queues: save it, apply
		// it, and the count queued is the count matched.
		r := createRuleForm(t, f, ruleValues("Big Berlin", f.d, "automatic_match", "QualifiedLead", "and",
			[3]string{"city", "equals", "berlin"}, [3]string{"fields.budget", "gt", "5000"}))
		ask := f.b.post(f.url("/"+itoa(r.ID)+"/apply"), nil)
		if !strings.Contains(ask.text("confirm-message"), "1 lead of the last 7 days") {
			t.Errorf("apply confirmation %q", ask.text("confirm-message"))
		}

		// Condition rows come and go as fragments.
		row := f.b.getWith(f.url("/condition-row"), htmx)
		wantStatus(t, "add condition", row, http.StatusOK)
		if row.doc.Find(`[data-testid="condition-row"]`).Length() != 1 || strings.Contains(row.body, "<html") ||
			row.doc.Find(`option[value="fields.budget"]`).Length() != 1 {
			t.Errorf("new condition row: %s", row.body)
		}
		gone := f.b.getWith(f.url("/condition-row?remove=1"), htmx)
		if gone.status != http.StatusOK || strings.TrimSpace(gone.body) != "" || gone.header.Get("HX-Trigger-After-Swap") != "rule-changed" {
			t.Errorf("remove condition: %d %q %v", gone.status, gone.body, gone.header)
		}
	})
}

// Applying a saved rule states the count first, queues the events, and
// queues nothing twice.
func TestRuleApply(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		r := createRuleForm(t, f, ruleValues("Berlin", f.d, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "berlin"}))
		path := f.url("/" + itoa(r.ID) + "/apply")
		page := f.b.get(f.url("/" + itoa(r.ID)))
		if !page.has("apply-form") {
			t.Fatal("no apply form on an automatic rule's page")
		}
		ask := f.b.post(path, nil)
		wantStatus(t, "apply without confirming", ask, http.StatusOK)
		// ann and bob: the junk and the partial Berlin leads are left out,
		// and the 11-day-old one is past the window.
		if !strings.Contains(ask.text("confirm-message"), "2 leads of the last 7 days match") {
			t.Errorf("confirmation %q", ask.text("confirm-message"))
		}
		count := func() int64 {
			n, err := s.EventCounts(t.Context(), f.acc.ID, store.EventFilter{EventName: "QualifiedLead"}, 100)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, v := range n {
				sum += v
			}
			return sum
		}
		if count() != 0 {
			t.Fatal("events queued before the confirmation")
		}
		done := f.b.post(path, url.Values{"confirm": {"yes"}})
		wantStatus(t, "apply", done, http.StatusSeeOther)
		if got := f.b.get(f.url("/" + itoa(r.ID))).text("flash"); got != "2 QualifiedLead events queued." {
			t.Errorf("flash %q", got)
		}
		if count() != 2 {
			t.Errorf("%d QualifiedLead events; want 2", count())
		}
		for _, id := range ids[:2] {
			evs, _ := s.LeadEvents(t.Context(), f.acc.ID, id)
			names := ""
			for _, e := range evs {
				names += e.EventName + " "
			}
			if !strings.Contains(names, "QualifiedLead") {
				t.Errorf("lead %d events %q", id, names)
			}
		}
		f.b.post(path, url.Values{"confirm": {"yes"}})
		if got := f.b.get(f.url("/" + itoa(r.ID))).text("flash"); !strings.HasPrefix(got, "Nothing new to queue") {
			t.Errorf("second apply flash %q", got)
		}
		if count() != 2 {
			t.Errorf("%d QualifiedLead events after applying twice; want 2", count())
		}

		// A manual rule is not applied.
		manual := createRuleForm(t, f, ruleValues("By hand", f.d, "manual", "Contact", "and"))
		if f.b.get(f.url("/" + itoa(manual.ID))).has("apply-form") {
			t.Error("a manual rule offers to apply")
		}
		f.b.post(f.url("/"+itoa(manual.ID)+"/apply"), url.Values{"confirm": {"yes"}})
		if n, _ := s.EventCounts(t.Context(), f.acc.ID, store.EventFilter{EventName: "Contact"}, 100); len(n) != 0 {
			t.Errorf("a manual rule was applied: %v", n)
		}
	})
}

// Another account's rules and datasets are not found; viewers do not see
// the Rules pages.
func TestRulesTenancyAndRoles(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		other, _ := f.a.ingestAccount("beta", "DE")
		od := models.Dataset{AccountID: other.ID, Name: "Theirs", PixelID: "223456789012345", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &od); err != nil {
			t.Fatal(err)
		}
		theirs, _ := s.SendRules(ctx, other.ID)
		id := itoa(theirs[0].ID)
		for _, tc := range []struct {
			method, path string
		}{
			{"GET", "/" + id}, {"POST", "/" + id}, {"POST", "/" + id + "/delete"}, {"POST", "/" + id + "/move"}, {"POST", "/" + id + "/apply"},
			{"GET", "/nope"},
		} {
			var r resp
			if tc.method == "GET" {
				r = f.b.get(f.url(tc.path))
			} else {
				r = f.b.post(f.url(tc.path), url.Values{"confirm": {"yes"}, "direction": {"up"}, "name": {"Mine now"}})
			}
			wantStatus(t, tc.method+" another account's rule "+tc.path, r, http.StatusNotFound)
		}
		if got, _ := s.SendRule(ctx, other.ID, theirs[0].ID); got.Name != theirs[0].Name {
			t.Errorf("another account's rule changed: %+v", got)
		}
		// A rule on another account's dataset is refused at the dataset.
		r := f.b.post(f.url(""), ruleValues("Sneaky", od, "automatic_match", "QualifiedLead", "and", [3]string{"city", "equals", "x"}))
		wantStatus(t, "another account's dataset", r, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text("error-dataset_id"), "this account's destinations") {
			t.Errorf("dataset error %q", r.text("error-dataset_id"))
		}
		if rs, _ := s.SendRules(ctx, f.acc.ID); len(rs) != 1 {
			t.Errorf("%d rules; want the default one only", len(rs))
		}
		// The preview reads this account's leads only.
		f.a.postLead(f.key, ruleLead(1, "ann@acme-roofing.com", "Berlin", "9000", "2026-11-30T10:00:00Z", nil))
		pr := f.b.postWith(f.url("/preview"), ruleValues("R", f.d, "automatic_completed", "Lead", "and"), http.Header{"Hx-Request": {"true"}})
		if pr.text("preview-total") != "1" {
			t.Errorf("preview total %q; want 1", pr.text("preview-total"))
		}

		viewer := f.a.user("vic@example.com", false)
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		vb := f.a.browser()
		vb.login(viewer.Email)
		leads := vb.get(views.AccountURL(f.acc.ID, "/leads"))
		if leads.has("nav-rules") {
			t.Error("a viewer sees the Rules link")
		}
		for _, path := range []string{"", "/new", "/condition-row"} {
			wantStatus(t, "viewer GET rules"+path, vb.get(f.url(path)), http.StatusForbidden)
		}
		wantStatus(t, "viewer preview", vb.post(f.url("/preview"), ruleValues("R", f.d, "automatic_completed", "Lead", "and")), http.StatusForbidden)
		wantStatus(t, "viewer create", vb.post(f.url(""), ruleValues("V", f.d, "automatic_completed", "Lead", "and")), http.StatusForbidden)
		if rs, _ := s.SendRules(ctx, f.acc.ID); len(rs) != 1 {
			t.Errorf("a viewer created a rule: %d rules", len(rs))
		}
	})
}

// A rule's name is refused, where it was typed, with invisible or
// bidi-control characters or bytes that are not UTF-8; so is a pattern
// that is not UTF-8.
func TestRuleNameAndTextChecks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		good := [3]string{"city", "equals", "Berlin"}
		tests := []struct {
			name, ruleName string
			cond           [3]string
			testid, says   string
		}{
			{"right-to-left override", "Leads gpj\u202eexe", good, "error-name", "invisible character U+202E"},
			{"zero-width space", "Qualified\u200bleads", good, "error-name", "invisible character U+200B"},
			{"not UTF-8 name", "Qualified \xff leads", good, "error-name", "not valid UTF-8"},
			{"not UTF-8 pattern", "Berlin", [3]string{"city", "equals", "Ber\xfflin"}, "error-cond-pattern", "not valid UTF-8"},
			{"too long", strings.Repeat("n", 101), good, "error-name", "at most 100 characters"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := f.b.post(f.url(""), ruleValues(tt.ruleName, f.d, "automatic_match", "QualifiedLead", "and", tt.cond))
				wantStatus(t, tt.name, r, http.StatusUnprocessableEntity)
				if got := r.text(tt.testid); !strings.Contains(got, tt.says) {
					t.Errorf("%s = %q; want it to say %q", tt.testid, got, tt.says)
				}
				if r.inputValue("event_name") != "QualifiedLead" || r.doc.Find(`[data-testid="condition-row"]`).Length() != 1 {
					t.Error("what was typed is not kept")
				}
			})
		}
		if rs, _ := s.SendRules(t.Context(), f.acc.ID); len(rs) != 1 {
			t.Errorf("%d rules; want the default one only", len(rs))
		}
		// Joiners stay: Persian words and emoji need them.
		createRuleForm(t, f, ruleValues("می\u200cخواهم 👩\u200d💻", f.d, "automatic_match", "QualifiedLead", "and", good))
	})
}

// The account's enabled rules together stay within rule.MaxAccountCost:
// a save that would pass it is refused at the conditions, counting the
// rule's new version in place of its old one.
func TestRuleCostBudget(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		costly := [3]string{"message", "regex", "(.*a){150}x"} // 753 units
		six := ruleValues("Costly", f.d, "automatic_match", "CostlyLead", "or", costly, costly, costly, costly, costly, costly)
		saved := createRuleForm(t, f, six) // 4518 units

		// One more costly condition in a new rule passes the budget.
		more := ruleValues("One more", f.d, "automatic_match", "MoreLead", "and", costly, [3]string{"city", "equals", "Berlin"})
		r := f.b.post(f.url(""), more)
		wantStatus(t, "a rule past the budget", r, http.StatusUnprocessableEntity)
		if got := r.text("error-conditions"); !strings.Contains(got, "5272 units per lead, over the limit of 5000") {
			t.Errorf("conditions error %q", got)
		}
		if r.inputValue("name") != "One more" || r.doc.Find(`[data-testid="condition-row"] input[name="cond_pattern"]`).First().AttrOr("value", "") != "(.*a){150}x" {
			t.Error("what was typed is not kept")
		}
		// Disabled, it costs nothing and saves.
		more.Del("enabled")
		createRuleForm(t, f, more)

		// The costly rule's new version replaces its old one: renaming it
		// keeps it within the budget; a seventh condition does not.
		six.Set("name", "Costly renamed")
		wantStatus(t, "rename the costly rule", f.b.post(f.url("/"+itoa(saved.ID)), six), http.StatusSeeOther)
		six.Add("cond_field", costly[0])
		six.Add("cond_match_type", costly[1])
		six.Add("cond_pattern", costly[2])
		r = f.b.post(f.url("/"+itoa(saved.ID)), six)
		wantStatus(t, "a seventh costly condition", r, http.StatusUnprocessableEntity)
		if got := r.text("error-conditions"); !strings.Contains(got, "5271 units per lead") {
			t.Errorf("conditions error %q", got)
		}
		if got, _ := s.SendRule(t.Context(), f.acc.ID, saved.ID); got.Name != "Costly renamed" || strings.Count(got.Conditions, "regex") != 6 {
			t.Errorf("stored rule %q with %d regex conditions; want the renamed one with 6", got.Name, strings.Count(got.Conditions, "regex"))
		}
	})
}

// The form warns, before saving and as the rule changes, when the rule
// would send the same event to the same dataset as another enabled
// automatic rule; saving still works.
func TestRuleSharedEventWarning(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		want := "Leads that match both this rule and Completed leads to Main get one Lead event, owned by Completed leads to Main, " +
			"the first of the two in the rules order."
		warnings := func(r resp) []string {
			var out []string
			r.doc.Find(`[data-testid="rule-warning"]`).Each(func(_ int, s *goquery.Selection) {
				out = append(out, strings.Join(strings.Fields(s.Text()), " "))
			})
			return out
		}
		// The new rule form's defaults: conditions, the first dataset, and
		// no event name yet, so no warning before one is chosen.
		page := f.b.get(f.url("/new"))
		if w := warnings(page); len(w) != 0 {
			t.Errorf("new rule form warns %q; want nothing before an event name is chosen", w)
		}
		if v, _ := page.doc.Find(`input[name="event_name"]`).Attr("value"); v != "" {
			t.Errorf("new rule form's event name = %q; want none chosen", v)
		}

		htmx := http.Header{"Hx-Request": {"true"}}
		cond := [3]string{"city", "equals", "Berlin"}
		for _, tt := range []struct {
			name   string
			values url.Values
			warns  bool
		}{
			{"same event and dataset", ruleValues("Berlin", f.d, "automatic_match", "Lead", "and", cond), true},
			{"another event name", ruleValues("Berlin", f.d, "automatic_match", "QualifiedLead", "and", cond), false},
			{"a manual rule", ruleValues("Berlin", f.d, "manual", "Lead", "and", cond), false},
			{"disabled", func() url.Values {
				v := ruleValues("Berlin", f.d, "automatic_match", "Lead", "and", cond)
				v.Del("enabled")
				return v
			}(), false},
			{"a rule that does not compile", ruleValues("Berlin", f.d, "automatic_match", "Lead", "and", [3]string{"city", "regex", "("}), true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := f.b.postWith(f.url("/preview"), tt.values, htmx)
				wantStatus(t, "preview", r, http.StatusOK)
				box := r.doc.Find(`#rule-warnings`)
				if oob, _ := box.Attr("hx-swap-oob"); box.Length() != 1 || oob != "true" {
					t.Fatalf("the preview does not send the warnings out of band: %s", r.body)
				}
				if w := warnings(r); (len(w) == 1) != tt.warns || tt.warns && !strings.HasSuffix(w[0], want) {
					t.Errorf("preview warns %q; want a warning: %v", w, tt.warns)
				}
			})
		}

		// Saved anyway; moved first, it owns the event.
		shared := createRuleForm(t, f, ruleValues("Berlin", f.d, "automatic_match", "Lead", "and", cond))
		page = f.b.get(f.url("/" + itoa(shared.ID)))
		if w := warnings(page); len(w) != 1 || !strings.HasSuffix(w[0], want) {
			t.Errorf("saved rule warns %q", w)
		}
		f.b.post(f.url("/"+itoa(shared.ID)+"/move"), url.Values{"direction": {"up"}})
		page = f.b.get(f.url("/" + itoa(shared.ID)))
		if w := warnings(page); len(w) != 1 || !strings.Contains(w[0], "get one Lead event, owned by Berlin, the first") {
			t.Errorf("first in order, the rule warns %q", w)
		}
		// A save that is refused keeps the warning with the errors.
		r := f.b.post(f.url("/"+itoa(shared.ID)), ruleValues("Berlin", f.d, "automatic_match", "Lead", "and", [3]string{"city", "gt", "5"}))
		wantStatus(t, "refused save", r, http.StatusUnprocessableEntity)
		if len(warnings(r)) != 1 {
			t.Errorf("the refused form does not warn: %q", warnings(r))
		}
	})
}
