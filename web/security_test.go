package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// send makes a request with a raw body and headers, and nothing added:
// no CSRF token unless the test puts one in.
func (b *browser) send(method, path, contentType, body string, header http.Header) resp {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(b.t.Context(), method, b.app.srv.URL+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return b.do(req)
}

const formType = "application/x-www-form-urlencoded"

// TestCSRFTokenNotFromQuery: the token counts in the form field _csrf or
// the X-CSRF-Token header, never in the query string, where it would leak
// into logs, the Referer header and the browser's history.
func TestCSRFTokenNotFromQuery(t *testing.T) {
	t.Parallel()
	f := newRulesFixture(t, storetest.New(t))
	b := f.b
	settings := views.AccountURL(f.acc.ID, "/settings")
	b.get(settings)
	token := b.csrf
	form := url.Values{"name": {"Acme"}, "timezone": {"UTC"}, "currency": {"USD"}}
	hacked := url.Values{"name": {"Hacked"}, "timezone": {"UTC"}, "currency": {"USD"}}
	q := "?_csrf=" + url.QueryEscape(token)

	wantStatus(t, "token only in the query", b.send(http.MethodPost, settings+q, formType, hacked.Encode(), nil), http.StatusForbidden)
	wantStatus(t, "token only in the query, htmx", b.send(http.MethodPost, settings+q, formType, hacked.Encode(),
		http.Header{"Hx-Request": {"true"}}), http.StatusForbidden)
	wantStatus(t, "token in the query, an empty form field", b.send(http.MethodPost, settings+q+"&_csrf=", formType,
		hacked.Encode()+"&_csrf=", nil), http.StatusForbidden)
	wantStatus(t, "token only in the query, no body", b.send(http.MethodPost, settings+q, "", "", nil), http.StatusForbidden)

	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("name", "Hacked")
	_ = w.Close()
	wantStatus(t, "token only in the query, multipart", b.send(http.MethodPost, settings+q, w.FormDataContentType(), mp.String(), nil), http.StatusForbidden)

	if got, err := f.a.store.Account(t.Context(), f.acc.ID); err != nil || got.Name != "Acme" {
		t.Errorf("account name = %q, %v after refused posts; want Acme", got.Name, err)
	}

	// The form field and the header are the two ways in.
	withField := url.Values{"_csrf": {token}}
	for k, v := range form {
		withField[k] = v
	}
	if r := b.send(http.MethodPost, settings, formType, withField.Encode(), nil); r.status >= 400 {
		t.Errorf("token in the form field = %d; want it accepted\n%s", r.status, r.body)
	}
	if r := b.send(http.MethodPost, settings, formType, form.Encode(), http.Header{"X-Csrf-Token": {token}, "Hx-Request": {"true"}}); r.status >= 400 {
		t.Errorf("token in the header = %d; want it accepted\n%s", r.status, r.body)
	}
	mp.Reset()
	w = multipart.NewWriter(&mp)
	_ = w.WriteField("_csrf", token)
	for k, v := range form {
		_ = w.WriteField(k, v[0])
	}
	_ = w.Close()
	if r := b.send(http.MethodPost, settings, w.FormDataContentType(), mp.String(), nil); r.status >= 400 {
		t.Errorf("token in a multipart form field = %d; want it accepted\n%s", r.status, r.body)
	}

	// The login form, before any session: the same rule.
	anon := f.a.browser()
	anon.get("/login")
	login := url.Values{"email": {"acme-owner@example.com"}, "password": {"password123"}}
	r := anon.send(http.MethodPost, "/login?_csrf="+url.QueryEscape(anon.csrf), formType, login.Encode(), nil)
	wantStatus(t, "login with the token only in the query", r, http.StatusForbidden)
	if r := anon.post("/login", login); r.status != http.StatusSeeOther {
		t.Errorf("login with the token in the form = %d; want 303", r.status)
	}
}

// TestHTMXSendsTheCSRFHeader: every page tells htmx to send the session's
// token in the X-CSRF-Token header, so an htmx request made from any
// element (not only a form holding _csrf) passes the check.
func TestHTMXSendsTheCSRFHeader(t *testing.T) {
	t.Parallel()
	f := newRulesFixture(t, storetest.New(t))
	for _, path := range []string{"/accounts", views.AccountURL(f.acc.ID, "/rules"), views.AccountURL(f.acc.ID, "/settings")} {
		r := f.b.get(path)
		wantStatus(t, path, r, http.StatusOK)
		raw, ok := r.doc.Find("body").Attr("hx-headers")
		if !ok {
			t.Fatalf("%s: <body> has no hx-headers", path)
		}
		var h map[string]string
		if err := json.Unmarshal([]byte(raw), &h); err != nil {
			t.Fatalf("%s: hx-headers %q is not JSON: %v", path, raw, err)
		}
		if h["X-CSRF-Token"] == "" || h["X-CSRF-Token"] != f.b.csrf {
			t.Errorf("%s: hx-headers X-CSRF-Token = %q; want the form's token %q", path, h["X-CSRF-Token"], f.b.csrf)
		}
	}
}

// cspDirectives parses a Content-Security-Policy header.
func cspDirectives(h string) map[string]string {
	out := map[string]string{}
	for d := range strings.SplitSeq(h, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if name != "" {
			out[name] = strings.TrimSpace(value)
		}
	}
	return out
}

// TestContentSecurityPolicy: every page forbids a <base> element and form
// posts to another origin, besides loading only our own scripts and
// refusing to be framed; and no page has a form that posts elsewhere.
func TestContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	f := newRulesFixture(t, storetest.New(t))
	lead := f.a.postLead(f.key, ruleLead(1, "jane@example.com", "Austin", "5000", f.a.clock().Format("2006-01-02T15:04:05Z"), nil))
	want := map[string]string{
		"default-src":     "'self'",
		"base-uri":        "'none'",
		"form-action":     "'self'",
		"frame-ancestors": "'none'",
	}
	pages := []string{"/accounts", "/password", "/no-such-page"}
	for _, p := range []string{"", "/leads", "/leads/" + itoa(lead.LeadID), "/events", "/datasets", "/datasets/" + itoa(f.d.ID),
		"/datasets/new", "/rules", "/rules/new", "/settings"} {
		pages = append(pages, views.AccountURL(f.acc.ID, p))
	}
	anon := f.a.browser()
	check := func(b *browser, path string) {
		t.Helper()
		r := b.get(path)
		if r.status >= 500 {
			t.Fatalf("%s = %d", path, r.status)
		}
		got := cspDirectives(r.header.Get("Content-Security-Policy"))
		for d, v := range want {
			if got[d] != v {
				t.Errorf("%s: CSP %s = %q; want %q (header %q)", path, d, got[d], v, r.header.Get("Content-Security-Policy"))
			}
		}
		r.doc.Find("form[action], [formaction]").Each(func(_ int, s *goquery.Selection) {
			action := s.AttrOr("action", s.AttrOr("formaction", ""))
			u, err := url.Parse(action)
			if err != nil || !strings.HasPrefix(action, "/") || strings.HasPrefix(action, "//") || u.Host != "" {
				t.Errorf("%s: a form posts to %q; want a path on this site", path, action)
			}
		})
	}
	check(anon, "/login")
	check(anon, "/setup")
	for _, p := range pages {
		check(f.b, p)
	}
}

