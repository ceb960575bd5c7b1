package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// An editor makes a site key for a website on the Site snippet section,
// gets its snippet, allows and removes origins; bad input answers inline
// and keeps what was typed; another account's key is a 404; the snippet's
// leads of the last hour show there.
func TestSiteSection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		page := views.SettingsURL(f.acc.ID, views.SettingsSite)
		r := f.b.get(page)
		wantStatus(t, "site section", r, http.StatusOK)
		if !r.has("site-arrivals-empty") || r.has("site-key") {
			t.Error("a new account's section is not empty")
		}

		for _, bad := range []struct{ name, origin, field string }{
			{"Main website", "javascript:alert(1)", "origin"},
			{"Main website", "https://user:pw@example.com", "origin"},
			{"", "https://www.example.com", "name"},
			{"Main website", "www.example.com\x00", "origin"},
		} {
			r := f.b.post(views.AccountURL(f.acc.ID, "/site-keys"), url.Values{"name": {bad.name}, "origin": {bad.origin}})
			if bad.origin == "www.example.com\x00" {
				if r.status != http.StatusBadRequest {
					t.Errorf("a NUL byte = %d; want 400", r.status)
				}
				continue
			}
			wantStatus(t, "bad site key "+bad.origin, r, http.StatusUnprocessableEntity)
			if !r.has("error-" + bad.field) {
				t.Errorf("%q %q: no error on %s", bad.name, bad.origin, bad.field)
			}
			if r.inputValue("origin") != bad.origin || r.inputValue("name") != bad.name {
				t.Errorf("the form lost what was typed: %q %q", r.inputValue("name"), r.inputValue("origin"))
			}
		}
		r = f.b.post(views.AccountURL(f.acc.ID, "/site-keys"), url.Values{"name": {"Main website"}, "origin": {"https://www.example.com/contact"}})
		wantStatus(t, "create site key", r, http.StatusSeeOther)
		keys, _ := s.SiteKeys(t.Context(), f.acc.ID)
		if len(keys) != 1 || len(keys[0].Origins) != 1 || keys[0].Origins[0].Origin != "https://www.example.com" {
			t.Fatalf("site keys %+v", keys)
		}
		k := keys[0]
		r = f.b.get(page)
		if snippet := r.text("site-snippet"); !strings.Contains(snippet, `/capture.js" data-key="`+k.Key+`"`) || !strings.HasPrefix(snippet, `<script src="http`) {
			t.Errorf("snippet %q", snippet)
		}

		origins := views.AccountURL(f.acc.ID, "/site-keys/"+itoa(k.ID)+"/origins")
		wantStatus(t, "allow an origin", f.b.post(origins, url.Values{"origin": {"https://example.com"}}), http.StatusSeeOther)
		r = f.b.post(origins, url.Values{"origin": {"HTTPS://EXAMPLE.COM:443/"}})
		wantStatus(t, "the same origin again", r, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text("error-origin"), "allowed already") {
			t.Errorf("error %q", r.text("error-origin"))
		}
		wantStatus(t, "remove an origin", f.b.post(origins+"/remove", url.Values{"origin": {"https://example.com"}}), http.StatusSeeOther)
		wantStatus(t, "remove it again", f.b.post(origins+"/remove", url.Values{"origin": {"https://example.com"}}), http.StatusNotFound)

		// Another account's key is not found from this account's URLs.
		other, _ := f.a.ingestAccount("other", "US")
		theirs := siteKey(t, s, other, "https://other.example")
		for _, p := range []string{"/origins", "/origins/remove", "/revoke"} {
			r := f.b.post(views.AccountURL(f.acc.ID, "/site-keys/"+itoa(theirs.ID)+p), url.Values{"origin": {"https://other.example"}})
			wantStatus(t, "another account's key "+p, r, http.StatusNotFound)
		}
		if got, _ := s.SiteKey(t.Context(), other.ID, theirs.ID); got.RevokedAt != nil || len(got.Origins) != 1 {
			t.Errorf("their key was changed: %+v", got)
		}

		// The snippet's leads show, the API's do not.
		f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, "https://www.example.com", "198.51.100.7",
			`{"external_id":"ls_00000000000000000000000000000001","email":"jane@example.com","partial":true}`)
		f.a.postLead(f.key, `{"external_id":"crm-1","email":"api@example.com"}`)
		r = f.b.get(page + "/arrivals")
		if got := r.text("site-arrival"); !strings.Contains(got, "jane@example.com") || !strings.Contains(got, "partial") || strings.Contains(r.body, "api@example.com") {
			t.Errorf("arrivals %q", got)
		}
		if seen := f.b.get(page).text("site-origin-seen"); seen == "" || seen == "never" {
			t.Errorf("the origin's last lead: %q; want when it came", seen)
		}

		wantStatus(t, "revoke", f.b.post(views.AccountURL(f.acc.ID, "/site-keys/"+itoa(k.ID)+"/revoke"), nil), http.StatusSeeOther)
		if r := f.b.get(page); r.has("site-snippet") || r.has("site-origin-form") {
			t.Error("a revoked key still shows its snippet or its form")
		}
	})
}

// The section is an editor's: sales and viewers are refused.
func TestSiteSectionRoles(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRolesFixture(t, s)
	for _, role := range []models.Role{models.RoleSales, models.RoleViewer} {
		b := f.members[role]
		if r := b.get(views.SettingsURL(f.acc.ID, views.SettingsSite)); r.status != http.StatusForbidden {
			t.Errorf("%s: site section = %d; want 403", role, r.status)
		}
		if r := b.post(views.AccountURL(f.acc.ID, "/site-keys"), url.Values{"name": {"x"}, "origin": {"https://x.example"}}); r.status != http.StatusForbidden {
			t.Errorf("%s: create site key = %d; want 403", role, r.status)
		}
	}
	if keys, _ := s.SiteKeys(t.Context(), f.acc.ID); len(keys) != 0 {
		t.Errorf("%d site keys made by refused members", len(keys))
	}
}
