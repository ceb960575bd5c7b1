package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// crmPageURL is a connection page's URL, with rest appended.
func crmPageURL(acc models.Account, c models.CRMConnection, rest string) string {
	return stagesURL(acc, "/crm/"+itoa(c.ID)+rest)
}

// onlyConnection is the account's one connection.
func onlyConnection(t *testing.T, s *store.Store, acc models.Account) models.CRMConnection {
	t.Helper()
	cs, err := s.CRMConnections(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("%d connections; want 1", len(cs))
	}
	return cs[0]
}

// flashText is the page's flashes, joined.
func flashText(r resp) string {
	return strings.Join(r.doc.Find(`[data-testid="flash"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() }), " | ")
}

// crmStageRows are a connection page's stage table: "id label pipeline
// → stage", with " (waits)" for an unmapped id deliveries carried.
func crmStageRows(r resp) []string {
	var out []string
	r.doc.Find(`[data-testid="crm-stage-row"]`).Each(func(_ int, s *goquery.Selection) {
		row := s.AttrOr("data-crm-stage", "") + " " + strings.TrimSpace(s.Find(`[data-testid="crm-stage-label"]`).Text()) + " " +
			strings.TrimSpace(s.Find(`[data-testid="crm-stage-pipeline"]`).Text()) + " → " +
			s.Find(`[data-testid="crm-stage-select"] option[selected]`).AttrOr("value", "")
		if s.Find(`[data-testid="crm-stage-waits"]`).Length() > 0 {
			row += " (waits)"
		}
		out = append(out, row)
	})
	return out
}

// An editor adds a connection of each kind from the Stages page: its page
// shows the hook URL; a generated secret is shown once; no page ever shows
// a secret typed or generated again, and the secrets open with the
// connection's labels.
func TestCRMConnectionCreateEachKind(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		r := f.b.get(stagesURL(f.acc, ""))
		wantStatus(t, "stages page", r, http.StatusOK)
		if !r.has("crm-card") || !r.has("crm-empty") {
			t.Fatal("the Stages page has no empty CRM connections card")
		}
		for _, k := range []string{"hubspot", "pipedrive", "generic"} {
			if !r.has("crm-add-" + k) {
				t.Errorf("the card offers no %s connection", k)
			}
		}
		tests := []struct {
			kind            crm.Kind
			name            string
			secret, token   string
			extra           url.Values
			wantGenerated   bool
			wantLeadIDField string
		}{
			{kind: crm.HubSpot, name: "Sales", secret: "hs-client-secret-0123456789", token: "hs-token-secret-abcdef",
				extra: url.Values{"lead_id_property": {"meta_lead_id"}}, wantLeadIDField: "meta_lead_id"},
			{kind: crm.Pipedrive, name: "Deals", token: "pd-token-secret-abcdef", wantGenerated: true},
			{kind: crm.Generic, name: "Zapier", secret: "generic-signing-secret-xyz",
				extra: url.Values{"field_stage": {"deal.stage"}, "field_email": {"contact.email"}}},
		}
		var secrets []string
		for _, tt := range tests {
			r := f.b.get(stagesURL(f.acc, "/crm/new?kind="+string(tt.kind)))
			wantStatus(t, "new "+string(tt.kind), r, http.StatusOK)
			v := url.Values{"kind": {string(tt.kind)}, "name": {tt.name}, "secret": {tt.secret}, "api_token": {tt.token}}
			for k, vs := range tt.extra {
				v[k] = vs
			}
			r = f.b.post(stagesURL(f.acc, "/crm"), v)
			if r.status != http.StatusSeeOther {
				t.Fatalf("add %s = %d\n%s", tt.kind, r.status, r.body)
			}
			cs, err := s.CRMConnections(t.Context(), f.acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			var c models.CRMConnection
			for _, x := range cs {
				if x.Kind == string(tt.kind) {
					c = x
				}
			}
			if c.ID == 0 || c.Name != tt.name || c.LeadIDProperty != tt.wantLeadIDField {
				t.Fatalf("stored %s connection = %+v", tt.kind, c)
			}
			if r.location() != crmPageURL(f.acc, c, "") {
				t.Errorf("add %s redirects to %q", tt.kind, r.location())
			}
			page := f.b.get(r.location())
			wantStatus(t, string(tt.kind)+" page", page, http.StatusOK)
			// No public address is set: the URL is made with the browser's.
			if got, want := page.text("crm-hook-url"), f.a.srv.URL+"/hooks/"+string(tt.kind)+"/"+c.Token; got != want {
				t.Errorf("%s hook URL = %q; want %q", tt.kind, got, want)
			}
			if !page.has("crm-guessed") || !page.has("copy-hook-url") {
				t.Errorf("%s page does not say whose address the URL has, or has no copy button", tt.kind)
			}
			secret := tt.secret
			if tt.wantGenerated {
				secret = page.text("crm-new-secret-value")
				if len(secret) != 64 {
					t.Fatalf("%s page shows the generated secret %q; want 32 random bytes in hex", tt.kind, secret)
				}
				if again := f.b.get(r.location()); again.has("crm-new-secret") || strings.Contains(again.body, secret) {
					t.Errorf("%s's generated secret is shown a second time", tt.kind)
				}
			} else if page.has("crm-new-secret") {
				t.Errorf("%s page shows a generated secret for a typed one", tt.kind)
			}
			if got, err := f.a.box.Open(c.SecretSealed, crm.SecretLabel(c.Token)); err != nil || got != secret {
				t.Errorf("%s secret opens to %q, %v", tt.kind, got, err)
			}
			if tt.token != "" && tt.kind != crm.Generic {
				if got, err := f.a.box.Open(c.APITokenSealed, crm.APITokenLabel(c.Token)); err != nil || got != tt.token {
					t.Errorf("%s API token opens to %q, %v", tt.kind, got, err)
				}
			}
			if got := page.text("crm-secret-state"); got != "saved" {
				t.Errorf("%s secret state = %q", tt.kind, got)
			}
			secrets = append(secrets, secret)
			if tt.token != "" {
				secrets = append(secrets, tt.token)
			}
		}
		if got := onlyOfKind(t, s, f.acc, crm.Generic).Fields; got != `{"email":"contact.email","stage":"deal.stage"}` {
			t.Errorf("generic fields = %s", got)
		}

		// No page shows a secret again.
		r = f.b.get(stagesURL(f.acc, ""))
		pages := []resp{r}
		if n := r.doc.Find(`[data-testid="crm-row"]`).Length(); n != 3 {
			t.Errorf("the card lists %d connections; want 3", n)
		}
		r.doc.Find(`[data-testid="crm-name"]`).Each(func(_ int, a *goquery.Selection) {
			href := a.AttrOr("href", "")
			pages = append(pages, f.b.get(href), f.b.get(href+"/edit"), f.b.post(href+"/delete", nil))
		})
		for _, p := range pages {
			wantStatus(t, "a page", p, http.StatusOK)
			for _, sec := range secrets {
				if strings.Contains(p.body, sec) {
					t.Errorf("a page shows the secret %q", sec)
				}
			}
		}
	})
}

// onlyOfKind is the account's one connection of kind.
func onlyOfKind(t *testing.T, s *store.Store, acc models.Account, kind crm.Kind) models.CRMConnection {
	t.Helper()
	cs, err := s.CRMConnections(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Kind == string(kind) {
			return c
		}
	}
	t.Fatalf("no %s connection", kind)
	return models.CRMConnection{}
}

// The form's problems are said at their fields, with what was typed kept
// (never a secret); editing keeps a secret left empty, replaces one typed,
// and never changes the kind or the token.
func TestCRMConnectionFormProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		problems := []struct {
			name   string
			values url.Values
			field  string
		}{
			{"hubspot without its secret", url.Values{"kind": {"hubspot"}, "name": {"Sales team"}}, "error-secret"},
			{"no name", url.Values{"kind": {"generic"}, "name": {" "}, "secret": {"abc-secret-123456"}}, "error-name"},
			{"a secret with a space", url.Values{"kind": {"pipedrive"}, "name": {"Sales team"}, "secret": {"two words"}}, "error-secret"},
			{"a secret of 15 characters", url.Values{"kind": {"generic"}, "name": {"Sales team"}, "secret": {"fifteen-chars15"}}, "error-secret"},
			{"a short HubSpot secret", url.Values{"kind": {"hubspot"}, "name": {"Sales team"}, "secret": {"éééééééééééééé"}}, "error-secret"},
			{"a bad lead id property", url.Values{"kind": {"hubspot"}, "name": {"Sales team"}, "secret": {"abc-secret-123456"}, "lead_id_property": {"meta lead id"}}, "error-lead_id_property"},
			{"a bad field path", url.Values{"kind": {"generic"}, "name": {"Sales team"}, "secret": {"abc-secret-123456"}, "field_stage": {"deal..stage"}}, "error-field_stage"},
		}
		for _, p := range problems {
			r := f.b.post(stagesURL(f.acc, "/crm"), p.values)
			if r.status != http.StatusUnprocessableEntity || !r.has(p.field) {
				t.Errorf("%s: %d, %s shown: %v\n%s", p.name, r.status, p.field, r.has(p.field), r.body)
				continue
			}
			if got := r.inputValue("name"); got != strings.TrimSpace(p.values.Get("name")) {
				t.Errorf("%s: name kept as %q", p.name, got)
			}
			if msg := r.text("error-secret"); strings.Contains(p.name, "characters") && !strings.Contains(msg, "at least 16 characters (this one has 15)") {
				t.Errorf("%s: says %q; want at least 16 characters, this one 15", p.name, msg)
			}
			if got := r.inputValue("secret"); got != "" {
				t.Errorf("%s: the secret is put back in the form: %q", p.name, got)
			}
			if fs := p.values.Get("field_stage"); fs != "" && r.inputValue("field_stage") != fs {
				t.Errorf("%s: the path is not kept", p.name)
			}
		}
		if cs, _ := s.CRMConnections(t.Context(), f.acc.ID); len(cs) != 0 {
			t.Fatalf("%d connections stored from refused forms", len(cs))
		}

		c := f.a.connection(f.acc, crm.HubSpot, "Sales", "first-secret-123", "")
		// The same kind and name, ignoring case: refused at the name.
		r := f.b.post(stagesURL(f.acc, "/crm"), url.Values{"kind": {"hubspot"}, "name": {"sales"}, "secret": {"other-secret-456"}})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-name"), "has this name") || r.inputValue("name") != "sales" {
			t.Errorf("a name clash = %d, %q, kept %q", r.status, r.text("error-name"), r.inputValue("name"))
		}
		if strings.Contains(r.body, "other-secret-456") {
			t.Error("the refused form shows the secret typed")
		}
		// Another kind may have the name.
		if r := f.b.post(stagesURL(f.acc, "/crm"), url.Values{"kind": {"generic"}, "name": {"Sales"}, "secret": {"g-secret-1234-abcdef"}}); r.status != http.StatusSeeOther {
			t.Errorf("a generic Sales beside a HubSpot Sales = %d", r.status)
		}

		// Edit: blank keeps the secret, kind and token stay.
		r = f.b.get(crmPageURL(f.acc, c, "/edit"))
		wantStatus(t, "edit form", r, http.StatusOK)
		if strings.Contains(r.body, "first-secret-123") || r.inputValue("secret") != "" {
			t.Error("the edit form shows the secret")
		}
		if !strings.Contains(r.body, "Now saved") {
			t.Error("the edit form does not say the secret is saved")
		}
		r = f.b.post(crmPageURL(f.acc, c, ""), url.Values{"kind": {"generic"}, "name": {"Sales EU"}, "secret": {""}, "api_token": {"new-token-789"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("save = %d\n%s", r.status, r.body)
		}
		got, err := s.CRMConnection(t.Context(), f.acc.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Sales EU" || got.Kind != "hubspot" || got.Token != c.Token || got.SecretSealed != c.SecretSealed {
			t.Errorf("after the edit: %+v", got)
		}
		if tok, err := f.a.box.Open(got.APITokenSealed, crm.APITokenLabel(c.Token)); err != nil || tok != "new-token-789" {
			t.Errorf("API token = %q, %v", tok, err)
		}
		r = f.b.post(crmPageURL(f.acc, c, ""), url.Values{"name": {"Sales EU"}, "secret": {"second-secret-456"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("save a new secret = %d", r.status)
		}
		got, _ = s.CRMConnection(t.Context(), f.acc.ID, c.ID)
		if sec, err := f.a.box.Open(got.SecretSealed, crm.SecretLabel(c.Token)); err != nil || sec != "second-secret-456" {
			t.Errorf("secret = %q, %v", sec, err)
		}
		// A setup file's secret says where it comes from.
		got.SecretEnv = "HUBSPOT_SECRET"
		if err := s.SaveCRMConnection(t.Context(), &got); err != nil {
			t.Fatal(err)
		}
		if r := f.b.get(crmPageURL(f.acc, c, "")); r.text("crm-secret-state") != "from $HUBSPOT_SECRET (setup file)" {
			t.Errorf("setup file secret state = %q", r.text("crm-secret-state"))
		}

		// Delete asks first.
		r = f.b.post(crmPageURL(f.acc, c, "/delete"), nil)
		if r.status != http.StatusOK || !r.has("rule-confirm") {
			t.Fatalf("delete without confirming = %d", r.status)
		}
		if _, err := s.CRMConnection(t.Context(), f.acc.ID, c.ID); err != nil {
			t.Fatalf("deleted before confirming: %v", err)
		}
		r = f.b.post(crmPageURL(f.acc, c, "/delete"), url.Values{"confirm": {"yes"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("delete = %d", r.status)
		}
		if _, err := s.CRMConnection(t.Context(), f.acc.ID, c.ID); err == nil {
			t.Error("the connection is still there")
		}
	})
}

// Another account's connection or delivery is a 404 at every route; sales
// read the card and a connection without its hook URL, and every change
// answers them 403.
func TestCRMConnectionAccess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		mine := f.a.connection(f.acc, crm.Generic, "Mine", "my-secret-123", "")
		owner := f.a.user("bo@example.com", false)
		beta := f.a.account("beta", owner)
		theirs := f.a.connection(beta, crm.HubSpot, "Theirs", "their-secret-123", "their-token")
		if _, err := s.AddCRMDeliveries(ctx, []models.CRMDelivery{{AccountID: beta.ID, ConnectionID: theirs.ID, Key: "k1", Body: "{}",
			ReceivedAt: f.a.clock(), OccurredAt: f.a.clock(), CRMStageID: "closedwon"}}); err != nil {
			t.Fatal(err)
		}
		theirDelivery := f.a.deliveries(beta, theirs)[0]

		for _, p := range []string{"", "/edit"} {
			if r := f.b.get(crmPageURL(f.acc, theirs, p)); r.status != http.StatusNotFound {
				t.Errorf("GET another account's connection%s = %d; want 404", p, r.status)
			}
		}
		for _, p := range []string{"", "/delete", "/stages", "/stages/load", "/deliveries/" + itoa(theirDelivery.ID) + "/retry"} {
			v := url.Values{"name": {"Hacked"}, "confirm": {"yes"}, "crm_stage_id": {"closedwon"}, "stage": {"won"}}
			if r := f.b.post(crmPageURL(f.acc, theirs, p), v); r.status != http.StatusNotFound {
				t.Errorf("POST another account's connection%s = %d; want 404", p, r.status)
			}
		}
		// Their delivery through my connection.
		if r := f.b.post(crmPageURL(f.acc, mine, "/deliveries/"+itoa(theirDelivery.ID)+"/retry"), nil); r.status != http.StatusNotFound {
			t.Errorf("retry another account's delivery = %d; want 404", r.status)
		}
		for _, id := range []string{"abc", "-1", "99999999999999999999"} {
			if r := f.b.get(stagesURL(f.acc, "/crm/"+id)); r.status != http.StatusNotFound {
				t.Errorf("GET /stages/crm/%s = %d; want 404", id, r.status)
			}
		}
		if r := f.b.get(stagesURL(f.acc, "/crm/new?kind=salesforce")); r.status != http.StatusNotFound {
			t.Errorf("a new connection of an unknown kind = %d; want 404", r.status)
		}
		got, err := s.CRMConnection(ctx, beta.ID, theirs.ID)
		if err != nil || got.Name != "Theirs" {
			t.Errorf("their connection after my posts: %+v, %v", got, err)
		}

		viewer := f.a.user("vera@example.com", false) // sales: reads the Stages page, changes none of it
		if err := s.SetMember(ctx, f.acc.ID, viewer.ID, models.RoleSales); err != nil {
			t.Fatal(err)
		}
		b := f.a.browser()
		b.login(viewer.Email)
		r := b.get(stagesURL(f.acc, ""))
		wantStatus(t, "viewer's stages page", r, http.StatusOK)
		if !r.has("crm-card") || r.has("crm-add") || strings.Contains(r.body, "/stages/crm/new") {
			t.Error("sales do not see the CRM connections, or may add one")
		}
		page := b.get(stagesURL(f.acc, "/crm/"+itoa(mine.ID)))
		wantStatus(t, "sales read a connection", page, http.StatusOK)
		if page.has("crm-hook") || strings.Contains(page.body, mine.Token) || page.has("edit-crm") {
			t.Error("sales see the connection's hook URL or its Edit button")
		}
		for _, p := range []string{"/crm/new?kind=generic", "/crm/" + itoa(mine.ID) + "/edit"} {
			if r := b.get(stagesURL(f.acc, p)); r.status != http.StatusForbidden {
				t.Errorf("sales GET %s = %d; want 403", p, r.status)
			}
		}
		for _, p := range []string{"/crm", "/crm/" + itoa(mine.ID), "/crm/" + itoa(mine.ID) + "/delete", "/crm/" + itoa(mine.ID) + "/stages"} {
			v := url.Values{"kind": {"generic"}, "name": {"Hacked"}, "secret": {"x-secret-123"}, "confirm": {"yes"}}
			if r := b.post(stagesURL(f.acc, p), v); r.status != http.StatusForbidden {
				t.Errorf("viewer POST %s = %d; want 403", p, r.status)
			}
		}
		if c := onlyConnection(t, s, f.acc); c.Name != "Mine" {
			t.Errorf("after the viewer's posts: %+v", c)
		}
	})
}

// Loading stages from HubSpot's and Pipedrive's APIs fills the table with
// their labels and keeps the mappings made; a refused token or an API
// that is down is said in words, never with the token.
func TestCRMLoadStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		f.a.hubspot.AddStage("default", "Sales pipeline", "appointmentscheduled", "Appointment scheduled")
		f.a.hubspot.AddStage("default", "Sales pipeline", "closedwon", "Closed won")
		f.a.pipedrive.AddStage(1, "Deals", 2, "Qualified")
		f.a.pipedrive.AddStage(1, "Deals", 5, "Won")
		tests := []struct {
			kind  crm.Kind
			token string
			ids   [2]string
			want  []string
		}{
			{crm.HubSpot, hubspotToken, [2]string{"closedwon", "appointmentscheduled"},
				[]string{"appointmentscheduled Appointment scheduled Sales pipeline → ", "closedwon Closed won Sales pipeline → won"}},
			// Pipedrive's won and lost statuses are listed too.
			{crm.Pipedrive, pipedriveToken, [2]string{"5", "2"}, []string{"2 Qualified Deals → ", "5 Won Deals → won", "won Won  → won", "lost Lost  → "}},
		}
		for _, tt := range tests {
			c := f.a.connection(f.acc, tt.kind, "Main", "secret-123", tt.token)
			// A mapping made before the stages were listed.
			if err := s.MapCRMStages(ctx, f.acc.ID, c.ID, map[string]string{tt.ids[0]: "won"}, f.a.clock()); err != nil {
				t.Fatal(err)
			}
			r := f.b.get(crmPageURL(f.acc, c, ""))
			if !r.has("crm-load") {
				t.Fatalf("%s page has no load button", tt.kind)
			}
			r = f.b.post(crmPageURL(f.acc, c, "/stages/load"), nil)
			if r.status != http.StatusSeeOther || r.location() != crmPageURL(f.acc, c, "#crm-stages") {
				t.Fatalf("load %s = %d %q", tt.kind, r.status, r.location())
			}
			r = f.b.get(crmPageURL(f.acc, c, ""))
			if got := flashText(r); !strings.Contains(got, "Loaded 2 stages from "+tt.kind.Title()) {
				t.Errorf("%s load flash = %q", tt.kind, got)
			}
			if got := crmStageRows(r); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s stage table =\n%s\nwant\n%s", tt.kind, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		}

		// A token the API refuses, then the API down.
		c := f.a.connection(f.acc, crm.HubSpot, "Wrong token", "secret-123", "wrong-token-secret-987")
		r := f.b.post(crmPageURL(f.acc, c, "/stages/load"), nil)
		wantStatus(t, "load with a wrong token", r, http.StatusSeeOther)
		r = f.b.get(crmPageURL(f.acc, c, ""))
		if got := flashText(r); !strings.Contains(got, "HubSpot's API did not list the stages") || strings.Contains(r.body, "wrong-token-secret-987") {
			t.Errorf("wrong token flash = %q", got)
		}
		good := onlyOfKindNamed(t, s, f.acc, crm.HubSpot, "Main")
		f.a.hubspot.Down(true)
		f.b.post(crmPageURL(f.acc, good, "/stages/load"), nil)
		r = f.b.get(crmPageURL(f.acc, good, ""))
		if got := flashText(r); !strings.Contains(got, "HubSpot's API did not list the stages") || strings.Contains(r.body, hubspotToken) {
			t.Errorf("API down flash = %q", got)
		}
		if n := len(crmStageRows(r)); n != 2 {
			t.Errorf("the table has %d rows after a failed load; want the 2 it had", n)
		}
		// Without a token it says to save one.
		none := f.a.connection(f.acc, crm.Pipedrive, "No token", "secret-123", "")
		f.b.post(crmPageURL(f.acc, none, "/stages/load"), nil)
		if got := flashText(f.b.get(crmPageURL(f.acc, none, ""))); !strings.Contains(got, "Save the connection's API token first") {
			t.Errorf("no token flash = %q", got)
		}
	})
}

func onlyOfKindNamed(t *testing.T, s *store.Store, acc models.Account, kind crm.Kind, name string) models.CRMConnection {
	t.Helper()
	cs, err := s.CRMConnections(t.Context(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Kind == string(kind) && c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s connection %s", kind, name)
	return models.CRMConnection{}
}

// The stage table saves mappings (and, for a generic connection, values
// added by hand), refuses a stage the account lacks keeping what was
// chosen, and marks an id deliveries carried that is not mapped.
func TestCRMMapStages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		c := f.a.connection(f.acc, crm.Generic, "Zapier", "secret-123", "")
		if err := s.SeeCRMStage(ctx, f.acc.ID, c.ID, "deal_won", f.a.clock().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		r := f.b.get(crmPageURL(f.acc, c, ""))
		if got := strings.Join(crmStageRows(r), "\n"); got != "deal_won   →  (waits)" {
			t.Errorf("stage table = %q", got)
		}
		if got := r.text("crm-stage-waits"); !strings.Contains(got, "not mapped: its changes wait") {
			t.Errorf("waits = %q", got)
		}
		if r.has("crm-load") {
			t.Error("a generic connection offers to load its stages")
		}

		// A stage the account lacks: refused, the table kept as chosen.
		r = f.b.post(crmPageURL(f.acc, c, "/stages"), url.Values{"crm_stage_id": {"deal_won"}, "stage": {"won"},
			"new_crm_stage_id": {"deal_booked"}, "new_stage": {"no such stage"}})
		if r.status != http.StatusUnprocessableEntity || !r.has("error-new_crm_stage_id") {
			t.Fatalf("an unknown stage = %d\n%s", r.status, r.body)
		}
		if got := strings.Join(crmStageRows(r), "\n"); got != "deal_won   → won (waits)" {
			t.Errorf("refused table = %q", got)
		}
		if v, _ := r.doc.Find(`[data-testid="crm-stage-add-id"]`).Attr("value"); v != "deal_booked" {
			t.Errorf("the value typed is not kept: %q", v)
		}
		if rows, _ := s.CRMStages(ctx, f.acc.ID, c.ID); rows[0].Stage != "" {
			t.Errorf("a refused table saved %+v", rows)
		}

		r = f.b.post(crmPageURL(f.acc, c, "/stages"), url.Values{"crm_stage_id": {"deal_won"}, "stage": {"won"},
			"new_crm_stage_id": {"deal_booked"}, "new_stage": {"booked"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("save stages = %d\n%s", r.status, r.body)
		}
		rows, err := s.CRMStages(ctx, f.acc.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, row := range rows {
			got[row.CRMStageID] = row.Stage
		}
		if len(got) != 2 || got["deal_won"] != "won" || got["deal_booked"] != "booked" {
			t.Errorf("stage table = %v", got)
		}
		r = f.b.get(crmPageURL(f.acc, c, ""))
		if r.has("crm-stage-waits") || !strings.Contains(flashText(r), "2 rows changed") {
			t.Errorf("after saving: waits %v, flash %q", r.has("crm-stage-waits"), flashText(r))
		}
		// Unmapping.
		f.b.post(crmPageURL(f.acc, c, "/stages"), url.Values{"crm_stage_id": {"deal_booked", "deal_won"}, "stage": {"", "won"}})
		if rows, _ := s.CRMStages(ctx, f.acc.ID, c.ID); len(rows) != 2 || rows[0].Stage == rows[1].Stage {
			t.Errorf("after unmapping one: %+v", rows)
		}
		// A setup file's spelling, and a stage the list no longer has.
		if err := s.MapCRMStages(ctx, f.acc.ID, c.ID, map[string]string{"deal_won": "WON", "deal_lost": "lost"}, f.a.clock()); err != nil {
			t.Fatal(err)
		}
		r = f.b.get(crmPageURL(f.acc, c, ""))
		if got, want := strings.Join(crmStageRows(r), "\n"), "deal_booked   → \ndeal_lost   → lost\ndeal_won   → won"; got != want {
			t.Errorf("stage table =\n%s\nwant\n%s", got, want)
		}
		if got := r.doc.Find(`tr[data-crm-stage="deal_lost"] option[selected]`).Text(); got != "lost (not in the list)" {
			t.Errorf("a stage the list lacks shows as %q", got)
		}
	})
}

// The deliveries list says what became of each delivery, newest first,
// pages by 50, shows the body as received, and Retry makes one waiting
// and due.
func TestCRMDeliveriesList(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		c := f.a.connection(f.acc, crm.HubSpot, "Sales", "secret-123", hubspotToken)
		if err := s.ListCRMStages(ctx, f.acc.ID, c.ID, []models.CRMStage{{CRMStageID: "closedwon", Label: "Closed won", Pipeline: "Sales"}}); err != nil {
			t.Fatal(err)
		}
		lead := f.a.postLead(f.key, `{"external_id":"crm-1","email":"ada@example.com"}`).LeadID
		now := f.a.clock()
		var ds []models.CRMDelivery
		for i, stage := range []string{"closedwon", "closedwon", "contractsent", "closedwon", "closedwon", "closedwon"} {
			ds = append(ds, models.CRMDelivery{AccountID: f.acc.ID, ConnectionID: c.ID, Key: "k" + itoa(int64(i)),
				Body: `{"objectId":` + itoa(int64(100+i)) + `,"propertyValue":"` + stage + `"}`, ObjectID: itoa(int64(100 + i)),
				CRMStageID: stage, ReceivedAt: now.Add(time.Duration(i) * time.Minute), OccurredAt: now.Add(-time.Hour)})
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		ds = f.a.deliveries(f.acc, c) // newest first
		tried := now.Add(10 * time.Minute)
		claimed, err := s.ClaimCRMDeliveries(ctx, tried, len(ds))
		if err != nil || len(claimed) == 0 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		finish := func(d models.CRMDelivery, status models.DeliveryStatus, waitingFor, reason string) models.CRMDelivery {
			d.Status, d.WaitingFor, d.Reason, d.TriedAt, d.Attempts = status, waitingFor, reason, &tried, 1
			d.LeaseToken = claimed[0].LeaseToken
			d.NextTryAt = tried.Add(time.Hour)
			return d
		}
		done := finish(ds[1], models.DeliveryDone, "", "")
		done.LeadID, done.Stage = &lead, "won"
		if err := s.FinishCRMDeliveries(ctx, []models.CRMDelivery{
			done,
			finish(ds[2], models.DeliveryWaiting, models.WaitingCRM, "503 Service Unavailable"),
			finish(ds[3], models.DeliveryWaiting, models.WaitingMapping, ""),
			finish(ds[4], models.DeliveryWaiting, models.WaitingLead, "no lead has the contact's email or phone"),
			finish(ds[5], models.DeliveryGaveUp, "", "its lead did not come within 7 days"),
		}); err != nil {
			t.Fatal(err)
		}
		r := f.b.get(crmPageURL(f.acc, c, ""))
		var outcomes []string
		r.doc.Find(`[data-testid="crm-delivery"]`).Each(func(_ int, s *goquery.Selection) {
			outcomes = append(outcomes, strings.Join(strings.Fields(s.Find(`[data-testid="crm-delivery-stage"]`).Text()), " ")+": "+
				strings.Join(strings.Fields(s.Find(`[data-testid="crm-delivery-outcome"] .badge`).Text()), " "))
		})
		want := []string{
			"Closed won: Received, not processed yet",
			"Closed won: Recorded as won",
			"Closed won: HubSpot API failed: 503 Service Unavailable, next try Today, 13:10",
			"contractsent: Stage contractsent is not mapped",
			"Closed won: Waiting for its lead: no lead has the contact's email or phone",
			"Closed won: Its lead did not come within 7 days.",
		}
		if strings.Join(outcomes, "\n") != strings.Join(want, "\n") {
			t.Errorf("outcomes =\n%s\nwant\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
		}
		if href := r.doc.Find(`[data-testid="crm-delivery-lead"]`).AttrOr("href", ""); href != "/accounts/"+itoa(f.acc.ID)+"/leads/"+itoa(lead) {
			t.Errorf("recorded delivery links %q", href)
		}
		if body := r.doc.Find(`[data-testid="crm-delivery-body"]`).First().Text(); !strings.Contains(body, `"propertyValue": "closedwon"`) {
			t.Errorf("body = %q", body)
		}
		if r.has("crm-more") {
			t.Error("6 deliveries offer more")
		}

		// Retry a given-up delivery.
		r = f.b.post(crmPageURL(f.acc, c, "/deliveries/"+itoa(ds[5].ID)+"/retry"), nil)
		if r.status != http.StatusSeeOther || r.location() != crmPageURL(f.acc, c, "#deliveries") {
			t.Fatalf("retry = %d %q", r.status, r.location())
		}
		d, err := s.CRMDelivery(ctx, f.acc.ID, ds[5].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != models.DeliveryWaiting || d.NextTryAt.After(f.a.clock()) {
			t.Errorf("retried delivery: %s due %s", d.Status, d.NextTryAt)
		}

		// 50 a page, older ones by before.
		var more []models.CRMDelivery
		for i := range 50 {
			more = append(more, models.CRMDelivery{AccountID: f.acc.ID, ConnectionID: c.ID, Key: "m" + itoa(int64(i)), Body: "{}",
				CRMStageID: "closedwon", ReceivedAt: now.Add(time.Hour), OccurredAt: now})
		}
		if _, err := s.AddCRMDeliveries(ctx, more); err != nil {
			t.Fatal(err)
		}
		r = f.b.get(crmPageURL(f.acc, c, ""))
		if n := r.doc.Find(`[data-testid="crm-delivery"]`).Length(); n != 50 || !r.has("crm-more") {
			t.Fatalf("first page: %d deliveries, more %v", n, r.has("crm-more"))
		}
		r = f.b.get(r.doc.Find(`[data-testid="crm-more"]`).AttrOr("href", ""))
		if n := r.doc.Find(`[data-testid="crm-delivery"]`).Length(); n != 6 || r.has("crm-more") {
			t.Errorf("second page: %d deliveries; want 6, no more", n)
		}

		// The card counts what waits and what was given up.
		r = f.b.get(stagesURL(f.acc, ""))
		if got := strings.Join(strings.Fields(r.text("crm-counts")), " "); got != "55 waiting" {
			t.Errorf("card counts = %q", got)
		}
	})
}