// TestLoginRedirectResolvesHere: whatever the next parameter holds, and
// wherever it comes from (the form, or the query of the form's post), the
// address the browser goes to after login is on this site.
func TestLoginRedirectResolvesHere(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	base, _ := url.Parse(a.srv.URL)
	onSite := func(what, loc string) {
		t.Helper()
		// A browser reads a backslash as a slash and drops tabs and
		// newlines before it resolves the address.
		clean := strings.NewReplacer("\\", "/", "\t", "", "\n", "", "\r", "").Replace(loc)
		u, err := base.Parse(clean)
		if err != nil || u.Scheme != base.Scheme || u.Host != base.Host {
			t.Errorf("%s: redirects to %q; want a path on this site", what, loc)
		}
	}
	for _, next := range []string{
		"//evil.example",
		"https://evil.example",
		"/\\evil.example",
		"javascript:alert(document.cookie)",
		"java\tscript:alert(1)",
		" javascript:alert(1)",
		"/.//evil.example",
		"/..//evil.example",
		"/%2e%2e//evil.example",
		"/%2E%2E/%2F/evil.example",
		"/./%5C/evil.example",
		"%2F%2Fevil.example",
		"http:/evil.example",
		"https:/\\evil.example",
		"/\u00a0/evil.example",
		"/\ufeff/evil.example",
		"\x01//evil.example",
	} {
		anon := a.browser()
		anon.get("/login?next=" + url.QueryEscape(next))
		r := anon.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password123"}, "next": {next}})
		if r.status != http.StatusSeeOther {
			t.Errorf("login with next=%q = %d; want 303", next, r.status)
			continue
		}
		onSite(fmt.Sprintf("login with next=%q", next), r.location())

		// The form's post with next in its query and not in its body.
		anon = a.browser()
		anon.get("/login")
		r = anon.post("/login?next="+url.QueryEscape(next), url.Values{"email": {"ada@example.com"}, "password": {"password123"}})
		onSite(fmt.Sprintf("login posted to /login?next=%q", next), r.location())

		// An already logged-in visitor sent to the login page.
		onSite(fmt.Sprintf("logged in, /login?next=%q", next), anon.get("/login?next="+url.QueryEscape(next)).location())
	}
}

