package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// rolesFixture is an account with a member of every role logged in, a
// dry-run dataset (Main) and a live one (Live), won mapped to a Purchase
// on Live with the deal's value, booked to a Purchase on Main, one lead
// with its Lead event, a HubSpot connection and a checked CSV upload.
type rolesFixture struct {
	rulesFixture
	live    models.Dataset
	lead    int64
	event   int64
	rule    int64
	mapping int64
	conn    models.CRMConnection
	upload  int64
	members map[models.Role]*browser
}

func newRolesFixture(t *testing.T, s *store.Store) rolesFixture {
	t.Helper()
	f := rolesFixture{rulesFixture: newRulesFixture(t, s), members: map[models.Role]*browser{}}
	f.live = models.Dataset{AccountID: f.acc.ID, Name: "Live pixel", PixelID: "223456789012345", Mode: models.ModeLive, LDU: models.LDUOff}
	if err := s.CreateDataset(t.Context(), &f.live); err != nil {
		t.Fatal(err)
	}
	f.mapping = createMappingForm(t, f.rulesFixture, mappingValues("won", f.live, "Purchase", "change")).ID
	createMappingForm(t, f.rulesFixture, mappingValues("booked", f.d, "Purchase", "change"))
	reply := f.a.postLead(f.key, goodLead)
	if reply.status != http.StatusCreated {
		t.Fatalf("post lead: %d %s", reply.status, reply.raw)
	}
	f.lead = reply.LeadID
	evs, err := s.LeadEvents(t.Context(), f.acc.ID, f.lead)
	if err != nil || len(evs) == 0 {
		t.Fatalf("lead events = %v, %v; want its Lead event", evs, err)
	}
	f.event = evs[0].ID
	rules, err := s.SendRules(t.Context(), f.acc.ID)
	if err != nil || len(rules) == 0 {
		t.Fatalf("rules = %v, %v", rules, err)
	}
	f.rule = rules[0].ID
	f.conn = f.a.connection(f.acc, crm.HubSpot, "HubSpot", "hs-client-secret", "")
	f.upload = uploadID(t, f.b.uploadFile(f.acc, "deals.csv", []byte("Email,Stage,Date\r\njane.doe@example.com,qualified,2026-12-01 11:30\r\n"), true))
	waitUpload(t, s, f.acc, f.upload, models.UploadPreviewed)
	f.members[models.RoleOwner] = f.b
	for _, r := range []models.Role{models.RoleEditor, models.RoleSales, models.RoleViewer} {
		u := f.a.user(string(r)+"@example.com", false)
		if err := s.SetMember(t.Context(), f.acc.ID, u.ID, r); err != nil {
			t.Fatal(err)
		}
		b := f.a.browser()
		b.login(u.Email)
		b.get(views.AccountURL(f.acc.ID, "")) // a page with the session's CSRF token
		f.members[r] = b
	}
	return f
}

func (f rolesFixture) path(rest string) string {
	return strings.NewReplacer(":lead", itoa(f.lead), ":event", itoa(f.event), ":rule", itoa(f.rule),
		":dataset", itoa(f.d.ID), ":mapping", itoa(f.mapping), ":connection", itoa(f.conn.ID),
		":upload", itoa(f.upload)).Replace(views.AccountURL(f.acc.ID, rest))
}

