package web_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/web"
)

// hubspotDeal is a HubSpot v3 batch of one deal stage change.
var hubspotDeal = []byte(`[{"eventId":1,"subscriptionType":"deal.propertyChange","objectId":42,"propertyName":"dealstage","propertyValue":"closedwon","occurredAt":1764590400000}]`)

// postHubSpotSignedFor posts a HubSpot delivery to c's hook that HubSpot
// signed (v3) for the URL base + the hook's path: behind a proxy the URL
// HubSpot called is not the one the server sees.
func (a *app) postHubSpotSignedFor(base string, c models.CRMConnection, secret string) hookReply {
	a.t.Helper()
	path := "/hooks/hubspot/" + c.Token
	ts := strconv.FormatInt(a.clock().UnixMilli(), 10)
	sig := crm.SignHubSpotV3(secret, http.MethodPost, base+path, hubspotDeal, ts)
	return a.postHook(path, hubspotDeal, "X-HubSpot-Signature-v3", sig, "X-HubSpot-Request-Timestamp", ts)
}

// TestServerSettingsPublicURL: an administrator sets the public address on
// Server settings; a bad one is refused with what to change and nothing
// saved; hook URLs are then absolute with it, on the connection page and
// its form, and HubSpot's signatures are checked against it. Only
// administrators reach the page.
func TestServerSettingsPublicURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		admin := a.user("admin@example.com", true)
		owner := a.user("owner@example.com", false)
		acme := a.account("acme", owner)
		if err := s.SetMember(t.Context(), acme.ID, admin.ID, models.RoleEditor); err != nil {
			t.Fatal(err)
		}
		const secret = "hs-client-secret-0123456789"
		conn := a.connection(acme, crm.HubSpot, "Sales", secret, hubspotToken)
		saved := func() string {
			t.Helper()
			set, err := s.InstanceSettings(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return set.PublicURL
		}

		// Not an administrator: refused, nothing saved.
		ob := a.browser()
		ob.login("owner@example.com")
		if r := ob.get("/admin/settings"); r.status != http.StatusForbidden {
			t.Errorf("an owner's GET /admin/settings = %d; want 403", r.status)
		}
		if r := ob.post("/admin/settings", url.Values{"public_url": {"https://evil.example.com"}}); r.status != http.StatusForbidden || saved() != "" {
			t.Errorf("an owner's POST /admin/settings = %d, saved %q; want 403 and nothing saved", r.status, saved())
		}

		// Nothing set: the connection page makes the URL with the
		// browser's address and says so; behind no proxy HubSpot signed
		// that very URL.
		page := ob.get(crmPageURL(acme, conn, ""))
		if got, want := page.text("crm-hook-url"), a.srv.URL+"/hooks/hubspot/"+conn.Token; got != want || !page.has("crm-guessed") || page.has("set-public-url") {
			t.Errorf("hook URL with nothing set = %q, guessed %v, admin link %v; want %q, guessed, no admin link for an owner",
				got, page.has("crm-guessed"), page.has("set-public-url"), want)
		}
		if r := a.postHubSpotSignedFor(a.srv.URL, conn, secret); r.status != http.StatusOK {
			t.Errorf("a delivery signed for the server's own URL = %d %s; want 200", r.status, r.raw)
		}

		b := a.browser()
		b.login("admin@example.com")
		r := b.get("/admin/settings")
		wantStatus(t, "server settings", r, http.StatusOK)
		if !r.has("public-url-unset") || r.text("public-url-here") != a.srv.URL {
			t.Errorf("server settings with nothing set: unset %v, here %q; want unset, here %q", r.has("public-url-unset"), r.text("public-url-here"), a.srv.URL)
		}
		if r := b.get(crmPageURL(acme, conn, "")); !r.has("set-public-url") {
			t.Error("an administrator's connection page has no link to set the public address")
		}

		for _, tt := range []struct{ name, in, says string }{
			{"javascript", "javascript:alert(1)", "https://"},
			{"no scheme", "leads.example.com", "https://"},
			{"ftp", "ftp://leads.example.com", "https://"},
			{"credentials", "https://ada:pw@leads.example.com", "user name or password"},
			{"a path", "https://leads.example.com/hooks", "without a path"},
			{"a query", "https://leads.example.com/?x=1", "query"},
			{"a fragment", "https://leads.example.com/#x", "fragment"},
			{"unicode host", "https://bücher.example", "ASCII"},
			{"right-to-left override", "https://leads.example.com\u202e", "ASCII"},
			{"not UTF-8", "https://leads.example.com\xff", "ASCII"},
			{"huge", "https://" + strings.Repeat("a", 100_000) + ".com", "too long"},
		} {
			r := b.post("/admin/settings", url.Values{"public_url": {tt.in}})
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-public_url"), tt.says) {
				t.Errorf("%s: POST = %d, error %q; want 422 saying %q", tt.name, r.status, r.text("error-public_url"), tt.says)
			}
			if len(r.body) > 50_000 {
				t.Errorf("%s: the answer is %d bytes; want the huge value not shown back", tt.name, len(r.body))
			}
			if got := saved(); got != "" {
				t.Fatalf("%s: saved %q; want nothing", tt.name, got)
			}
		}
		if r := b.post("/admin/settings", url.Values{"public_url": {"https://leads.example.com\x00"}}); r.status != http.StatusBadRequest || saved() != "" {
			t.Errorf("a NUL byte: POST = %d, saved %q; want 400 and nothing saved", r.status, saved())
		}

		r = b.post("/admin/settings", url.Values{"public_url": {"  HTTPS://Leads.Example.com/ "}})
		if r.status != http.StatusSeeOther || saved() != "https://leads.example.com" {
			t.Fatalf("a good address: POST = %d, saved %q; want 303, https://leads.example.com", r.status, saved())
		}
		if r := b.get("/admin/settings"); r.has("public-url-unset") || r.inputValue("public_url") != "https://leads.example.com" {
			t.Errorf("after saving: unset %v, field %q", r.has("public-url-unset"), r.inputValue("public_url"))
		}

		// The hook URL is absolute with it everywhere, and HubSpot's
		// signature is checked against it: behind a proxy, HubSpot signed
		// the public URL, not the one the server sees.
		page = ob.get(crmPageURL(acme, conn, ""))
		if got, want := page.text("crm-hook-url"), "https://leads.example.com/hooks/hubspot/"+conn.Token; got != want || page.has("crm-guessed") {
			t.Errorf("hook URL = %q, guessed %v; want %q, not guessed", got, page.has("crm-guessed"), want)
		}
		if got, want := ob.get(crmPageURL(acme, conn, "/edit")).text("crm-form-hook-url"), "https://leads.example.com/hooks/hubspot/"+conn.Token; got != want {
			t.Errorf("edit form's hook URL = %q; want %q", got, want)
		}
		if got := ob.get(stagesURL(acme, "/crm/new?kind=pipedrive")).text("crm-url-start"); got != "https://leads.example.com/hooks/pipedrive/…" {
			t.Errorf("new form's URL start = %q; want the public address's", got)
		}
		if r := a.postHubSpotSignedFor("https://leads.example.com", conn, secret); r.status != http.StatusOK {
			t.Errorf("a delivery signed for the public URL = %d %s; want 200", r.status, r.raw)
		}
		if r := a.postHubSpotSignedFor(a.srv.URL, conn, secret); r.status != http.StatusUnauthorized {
			t.Errorf("a delivery signed for the proxy's inner URL = %d; want 401", r.status)
		}

		// Cleared: back to the browser's address.
		if r := b.post("/admin/settings", url.Values{"public_url": {""}}); r.status != http.StatusSeeOther || saved() != "" {
			t.Errorf("clearing: POST = %d, saved %q", r.status, saved())
		}
	})
}

