package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// postStages records changes of the fixture's first lead under labels,
// a minute apart.
func postStages(t *testing.T, f rulesFixture, lead int64, labels ...string) {
	t.Helper()
	for i, st := range labels {
		r := f.a.postStage(f.key, fmt.Sprintf(`{"lead":{"id":%d},"stage":%q,"occurred_at":"2026-12-01T10:%02d:00Z"}`, lead, st, i))
		if r.status != http.StatusCreated {
			t.Fatalf("post stage %s = %d %s", st, r.status, r.raw)
		}
	}
}

// unmappedRows are "Not in the list" as "label: n changes".
func unmappedRows(r resp) []string {
	return r.doc.Find(`[data-testid="unmapped-stage"]`).Map(func(_ int, s *goquery.Selection) string {
		return strings.TrimSpace(s.Find(`[data-testid="unmapped-name"]`).Text()) + ": " +
			strings.TrimSpace(s.Find(`[data-testid="unmapped-changes"]`).Text())
	})
}

// aliasesOf are the aliases the page shows under stage.
func aliasesOf(r resp, stage string) []string {
	return r.doc.Find(`[data-stage="` + stage + `"] [data-testid="stage-alias"]`).Map(func(_ int, s *goquery.Selection) string {
		return s.AttrOr("data-alias", "")
	})
}

func changesOf(r resp, stage string) string {
	return strings.TrimSpace(r.doc.Find(`[data-stage="` + stage + `"] [data-testid="stage-changes"]`).Text())
}

// A label of "Not in the list" is offered first as a stage's alias (no
// stage chosen for it yet), then as a new stage; saved as won's alias it
// leaves the section and its changes count as won.
func TestUnmappedLabelSavedAsAlias(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		postStages(t, f, ids[0], "Closed Won", "closed-won", "won", "Closed Lost")
		r := f.b.get(stagesURL(f.acc, ""))
		if got := strings.Join(unmappedRows(r), ", "); got != "Closed Won: 2 changes, Closed Lost: 1 change" {
			t.Fatalf("not in the list: %s", got)
		}
		row := r.doc.Find(`[data-stage="Closed Won"][data-testid="unmapped-stage"]`)
		buttons := row.Find(`button`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-testid", "") })
		if strings.Join(buttons, ",") != "save-alias,map-unmapped" {
			t.Errorf("the row's buttons are %q; want Save as alias first, then the new stage", buttons)
		}
		// It starts at the stage the label's words suggest; a lost label
		// suggests none.
		if v, _ := row.Find(`select[name="stage"] option[selected]`).Attr("value"); v != itoa(stageID(t, s, f.acc, "won")) {
			t.Errorf("Closed Won's stage select starts at %q; want won", v)
		}
		lostRow := r.doc.Find(`[data-stage="Closed Lost"][data-testid="unmapped-stage"]`)
		if v, _ := lostRow.Find(`select[name="stage"] option[selected]`).Attr("value"); v != "" {
			t.Errorf("Closed Lost's stage select starts at %q; want no stage chosen", v)
		}

		r = f.b.postWith(stagesURL(f.acc, "/aliases"), url.Values{"label": {"Closed Won"}, "stage": {""}}, htmx)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-unmapped"), "Choose the stage 'Closed Won' is") {
			t.Errorf("no stage chosen = %d %q; want 422 asking for one", r.status, r.text("error-unmapped"))
		}

		won := stageID(t, s, f.acc, "won")
		r = f.b.postWith(stagesURL(f.acc, "/aliases"), url.Values{"label": {"Closed Won"}, "stage": {itoa(won)}}, htmx)
		wantStatus(t, "save as alias", r, http.StatusOK)
		if got := strings.Join(unmappedRows(r), ", "); got != "Closed Lost: 1 change" {
			t.Errorf("after the alias, not in the list: %s; want Closed Lost only", got)
		}
		if got := aliasesOf(r, "won"); len(got) != 1 || got[0] != "Closed Won" {
			t.Errorf("won's aliases %q; want Closed Won", got)
		}
		if got := changesOf(r, "won"); got != "3 changes" {
			t.Errorf("won counts %q; want 3 changes (won, Closed Won, closed-won)", got)
		}

		// Without JavaScript: the form posts, the page comes back with a flash.
		lost := stageID(t, s, f.acc, "qualified")
		r = f.b.post(stagesURL(f.acc, "/aliases"), url.Values{"label": {"Closed Lost"}, "stage": {itoa(lost)}})
		if r.status != http.StatusSeeOther || r.location() != stagesURL(f.acc, "") {
			t.Fatalf("save as alias without htmx = %d %q; want 303 to the page", r.status, r.location())
		}
		r = f.b.get(r.location())
		if !strings.Contains(r.text("flash"), "'Closed Lost' is an alias of qualified now") || r.has("unmapped") {
			t.Errorf("flash %q, not in the list %v", r.text("flash"), unmappedRows(r))
		}

		// The lead's timeline and its stage read the change as won.
		lead := f.b.get(views.AccountURL(f.acc.ID, "/leads/"+itoa(ids[0])))
		if got := lead.text("lead-stage"); got != "qualified, as 'Closed Lost'" {
			t.Errorf("the lead's stage reads %q; want qualified, as 'Closed Lost'", got)
		}
	})
}