// Each role's allowed and refused actions: pages, posts and CSV
// downloads. A refused one answers 403; an allowed one is not refused.
func TestRolesAllowAndRefuse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		tests := []struct {
			method, path string
			form         url.Values
			least        models.Role // the least role allowed
		}{
			{"GET", "", nil, models.RoleViewer},
			{"GET", "/leads", nil, models.RoleViewer},
			{"GET", "/leads/:lead", nil, models.RoleViewer},
			{"GET", "/leads.csv", nil, models.RoleViewer},
			{"POST", "/leads/:lead/stages", url.Values{"stage": {"qualified"}}, models.RoleSales},
			{"POST", "/leads/:lead/stages", url.Values{"stage": {"junk"}}, models.RoleSales},
			{"GET", "/events", nil, models.RoleSales},
			{"GET", "/events.csv", nil, models.RoleSales},
			{"GET", "/events/:event", nil, models.RoleSales},
			{"GET", "/rules", nil, models.RoleSales},
			{"GET", "/rules/:rule", nil, models.RoleSales},
			{"GET", "/rules/:rule/preview", nil, models.RoleSales},
			{"GET", "/stages/mappings/:mapping", nil, models.RoleSales},
			{"GET", "/stages/crm/:connection", nil, models.RoleSales},
			{"GET", "/stages/uploads", nil, models.RoleSales},
			{"GET", "/stages/uploads/:upload", nil, models.RoleSales},
			{"GET", "/stages/uploads/:upload/progress", nil, models.RoleSales},
			{"GET", "/datasets", nil, models.RoleSales},
			{"GET", "/datasets/:dataset", nil, models.RoleSales},
			{"GET", "/stages", nil, models.RoleSales},
			{"POST", "/events/:event/retry", nil, models.RoleEditor},
			{"GET", "/rules/new", nil, models.RoleEditor},
			{"POST", "/rules/preview", url.Values{"mode": {"automatic_completed"}}, models.RoleEditor},
			{"POST", "/rules/:rule/move", url.Values{"direction": {"down"}}, models.RoleEditor},
			{"POST", "/datasets/:dataset/test", nil, models.RoleEditor},
			{"POST", "/leads/:lead/rules/:rule/send", nil, models.RoleEditor},
			{"POST", "/stages", url.Values{"name": {""}}, models.RoleEditor},
			{"POST", "/stages/uploads/:upload/apply", url.Values{"pass": {"0"}}, models.RoleEditor},
			{"POST", "/stages/crm/:connection/stages", url.Values{"crm_stage_id": {"x"}, "stage": {"won"}}, models.RoleEditor},
			{"GET", "/stages/crm/:connection/edit", nil, models.RoleEditor},
			{"GET", "/stages/crm/new", nil, models.RoleEditor},
			{"GET", "/stages/mappings/new", nil, models.RoleEditor},
			{"GET", "/settings", nil, models.RoleEditor},
			{"GET", "/settings/keys", nil, models.RoleEditor},
			{"GET", "/settings/setup.json", nil, models.RoleEditor},
			{"GET", "/settings/members", nil, models.RoleOwner},
			{"POST", "/members", url.Values{"email": {""}, "role": {"sales"}}, models.RoleOwner},
		}
		for _, role := range models.Roles {
			b := f.members[role]
			for _, tt := range tests {
				var r resp
				if tt.method == http.MethodGet {
					r = b.get(f.path(tt.path))
				} else {
					form := url.Values{}
					for k, vs := range tt.form {
						form[k] = vs // post sets _csrf: each member its own
					}
					r = b.post(f.path(tt.path), form)
				}
				what := fmt.Sprintf("%s: %s %s", role, tt.method, tt.path)
				switch {
				case role.AtLeast(tt.least) && (r.status == http.StatusForbidden || r.status >= 500):
					t.Errorf("%s = %d; want it allowed: %s", what, r.status, r.doc.Find("main").Text())
				case !role.AtLeast(tt.least) && r.status != http.StatusForbidden:
					t.Errorf("%s = %d; want 403", what, r.status)
				}
			}
		}
	})
}

// A viewer reaches only the Overview and the leads; sales change nothing
// but a lead's stage. Routes are read from the router, so a route added
// later is covered without touching this test.
func TestRolesEveryRoute(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		viewerRoutes := []string{"GET /accounts/:account", "GET /accounts/:account/leads", "GET /accounts/:account/leads.csv",
			"GET /accounts/:account/leads/:lead"}
		n := 0
		for _, rt := range f.a.echo.Routes() {
			if !strings.HasPrefix(rt.Path, "/accounts/:account") || strings.HasSuffix(rt.Path, "*") ||
				(rt.Method != http.MethodGet && rt.Method != http.MethodPost) {
				continue
			}
			route := rt.Method + " " + rt.Path
			path := strings.NewReplacer(":account", itoa(f.acc.ID), ":lead", itoa(f.lead), ":event", itoa(f.event),
				":rule", itoa(f.rule), ":dataset", itoa(f.d.ID)).Replace(rt.Path)
			for i := strings.Index(path, ":"); i >= 0; i = strings.Index(path, ":") {
				end := strings.IndexByte(path[i:], '/')
				if end < 0 {
					end = len(path) - i
				}
				path = path[:i] + "1" + path[i+end:]
			}
			do := func(b *browser) resp {
				if rt.Method == http.MethodGet {
					return b.get(path)
				}
				return b.post(path, url.Values{"stage": {"won"}, "value": {"100"}, "name": {"x"}, "role": {"owner"}})
			}
			n++
			if !slices.Contains(viewerRoutes, route) {
				if r := do(f.members[models.RoleViewer]); r.status != http.StatusForbidden {
					t.Errorf("viewer: %s = %d; want 403", route, r.status)
				}
			}
			if rt.Method == http.MethodPost && route != "POST /accounts/:account/leads/:lead/stages" {
				if r := do(f.members[models.RoleSales]); r.status != http.StatusForbidden {
					t.Errorf("sales: %s = %d; want 403", route, r.status)
				}
			}
		}
		if n < 40 {
			t.Errorf("checked %d account routes; the router has more", n)
		}
		if changes, _ := s.StageChanges(t.Context(), f.acc.ID, f.lead); len(changes) != 0 {
			t.Errorf("refused posts recorded %d stage changes", len(changes))
		}
	})
}

