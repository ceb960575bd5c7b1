package web_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
	"github.com/leadsignal/leadsignal/web"
)

// settingsSections are the settings' sections: their paths and the form
// each one shows.
var settingsSections = []struct{ section, testid string }{
	{views.SettingsAccount, "settings-form"},
	{views.SettingsKeys, "key-form"},
	{views.SettingsMembers, "member-form"},
	{views.SettingsJunk, "junk-form"},
	{views.SettingsSetup, "setup-upload-form"},
	{views.SettingsSite, "site-key-form"},
}

// TestSettingsSections: each section has its own page with its own form
// and the tabs to the others, the current one marked; sales and viewers
// reach none of them, nor another account's owner.
func TestSettingsSections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		bob := a.user("bob@example.com", false)
		acc := a.account("acme", ada)
		beta := a.account("beta", bob)
		for _, u := range []struct {
			email string
			role  models.Role
		}{{"eddie@example.com", models.RoleSales}, {"vic@example.com", models.RoleViewer}} {
			m := a.user(u.email, false)
			if err := s.SetMember(t.Context(), acc.ID, m.ID, u.role); err != nil {
				t.Fatal(err)
			}
		}
		b := a.browser()
		b.login("ada@example.com")
		for _, sec := range settingsSections {
			path := views.SettingsURL(acc.ID, sec.section)
			r := b.get(path)
			wantStatus(t, "settings "+sec.section, r, http.StatusOK)
			if !r.has(sec.testid) {
				t.Errorf("%s has no %s", path, sec.testid)
			}
			for _, other := range settingsSections {
				if other.section != sec.section && r.has(other.testid) {
					t.Errorf("%s also shows %s: want one section a page", path, other.testid)
				}
			}
			tabs := r.doc.Find(`[data-testid="settings-nav"] a`)
			if tabs.Length() != len(settingsSections) {
				t.Errorf("%s has %d tabs; want %d", path, tabs.Length(), len(settingsSections))
			}
			cur := r.doc.Find(`[data-testid="settings-nav"] a[aria-current="page"]`)
			if href, _ := cur.Attr("href"); cur.Length() != 1 || href != path {
				t.Errorf("%s marks %d tabs, %q; want itself", path, cur.Length(), href)
			}
			// Another account's settings are not found, not forbidden.
			wantStatus(t, "beta's "+sec.section, b.get(views.SettingsURL(beta.ID, sec.section)), http.StatusNotFound)
		}
		for _, email := range []string{"eddie@example.com", "vic@example.com"} {
			m := a.browser()
			m.login(email)
			for _, sec := range settingsSections {
				wantStatus(t, email+" "+sec.section, m.get(views.SettingsURL(acc.ID, sec.section)), http.StatusForbidden)
			}
		}

		// Inviting into another account is not found, and adds nobody.
		r := b.post(views.AccountURL(beta.ID, "/members"), url.Values{"email": {"mallory@example.com"}, "role": {"owner"}})
		wantStatus(t, "invite into beta", r, http.StatusNotFound)
		if _, err := s.UserByEmail(t.Context(), "mallory@example.com"); err == nil {
			t.Error("an invite into another account created the user")
		}
		if ms, _ := s.Members(t.Context(), beta.ID); len(ms) != 1 {
			t.Errorf("beta has %d members; want bob alone", len(ms))
		}

		// A new key's secret comes with a button that copies it.
		b.post(views.AccountURL(acc.ID, "/keys"), url.Values{"key_name": {"Website"}})
		r = b.get(views.SettingsURL(acc.ID, views.SettingsKeys))
		target, _ := r.doc.Find(`[data-testid="new-key"] button.copy`).Attr("data-copy")
		if target == "" || r.doc.Find("#"+target).Text() != r.text("new-key-secret") || !strings.HasPrefix(r.text("new-key-secret"), "lsk_") {
			t.Errorf("copy button copies #%q; want the key's element", target)
		}
	})
}

// linkPath is the path and query of the set-password link a page shows.
func linkPath(t *testing.T, r resp) string {
	t.Helper()
	raw := r.text("new-password-link-url")
	u, err := url.Parse(raw)
	if err != nil || u.Path != "/set-password" || u.Query().Get("token") == "" {
		t.Fatalf("set-password link = %q; want /set-password?token=…\n%s", raw, r.body)
	}
	return u.RequestURI()
}

