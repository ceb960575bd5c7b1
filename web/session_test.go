package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/web"
)

// steal returns a second browser that carries a copy of b's cookies, as an
// attacker who copied them would.
func (b *browser) steal() *browser {
	b.t.Helper()
	u, _ := url.Parse(b.app.srv.URL)
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, b.c.Jar.Cookies(u))
	thief := &browser{t: b.t, app: b.app, csrf: b.csrf, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	return thief
}

// wantLoggedOut fails unless b's session no longer opens a page.
func wantLoggedOut(t *testing.T, what string, b *browser) {
	t.Helper()
	r := b.get("/accounts")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/login") {
		t.Errorf("%s: /accounts = %d %q; want a redirect to the login page", what, r.status, r.location())
	}
}

func wantLoggedIn(t *testing.T, what string, b *browser) {
	t.Helper()
	if r := b.get("/accounts"); r.status != http.StatusOK {
		t.Errorf("%s: /accounts = %d %q; want 200", what, r.status, r.location())
	}
}

func sessionCount(t *testing.T, a *app, u models.User) int64 {
	t.Helper()
	n, err := a.store.CountUserSessions(t.Context(), u.ID, a.clock(), store.SessionLimits{Idle: 12 * time.Hour, Absolute: 14 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLogoutEndsACopiedSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		lead := a.postLead(key, `{"email": "jane@example.com"}`)
		owner, err := s.UserByEmail(t.Context(), "acme-owner@example.com")
		if err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login(owner.Email)

		u, _ := url.Parse(a.srv.URL)
		for _, c := range b.c.Jar.Cookies(u) {
			// The cookie carries a signed id, not the session: no user id,
			// no CSRF token, however long the session lives.
			if c.Name == "leadsignal" && len(c.Value) > 200 {
				t.Errorf("session cookie is %d bytes; want only a signed id", len(c.Value))
			}
		}
		thief := b.steal()
		wantLoggedIn(t, "copied cookie before logout", thief)

		wantStatus(t, "logout", b.post("/logout", nil), http.StatusSeeOther)
		wantLoggedOut(t, "the logged-out browser", b)
		wantLoggedOut(t, "the copied cookie after logout", thief)

		// Nor can the copy change data with the token it saw.
		lp := fmt.Sprintf("/accounts/%d/leads/%d/stages", acc.ID, lead.LeadID)
		r := thief.post(lp, url.Values{"stage": {"won"}})
		if r.status == http.StatusOK || r.status == http.StatusSeeOther && !strings.HasPrefix(r.location(), "/login") {
			t.Errorf("stage change with a copied cookie after logout = %d %q; want refused", r.status, r.location())
		}
		l, err := s.Lead(t.Context(), acc.ID, lead.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		if l.Stage != "" {
			t.Errorf("lead stage = %q after a replayed request; want none", l.Stage)
		}
	})
}

func TestLoginRenewsTheSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("ada@example.com", false)
		b := a.browser()
		b.get("/login")
		planted := b.steal() // a session from before the login, e.g. planted
		b.login("ada@example.com")
		wantLoggedIn(t, "after login", b)
		wantLoggedOut(t, "the pre-login session", planted)

		// Logging in again on a logged-in session gives it a new id: the
		// copy of the old one stops working.
		before := b.steal()
		b.login("ada@example.com")
		wantLoggedIn(t, "after the second login", b)
		wantLoggedOut(t, "the session from before the second login", before)
	})
}

