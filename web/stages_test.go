package web_test

import (
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

// stagesURL is the account's Stages URL, with rest appended.
func stagesURL(acc models.Account, rest string) string {
	return views.AccountURL(acc.ID, "/stages"+rest)
}

var htmx = http.Header{"Hx-Request": {"true"}}

// stageRows are the page's stages, in order, as "name" plus " *" for the
// booking stage.
func stageRows(r resp) []string {
	var out []string
	r.doc.Find(`[data-testid="stage-row"]`).Each(func(_ int, s *goquery.Selection) {
		n := strings.TrimSpace(s.Find(`[data-testid="stage-name"]`).Text())
		if s.Find(`[data-testid="stage-booking"]`).Length() > 0 {
			n += " *"
		}
		out = append(out, n)
	})
	return out
}

// mappingLines are the mapping lines under a stage: event, dataset,
// value, repeat, conditions, enabled.
func mappingLines(r resp, stage string) []string {
	var out []string
	r.doc.Find(`[data-testid="stage-row"]`).Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("data-stage", "") != stage {
			return
		}
		s.Find(`[data-testid="mapping-row"]`).Each(func(_ int, m *goquery.Selection) {
			t := func(id string) string { return strings.TrimSpace(m.Find(`[data-testid="` + id + `"]`).Text()) }
			out = append(out, strings.Join([]string{t("mapping-event"), t("mapping-dataset"), t("mapping-value"), t("mapping-repeat"),
				t("mapping-conditions"), t("mapping-enabled")}, " | "))
		})
	})
	return out
}

func stageID(t *testing.T, s *store.Store, acc models.Account, name string) int64 {
	t.Helper()
	ss, err := s.Stages(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ss {
		if st.Name == name {
			return st.ID
		}
	}
	t.Fatalf("no stage %q", name)
	return 0
}

func stageMappings(t *testing.T, s *store.Store, acc models.Account) []models.SendRule {
	t.Helper()
	rules, err := s.SendRules(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.SendRule
	for _, r := range rules {
		if r.Mode == string(rule.Stage) {
			out = append(out, r)
		}
	}
	return out
}

// mappingValues is the mapping form: stage, dataset, event, value mode and
// conditions as {field, match type, pattern}.
func mappingValues(stage string, d models.Dataset, event, valueMode string, conds ...[3]string) url.Values {
	v := url.Values{"stage": {stage}, "dataset_id": {itoa(d.ID)}, "event_name": {event}, "value_mode": {valueMode},
		"value": {""}, "currency_mode": {"account"}, "currency": {""}, "combinator": {"and"}, "enabled": {"on"}}
	for _, c := range conds {
		v.Add("cond_field", c[0])
		v.Add("cond_match_type", c[1])
		v.Add("cond_pattern", c[2])
	}
	return v
}

// The page lists the account's stages in order, offers the template
// while nothing is mapped, and the template maps qualified, booked and
// won on the chosen dataset, once.
func TestStagesListAndTemplate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		r := f.b.get(stagesURL(f.acc, ""))
		wantStatus(t, "stages page", r, http.StatusOK)
		if got := strings.Join(stageRows(r), ","); got != "qualified,booked *,won" {
			t.Errorf("stages = %s; want the template's, booked the booking stage", got)
		}
		if a, ok := r.doc.Find(`[data-testid="nav-stages"]`).Attr("aria-current"); !ok || a != "page" {
			t.Error("the Stages link of the account navigation is not current")
		}
		nav := r.doc.Find(`nav.account-nav a`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if got := strings.Join(nav, ","); got != "Overview,Leads,Send log,Rules,Stages,Destinations,Settings" {
			t.Errorf("navigation = %s; want Stages between Rules and Destinations", got)
		}
		if !r.has("stage-template") || !r.has("start-template") || r.has("stages-empty") {
			t.Error("an account with a dataset and no mapping should be offered the template")
		}
		if n := r.doc.Find(`[data-testid="stage-no-mapping"]`).Length(); n != 3 {
			t.Errorf("%d stages say they have no mapping; want 3", n)
		}
		if !r.has("stages-no-changes") || !strings.Contains(r.text("stage-curl"), "/api/v1/stages") {
			t.Error("with no stage change yet the page should show how to post one")
		}

		r = f.b.post(stagesURL(f.acc, "/template"), url.Values{"dataset_id": {itoa(f.d.ID)}})
		if r.status != http.StatusSeeOther || r.location() != stagesURL(f.acc, "") {
			t.Fatalf("start from the template = %d %q", r.status, r.location())
		}
		ms := stageMappings(t, s, f.acc)
		if len(ms) != 3 || ms[2].Stage != "won" || ms[2].EventName != "Purchase" || ms[2].ValueField != models.StageValueFromChange ||
			ms[0].Name != "qualified to QualifiedLead" || ms[0].DatasetID != f.d.ID {
			t.Fatalf("template mappings = %+v", ms)
		}
		r = f.b.get(stagesURL(f.acc, ""))
		if !strings.HasPrefix(r.text("flash"), "Stages mapped from the template") {
			t.Errorf("flash %q", r.text("flash"))
		}
		if r.has("stage-template") {
			t.Error("the template is still offered to an account with mappings")
		}
		want := map[string]string{
			"qualified": "QualifiedLead | Main | no value | once per lead | no conditions | enabled",
			"booked":    "Schedule | Main | no value | once per lead | no conditions | enabled",
			"won":       "Purchase | Main | deal value from the change (its currency, else USD) | once per lead | no conditions | enabled",
		}
		for stage, line := range want {
			if got := mappingLines(r, stage); len(got) != 1 || got[0] != line {
				t.Errorf("mappings of %s = %q; want %q", stage, got, line)
			}
		}

		// A second click makes nothing more.
		r = f.b.post(stagesURL(f.acc, "/template"), url.Values{"dataset_id": {itoa(f.d.ID)}})
		wantStatus(t, "template again", r, http.StatusSeeOther)
		if n := len(stageMappings(t, s, f.acc)); n != 3 {
			t.Errorf("%d mappings after a second template; want 3", n)
		}
		if got := f.b.get(stagesURL(f.acc, "")).text("flash"); !strings.Contains(got, "has stage mappings already") {
			t.Errorf("flash after a second template %q", got)
		}
	})
}