// inviteLink invites email into acc with role as b's owner, and returns the
// set-password link the members page then shows.
func inviteLink(t *testing.T, b *browser, acc models.Account, email string, role models.Role) string {
	t.Helper()
	r := b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {email}, "role": {string(role)}})
	wantStatus(t, "invite "+email, r, http.StatusSeeOther)
	return linkPath(t, b.get(views.SettingsURL(acc.ID, views.SettingsMembers)))
}

// TestInviteByEmail: an owner invites a new email in one step and is shown
// a link; the link sets the password once, logs the person in and lands
// them in the account with their role. Used, voided, expired and made-up
// links answer a page that says so.
func TestInviteByEmail(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		a.user("eve@example.com", false)
		acc := a.account("acme", ada)
		members := views.SettingsURL(acc.ID, views.SettingsMembers)
		b := a.browser()
		b.login("ada@example.com")
		b.get(members)

		r := b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {"Newbie@Example.com"}, "role": {"editor"}})
		if r.status != http.StatusSeeOther || r.location() != members {
			t.Fatalf("invite = %d %q; want 303 to %s", r.status, r.location(), members)
		}
		r = b.get(members)
		first := linkPath(t, r)
		if id, _ := r.doc.Find(`[data-testid="new-password-link"] button.copy`).Attr("data-copy"); id == "" || r.doc.Find("#"+id).Text() != r.text("new-password-link-url") {
			t.Errorf("the link's copy button copies #%q; want the link", id)
		}
		if !strings.Contains(r.text("members-table"), "newbie@example.com") || !r.has("new-link") {
			t.Errorf("members = %q; want newbie, with a New link button", r.text("members-table"))
		}
		if b.get(members).has("new-password-link") {
			t.Error("the link is shown again on reload; want once")
		}
		newbie, err := s.UserByEmail(t.Context(), "newbie@example.com")
		if err != nil || newbie.PasswordHash != "" {
			t.Fatalf("invited user = %+v, %v; want one without a password", newbie, err)
		}
		// Without a password nobody logs in as them.
		anon := a.browser()
		anon.get("/login")
		if r := anon.post("/login", url.Values{"email": {"newbie@example.com"}, "password": {""}}); r.status == http.StatusSeeOther {
			t.Fatal("an empty password logs in as the invited user")
		}

		// Invited again: a new link, and the first stops working.
		b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {"newbie@example.com"}, "role": {"editor"}})
		r = b.get(members)
		second := linkPath(t, r)
		if second == first || !strings.Contains(r.text("new-password-link"), "no longer works") {
			t.Errorf("second invite: link %q (first %q), note %q", second, first, r.text("new-password-link"))
		}
		p := a.browser()
		r = p.get(first)
		if r.status != http.StatusNotFound || !r.has("link-gone") {
			t.Errorf("the voided link = %d; want 404 and the page that says so", r.status)
		}

		// The link's form: passwords that differ are said inline.
		r = p.get(second)
		wantStatus(t, "open link", r, http.StatusOK)
		if !strings.Contains(r.text("set-password-for"), "newbie@example.com") || !strings.Contains(r.text("set-password-for"), "Acme") {
			t.Errorf("the form says %q; want the email and the account", r.text("set-password-for"))
		}
		token := strings.TrimPrefix(second, "/set-password?token=")
		r = p.post("/set-password", url.Values{"token": {token}, "password": {"short"}, "confirm": {"other"}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-password") == "" || r.text("error-confirm") == "" {
			t.Errorf("bad passwords = %d %q %q", r.status, r.text("error-password"), r.text("error-confirm"))
		}
		r = p.post("/set-password", url.Values{"token": {token}, "password": {"newbie-pass-1"}, "confirm": {"newbie-pass-1"}})
		if r.status != http.StatusSeeOther || r.location() != views.AccountURL(acc.ID, "") {
			t.Fatalf("set password = %d %q; want 303 to the account", r.status, r.location())
		}
		r = p.get(views.AccountURL(acc.ID, "/rules"))
		wantStatus(t, "the new editor opens rules", r, http.StatusOK)
		wantStatus(t, "the new editor opens settings", p.get(views.SettingsURL(acc.ID, views.SettingsMembers)), http.StatusForbidden)

		// Used: the link works once.
		q := a.browser()
		if r := q.get(second); r.status != http.StatusNotFound || !r.has("link-gone") {
			t.Errorf("a used link = %d; want 404 and the page that says so", r.status)
		}
		q.get("/login")
		r = q.post("/set-password", url.Values{"token": {token}, "password": {"stolen-pass-1"}, "confirm": {"stolen-pass-1"}})
		if r.status != http.StatusNotFound || !r.has("link-gone") {
			t.Errorf("a used link's form = %d; want 404", r.status)
		}
		if r := q.get("/set-password?token=made-up"); r.status != http.StatusNotFound || !r.has("link-gone") {
			t.Errorf("a made-up link = %d; want 404", r.status)
		}
		if r := q.post("/login", url.Values{"email": {"newbie@example.com"}, "password": {"newbie-pass-1"}}); r.status != http.StatusSeeOther {
			t.Errorf("log in with the chosen password = %d", r.status)
		}

		// Someone with a login is just added: no link.
		r = b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {"eve@example.com"}, "role": {"viewer"}})
		wantStatus(t, "invite eve", r, http.StatusSeeOther)
		r = b.get(members)
		if r.has("new-password-link") || !strings.Contains(r.text("flash"), "No link needed") {
			t.Errorf("existing user: link shown %v, flash %q", r.has("new-password-link"), r.text("flash"))
		}
		// A member with a password invited again: said inline, nothing changes.
		r = b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {"eve@example.com"}, "role": {"owner"}})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.text("error-email"), "already a member") || r.inputValue("email") != "eve@example.com" {
			t.Errorf("invite a member = %d %q %q", r.status, r.text("error-email"), r.inputValue("email"))
		}
		eve, _ := s.UserByEmail(t.Context(), "eve@example.com")
		if got, _ := s.AccountForUser(t.Context(), eve.ID, acc.ID); got.Role != models.RoleViewer {
			t.Errorf("eve is %s; want still viewer", got.Role)
		}
	})
}