// Links a role cannot follow are not drawn: every link inside the account
// on every page a member reaches from the Overview opens for them, and
// the only forms that change something are the ones their role may post.
func TestRolesDrawOnlyLinksTheyCanFollow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		base := views.AccountURL(f.acc.ID, "")
		for _, role := range models.Roles {
			b := f.members[role]
			seen := map[string]bool{base: true}
			queue := []string{base}
			posts := map[string]bool{}
			for len(queue) > 0 && len(seen) < 120 {
				page := queue[0]
				queue = queue[1:]
				r := b.get(page)
				if r.status == http.StatusForbidden {
					t.Errorf("%s: a drawn link %s = 403", role, page)
					continue
				}
				if r.doc == nil || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
					continue
				}
				r.doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
					href, _ := a.Attr("href")
					if !strings.HasPrefix(href, base) || seen[href] || strings.Contains(href, "csv") {
						return
					}
					seen[href] = true
					queue = append(queue, href)
				})
				r.doc.Find(`form[method="post"]`).Each(func(_ int, form *goquery.Selection) {
					action, _ := form.Attr("action")
					action = strings.Replace(action, base+"/", "/accounts/:account/", 1)
					posts[strings.Replace(action, "/leads/"+itoa(f.lead)+"/", "/leads/:lead/", 1)] = true
				})
			}
			for action := range posts {
				allowed := action == "/logout" || action == "/logout/everywhere"
				switch {
				case role == models.RoleSales:
					allowed = allowed || action == "/accounts/:account/leads/:lead/stages"
				case role.AtLeast(models.RoleEditor):
					allowed = true
				}
				if !allowed {
					t.Errorf("%s: a form posts to %s", role, action)
				}
			}
		}
	})
}

// Raw contact data leaves the server only in owners' and editors' CSV
// downloads: sales and viewers get the leads without it, and the send log
// names leads by their id.
func TestRolesCSVContactData(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		contact := []string{"email", "phone", "first_name", "last_name", "city", "state", "zip", "country", "message",
			"external_id", "event_source_url", "meta_lead_id"}
		for _, role := range models.Roles {
			r := f.members[role].get(f.path("/leads.csv"))
			wantStatus(t, string(role)+" leads.csv", r, http.StatusOK)
			rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("%s leads.csv = %d rows, %v; want a header and the lead", role, len(rows), err)
			}
			header := rows[0]
			full := role.AtLeast(models.RoleEditor)
			for _, col := range contact {
				if slices.Contains(header, col) != full {
					t.Errorf("%s leads.csv has %s: %v; want %v", role, col, !full, full)
				}
			}
			for _, col := range []string{"lead_id", "created_at", "source", "stage", "junk", "test"} {
				if !slices.Contains(header, col) {
					t.Errorf("%s leads.csv lacks %s", role, col)
				}
			}
			if has := strings.Contains(strings.ToLower(r.body), "jane"); has != full {
				t.Errorf("%s leads.csv names Jane: %v; want %v", role, has, full)
			}

			if !role.AtLeast(models.RoleSales) {
				continue
			}
			r = f.members[role].get(f.path("/events.csv"))
			wantStatus(t, string(role)+" events.csv", r, http.StatusOK)
			if has := strings.Contains(strings.ToLower(r.body), "jane"); has != full {
				t.Errorf("%s events.csv names Jane: %v; want %v\n%s", role, has, full, r.body)
			}
			if !strings.Contains(r.body, "Lead "+itoa(f.lead)) && !full {
				t.Errorf("%s events.csv does not name the lead by its id:\n%s", role, r.body)
			}
		}
	})
}