// Without a dataset the page says to connect one first, and the template
// is not offered.
func TestStagesEmptyWithoutDataset(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("bare", "US")
		b := a.browser()
		b.login("bare-owner@example.com")
		r := b.get(stagesURL(acc, ""))
		wantStatus(t, "stages page", r, http.StatusOK)
		if !strings.Contains(r.text("stages-empty"), "Connect a dataset first") || r.has("stage-template") {
			t.Errorf("empty state %q, template %v", r.text("stages-empty"), r.has("stage-template"))
		}
		if r.doc.Find(`[data-testid="stages-empty"] a[href$="/datasets/new"]`).Length() != 1 {
			t.Error("the owner is not linked to connect a dataset")
		}
		r = b.post(stagesURL(acc, "/template"), url.Values{"dataset_id": {"1"}})
		wantStatus(t, "template without a dataset", r, http.StatusSeeOther)
		if n := len(stageMappings(t, s, acc)); n != 0 {
			t.Errorf("%d mappings without a dataset", n)
		}
	})
}

// A mapping is made, edited, ordered and deleted through its form; bad
// input comes back with inline errors, what was typed, 422, and nothing
// stored.
func TestStageMappingForm(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		postRuleLeads(t, f)
		other, _ := f.a.ingestAccount("beta", "US")
		od := models.Dataset{AccountID: other.ID, Name: "Theirs", PixelID: "999999999999999", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &od); err != nil {
			t.Fatal(err)
		}
		won := stageID(t, s, f.acc, "won")

		page := f.b.get(stagesURL(f.acc, "/mappings/new?stage="+itoa(won)))
		wantStatus(t, "new mapping", page, http.StatusOK)
		if v, _ := page.doc.Find(`select[name="stage"] option[selected]`).Attr("value"); v != "won" {
			t.Errorf("the new mapping's stage = %q; want won", v)
		}
		if page.doc.Find(`#rule-events option[value="Purchase"]`).Length() != 1 || !page.has("add-condition") {
			t.Error("the form does not offer Meta's standard events and condition rows")
		}
		if page.doc.Find(`select[name="value_mode"] option[value="change"]`).Length() != 1 {
			t.Error("the form does not offer the value from the change")
		}

		bad := []struct {
			name  string
			edit  func(url.Values)
			error string
		}{
			{"a Purchase without a value", func(v url.Values) {}, "error-value_mode"},
			{"a bad regex", func(v url.Values) {
				v.Add("cond_field", "message")
				v.Add("cond_match_type", "regex")
				v.Add("cond_pattern", "roof(ing")
				v.Set("value_mode", "change")
			}, "error-cond-pattern"},
			{"a value that is no amount", func(v url.Values) { v.Set("value_mode", "fixed"); v.Set("value", "$250") }, "error-value"},
			{"a stage not in the list", func(v url.Values) { v.Set("stage", "lost"); v.Set("value_mode", "change") }, "error-stage"},
			{"another account's dataset", func(v url.Values) { v.Set("dataset_id", itoa(od.ID)); v.Set("value_mode", "change") }, "error-dataset_id"},
			{"a bad event name", func(v url.Values) { v.Set("event_name", "Bad/Name") }, "error-event_name"},
			{"a currency that is no code", func(v url.Values) {
				v.Set("value_mode", "change")
				v.Set("currency_mode", "fixed")
				v.Set("currency", "euro")
			}, "error-currency"},
		}
		for _, tt := range bad {
			v := mappingValues("won", f.d, "Purchase", "none")
			tt.edit(v)
			r := f.b.post(stagesURL(f.acc, "/mappings"), v)
			if r.status != http.StatusUnprocessableEntity || !r.has(tt.error) {
				t.Errorf("%s = %d, %s %q; want 422 with the error inline", tt.name, r.status, tt.error, r.text(tt.error))
				continue
			}
			if r.inputValue("event_name") != v.Get("event_name") {
				t.Errorf("%s: event name %q; want what was typed", tt.name, r.inputValue("event_name"))
			}
			if p := v.Get("cond_pattern"); p != "" && r.doc.Find(`input[name="cond_pattern"]`).AttrOr("value", "") != p {
				t.Errorf("%s: the condition's pattern was not kept", tt.name)
			}
		}
		if ms := stageMappings(t, s, f.acc); len(ms) != 0 {
			t.Fatalf("refused forms stored %d mappings", len(ms))
		}

		v := mappingValues("WON", f.d, "Purchase", "change", [3]string{"city", "equals", "Berlin"})
		v.Set("currency_mode", "fixed")
		v.Set("currency", "eur")
		v.Set("repeatable", "on")
		r := f.b.post(stagesURL(f.acc, "/mappings"), v)
		if r.status != http.StatusSeeOther || r.location() != stagesURL(f.acc, "") {
			t.Fatalf("create mapping = %d %q\n%s", r.status, r.location(), r.body)
		}
		ms := stageMappings(t, s, f.acc)
		if len(ms) != 1 {
			t.Fatalf("%d mappings stored", len(ms))
		}
		m := ms[0]
		if m.Name != "won to Purchase" || m.Stage != "won" || m.EventName != "Purchase" || m.ValueField != models.StageValueFromChange ||
			m.Currency != "EUR" || !m.Repeatable || !m.Enabled || m.DatasetID != f.d.ID {
			t.Errorf("stored mapping %+v", m)
		}
		r = f.b.get(stagesURL(f.acc, ""))
		want := `Purchase | Main | deal value from the change EUR | every change | leads where City is "Berlin" | enabled`
		if got := mappingLines(r, "won"); len(got) != 1 || got[0] != want {
			t.Errorf("the list shows %q; want %q", got, want)
		}

		// The edit page shows it as saved; a bad change is refused and
		// changes nothing; a good one renames it after its new event.
		edit := stagesURL(f.acc, "/mappings/"+itoa(m.ID))
		page = f.b.get(edit)
		wantStatus(t, "edit mapping", page, http.StatusOK)
		if v, _ := page.doc.Find(`select[name="value_mode"] option[selected]`).Attr("value"); v != "change" {
			t.Errorf("value mode shown %q; want change", v)
		}
		if _, ok := page.doc.Find(`[data-testid="mapping-repeatable-input"]`).Attr("checked"); !ok || page.text("mapping-title") != "won to Purchase" {
			t.Error("the edit page does not show the saved mapping")
		}
		v = mappingValues("won", f.d, "Purchase", "none")
		r = f.b.post(edit, v)
		wantStatus(t, "a Purchase without value, edited", r, http.StatusUnprocessableEntity)
		if got, _ := s.SendRule(ctx, f.acc.ID, m.ID); got.ValueField != models.StageValueFromChange {
			t.Errorf("a refused edit changed the mapping: %+v", got)
		}
		// A test event code and action_source that a setup file (or a
		// converted booking rule) gave it survive an edit in the form,
		// which does not show them: a test mapping never turns live.
		coded, _ := s.SendRule(ctx, f.acc.ID, m.ID)
		coded.TestEventCode, coded.ActionSource = "TEST123", "system_generated"
		if err := s.SaveSendRule(ctx, &coded, nil); err != nil {
			t.Fatal(err)
		}
		v = mappingValues("won", f.d, "BigDeal", "fixed")
		v.Set("value", "500")
		r = f.b.post(edit, v)
		wantStatus(t, "edit mapping", r, http.StatusSeeOther)
		got, _ := s.SendRule(ctx, f.acc.ID, m.ID)
		if got.Name != "won to BigDeal" || got.EventName != "BigDeal" || got.Value == nil || *got.Value != 500 || got.ValueField != "" ||
			got.Repeatable || got.Conditions != "[]" || got.TestEventCode != "TEST123" || got.ActionSource != "system_generated" {
			t.Errorf("edited mapping %+v", got)
		}

		// A second mapping of the stage to the same event: the dataset's
		// name makes its name unique. Then order them.
		second := createMappingForm(t, f, mappingValues("won", f.d, "BigDeal", "change"))
		if second.Name != "won to BigDeal (Main)" {
			t.Errorf("second mapping's name %q", second.Name)
		}
		// Both make one event id: the list and the form say whose it is.
		r = f.b.get(stagesURL(f.acc, ""))
		if got := r.doc.Find(`[data-mapping="` + itoa(second.ID) + `"] [data-testid="mapping-shared"]`).Text(); got != "one event with won to BigDeal, which comes first" {
			t.Errorf("the second mapping's line says %q", got)
		}
		if r.doc.Find(`[data-mapping="`+itoa(m.ID)+`"] [data-testid="mapping-shared"]`).Length() != 0 {
			t.Error("the first mapping's line says it shares its event")
		}
		page = f.b.get(stagesURL(f.acc, "/mappings/"+itoa(second.ID)))
		if w := page.text("rule-warning"); !strings.Contains(w, "get one BigDeal event, owned by won to BigDeal,") {
			t.Errorf("the second mapping's form warns %q", w)
		}
		r = f.b.postWith(stagesURL(f.acc, "/mappings/"+itoa(second.ID)+"/move"), url.Values{"direction": {"up"}}, htmx)
		wantStatus(t, "move mapping up", r, http.StatusOK)
		if !r.has("stage-list") || r.has("flash") {
			t.Error("an htmx move answers with the stage list only")
		}
		lines := mappingLines(r, "won")
		if len(lines) != 2 || !strings.Contains(lines[0], "deal value from the change") {
			t.Errorf("after moving the second mapping up: %q", lines)
		}

		// Delete asks first, then deletes; its history stays.
		r = f.b.post(edit+"/delete", nil)
		wantStatus(t, "delete without confirm", r, http.StatusOK)
		if !r.has("rule-confirm") {
			t.Error("delete does not ask first")
		}
		r = f.b.post(edit+"/delete", url.Values{"confirm": {"yes"}})
		wantStatus(t, "delete", r, http.StatusSeeOther)
		if _, err := s.SendRule(ctx, f.acc.ID, m.ID); err == nil {
			t.Error("the mapping is still there")
		}
		if vs, _ := s.SendRuleVersions(ctx, f.acc.ID, m.ID, 10); len(vs) != 4 {
			t.Errorf("%d versions of the deleted mapping; want created, coded, edited, deleted", len(vs))
		}
	})
}

