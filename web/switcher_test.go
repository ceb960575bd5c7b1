package web_test

import (
	"net/http"
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
			r.doc.Find(`[data-testid="switch-account"]`).Each(func(_ int, l *goquery.Selection) {
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