func TestLogoutEverywhere(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		bob := a.user("bob@example.com", false)
		laptop, phone, bobs := a.browser(), a.browser(), a.browser()
		laptop.login(ada.Email)
		phone.login(ada.Email)
		bobs.login(bob.Email)

		if n := sessionCount(t, a, ada); n != 2 {
			t.Errorf("ada has %d sessions; want 2", n)
		}
		r := laptop.get("/password")
		wantStatus(t, "password page", r, http.StatusOK)
		if got := r.text("session-count"); !strings.Contains(got, "2 sessions") {
			t.Errorf("password page says %q; want 2 sessions open", got)
		}
		if !r.has("logout-everywhere") {
			t.Fatal("the password page has no 'log out everywhere' button")
		}
		if !strings.Contains(r.body, "12 hours") || !strings.Contains(r.body, "14 days") {
			t.Error("the password page does not state the session limits")
		}
		r = laptop.post("/logout/everywhere", nil)
		if r.status != http.StatusSeeOther || r.location() != "/login" {
			t.Fatalf("logout everywhere = %d %q; want 303 /login", r.status, r.location())
		}
		if got := laptop.get("/login").text("flash"); !strings.Contains(got, "every device") {
			t.Errorf("login page after logout everywhere says %q; want it to say so", got)
		}
		wantLoggedOut(t, "the laptop", laptop)
		wantLoggedOut(t, "the phone", phone)
		wantLoggedIn(t, "another user", bobs)
		if n := sessionCount(t, a, ada); n != 0 {
			t.Errorf("ada still has %d sessions", n)
		}
	})
}

func TestPasswordChangeEndsOtherSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		laptop, phone := a.browser(), a.browser()
		laptop.login(ada.Email)
		phone.login(ada.Email)
		laptop.get("/password")
		before := laptop.steal()

		r := laptop.post("/password", url.Values{"current": {"wrong-password"}, "password": {"new-password-1"}, "confirm": {"new-password-1"}})
		wantStatus(t, "wrong current password", r, http.StatusUnprocessableEntity)
		if !strings.Contains(r.body, "not your current password") {
			t.Error("a wrong current password is not named")
		}
		r = laptop.post("/password", url.Values{"current": {"password123"}, "password": {"short"}, "confirm": {"short"}})
		wantStatus(t, "short new password", r, http.StatusUnprocessableEntity)
		r = laptop.post("/password", url.Values{"current": {"password123"}, "password": {"new-password-1"}, "confirm": {"new-password-2"}})
		wantStatus(t, "mismatched new password", r, http.StatusUnprocessableEntity)
		wantLoggedIn(t, "phone after failed changes", phone)

		r = laptop.post("/password", url.Values{"current": {"password123"}, "password": {"new-password-1"}, "confirm": {"new-password-1"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("change password = %d; want 303\n%s", r.status, r.body)
		}
		wantLoggedIn(t, "the browser that changed it", laptop)
		wantLoggedOut(t, "the phone", phone)
		wantLoggedOut(t, "a copy of the session from before the change", before)

		phone.get("/login")
		if r := phone.post("/login", url.Values{"email": {ada.Email}, "password": {"password123"}}); r.status != http.StatusUnprocessableEntity {
			t.Errorf("login with the old password = %d; want 422", r.status)
		}
		if r := phone.post("/login", url.Values{"email": {ada.Email}, "password": {"new-password-1"}}); r.status != http.StatusSeeOther {
			t.Errorf("login with the new password = %d; want 303", r.status)
		}
	})
}

func TestRemovalEndsSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		root := a.user("root@example.com", true)
		ada := a.user("ada@example.com", false)
		bob := a.user("bob@example.com", false)
		acc := a.account("acme", ada)
		if err := s.SetMember(t.Context(), acc.ID, bob.ID, models.RoleEditor); err != nil {
			t.Fatal(err)
		}
		admin, adas, bobs := a.browser(), a.browser(), a.browser()
		admin.login(root.Email)
		adas.login(ada.Email)
		bobs.login(bob.Email)

		// Removed from an account: the session ends at once.
		adas.get(fmt.Sprintf("/accounts/%d/settings", acc.ID))
		r := adas.post(fmt.Sprintf("/accounts/%d/members/%d/remove", acc.ID, bob.ID), nil)
		wantStatus(t, "remove bob from acme", r, http.StatusSeeOther)
		wantLoggedOut(t, "bob after his removal from acme", bobs)
		wantLoggedIn(t, "ada", adas)

		// Removed from the instance: every session ends, and the user is gone.
		admin.get("/admin/users")
		r = admin.post(fmt.Sprintf("/admin/users/%d/remove", ada.ID), nil)
		wantStatus(t, "remove the only owner of acme", r, http.StatusSeeOther)
		if got := admin.get("/admin/users").text("flash"); !strings.Contains(got, "only owner") {
			t.Errorf("removing an account's only owner says %q; want a refusal", got)
		}
		wantLoggedIn(t, "ada, still acme's only owner", adas)

		if err := s.SetMember(t.Context(), acc.ID, root.ID, models.RoleOwner); err != nil {
			t.Fatal(err)
		}
		r = admin.post(fmt.Sprintf("/admin/users/%d/remove", ada.ID), nil)
		wantStatus(t, "remove ada", r, http.StatusSeeOther)
		wantLoggedOut(t, "ada after her removal", adas)
		if _, err := s.UserByID(t.Context(), ada.ID); err == nil {
			t.Error("ada is still a user")
		}
		if r := admin.post(fmt.Sprintf("/admin/users/%d/remove", root.ID), nil); r.status != http.StatusSeeOther {
			t.Errorf("self-removal = %d; want a redirect with a refusal", r.status)
		}
		wantLoggedIn(t, "the admin who tried to remove himself", admin)

		// Only administrators remove users.
		bobs.login(bob.Email)
		if r := bobs.post(fmt.Sprintf("/admin/users/%d/remove", root.ID), nil); r.status != http.StatusForbidden {
			t.Errorf("a non-admin removing a user = %d; want 403", r.status)
		}
	})
}

func TestSessionLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)

		idle := a.browser()
		idle.login(ada.Email)
		a.advance(11 * time.Hour)
		wantLoggedIn(t, "after 11 idle hours", idle)
		a.advance(12*time.Hour + time.Minute)
		wantLoggedOut(t, "after 12 idle hours", idle)

	})
}

func TestSessionAbsoluteLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		b := a.browser()
		b.login(ada.Email)
		// Used every 10 hours, the session lives 14 days from its login.
		for elapsed := 10 * time.Hour; elapsed < 14*24*time.Hour; elapsed += 10 * time.Hour {
			a.advance(10 * time.Hour)
			if r := b.get("/accounts"); r.status != http.StatusOK {
				t.Fatalf("after %s of use: /accounts = %d; want 200", elapsed, r.status)
			}
		}
		a.advance(10 * time.Hour)
		wantLoggedOut(t, "14 days after login", b)

		// Ended sessions are swept from the table.
		n, err := s.DeleteExpiredSessions(t.Context(), a.clock(), store.SessionLimits{Idle: 12 * time.Hour, Absolute: 14 * 24 * time.Hour})
		if err != nil || n == 0 {
			t.Errorf("DeleteExpiredSessions = %d, %v; want the ended sessions deleted", n, err)
		}
	})
}

func TestLoginRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	b := a.browser()
	b.login("ada@example.com")
	for _, tt := range []struct {
		next, want string
	}{
		{"/accounts", "/accounts"},
		{"/accounts/1/leads?q=John%20Smith&page=2", "/accounts/1/leads?q=John%20Smith&page=2"},
		{"/", "/"},
		{"", "/"},
		{"//evil.example/x", "/"},
		{"///evil.example/x", "/"},
		{"/\\evil.example", "/"},
		{"\\evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"/\t/evil.example/phish", "/"},
		{"/\n/evil.example", "/"},
		{"/\r/evil.example", "/"},
		{"/ /evil.example", "/"},
		{"/%09/evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"/%5cevil.example", "/"},
		{"/%2F/evil.example", "/"},
		{"/%2f%2fevil.example", "/"},
		{"/\u202e/evil.example", "/"},
		{"/\u3000/evil.example", "/"},
		{"https:evil.example", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"JavaScript:alert(1)", "/"},
		{"data:text/html,x", "/"},
		{"evil.example", "/"},
		{"/" + strings.Repeat("a", 5000), "/"},
	} {
		// Through the login page's query (the link a phisher sends) and
		// through the form's field.
		r := b.get("/login?next=" + url.QueryEscape(tt.next))
		if r.status != http.StatusSeeOther || r.location() != tt.want {
			t.Errorf("logged in, /login?next=%q = %d %q; want %q", tt.next, r.status, r.location(), tt.want)
		}
		anon := a.browser()
		anon.get("/login?next=" + url.QueryEscape(tt.next))
		r = anon.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password123"}, "next": {tt.next}})
		if r.status != http.StatusSeeOther || r.location() != tt.want {
			t.Errorf("login with next=%q = %d %q; want %q", tt.next, r.status, r.location(), tt.want)
		}
	}
	// A NUL is refused before any redirect is considered.
	if r := b.get("/login?next=" + url.QueryEscape("/\x00/evil.example")); r.status != http.StatusBadRequest || r.location() != "" {
		t.Errorf("next with a NUL = %d %q; want 400 and no redirect", r.status, r.location())
	}
	// The raw query the issue names: a tab between the slashes, as a
	// browser sends it.
	r := b.get("/login?next=/%09/evil.example/phish")
	if r.location() != "/" {
		t.Errorf("/login?next=/%%09/evil.example/phish redirects to %q; want /", r.location())
	}
}

// apiCall sends a request to the API and decodes its JSON error.
func (a *app) apiCall(method, path, auth, body string) (int, http.Header, apiReply) {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(a.t.Context(), method, a.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := apiReply{status: res.StatusCode, raw: string(b)}
	if method != http.MethodHead && res.StatusCode != http.StatusNoContent {
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			a.t.Errorf("%s %s: Content-Type %q; want JSON\n%s", method, path, ct, b)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			a.t.Errorf("%s %s: body is not JSON (%d): %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode, res.Header, r
}

func TestAPIAnswersAsAnAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	acc, key := a.ingestAccount("acme", "US")
	for _, tt := range []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPut, "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPatch, "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodDelete, "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodTrace, "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PROPFIND", "/api/v1/leads", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPost, "/api/v1/nope", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/api/v1/nope", http.StatusNotFound, "not_found"},
		{http.MethodPut, "/api/v2/leads", http.StatusNotFound, "not_found"},
		{http.MethodPost, "/api", http.StatusNotFound, "not_found"},
		{http.MethodDelete, "/api/", http.StatusNotFound, "not_found"},
	} {
		for _, auth := range []string{"", "Bearer " + key} {
			status, header, r := a.apiCall(tt.method, tt.path, auth, `{"email":"x@example.com"}`)
			if status != tt.status || r.Error.Code != tt.code || r.Error.Message == "" {
				t.Errorf("%s %s (auth %t) = %d %+v; want %d %s", tt.method, tt.path, auth != "", status, r.Error, tt.status, tt.code)
			}
			if tt.status == http.StatusMethodNotAllowed && header.Get("Allow") != "POST, OPTIONS" {
				t.Errorf("%s %s: Allow %q; want POST, OPTIONS", tt.method, tt.path, header.Get("Allow"))
			}
			if header.Get("Set-Cookie") != "" {
				t.Errorf("%s %s sets a cookie: %q", tt.method, tt.path, header.Get("Set-Cookie"))
			}
		}
	}
	if status, header, _ := a.apiCall(http.MethodOptions, "/api/v1/leads", "", ""); status != http.StatusNoContent || header.Get("Allow") != "POST, OPTIONS" {
		t.Errorf("OPTIONS /api/v1/leads = %d, Allow %q; want 204 with Allow", status, header.Get("Allow"))
	}
	if n := a.leadCount(acc); n != 0 {
		t.Errorf("%d leads stored by refused calls", n)
	}

	// The Bearer scheme's name is case-insensitive; other schemes are not it.
	for i, auth := range []string{"bearer " + key, "BEARER " + key, "Bearer   " + key + " ", "bEaReR " + key} {
		body := fmt.Sprintf(`{"email":"case%d@example.com"}`, i)
		if status, _, r := a.apiCall(http.MethodPost, "/api/v1/leads", auth, body); status != http.StatusCreated {
			t.Errorf("Authorization %q = %d %s; want 201", auth[:8], status, r.raw)
		}
	}
	for _, auth := range []string{"Basic " + key, key, "Bearer", "Bearer ", "Bearer" + key, "Token " + key} {
		if status, header, r := a.apiCall(http.MethodPost, "/api/v1/leads", auth, `{"email":"x@example.com"}`); status != http.StatusUnauthorized || r.Error.Code == "" || header.Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %.10q = %d %+v; want 401 with WWW-Authenticate", auth, status, r.Error)
		}
	}
}