// createMappingForm creates a mapping through the form and returns it.
func createMappingForm(t *testing.T, f rulesFixture, v url.Values) models.SendRule {
	t.Helper()
	r := f.b.post(stagesURL(f.acc, "/mappings"), v)
	if r.status != http.StatusSeeOther {
		t.Fatalf("create mapping = %d\n%s", r.status, r.body)
	}
	ms := stageMappings(t, f.a.store, f.acc)
	var last models.SendRule
	for _, m := range ms {
		if m.ID > last.ID {
			last = m
		}
	}
	return last
}

// The stage list: add (names checked, unique ignoring case), rename, move
// (htmx), the booking stage, delete one no mapping uses.
func TestStageListEdits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		list := func() string { return strings.Join(stageRows(f.b.get(stagesURL(f.acc, ""))), ",") }

		r := f.b.post(stagesURL(f.acc, ""), url.Values{"name": {" Proposal "}})
		wantStatus(t, "add a stage", r, http.StatusSeeOther)
		if got := list(); got != "qualified,booked *,won,Proposal" {
			t.Errorf("after adding Proposal: %s", got)
		}
		for _, n := range []string{"proposal", "", "junk", "NOT_JUNK", "a\u202eb", strings.Repeat("x", 101)} {
			r := f.b.post(stagesURL(f.acc, ""), url.Values{"name": {n}})
			if r.status != http.StatusUnprocessableEntity || !r.has("error-add-stage") {
				t.Errorf("add %.20q = %d, error %q; want 422 with the error", n, r.status, r.text("error-add-stage"))
			}
			if got, _ := r.doc.Find(`#add-stage-name`).Attr("value"); got != n && n != "" {
				t.Errorf("add %.20q: the input shows %.20q; want what was typed", n, got)
			}
		}
		r = f.b.postWith(stagesURL(f.acc, ""), url.Values{"name": {"Proposal"}}, htmx)
		if r.status != http.StatusUnprocessableEntity || !r.has("error-add-stage") || r.has("flash") || strings.Contains(r.body, "<html") {
			t.Errorf("htmx add of a taken name = %d; want 422 with the stage list and its error", r.status)
		}
		if got := list(); got != "qualified,booked *,won,Proposal" {
			t.Errorf("refused names changed the list: %s", got)
		}

		proposal := stageID(t, s, f.acc, "Proposal")
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(proposal)+"/rename"), url.Values{"name": {"BOOKED"}}, htmx)
		if r.status != http.StatusUnprocessableEntity || !r.has("error-rename") {
			t.Errorf("rename to BOOKED = %d; want 422 with the error", r.status)
		}
		if v, _ := r.doc.Find(`[data-stage="Proposal"] [data-testid="rename-input"]`).Attr("value"); v != "BOOKED" {
			t.Errorf("the rename field shows %q; want what was typed", v)
		}
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(proposal)+"/rename"), url.Values{"name": {"Quote sent"}}, htmx)
		wantStatus(t, "rename", r, http.StatusOK)
		if got := strings.Join(stageRows(r), ","); got != "qualified,booked *,won,Quote sent" {
			t.Errorf("after the rename: %s", got)
		}

		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(proposal)+"/move"), url.Values{"direction": {"up"}}, htmx)
		wantStatus(t, "move up", r, http.StatusOK)
		if got := strings.Join(stageRows(r), ","); got != "qualified,booked *,Quote sent,won" {
			t.Errorf("after moving up: %s", got)
		}
		if r := f.b.post(stagesURL(f.acc, "/"+itoa(proposal)+"/move"), url.Values{"direction": {"sideways"}}); r.status != http.StatusBadRequest {
			t.Errorf("move sideways = %d; want 400", r.status)
		}

		won := stageID(t, s, f.acc, "won")
		r = f.b.post(stagesURL(f.acc, "/"+itoa(won)+"/booking"), url.Values{"booking": {"on"}})
		wantStatus(t, "set booking", r, http.StatusSeeOther)
		if got := list(); got != "qualified,booked,Quote sent,won *" {
			t.Errorf("after making won the booking stage: %s", got)
		}

		// A mapped stage stays, the booking stage as any other: its
		// mappings send when a lead is booked.
		createMappingForm(t, f, mappingValues("won", f.d, "Schedule", "none"))
		r = f.b.post(stagesURL(f.acc, "/"+itoa(won)+"/delete"), nil)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("stage-error"), "mappings first") {
			t.Errorf("delete the mapped booking stage = %d %q; want 422", r.status, r.text("stage-error"))
		}
		createMappingForm(t, f, mappingValues("qualified", f.d, "QualifiedLead", "none"))
		qualified := stageID(t, s, f.acc, "qualified")
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(qualified)+"/delete"), nil, htmx)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("stage-error"), "mappings first") {
			t.Errorf("delete a mapped stage = %d %q; want 422", r.status, r.text("stage-error"))
		}
		if r.doc.Find(`[data-stage="qualified"] [data-testid="delete-stage"]`).Length() != 0 {
			t.Error("a mapped stage offers Delete")
		}
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(proposal)+"/delete"), nil, htmx)
		wantStatus(t, "delete a stage", r, http.StatusOK)
		if got := strings.Join(stageRows(r), ","); got != "qualified,booked,won *" {
			t.Errorf("after deleting Quote sent: %s", got)
		}
	})
}