// TestPasswordLinkExpires: a link older than its 7 days answers a page
// that says it expired, and sets nothing.
func TestPasswordLinkExpires(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	ada := a.user("ada@example.com", false)
	acc := a.account("acme", ada)
	b := a.browser()
	b.login("ada@example.com")
	link := inviteLink(t, b, acc, "late@example.com", models.RoleViewer)

	a.advance(store.PasswordLinkTTL - time.Minute)
	p := a.browser()
	wantStatus(t, "a link just before it expires", p.get(link), http.StatusOK)
	a.advance(time.Minute)
	r := p.get(link)
	if r.status != http.StatusGone || !strings.Contains(r.text("link-gone"), "expired") {
		t.Errorf("an expired link = %d %q; want 410 saying it expired", r.status, r.text("link-gone"))
	}
	r = p.post("/set-password", url.Values{"token": {strings.TrimPrefix(link, "/set-password?token=")}, "password": {"late-pass-12"}, "confirm": {"late-pass-12"}})
	if r.status != http.StatusGone {
		t.Errorf("an expired link's form = %d; want 410", r.status)
	}
	if u, _ := a.store.UserByEmail(t.Context(), "late@example.com"); u.PasswordHash != "" {
		t.Error("an expired link set the password")
	}
}

// TestPasswordLinkTriesLimited: an address that keeps trying made-up links
// is told to wait, like logins.
func TestPasswordLinkTriesLimited(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	p := a.browser()
	p.get("/login")
	for i := range 10 {
		r := p.post("/set-password", url.Values{"token": {fmt.Sprint("guess-", i)}, "password": {"guess-pass-1"}, "confirm": {"guess-pass-1"}})
		wantStatus(t, "guess", r, http.StatusNotFound)
	}
	r := p.post("/set-password", url.Values{"token": {"guess-11"}, "password": {"guess-pass-1"}, "confirm": {"guess-pass-1"}})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("the 11th guess = %d (Retry-After %q); want 429", r.status, r.header.Get("Retry-After"))
	}
	a.advance(time.Minute)
	wantStatus(t, "a guess a minute later", p.post("/set-password", url.Values{"token": {"guess-12"}}), http.StatusNotFound)
}