// An editor adds and removes a stage's aliases inline; a label another
// stage has is refused with the reason, keeping what was typed, and so is
// a rename to another stage's alias.
func TestStageAliasEdits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		won, qualified, booked := stageID(t, s, f.acc, "won"), stageID(t, s, f.acc, "qualified"), stageID(t, s, f.acc, "booked")
		add := func(id int64, alias string) resp {
			return f.b.postWith(stagesURL(f.acc, "/"+itoa(id)+"/aliases"), url.Values{"alias": {alias}}, htmx)
		}
		r := add(won, "  Closed Won ")
		wantStatus(t, "add an alias", r, http.StatusOK)
		if got := aliasesOf(r, "won"); len(got) != 1 || got[0] != "Closed Won" {
			t.Fatalf("won's aliases %q", got)
		}
		for _, tt := range []struct{ typed, want string }{
			{"closed-won", "'closed-won' already names the stage won."},
			{"WON", "'WON' already names the stage won."},
			{"", "Type the label"},
			{"qualified", "reads as the stage's own name"},
			{"---", "no letter or digit"},
			{"Closed\u202eWon", "invisible character"},
			{strings.Repeat("x", 5000), "at most 100 characters"},
			{"junk", "a person's verdict"},
		} {
			r := add(qualified, tt.typed)
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-alias"), tt.want) {
				t.Errorf("alias %.20q = %d %q; want 422 saying %q", tt.typed, r.status, r.text("error-alias"), tt.want)
			}
			typed, _ := r.doc.Find(`[data-stage="qualified"] [data-testid="alias-input"]`).Attr("value")
			if want := strings.TrimSpace(tt.typed); typed != want && !strings.ContainsRune(want, 0) {
				t.Errorf("alias %.20q: the input shows %.20q; want what was typed", tt.typed, typed)
			}
		}
		// A NUL byte is refused before any handler, as in every form.
		if r := add(qualified, "a\x00b"); r.status != http.StatusBadRequest || !strings.Contains(r.body, "NUL character") {
			t.Errorf("alias with a NUL = %d; want 400 naming the NUL", r.status)
		}
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(booked)+"/rename"), url.Values{"name": {"closed won"}}, htmx)
		if r.status != http.StatusUnprocessableEntity || r.text("error-rename") != "'closed won' is an alias of the stage won: remove it there first." {
			t.Errorf("rename to won's alias = %d %q; want 422 with the reason", r.status, r.text("error-rename"))
		}
		r = f.b.post(stagesURL(f.acc, "/"+itoa(won)+"/aliases/delete"), url.Values{"alias": {"Closed Won"}})
		wantStatus(t, "remove an alias", r, http.StatusSeeOther)
		if got := aliasesOf(f.b.get(stagesURL(f.acc, "")), "won"); len(got) != 0 {
			t.Errorf("won's aliases after the removal %q; want none", got)
		}
		r = f.b.postWith(stagesURL(f.acc, "/"+itoa(booked)+"/rename"), url.Values{"name": {"Closed Won"}}, htmx)
		wantStatus(t, "rename to the freed label", r, http.StatusOK)
	})
}