// A stage the CRM sent that the list lacks shows as unmapped with its
// count; one click adds it and opens its new mapping form.
func TestUnmappedStageMapIt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		for i, st := range []string{"Proposal", "proposal", "won"} {
			r := f.a.postStage(f.key, fmt.Sprintf(`{"lead":{"id":%d},"stage":%q,"occurred_at":"2026-12-01T10:0%d:00Z"}`, ids[0], st, i))
			if r.status != http.StatusCreated {
				t.Fatalf("post stage %s = %d %s", st, r.status, r.raw)
			}
		}
		r := f.b.get(stagesURL(f.acc, ""))
		un := r.doc.Find(`[data-testid="unmapped-stage"]`)
		if un.Length() != 1 || strings.TrimSpace(un.Find(`[data-testid="unmapped-name"]`).Text()) != "Proposal" ||
			strings.TrimSpace(un.Find(`[data-testid="unmapped-changes"]`).Text()) != "2 changes" {
			t.Fatalf("unmapped = %q", un.Text())
		}
		if got := strings.TrimSpace(r.doc.Find(`[data-stage="won"] [data-testid="stage-changes"]`).Text()); got != "1 change" {
			t.Errorf("won's count %q", got)
		}
		if r.has("stages-no-changes") {
			t.Error("with changes recorded the page still says there are none")
		}

		r = f.b.post(stagesURL(f.acc, ""), url.Values{"name": {"Proposal"}, "map": {"1"}})
		proposal := stageID(t, s, f.acc, "Proposal")
		if want := stagesURL(f.acc, "/mappings/new?stage="+itoa(proposal)); r.status != http.StatusSeeOther || r.location() != want {
			t.Fatalf("map it = %d %q; want %q", r.status, r.location(), want)
		}
		page := f.b.get(r.location())
		if v, _ := page.doc.Find(`select[name="stage"] option[selected]`).Attr("value"); v != "Proposal" {
			t.Errorf("the mapping form's stage = %q; want Proposal", v)
		}
		if r := f.b.get(stagesURL(f.acc, "")); r.has("unmapped") {
			t.Error("Proposal is still shown as not in the list")
		}
		// Clicked twice (another tab), it opens the form again.
		r = f.b.post(stagesURL(f.acc, ""), url.Values{"name": {"PROPOSAL"}, "map": {"1"}})
		if r.status != http.StatusSeeOther || !strings.Contains(r.location(), "stage="+itoa(proposal)) {
			t.Errorf("map it twice = %d %q", r.status, r.location())
		}
		createMappingForm(t, f, mappingValues("Proposal", f.d, "SubmitApplication", "none"))
		if got := mappingLines(f.b.get(stagesURL(f.acc, "")), "Proposal"); len(got) != 1 || !strings.HasPrefix(got[0], "SubmitApplication | Main") {
			t.Errorf("Proposal's mappings %q", got)
		}
	})
}