// TestAdminPasswordLinks: an administrator creates a user without a
// password and is shown their link; a new link voids the old; a user with
// a password gets none.
func TestAdminPasswordLinks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		root := a.user("root@example.com", true)
		b := a.browser()
		b.login("root@example.com")
		b.get("/admin/users")
		r := b.post("/admin/users", url.Values{"email": {"cy@example.com"}})
		wantStatus(t, "create user without a password", r, http.StatusSeeOther)
		r = b.get("/admin/users")
		first := linkPath(t, r)
		if !r.has("link-user-cy@example.com") || r.has("link-user-root@example.com") {
			t.Error("want a link button for cy only, who has no password")
		}
		cy, _ := s.UserByEmail(t.Context(), "cy@example.com")
		b.post(fmt.Sprintf("/admin/users/%d/link", cy.ID), nil)
		second := linkPath(t, b.get("/admin/users"))
		if first == second {
			t.Fatal("a new link is the old one")
		}
		p := a.browser()
		wantStatus(t, "the voided link", p.get(first), http.StatusNotFound)
		token := strings.TrimPrefix(second, "/set-password?token=")
		p.get(second)
		r = p.post("/set-password", url.Values{"token": {token}, "password": {"cy-password-1"}, "confirm": {"cy-password-1"}})
		if r.status != http.StatusSeeOther || r.location() != "/" {
			t.Errorf("set password = %d %q; want 303 /", r.status, r.location())
		}
		wantStatus(t, "cy logged in", p.get("/accounts"), http.StatusOK)

		b.post(fmt.Sprintf("/admin/users/%d/link", root.ID), nil)
		if r := b.get("/admin/users"); r.has("new-password-link") || !strings.Contains(r.text("flash"), "has a password") {
			t.Errorf("a link for a user with a password: shown %v, flash %q", r.has("new-password-link"), r.text("flash"))
		}
		wantStatus(t, "link for an unknown user", b.post("/admin/users/999999/link", nil), http.StatusNotFound)
	})
}

// TestInviteTakesOverNobody: a set-password link logs in as its user, so
// an owner is never handed one for a person whose login reaches further
// than their own account: someone another account invited who has not set
// a password yet, or an administrator without one. Else the owner of one
// account could set that password and walk into the other account, or
// into the instance's administration.
func TestInviteTakesOverNobody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		bob := a.user("bob@example.com", false)
		mal := a.user("mal@example.com", false)
		bank := a.account("bank", bob)
		evil := a.account("evil", mal)

		// Bob invites Cy as an owner of Bank; Cy has not used the link yet.
		bb := a.browser()
		bb.login("bob@example.com")
		cyLink := inviteLink(t, bb, bank, "cy@example.com", models.RoleOwner)
		// The administrator made Root2 without a password.
		root := a.user("root@example.com", true)
		ra := a.browser()
		ra.login(root.Email)
		ra.post("/admin/users", url.Values{"email": {"root2@example.com"}, "admin": {"1"}})

		mb := a.browser()
		mb.login("mal@example.com")
		members := views.SettingsURL(evil.ID, views.SettingsMembers)
		mb.get(members)
		for _, email := range []string{"cy@example.com", "root2@example.com"} {
			r := mb.post(views.AccountURL(evil.ID, "/members"), url.Values{"email": {email}, "role": {"viewer"}})
			if r.status != http.StatusUnprocessableEntity || r.has("new-password-link") || r.text("error-email") == "" || r.inputValue("email") != email {
				t.Errorf("Mal invites %s = %d, link shown %v, error %q; want 422 with an inline error and no link", email, r.status, r.has("new-password-link"), r.text("error-email"))
			}
			if r := mb.get(members); r.has("new-password-link") || strings.Contains(r.text("members-table"), email) {
				t.Errorf("after inviting %s: link shown %v, members %q; want neither", email, r.has("new-password-link"), r.text("members-table"))
			}
		}
		// Cy's link from Bob still works and lands Cy in Bank.
		p := a.browser()
		token := strings.TrimPrefix(cyLink, "/set-password?token=")
		p.get(cyLink)
		r := p.post("/set-password", url.Values{"token": {token}, "password": {"cy-password-1"}, "confirm": {"cy-password-1"}})
		if r.status != http.StatusSeeOther || r.location() != views.AccountURL(bank.ID, "") {
			t.Errorf("Cy's own link = %d %q; want 303 to Bank", r.status, r.location())
		}
		// With a password set, Mal may add Cy: Cy's password stays Cy's.
		r = mb.post(views.AccountURL(evil.ID, "/members"), url.Values{"email": {"cy@example.com"}, "role": {"viewer"}})
		wantStatus(t, "invite Cy once Cy has a password", r, http.StatusSeeOther)
		if mb.get(members).has("new-password-link") {
			t.Error("a link for a user with a password")
		}
	})
}