// A stage's CRM labels show under it, read-only, linked to their
// connection for editors.
func TestStageCRMLabelsShown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		c := models.CRMConnection{AccountID: f.acc.ID, Kind: "hubspot", Name: "Sales"}
		if err := s.CreateCRMConnection(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if err := s.ListCRMStages(ctx, f.acc.ID, c.ID, []models.CRMStage{{CRMStageID: "closedwon", Label: "Deal Won"}, {CRMStageID: "x"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.MapCRMStages(ctx, f.acc.ID, c.ID, map[string]string{"closedwon": "won"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		r := f.b.get(stagesURL(f.acc, ""))
		l := r.doc.Find(`[data-stage="won"] [data-testid="stage-crm-label"]`)
		if l.Length() != 1 || !strings.Contains(l.Text(), "Deal Won") || l.Find(`a`).AttrOr("href", "") != stagesURL(f.acc, "/crm/"+itoa(c.ID)) {
			t.Errorf("won's CRM labels %q; want Deal Won, linked to Sales", l.Text())
		}
		if n := r.doc.Find(`[data-testid="stage-crm-label"]`).Length(); n != 1 {
			t.Errorf("%d CRM labels shown; want the one mapped", n)
		}
	})
}

// Another account's stage answers 404 to every alias action, and a
// viewer's 403; neither changes anything.
func TestStageAliasesTenancy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		other, _ := f.a.ingestAccount("beta", "US")
		theirs := stageID(t, s, other, "won")
		for _, tt := range []struct {
			path string
			v    url.Values
		}{
			{"/" + itoa(theirs) + "/aliases", url.Values{"alias": {"Closed Won"}}},
			{"/" + itoa(theirs) + "/aliases/delete", url.Values{"alias": {"Closed Won"}}},
			{"/aliases", url.Values{"label": {"Closed Won"}, "stage": {itoa(theirs)}}},
			{"/aliases", url.Values{"label": {"Closed Won"}, "stage": {"1%00"}}},
			{"/aliases", url.Values{"label": {"Closed Won"}, "stage": {strings.Repeat("9", 5000)}}},
			{"/abc/aliases", url.Values{"alias": {"Closed Won"}}},
		} {
			if r := f.b.post(stagesURL(f.acc, tt.path), tt.v); r.status != http.StatusNotFound {
				t.Errorf("POST %s %v = %d; want 404", tt.path, tt.v, r.status)
			}
		}
		if st, _ := s.Stage(ctx, other.ID, theirs); len(st.Aliases) != 0 {
			t.Errorf("beta's won has aliases %q", st.Aliases)
		}

		viewer := f.a.user("vic@example.com", false)
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleViewer); err != nil {
			t.Fatal(err)
		}
		b := f.a.browser()
		b.login(viewer.Email)
		won := stageID(t, s, f.acc, "won")
		for _, p := range []string{"/" + itoa(won) + "/aliases", "/" + itoa(won) + "/aliases/delete", "/aliases"} {
			if r := b.post(stagesURL(f.acc, p), url.Values{"alias": {"X"}, "label": {"X"}, "stage": {itoa(won)}}); r.status != http.StatusForbidden {
				t.Errorf("viewer POST %s = %d; want 403", p, r.status)
			}
		}
	})
}

// The lead page reads each change as the account's stage: under its name
// plainly, under an alias with the label, and a label that names no stage
// as not one of the account's stages.
func TestLeadPageStageAliases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		postStages(t, f, ids[0], "qualified", "Closed Won", "Closed Lost")
		if _, err := s.AddStageAlias(t.Context(), f.acc.ID, stageID(t, s, f.acc, "won"), "closedwon"); err != nil {
			t.Fatal(err)
		}
		lead := f.b.get(views.AccountURL(f.acc.ID, "/leads/"+itoa(ids[0])))
		wantStatus(t, "lead page", lead, http.StatusOK)
		got := lead.doc.Find(`[data-testid="timeline-stage"] .what strong`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		want := []string{"Stage: qualified", "Stage: won, as 'Closed Won'", "Stage: 'Closed Lost' (not one of the account's stages)"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("timeline stages %q; want %q", got, want)
		}
		if got := lead.text("lead-stage"); got != "'Closed Lost' (not one of the account's stages)" {
			t.Errorf("the lead's stage reads %q", got)
		}
		postStages(t, f, ids[1], "closed won")
		lead = f.b.get(views.AccountURL(f.acc.ID, "/leads/"+itoa(ids[1])))
		if got := lead.text("lead-stage"); got != "won" {
			t.Errorf("a change under an alias now: the lead's stage reads %q; want won (recorded as its stage)", got)
		}
		if v, _ := lead.doc.Find(`select[name="stage"] option[selected]`).Attr("value"); v != "won" {
			t.Errorf("the stage select starts at %q; want won", v)
		}
	})
}

// A label saved from a stale page (another tab made it another stage's
// alias meanwhile) is refused with the reason on the stage chosen.
func TestUnmappedLabelFromStalePage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		ids := postRuleLeads(t, f)
		postStages(t, f, ids[0], "Closed Won")
		won, qualified := stageID(t, s, f.acc, "won"), stageID(t, s, f.acc, "qualified")
		if r := f.b.post(stagesURL(f.acc, "/aliases"), url.Values{"label": {"Closed Won"}, "stage": {itoa(won)}}); r.status != http.StatusSeeOther {
			t.Fatalf("save as alias = %d", r.status)
		}
		r := f.b.postWith(stagesURL(f.acc, "/aliases"), url.Values{"label": {"Closed Won"}, "stage": {itoa(qualified)}}, htmx)
		if r.status != http.StatusUnprocessableEntity || r.doc.Find(`[data-stage="qualified"] [data-testid="stage-error"]`).Text() != "'Closed Won' already names the stage won." {
			t.Errorf("stale save = %d %q; want 422 with the reason at qualified", r.status, r.text("stage-error"))
		}
		if r := f.b.postWith(stagesURL(f.acc, "/aliases"), url.Values{"label": {""}, "stage": {itoa(qualified)}}, htmx); r.status != http.StatusUnprocessableEntity || r.text("stage-error") == "" {
			t.Errorf("an empty label = %d %q; want 422 with the reason", r.status, r.text("stage-error"))
		}
	})
}