// Sales read the stages and mappings, a mapping's page too, with no form
// that changes them, and every change they post answers 403 and changes
// nothing.
func TestStagesSalesReadOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		if _, err := s.StartStageTemplate(ctx, f.acc.ID, f.d.ID, nil); err != nil {
			t.Fatal(err)
		}
		viewer := f.a.user("vera@example.com", false) // sales: reads the Stages page, changes none of it
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleSales); err != nil {
			t.Fatal(err)
		}
		b := f.a.browser()
		b.login(viewer.Email)
		r := b.get(stagesURL(f.acc, ""))
		wantStatus(t, "viewer's stages page", r, http.StatusOK)
		if got := mappingLines(r, "won"); len(got) != 1 || !strings.HasPrefix(got[0], "Purchase | Main") {
			t.Errorf("the viewer sees won's mappings as %q", got)
		}
		if n := r.doc.Find(`main form`).Length(); n != 0 {
			t.Errorf("the viewer's page has %d forms; want none", n)
		}
		if r.doc.Find(`main a[href*="/stages/mappings/new"]`).Length() != 0 {
			t.Error("sales are linked to the new mapping form")
		}
		if r.doc.Find(`main a[href*="/stages/mappings/"]`).Length() == 0 {
			t.Error("sales are not linked to the mappings' pages")
		}
		nav := r.doc.Find(`nav.account-nav a`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if got := strings.Join(nav, ","); got != "Overview,Leads,Send log,Rules,Stages,Destinations" {
			t.Errorf("viewer's navigation = %s", got)
		}

		m := stageMappings(t, s, f.acc)[0]
		won := itoa(stageID(t, s, f.acc, "won"))
		mid := itoa(m.ID)
		posts := []string{"", "/template", "/" + won + "/rename", "/" + won + "/move", "/" + won + "/booking", "/" + won + "/delete",
			"/mappings", "/mappings/" + mid, "/mappings/" + mid + "/delete", "/mappings/" + mid + "/move"}
		for _, p := range posts {
			v := url.Values{"name": {"Hacked"}, "direction": {"up"}, "booking": {"on"}, "confirm": {"yes"}, "dataset_id": {itoa(f.d.ID)}}
			for k, vs := range mappingValues("won", f.d, "Lead", "none") {
				v[k] = vs
			}
			if r := b.post(stagesURL(f.acc, p), v); r.status != http.StatusForbidden {
				t.Errorf("viewer POST %s = %d; want 403", p, r.status)
			}
		}
		if r := b.get(stagesURL(f.acc, "/mappings/new")); r.status != http.StatusForbidden {
			t.Errorf("sales GET /mappings/new = %d; want 403", r.status)
		}
		page := b.get(stagesURL(f.acc, "/mappings/"+mid))
		wantStatus(t, "sales read a mapping", page, http.StatusOK)
		if page.has("save-mapping") || page.has("delete-mapping-form") || page.doc.Find(`main form[method="post"]`).Length() != 0 {
			t.Error("sales' mapping page can change the mapping")
		}
		if got := strings.Join(stageRows(f.b.get(stagesURL(f.acc, ""))), ","); got != "qualified,booked *,won" {
			t.Errorf("stages after the viewer's posts: %s", got)
		}
		if n := len(stageMappings(t, s, f.acc)); n != 3 {
			t.Errorf("%d mappings after the viewer's posts", n)
		}
	})
}