// TestAnonymousRedirectIsBounded: a visitor sent to log in comes back to
// the page asked for, unless its address is too long or not a plain path:
// the login link never carries what the login would refuse.
func TestAnonymousRedirectIsBounded(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	b := a.browser()
	long := "/accounts/" + strings.Repeat("9", 40_000)
	for _, tt := range []struct{ path, want string }{
		{"/accounts", "/login?next=%2Faccounts"},
		{"/accounts/1/leads?q=a%20b", "/login?next=" + url.QueryEscape("/accounts/1/leads?q=a%20b")},
		{long, "/login"},
		{"/accounts/1/leads?q=" + strings.Repeat("x", 40_000), "/login"},
	} {
		r := b.get(tt.path)
		if r.status != http.StatusSeeOther || r.location() != tt.want {
			t.Errorf("anonymous GET %.40s… = %d %.80q; want 303 %q", tt.path, r.status, r.location(), tt.want)
		}
	}
	r := b.getWith(long, http.Header{"Hx-Request": {"true"}})
	if r.status != http.StatusUnauthorized || r.header.Get("HX-Redirect") != "/login" {
		t.Errorf("anonymous htmx GET of a long path = %d, HX-Redirect %q; want 401 /login", r.status, r.header.Get("HX-Redirect"))
	}
}

// TestHostileIDsInURLs: an id that is a NUL, not a number, out of range or
// 40,000 characters long is a plain 404 on every route that takes one, on
// both databases, and the page does not echo it.
func TestHostileIDsInURLs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		admin := f.a.user("root@example.com", true)
		ab := f.a.browser()
		ab.login(admin.Email)
		lead := f.a.postLead(f.key, ruleLead(1, "jane@example.com", "Austin", "5000", f.a.clock().Format("2006-01-02T15:04:05Z"), nil))
		huge := strings.Repeat("9", 40_000)
		hostile := []string{"%00", "1%00", "%001", "1%2500", "abc", "-1", "99999999999999999999", huge, strings.Repeat("a", 40_000), "1e3", "0x1"}
		acc := itoa(f.acc.ID)
		routes := []struct{ method, path string }{
			{http.MethodGet, "/accounts/{id}"},
			{http.MethodGet, "/accounts/{id}/leads"},
			{http.MethodGet, "/accounts/" + acc + "/leads/{id}"},
			{http.MethodPost, "/accounts/" + acc + "/leads/{id}/stages"},
			{http.MethodPost, "/accounts/" + acc + "/leads/" + itoa(lead.LeadID) + "/rules/{id}/send"},
			{http.MethodGet, "/accounts/" + acc + "/events/{id}"},
			{http.MethodPost, "/accounts/" + acc + "/events/{id}/retry"},
			{http.MethodGet, "/accounts/" + acc + "/datasets/{id}"},
			{http.MethodPost, "/accounts/" + acc + "/datasets/{id}/probe"},
			{http.MethodGet, "/accounts/" + acc + "/rules/{id}"},
			{http.MethodPost, "/accounts/" + acc + "/rules/{id}/move"},
			{http.MethodPost, "/accounts/" + acc + "/members/{id}/role"},
			{http.MethodPost, "/accounts/" + acc + "/keys/{id}/revoke"},
			{http.MethodPost, "/admin/users/{id}/remove"},
		}
		for _, rt := range routes {
			b := f.b
			if strings.HasPrefix(rt.path, "/admin/") {
				b = ab
			}
			for _, id := range hostile {
				path := strings.Replace(rt.path, "{id}", id, 1)
				var r resp
				if rt.method == http.MethodGet {
					r = b.get(path)
				} else {
					r = b.post(path, url.Values{"stage": {"won"}, "role": {"viewer"}, "direction": {"up"}})
				}
				if r.status != http.StatusNotFound && r.status != http.StatusBadRequest {
					t.Errorf("%s %s with id %.12q… = %d; want 404 (or 400)", rt.method, rt.path, id, r.status)
				}
				if len(id) > 100 && strings.Contains(r.body, id[:100]) {
					t.Errorf("%s %s: the answer echoes the 40,000-character id", rt.method, rt.path)
				}
			}
		}
		// Nothing was changed by the refused posts, and the session lives.
		wantLoggedIn(t, "after hostile ids", f.b)
		wantLoggedIn(t, "the admin after hostile ids", ab)
	})
}