// TestLogoutEndsTheSessionOnEveryReplica runs two servers on one database,
// as replicas behind a load balancer: a logout on one ends the session on
// the other at once.
func TestLogoutEndsTheSessionOnEveryReplica(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		other := httptest.NewServer(web.New(web.Options{
			Store: s, Log: testLogger(), Now: a.clock,
			SessionHashKey: bytes.Repeat([]byte{1}, 32), SessionBlockKey: bytes.Repeat([]byte{2}, 32),
		}))
		t.Cleanup(other.Close)

		b := a.browser()
		b.login(ada.Email)
		// The same cookie, sent to the other replica.
		u, _ := url.Parse(a.srv.URL)
		ou, _ := url.Parse(other.URL)
		b.c.Jar.SetCookies(ou, b.c.Jar.Cookies(u))
		atOther := func() int {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, other.URL+"/accounts", nil)
			res, err := b.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if got := atOther(); got != http.StatusOK {
			t.Fatalf("the other replica answers %d; want the session to work there", got)
		}
		wantStatus(t, "logout", b.post("/logout", nil), http.StatusSeeOther)
		if got := atOther(); got != http.StatusSeeOther {
			t.Errorf("the other replica answers %d after logout; want a redirect to login", got)
		}
	})
}

// TestAnonymousVisitsWriteNoSession: the login page and unknown paths hand
// out a CSRF token without a database row; only a login makes one.
func TestAnonymousVisitsWriteNoSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		for range 20 {
			b := a.browser()
			b.get("/login")
			b.get("/no-such-page")
			b.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {"password123"}})
		}
		// Every session in the table, live or not, is swept 100 years on.
		forever := store.SessionLimits{Idle: time.Nanosecond, Absolute: time.Nanosecond}
		if n, err := s.DeleteExpiredSessions(t.Context(), a.clock().Add(100*365*24*time.Hour), forever); err != nil || n != 0 {
			t.Errorf("anonymous visits left %d session rows (%v); want none", n, err)
		}
		a.advance(2 * time.Minute) // past the failed logins' rate limit
		b := a.browser()
		b.login(ada.Email)
		if n := sessionCount(t, a, ada); n != 1 {
			t.Errorf("a login made %d sessions; want 1", n)
		}
	})
}

// TestLeavingAnAccountKeepsYourSession: an owner who removes themselves
// from one account stays logged in, and their other sessions end.
func TestLeavingAnAccountKeepsYourSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		bob := a.user("bob@example.com", false)
		acc := a.account("acme", ada)
		if err := s.SetMember(t.Context(), acc.ID, bob.ID, models.RoleOwner); err != nil {
			t.Fatal(err)
		}
		laptop, phone := a.browser(), a.browser()
		laptop.login(ada.Email)
		phone.login(ada.Email)
		laptop.get(fmt.Sprintf("/accounts/%d/settings", acc.ID))
		r := laptop.post(fmt.Sprintf("/accounts/%d/members/%d/remove", acc.ID, ada.ID), nil)
		if r.status != http.StatusSeeOther || r.location() != "/accounts" {
			t.Fatalf("leaving acme = %d %q; want 303 /accounts", r.status, r.location())
		}
		if got := laptop.get("/accounts"); got.status != http.StatusOK || !strings.Contains(got.text("flash"), "removed") {
			t.Errorf("after leaving: /accounts = %d, flash %q; want the account list with the news", got.status, got.text("flash"))
		}
		wantLoggedOut(t, "ada's other session", phone)
	})
}