// Another account's stage or mapping, a send rule that is no mapping,
// and hostile ids are 404s, and change nothing.
func TestStagesOtherAccountAndHostileIDs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		other, _ := f.a.ingestAccount("beta", "US")
		od := models.Dataset{AccountID: other.ID, Name: "Theirs", PixelID: "999999999999999", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(ctx, &od); err != nil {
			t.Fatal(err)
		}
		theirs, err := s.StartStageTemplate(ctx, other.ID, od.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		theirStage := itoa(stageID(t, s, other, "won"))
		rules, _ := s.SendRules(ctx, f.acc.ID)
		defaultRule := itoa(rules[0].ID)
		huge := strings.Repeat("9", 40_000)
		ids := map[string][]string{
			"mapping": {itoa(theirs[0].ID), defaultRule, "%00", "1%00", huge, strings.Repeat("a", 40_000), "-1", "99999999999999999999"},
			"stage":   {theirStage, "%00", "1%00", huge, "abc", "0"},
		}
		routes := []struct{ method, path, kind string }{
			{http.MethodGet, "/mappings/{id}", "mapping"},
			{http.MethodPost, "/mappings/{id}", "mapping"},
			{http.MethodPost, "/mappings/{id}/delete", "mapping"},
			{http.MethodPost, "/mappings/{id}/move", "mapping"},
			{http.MethodPost, "/{id}/rename", "stage"},
			{http.MethodPost, "/{id}/move", "stage"},
			{http.MethodPost, "/{id}/booking", "stage"},
			{http.MethodPost, "/{id}/delete", "stage"},
		}
		for _, rt := range routes {
			for _, id := range ids[rt.kind] {
				path := stagesURL(f.acc, strings.Replace(rt.path, "{id}", id, 1))
				var r resp
				if rt.method == http.MethodGet {
					r = f.b.get(path)
				} else {
					v := mappingValues("won", f.d, "Lead", "none")
					v.Set("direction", "up")
					v.Set("confirm", "yes")
					v.Set("name", "Mine")
					v.Set("booking", "on")
					r = f.b.post(path, v)
				}
				if r.status != http.StatusNotFound {
					t.Errorf("%s %s with id %.12q… = %d; want 404", rt.method, rt.path, id, r.status)
				}
				if len(id) > 100 && strings.Contains(r.body, id[:100]) {
					t.Errorf("%s %s: the answer echoes the 40,000-character id", rt.method, rt.path)
				}
			}
		}
		if n := len(stageMappings(t, s, other)); n != 3 {
			t.Errorf("beta has %d mappings; want its 3", n)
		}
		if got, _ := s.SendRule(ctx, other.ID, theirs[0].ID); got.EventName != "QualifiedLead" || got.AccountID != other.ID {
			t.Errorf("beta's mapping changed: %+v", got)
		}
		if ss, _ := s.Stages(ctx, other.ID); len(ss) != 3 || ss[2].Name != "won" || ss[2].Booking {
			t.Errorf("beta's stages changed: %+v", ss)
		}
		if r := f.b.get(stagesURL(f.acc, "/mappings/"+defaultRule)); r.status != http.StatusNotFound {
			t.Errorf("a send rule that is no mapping, as a mapping = %d; want 404", r.status)
		}
	})
}