// TestLogoutIsServerSide: logging out deletes the session where it is
// kept; the cookie from before, replayed, opens nothing and changes
// nothing, and the logout itself cannot be forced on a user.
func TestLogoutIsServerSide(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acc := a.account("acme", ada)
		settings := views.AccountURL(acc.ID, "/settings")
		b := a.browser()
		b.login(ada.Email)

		// A link or an image cannot log anyone out, nor can a post without
		// the token.
		if r := b.get("/logout"); r.status < 400 {
			t.Errorf("GET /logout = %d; want it refused", r.status)
		}
		wantStatus(t, "logout without the token", b.post("/logout", url.Values{"_csrf": {""}}), http.StatusForbidden)
		wantStatus(t, "logout with the token in the query", b.send(http.MethodPost, "/logout?_csrf="+url.QueryEscape(b.csrf), formType, "", nil), http.StatusForbidden)
		wantLoggedIn(t, "after refused logouts", b)

		b.get(settings)
		old := b.steal()
		r := b.postWith("/logout", nil, http.Header{"Hx-Request": {"true"}})
		if r.header.Get("HX-Redirect") != "/login" {
			t.Errorf("htmx logout = %d, HX-Redirect %q; want /login", r.status, r.header.Get("HX-Redirect"))
		}
		if n := sessionCount(t, a, ada); n != 0 {
			t.Errorf("ada has %d sessions after logout; want 0", n)
		}

		// The old cookie, replayed, with the token it knew.
		wantLoggedOut(t, "the old cookie", old)
		if r := old.getWith(settings, http.Header{"Hx-Request": {"true"}}); r.status != http.StatusUnauthorized || r.header.Get("HX-Redirect") != "/login" {
			t.Errorf("htmx GET with the old cookie = %d, HX-Redirect %q; want 401 /login", r.status, r.header.Get("HX-Redirect"))
		}
		for _, p := range []string{settings, "/logout/everywhere", "/password", "/accounts"} {
			r := old.postWith(p, url.Values{"name": {"Hacked"}, "timezone": {"UTC"}, "currency": {"USD"}, "current": {"password123"},
				"password": {"hacked-password-1"}, "confirm": {"hacked-password-1"}}, http.Header{"X-Csrf-Token": {old.csrf}})
			if r.status < 300 || r.status == http.StatusSeeOther && !strings.HasPrefix(r.location(), "/login") {
				t.Errorf("POST %s with the old cookie = %d %q; want refused", p, r.status, r.location())
			}
		}
		if got, _ := s.Account(t.Context(), acc.ID); got.Name != "Acme" {
			t.Errorf("account name = %q after replays; want Acme", got.Name)
		}

		// Logging in again makes a new session; the old cookie stays dead.
		b.login(ada.Email)
		wantLoggedIn(t, "after logging in again", b)
		wantLoggedOut(t, "the old cookie after a new login", old)
		if n := sessionCount(t, a, ada); n != 1 {
			t.Errorf("ada has %d sessions; want 1", n)
		}
	})
}