// TestPublicURLEnvWins: LEADSIGNAL_PUBLIC_URL, when set, makes the hook
// URLs whatever was saved, and Server settings says so.
func TestPublicURLEnvWins(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.srv.Config.Handler = web.New(web.Options{
			Store: s, Log: testLogger(), Now: a.clock, Box: a.box, Sender: &capi.Client{},
			SessionHashKey: bytes.Repeat([]byte{1}, 32), SessionBlockKey: bytes.Repeat([]byte{2}, 32),
			CRM: web.CRMOptions{HubSpotAPIURL: a.hubspot.URL(), PipedriveAPIURL: a.pipedrive.URL(), PublicURL: "https://env.example.com"},
		})
		admin := a.user("admin@example.com", true)
		acme := a.account("acme", admin)
		conn := a.connection(acme, crm.HubSpot, "Sales", "hs-client-secret-0123456789", hubspotToken)
		if err := s.SavePublicURL(t.Context(), "https://saved.example.com", admin.ID, a.clock()); err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("admin@example.com")
		r := b.get("/admin/settings")
		if r.text("public-url-env-value") != "https://env.example.com" || !strings.Contains(r.text("public-url-env"), "https://saved.example.com") {
			t.Errorf("server settings = env %q, note %q; want the env var's address in use, and the saved one named", r.text("public-url-env-value"), r.text("public-url-env"))
		}
		if got, want := b.get(crmPageURL(acme, conn, "")).text("crm-hook-url"), "https://env.example.com/hooks/hubspot/"+conn.Token; got != want {
			t.Errorf("hook URL = %q; want %q", got, want)
		}
	})
}