// A stage that sends a Purchase to a live dataset asks to confirm, naming
// the event, its value and the dataset, and records nothing until then; a
// Purchase to a dry-run dataset does not ask.
func TestStagePurchaseConfirm(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		b := f.members[models.RoleSales]
		stages := f.path("/leads/:lead/stages")
		changes := func() int {
			cs, err := s.StageChanges(t.Context(), f.acc.ID, f.lead)
			if err != nil {
				t.Fatal(err)
			}
			return len(cs)
		}

		r := b.post(stages, url.Values{"stage": {"won"}, "value": {"5000"}, "currency": {"eur"}})
		wantStatus(t, "won with a value", r, http.StatusOK)
		text := r.text("stage-confirm-text")
		for _, want := range []string{"won", "Purchase", "5000.00 EUR", "Live pixel"} {
			if !strings.Contains(text, want) {
				t.Errorf("confirm text %q; want it to name %q", text, want)
			}
		}
		if changes() != 0 {
			t.Fatal("the stage was recorded before it was confirmed")
		}
		form := r.doc.Find(`[data-testid="stage-confirm"]`)
		v := url.Values{}
		form.Find("input[type=hidden]").Each(func(_ int, in *goquery.Selection) {
			name, _ := in.Attr("name")
			val, _ := in.Attr("value")
			v.Set(name, val)
		})
		if v.Get("stage") != "won" || v.Get("value") != "5000" || v.Get("currency") != "EUR" || v.Get("confirm") != "1" {
			t.Fatalf("confirm form carries %v; want won, 5000, EUR, confirm", v)
		}
		r = b.post(stages, v)
		wantStatus(t, "confirmed", r, http.StatusSeeOther)
		if changes() != 1 {
			t.Fatal("the confirmed stage was not recorded")
		}
		evs, _ := s.LeadEvents(t.Context(), f.acc.ID, f.lead)
		var purchase *models.Event
		for i := range evs {
			if evs[i].EventName == "Purchase" && evs[i].DatasetID == f.live.ID {
				purchase = &evs[i]
			}
		}
		if purchase == nil || purchase.Value == nil || *purchase.Value != 5000 || purchase.Currency != "EUR" {
			t.Fatalf("events %+v; want a Purchase of 5000 EUR to the live dataset", evs)
		}

		// A Purchase to a dry-run dataset is recorded at once.
		r = b.post(stages, url.Values{"stage": {"booked"}, "value": {"300"}, "currency": {"USD"}})
		wantStatus(t, "booked, a Purchase to a dry-run dataset", r, http.StatusSeeOther)
		if changes() != 2 {
			t.Error("booked was not recorded at once")
		}
		// A stage that sends no Purchase is recorded at once too.
		wantStatus(t, "qualified", b.post(stages, url.Values{"stage": {"qualified"}}), http.StatusSeeOther)

		// A viewer's post records nothing, confirmed or not.
		vr := f.members[models.RoleViewer].post(stages, url.Values{"stage": {"won"}, "value": {"5000"}, "currency": {"USD"}, "confirm": {"1"}})
		wantStatus(t, "viewer sets won", vr, http.StatusForbidden)
		if changes() != 3 {
			t.Errorf("%d stage changes; want the viewer's refused", changes())
		}
		// The viewer's lead page has no stage buttons.
		page := f.members[models.RoleViewer].get(f.path("/leads/:lead"))
		if page.has("stage-form") || page.has("mark-junk") || page.has("mark-not-junk") {
			t.Error("the viewer's lead page shows stage buttons")
		}
	})
}

// The Members page offers the four roles and sets sales like any other;
// a made-up role is refused.
func TestMembersSalesRole(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		r := f.b.get(f.path("/settings/members"))
		wantStatus(t, "members page", r, http.StatusOK)
		opts := r.doc.Find(`[data-testid="member-form"] select[name="role"] option`).Map(func(_ int, o *goquery.Selection) string {
			v, _ := o.Attr("value")
			return v
		})
		if got := strings.Join(opts, ","); got != "owner,editor,sales,viewer" {
			t.Errorf("invite roles = %s; want owner,editor,sales,viewer", got)
		}
		viewer, err := s.UserByEmail(t.Context(), "viewer@example.com")
		if err != nil {
			t.Fatal(err)
		}
		role := f.path("/members/" + itoa(viewer.ID) + "/role")
		wantStatus(t, "make the viewer sales", f.b.post(role, url.Values{"role": {"sales"}}), http.StatusSeeOther)
		if a, _ := s.AccountForUser(t.Context(), viewer.ID, f.acc.ID); a.Role != models.RoleSales {
			t.Errorf("role = %q; want sales", a.Role)
		}
		wantStatus(t, "a made-up role", f.b.post(role, url.Values{"role": {"Sales\x00"}}), http.StatusBadRequest)
		wantStatus(t, "another made-up role", f.b.post(role, url.Values{"role": {"admin"}}), http.StatusBadRequest)
		if a, _ := s.AccountForUser(t.Context(), viewer.ID, f.acc.ID); a.Role != models.RoleSales {
			t.Errorf("role after refusals = %q; want sales", a.Role)
		}
		// Now sales, the former viewer marks a stage.
		vb := f.members[models.RoleViewer]
		vb.get(f.path("/leads/:lead"))
		wantStatus(t, "the new sales member marks qualified", vb.post(f.path("/leads/:lead/stages"), url.Values{"stage": {"qualified"}}), http.StatusSeeOther)
	})
}