// TestSetPasswordLinkSecrets: the session a link's page began (which a
// planted cookie could share) is not the one the new password logs in:
// the person gets a new session id. The form needs its CSRF token. No log
// line carries the link's token.
func TestSetPasswordLinkSecrets(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	// The app again with a log this test reads: same keys, same database.
	var logs syncBuffer
	logged := httptest.NewServer(web.New(web.Options{Store: a.store, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		SessionHashKey: bytes.Repeat([]byte{1}, 32), SessionBlockKey: bytes.Repeat([]byte{2}, 32),
		Now: a.clock, Box: a.box, Sender: &capi.Client{}, GraphURL: a.meta.URL, APIVersion: capitest.Version}))
	t.Cleanup(logged.Close)
	a.srv = logged

	ada := a.user("ada@example.com", false)
	acc := a.account("acme", ada)
	b := a.browser()
	b.login("ada@example.com")
	link := inviteLink(t, b, acc, "newbie@example.com", models.RoleEditor)
	token := strings.TrimPrefix(link, "/set-password?token=")

	p := a.browser()
	wantStatus(t, "open the link", p.get(link), http.StatusOK)
	planted := p.steal()
	set := url.Values{"token": {token}, "password": {"newbie-pass-1"}, "confirm": {"newbie-pass-1"}}
	noCSRF := url.Values{"_csrf": {""}}
	for k, v := range set {
		noCSRF[k] = v
	}
	if r := p.post("/set-password", noCSRF); r.status != http.StatusForbidden {
		t.Errorf("set password without the CSRF token = %d; want 403", r.status)
	}
	if u, _ := a.store.UserByEmail(t.Context(), "newbie@example.com"); u.PasswordHash != "" {
		t.Fatal("a form without its CSRF token set the password")
	}
	r := p.post("/set-password", set)
	wantStatus(t, "set password", r, http.StatusSeeOther)
	wantLoggedIn(t, "the person who set the password", p)
	wantLoggedOut(t, "the session from before the password was set", planted)

	if logs.String() == "" || strings.Contains(logs.String(), token) {
		t.Errorf("the log carries the link's token (or nothing was logged):\n%s", logs.String())
	}
}

// TestNewLinkNotKeptInTheClear: between the invite and the page that shows
// its link once, the link waits in the owner's session, a database row; a
// copy of that row (a backup, say) must not hold a token that works.
func TestNewLinkNotKeptInTheClear(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acc := a.account("acme", ada)
		b := a.browser()
		b.login("ada@example.com")
		r := b.post(views.AccountURL(acc.ID, "/members"), url.Values{"email": {"newbie@example.com"}, "role": {"editor"}})
		wantStatus(t, "invite", r, http.StatusSeeOther)
		// The owner's session as the database holds it, before the link is shown.
		row := sessionRow(t, b)
		link := linkPath(t, b.get(views.SettingsURL(acc.ID, views.SettingsMembers)))
		token := strings.TrimPrefix(link, "/set-password?token=")
		if bytes.Contains(row.Data, []byte(token)) {
			t.Error("the owner's session row holds the link's token as it is")
		}
	})
}

// TestNewKeyNotKeptInTheClear: likewise a new ingest key's secret, which
// waits in the owner's session for the keys page to show it once.
func TestNewKeyNotKeptInTheClear(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", false)
		acc := a.account("acme", ada)
		b := a.browser()
		b.login("ada@example.com")
		keys := views.SettingsURL(acc.ID, views.SettingsKeys)
		b.get(keys)
		r := b.post(views.AccountURL(acc.ID, "/keys"), url.Values{"key_name": {"Website"}})
		if r.status != http.StatusSeeOther || r.location() != keys {
			t.Fatalf("create key = %d %q; want 303 to %s", r.status, r.location(), keys)
		}
		row := sessionRow(t, b)
		r = b.get(keys)
		secret := r.text("new-key-secret")
		if secret == "" || !strings.Contains(r.text("new-key"), "Website") {
			t.Fatalf("the keys page shows the new key %q; want it once", secret)
		}
		if bytes.Contains(row.Data, []byte(strings.TrimSpace(secret))) {
			t.Error("the owner's session row holds the new key's secret as it is")
		}
		if b.get(keys).has("new-key") {
			t.Error("the key is shown again on reload; want once")
		}
	})
}

// sessionRow is b's logged-in session as the database holds it.
func sessionRow(t *testing.T, b *browser) models.Session {
	t.Helper()
	srv, _ := url.Parse(b.app.srv.URL)
	codec := securecookie.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	for _, ck := range b.c.Jar.Cookies(srv) {
		var id string
		if ck.Name != "leadsignal" || codec.Decode(ck.Name, ck.Value, &id) != nil {
			continue
		}
		sum := sha256.Sum256([]byte(id))
		row, err := b.app.store.Session(t.Context(), hex.EncodeToString(sum[:]), b.app.clock(), store.SessionLimits{Idle: time.Hour, Absolute: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(row.Data) == 0 {
			t.Fatal("the session row holds nothing")
		}
		return row
	}
	t.Fatal("no logged-in session cookie")
	return models.Session{}
}
