package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// TestSwitcherKeepsTheSection: switching accounts lands on the same section
// of the other account, at its list (never on another account's record),
// or on its Overview when the user's role there cannot open the section.
func TestSwitcherKeepsTheSection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acme := a.account("acme", ada)
		editorIn := a.account("beta", a.user("owner-b@example.com", false))
		viewerIn := a.account("gamma", a.user("owner-c@example.com", false))
		for acc, role := range map[int64]models.Role{editorIn.ID: models.RoleEditor, viewerIn.ID: models.RoleViewer} {
			if err := s.SetMember(t.Context(), acc, ada.ID, role); err != nil {
				t.Fatal(err)
			}
		}
		conn := a.connection(acme, crm.HubSpot, "Sales", "", "")
		b := a.browser()
		b.login("ada@example.com")

		for _, tt := range []struct {
			page                        string
			toOwner, toEditor, toViewer string
		}{
			{"", "", "", ""},
			{"/leads", "/leads", "/leads", "/leads"},
			{"/rules", "/rules", "/rules", ""},
			{"/rules/new", "/rules", "/rules", ""},
			{"/events", "/events", "/events", ""},
			// A viewer reads the Overview and the leads only.
			{"/stages", "/stages", "/stages", ""},
			{"/stages/crm/" + itoa(conn.ID), "/stages", "/stages", ""},
			{"/datasets", "/datasets", "/datasets", ""},
			{"/settings/keys", "/settings", "/settings", ""},
		} {
			r := b.get(views.AccountURL(acme.ID, tt.page))
			wantStatus(t, tt.page, r, http.StatusOK)
			links := map[string]string{}
			switcherList(t, b, r).doc.Find(`[data-testid="switch-account"]`).Each(func(_ int, l *goquery.Selection) {
				links[l.Text()] = l.AttrOr("href", "")
			})
			want := map[string]string{
				"Acme":  views.AccountURL(acme.ID, tt.toOwner),
				"Beta":  views.AccountURL(editorIn.ID, tt.toEditor),
				"Gamma": views.AccountURL(viewerIn.ID, tt.toViewer),
			}
			if len(links) != len(want) {
				t.Errorf("switcher on %q links %v; want %v", tt.page, links, want)
			}
			for name, href := range want {
				if links[name] != href {
					t.Errorf("switcher on %q links %s to %q; want %q", tt.page, name, links[name], href)
				}
			}
		}
	})
}

// switcherList is the account switcher's list as page r loads it when the
// switcher opens: the htmx request its hx-get says.
func switcherList(t *testing.T, b *browser, r resp) resp {
	t.Helper()
	src, ok := r.doc.Find(`details.account-switcher`).Attr("hx-get")
	if !ok {
		t.Fatalf("the page has no account switcher that loads its list")
	}
	list := b.getWith(src, http.Header{"HX-Request": {"true"}})
	wantStatus(t, "switcher list "+src, list, http.StatusOK)
	return list
}

// The page draws the switcher without its list, which it loads when the
// switcher opens; until then the switcher links to all accounts. The list
// names the user's accounts only, marks the one the page shows, and is
// never the page's own: a visit to it without htmx goes to all accounts,
// and a visitor without a session is sent to log in.
func TestSwitcherLoadsItsListWhenOpened(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acme := a.account("acme", ada)
		beta := a.account("beta", ada)
		other := a.account("other", a.user("bob@example.com", false))
		b := a.browser()
		b.login("ada@example.com")

		page := b.get(views.AccountURL(beta.ID, "/leads"))
		wantStatus(t, "leads", page, http.StatusOK)
		if n := page.doc.Find(`[data-testid="switch-account"]`).Length(); n != 0 {
			t.Errorf("the page draws %d accounts in its switcher; want none until it opens", n)
		}
		if href := page.doc.Find(`[data-testid="switcher-list"] a`).AttrOr("href", ""); href != "/accounts" {
			t.Errorf("the unopened switcher links to %q; want /accounts", href)
		}
		list := switcherList(t, b, page)
		var names []string
		list.doc.Find(`[data-testid="switch-account"]`).Each(func(_ int, l *goquery.Selection) {
			names = append(names, l.Text())
			if cur := l.AttrOr("aria-current", ""); (cur == "true") != (l.Text() == "Beta") {
				t.Errorf("%s's aria-current = %q; want it on Beta alone", l.Text(), cur)
			}
		})
		if strings.Join(names, ",") != "Acme,Beta" {
			t.Errorf("switcher lists %v; want Acme, Beta", names)
		}
		if list.doc.Find(`a[href="/accounts"]`).Length() != 1 {
			t.Errorf("the list of two accounts has no link to all accounts")
		}

		// Another account's id, a made-up section and junk mark nothing
		// and link to each account's Overview.
		for _, q := range []string{"?account=" + itoa(other.ID), "?nav=javascript:alert(1)&account=x", "?account=" + strings.Repeat("9", 40000)} {
			r := b.getWith("/switcher"+q, http.Header{"HX-Request": {"true"}})
			wantStatus(t, "switcher "+q, r, http.StatusOK)
			if r.doc.Find(`[aria-current]`).Length() != 0 || strings.Contains(r.body, "javascript") {
				t.Errorf("switcher %s marks or echoes: %s", q, r.body)
			}
			if href := r.doc.Find(`[data-testid="switch-account"]`).First().AttrOr("href", ""); href != views.AccountURL(acme.ID, "") {
				t.Errorf("switcher %s links Acme to %q; want its Overview", q, href)
			}
		}
		if r := b.getWith("/switcher?nav=%00", http.Header{"HX-Request": {"true"}}); r.status != http.StatusBadRequest {
			t.Errorf("switcher with a NUL = %d; want 400, as every page answers", r.status)
		}
		if r := b.get("/switcher?nav=leads"); r.status != http.StatusSeeOther || r.location() != "/accounts" {
			t.Errorf("GET /switcher without htmx = %d %q; want 303 to /accounts", r.status, r.location())
		}
		anon := a.browser()
		if r := anon.getWith("/switcher", http.Header{"HX-Request": {"true"}}); r.status != http.StatusUnauthorized || r.header.Get("HX-Redirect") != "/login" {
			t.Errorf("switcher without a session = %d, HX-Redirect %q; want 401 to /login", r.status, r.header.Get("HX-Redirect"))
		}
	})
}