// Sales read every page editors read (DESIGN.md, "Roles"), read-only: a
// rule with its preview, a stage mapping, a CRM connection without its
// hook URL, the uploads. The forms have no buttons; editors' pages do.
func TestSalesReadSetupPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRolesFixture(t, s)
		pages := []struct {
			path    string
			buttons []string // the editors' controls, absent for sales
		}{
			{"/rules/:rule", []string{"save-rule", "delete-form", "add-condition"}},
			{"/stages/mappings/:mapping", []string{"save-mapping", "delete-mapping-form", "add-condition"}},
			{"/stages/crm/:connection", []string{"edit-crm", "crm-hook"}},
			{"/stages/uploads", []string{"stage-upload-form"}},
			{"/stages/uploads/:upload", []string{"upload-apply-form", "mapping-submit"}},
			{"/stages", []string{"crm-add", "add-sequence-form"}},
		}
		for _, pg := range pages {
			sales := f.members[models.RoleSales].get(f.path(pg.path))
			wantStatus(t, "sales "+pg.path, sales, http.StatusOK)
			editor := f.members[models.RoleEditor].get(f.path(pg.path))
			wantStatus(t, "editor "+pg.path, editor, http.StatusOK)
			for _, id := range pg.buttons {
				if sales.has(id) {
					t.Errorf("sales %s shows %s", pg.path, id)
				}
				if !editor.has(id) {
					t.Errorf("editor %s lacks %s", pg.path, id)
				}
			}
			if strings.Contains(sales.body, f.conn.Token) {
				t.Errorf("sales %s shows the CRM connection's hook token", pg.path)
			}
		}
		rule := f.members[models.RoleSales].get(f.path("/rules/:rule"))
		if !rule.has("read-only") || rule.doc.Find(`[data-testid="rule-form"] fieldset[disabled]`).Length() == 0 {
			t.Error("the sales rule page is not read-only")
		}
		if !rule.has("rule-versions") {
			t.Error("the sales rule page lacks the rule's history")
		}
		if got := rule.doc.Find(`[data-testid="rule-form"]`).AttrOr("hx-get", ""); got != f.path("/rules/:rule/preview") {
			t.Errorf("the sales rule form previews from %q; want the saved rule's preview", got)
		}
		// The saved rule's preview counts the lead it matches.
		preview := f.members[models.RoleSales].get(f.path("/rules/:rule/preview"))
		wantStatus(t, "sales preview", preview, http.StatusOK)
		if preview.text("preview-matched") != "1" || preview.text("preview-total") != "1" {
			t.Errorf("sales preview = %s; want 1 of 1 matched", preview.doc.Text())
		}
		upload := f.members[models.RoleSales].get(f.path("/stages/uploads/:upload"))
		if !upload.has("upload-waits-editor") {
			t.Error("the sales upload page does not say an editor records it")
		}
		if upload.doc.Find(`[data-testid="mapping-form"] select:not([disabled])`).Length() != 0 {
			t.Error("the sales upload page's column choices are not disabled")
		}
		// Another account's rule or connection is a 404 for sales too.
		other, _ := f.a.ingestAccount("other", "US")
		seller, err := s.UserByEmail(t.Context(), "sales@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetMember(t.Context(), other.ID, seller.ID, models.RoleSales); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/rules/:rule", "/rules/:rule/preview", "/stages/mappings/:mapping", "/stages/crm/:connection", "/stages/uploads/:upload"} {
			p = strings.Replace(f.path(p), views.AccountURL(f.acc.ID, ""), views.AccountURL(other.ID, ""), 1)
			wantStatus(t, "another account's "+p, f.members[models.RoleSales].get(p), http.StatusNotFound)
		}
	})
}
