package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

func TestFirstAdminSetup(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		b := a.browser()

		r := b.get("/")
		if r.status != http.StatusSeeOther || r.location() != "/setup" {
			t.Fatalf("GET / with no users = %d %q; want 303 /setup", r.status, r.location())
		}
		r = b.get("/login")
		if r.location() != "/setup" {
			t.Errorf("GET /login with no users redirects to %q; want /setup", r.location())
		}
		wantStatus(t, "GET /setup", b.get("/setup"), http.StatusOK)

		r = b.post("/setup", url.Values{"email": {"ada@example"}, "password": {"short"}, "confirm": {"short"}})
		wantStatus(t, "setup with bad input", r, http.StatusUnprocessableEntity)
		if r.inputValue("email") != "ada@example" {
			t.Errorf("email field = %q; want what was typed", r.inputValue("email"))
		}
		if r.text("error-email") == "" || r.text("error-password") == "" {
			t.Errorf("want inline errors for email and password, got %q / %q", r.text("error-email"), r.text("error-password"))
		}
		if r.inputValue("password") != "" {
			t.Error("the password field must not be refilled")
		}
		r = b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"password123"}, "confirm": {"password124"}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-confirm") != "The passwords do not match." {
			t.Errorf("passwords that differ = %d %q; want 422 and an error on the confirmation", r.status, r.text("error-confirm"))
		}
		if r.inputValue("email") != "ada@example.com" || r.inputValue("password") != "" || r.inputValue("confirm") != "" {
			t.Errorf("after passwords that differ: email %q, passwords %q %q; want the email kept, the passwords not", r.inputValue("email"), r.inputValue("password"), r.inputValue("confirm"))
		}
		// A short password that differs from its repeat: both are said.
		r = b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"short"}, "confirm": {"shorter"}})
		if r.text("error-password") == "" || r.text("error-confirm") == "" {
			t.Errorf("short passwords that differ: errors %q / %q; want both", r.text("error-password"), r.text("error-confirm"))
		}
		if n, _ := s.CountUsers(t.Context()); n != 0 {
			t.Fatalf("invalid setups created %d users", n)
		}

		r = b.post("/setup", url.Values{"email": {"Ada@Example.com"}, "password": {"password123"}, "confirm": {"password123"}})
		if r.status != http.StatusSeeOther || r.location() != "/accounts" {
			t.Fatalf("setup = %d %q; want 303 /accounts", r.status, r.location())
		}
		r = b.get("/accounts")
		wantStatus(t, "accounts after setup", r, http.StatusOK)
		if !r.has("accounts-empty") || !strings.Contains(r.body, "/accounts/new") {
			t.Error("a new admin should see the empty state with a New account link")
		}
		u, err := s.UserByEmail(t.Context(), "ada@example.com")
		if err != nil || !u.IsAdmin {
			t.Fatalf("first user = %+v, %v; want an admin", u, err)
		}

		// Setup is closed once a user exists, for everyone.
		other := a.browser()
		if r := other.get("/setup"); r.location() != "/login" {
			t.Errorf("GET /setup with a user = %d %q; want redirect to /login", r.status, r.location())
		}
		other.get("/login")
		other.post("/setup", url.Values{"email": {"eve@example.com"}, "password": {"password123"}, "confirm": {"password123"}})
		if n, _ := s.CountUsers(t.Context()); n != 1 {
			t.Errorf("setup after the first admin made %d users; want 1", n)
		}
	})
}

func TestLoginLogout(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("ada@example.com", false)
		b := a.browser()

		r := b.get("/accounts")
		if r.status != http.StatusSeeOther || r.location() != "/login?next=%2Faccounts" {
			t.Fatalf("anonymous /accounts = %d %q; want login with next", r.status, r.location())
		}
		b.get("/login")
		wrongPw := b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong-password"}})
		unknown := b.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {"password123"}})
		wantStatus(t, "wrong password", wrongPw, http.StatusUnprocessableEntity)
		if wrongPw.text("form-error") != unknown.text("form-error") || wrongPw.text("form-error") == "" {
			t.Errorf("wrong password says %q, unknown email says %q; want one generic message", wrongPw.text("form-error"), unknown.text("form-error"))
		}
		if wrongPw.inputValue("email") != "ada@example.com" {
			t.Errorf("email not kept after a failed login: %q", wrongPw.inputValue("email"))
		}

		before := b.csrf
		r = b.post("/login", url.Values{"email": {"ADA@example.com"}, "password": {"password123"}, "next": {"/accounts"}})
		if r.status != http.StatusSeeOther || r.location() != "/accounts" {
			t.Fatalf("login = %d %q; want 303 /accounts", r.status, r.location())
		}
		var cookie *http.Cookie
		for _, c := range r.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "leadsignal=") {
				cookie, _ = http.ParseSetCookie(c)
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
			t.Errorf("session cookie = %+v; want HttpOnly, SameSite=Lax, not Secure over plain HTTP", cookie)
		}
		wantStatus(t, "accounts when logged in", b.get("/accounts"), http.StatusOK)
		if b.csrf == before {
			t.Error("the CSRF token must be renewed at login")
		}

		wantStatus(t, "logout", b.post("/logout", nil), http.StatusSeeOther)
		if r := b.get("/accounts"); r.status != http.StatusSeeOther {
			t.Errorf("after logout /accounts = %d; want redirect to login", r.status)
		}
	})
}

func TestSecureCookieBehindTLS(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	b := a.browser()
	b.get("/login")
	r := b.postWith("/login", url.Values{"email": {"ada@example.com"}, "password": {"password123"}},
		http.Header{"X-Forwarded-Proto": {"https"}})
	if !strings.Contains(r.header.Get("Set-Cookie"), "Secure") {
		t.Errorf("Set-Cookie = %q; want Secure when served over TLS", r.header.Get("Set-Cookie"))
	}
}

func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.user("ada@example.com", false)
	b := a.browser()
	b.get("/login")
	for i := range 10 {
		r := b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {fmt.Sprintf("guess-%d-xxxx", i)}})
		wantStatus(t, fmt.Sprintf("failed attempt %d", i+1), r, http.StatusUnprocessableEntity)
	}
	// Even the right password is refused while the limit holds.
	r := b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password123"}})
	wantStatus(t, "11th attempt", r, http.StatusTooManyRequests)
	if msg := r.text("form-error"); !strings.Contains(msg, "Try again in 60 s") {
		t.Errorf("rate-limit message = %q; want it to say when to try again", msg)
	}
	if r.header.Get("Retry-After") != "60" {
		t.Errorf("Retry-After = %q; want 60", r.header.Get("Retry-After"))
	}
	// The limit is per email too: another address from a fresh IP bucket
	// does not help the attacker, but a different email is not blocked by
	// the email bucket alone.
	a.advance(61 * time.Second)
	r = b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password123"}})
	if r.status != http.StatusSeeOther {
		t.Errorf("after the window, login = %d; want 303", r.status)
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		admin := a.user("ada@example.com", true)
		acc := a.account("acme", admin)
		b := a.browser()
		b.login("ada@example.com")

		for name, token := range map[string]string{"missing": "", "wrong": "not-the-token"} {
			r := b.post(views.AccountURL(acc.ID, "/settings"), url.Values{
				"_csrf": {token}, "name": {"Hacked"}, "timezone": {"UTC"}, "currency": {"USD"},
			})
			wantStatus(t, name+" token", r, http.StatusForbidden)
		}
		r := b.post("/accounts", url.Values{"_csrf": {""}, "name": {"Sneaky"}})
		wantStatus(t, "create account without token", r, http.StatusForbidden)

		got, _ := s.AccountForUser(t.Context(), admin.ID, acc.ID)
		if got.Name != "Acme" {
			t.Errorf("account name = %q after refused posts; want unchanged", got.Name)
		}
		if _, err := s.AccountBySlug(t.Context(), "sneaky"); err == nil {
			t.Error("a refused post created an account")
		}
		// htmx sends the token as a header.
		r = b.postWith(views.AccountURL(acc.ID, "/settings"),
			url.Values{"_csrf": {""}, "name": {"Acme"}, "timezone": {"UTC"}, "currency": {"USD"}},
			http.Header{"X-Csrf-Token": {b.csrf}, "Hx-Request": {"true"}})
		wantStatus(t, "htmx post with header token", r, http.StatusOK)
	})
}

func TestCreateAccountsAndSwitch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("ada@example.com", true)
		a.user("bob@example.com", false)
		b := a.browser()
		b.login("ada@example.com")

		r := b.post("/accounts", url.Values{"name": {""}, "default_country": {"XX"}, "owner": {"nobody@example.com"}})
		wantStatus(t, "invalid account", r, http.StatusUnprocessableEntity)
		for _, f := range []string{"name", "default_country", "owner"} {
			if r.text("error-"+f) == "" {
				t.Errorf("no inline error for %s", f)
			}
		}
		if r.inputValue("owner") != "nobody@example.com" {
			t.Errorf("owner field = %q; want what was typed", r.inputValue("owner"))
		}

		r = b.post("/accounts", url.Values{"name": {"Acme Dental & Co"}, "default_country": {"US"}, "owner": {"bob@example.com"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("create account = %d\n%s", r.status, r.body)
		}
		acme, err := s.AccountBySlug(t.Context(), "acme-dental-co")
		if err != nil {
			t.Fatalf("slug made from name: %v", err)
		}
		if r.location() != views.AccountURL(acme.ID, "") {
			t.Errorf("redirect = %q; want the new account", r.location())
		}
		r = b.post("/accounts", url.Values{"name": {"Acme again"}, "slug": {"acme-dental-co"}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-slug") == "" {
			t.Errorf("duplicate slug = %d %q; want 422 with a slug error", r.status, r.text("error-slug"))
		}
		b.post("/accounts", url.Values{"name": {"Beta"}, "slug": {"beta"}})
		beta, _ := s.AccountBySlug(t.Context(), "beta")

		bob, _ := s.UserByEmail(t.Context(), "bob@example.com")
		if acc, err := s.AccountForUser(t.Context(), bob.ID, acme.ID); err != nil || acc.Role != models.RoleOwner {
			t.Errorf("bob in acme = %+v, %v; want owner", acc, err)
		}

		// The switcher lists exactly the user's accounts and the last one is
		// remembered for the next visit to /.
		r = b.get(views.AccountURL(beta.ID, ""))
		wantStatus(t, "beta overview", r, http.StatusOK)
		if got := switcherList(t, b, r).doc.Find(`li a[href^="/accounts/"]`).Length(); got != 2 {
			t.Errorf("switcher lists %d accounts; want 2", got)
		}
		if r.text("account-switcher") != "Beta" {
			t.Errorf("switcher shows %q; want Beta", r.text("account-switcher"))
		}
		if r := b.get("/"); r.location() != views.AccountURL(beta.ID, "") {
			t.Errorf("GET / = %q; want the last account, beta", r.location())
		}
		b.get(views.AccountURL(acme.ID, ""))
		if r := b.get("/"); r.location() != views.AccountURL(acme.ID, "") {
			t.Errorf("GET / = %q; want the last account, acme", r.location())
		}

		// Bob sees only his account; non-admins cannot create accounts.
		bb := a.browser()
		bb.login("bob@example.com")
		r = bb.get("/accounts")
		if got := r.doc.Find(`[data-testid="accounts-table"] tbody tr`).Length(); got != 1 {
			t.Errorf("bob's account list has %d rows; want 1", got)
		}
		wantStatus(t, "non-admin new account", bb.get("/accounts/new"), http.StatusForbidden)
		wantStatus(t, "non-admin create account", bb.post("/accounts", url.Values{"name": {"Mine"}}), http.StatusForbidden)
	})
}

func TestAccountSettings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		acc := a.account("acme", owner)
		b := a.browser()
		b.login("ada@example.com")
		path := views.AccountURL(acc.ID, "/settings")

		r := b.get(path)
		wantStatus(t, "settings", r, http.StatusOK)
		if r.inputValue("timezone") != "UTC" {
			t.Errorf("timezone = %q; want UTC", r.inputValue("timezone"))
		}

		bad := url.Values{"name": {"Acme"}, "timezone": {"Mars/Olympus"}, "default_country": {"ZZ"}, "currency": {"dollars"}, "crm_name": {"HubSpot"}}
		r = b.post(path, bad)
		wantStatus(t, "invalid settings", r, http.StatusUnprocessableEntity)
		for _, f := range []string{"timezone", "default_country", "currency"} {
			if r.text("error-"+f) == "" {
				t.Errorf("no inline error for %s", f)
			}
		}
		if r.inputValue("timezone") != "Mars/Olympus" || r.inputValue("crm_name") != "HubSpot" {
			t.Errorf("typed values not kept: timezone %q crm %q", r.inputValue("timezone"), r.inputValue("crm_name"))
		}

		good := url.Values{"name": {"Acme Inc"}, "timezone": {"Europe/Berlin"}, "default_country": {"de"}, "currency": {"eur"}, "crm_name": {"HubSpot"}}
		r = b.post(path, good)
		if r.status != http.StatusSeeOther || r.location() != path {
			t.Fatalf("save settings = %d %q", r.status, r.location())
		}
		r = b.get(path)
		if r.text("flash") != "Settings saved." {
			t.Errorf("flash = %q; want Settings saved.", r.text("flash"))
		}
		got, _ := s.AccountBySlug(t.Context(), "acme")
		want := models.Account{Name: "Acme Inc", Timezone: "Europe/Berlin", DefaultCountry: "DE", Currency: "EUR", CRMName: "HubSpot"}
		if got.Name != want.Name || got.Timezone != want.Timezone || got.DefaultCountry != want.DefaultCountry || got.Currency != want.Currency || got.CRMName != want.CRMName {
			t.Errorf("saved account = %+v; want %+v", got, want)
		}

		// Through htmx, the form swaps itself: a fragment, 422 on errors.
		r = b.postWith(path, bad, http.Header{"Hx-Request": {"true"}})
		wantStatus(t, "htmx invalid settings", r, http.StatusUnprocessableEntity)
		if strings.Contains(r.body, "<html") || !r.has("settings-form") {
			t.Error("htmx answer should be the form fragment alone")
		}
		r = b.postWith(path, good, http.Header{"Hx-Request": {"true"}})
		if r.status != http.StatusOK || r.text("settings-flash") != "Settings saved." {
			t.Errorf("htmx save = %d %q", r.status, r.text("settings-flash"))
		}
	})
}

func TestMembersAndRoles(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		owner := a.user("ada@example.com", false)
		viewer := a.user("vic@example.com", false)
		a.user("eddie@example.com", false)
		acc := a.account("acme", owner)
		b := a.browser()
		b.login("ada@example.com")
		base := views.AccountURL(acc.ID, "")

		r := b.post(base+"/members", url.Values{"email": {"nobody@example"}, "role": {"viewer"}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-email") == "" || r.inputValue("email") != "nobody@example" {
			t.Errorf("bad email = %d %q %q", r.status, r.text("error-email"), r.inputValue("email"))
		}
		r = b.post(base+"/members", url.Values{"email": {"vic@example.com"}, "role": {"viewer"}})
		wantStatus(t, "add viewer", r, http.StatusSeeOther)
		b.post(base+"/members", url.Values{"email": {"eddie@example.com"}, "role": {"editor"}})

		r = b.get(base + "/settings/members")
		if got := r.doc.Find(`[data-testid="members-table"] tbody tr`).Length(); got != 3 {
			t.Errorf("members table has %d rows; want 3", got)
		}

		// The last owner cannot be demoted or removed.
		r = b.post(fmt.Sprintf("%s/members/%d/role", base, owner.ID), url.Values{"role": {"viewer"}})
		wantStatus(t, "demote last owner", r, http.StatusSeeOther)
		if r := b.get(base + "/settings/members"); !strings.Contains(r.text("flash"), "at least one owner") {
			t.Errorf("flash = %q; want the last-owner explanation", r.text("flash"))
		}
		if got, _ := s.AccountForUser(t.Context(), owner.ID, acc.ID); got.Role != models.RoleOwner {
			t.Errorf("owner role = %s after refused demotion", got.Role)
		}

		// Viewers see the overview but not settings; editors set the
		// account up (settings too) but the members are the owners'.
		for _, email := range []string{"vic@example.com", "eddie@example.com"} {
			editor := email == "eddie@example.com"
			m := a.browser()
			m.login(email)
			r := m.get(base)
			wantStatus(t, email+" overview", r, http.StatusOK)
			if strings.Contains(r.body, base+"/settings") != editor {
				t.Errorf("%s sees a Settings link: %v; want %v", email, !editor, editor)
			}
			for _, section := range []string{"", "/keys", "/members", "/junk", "/setup"} {
				want := http.StatusForbidden
				if editor && section != "/members" {
					want = http.StatusOK
				}
				wantStatus(t, email+" settings"+section, m.get(base+"/settings"+section), want)
			}
			if editor && strings.Contains(m.get(base+"/settings").body, base+"/settings/members") {
				t.Errorf("%s's settings link to the members, which are the owners'", email)
			}
			wantStatus(t, email+" add member", m.post(base+"/members", url.Values{"email": {email}, "role": {"owner"}}), http.StatusForbidden)
		}
		if got, _ := s.AccountForUser(t.Context(), viewer.ID, acc.ID); got.Role != models.RoleViewer {
			t.Errorf("viewer promoted themselves to %s", got.Role)
		}

		r = b.post(fmt.Sprintf("%s/members/%d/remove", base, viewer.ID), nil)
		wantStatus(t, "remove viewer", r, http.StatusSeeOther)
		if _, err := s.AccountForUser(t.Context(), viewer.ID, acc.ID); err == nil {
			t.Error("removed viewer can still open the account")
		}
		// A user id that is not a member of this account is not found.
		wantStatus(t, "remove non-member", b.post(fmt.Sprintf("%s/members/%d/remove", base, viewer.ID), nil), http.StatusNotFound)
	})
}

// TestTenantIsolation requests every account route with another account's
// id: each answers 404 and changes nothing. Routes are read from the router,
// so a route added later is covered without touching this test.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		ada := a.user("ada@example.com", true)
		bob := a.user("bob@example.com", false)
		own := a.account("acme", ada)
		other := a.account("beta", bob)
		otherKey, _, err := s.CreateIngestKey(t.Context(), other.ID, "beta site")
		if err != nil {
			t.Fatal(err)
		}
		otherLead := models.Lead{AccountID: other.ID, Source: models.SourceWebsite, Email: "x@example.com",
			CreatedAt: a.clock(), ReceivedAt: a.clock(), Fields: "{}", MatchKeys: "{}", JunkReasons: "[]"}
		if err := s.InsertLead(t.Context(), &otherLead); err != nil {
			t.Fatal(err)
		}
		otherDataset := models.Dataset{AccountID: other.ID, Name: "Beta pixel", PixelID: "999999999999999", Mode: models.ModeDryRun, LDU: models.LDUOff}
		if err := s.CreateDataset(t.Context(), &otherDataset); err != nil {
			t.Fatal(err)
		}
		otherEvents, _, err := s.EnqueueEvents(t.Context(), []models.Event{{AccountID: other.ID, DatasetID: otherDataset.ID, LeadID: otherLead.ID,
			Origin: models.OriginDefault, EventName: "Lead", EventID: "beta-1", EventTime: a.clock(), Status: models.EventFailed}})
		if err != nil {
			t.Fatal(err)
		}
		b := a.browser()
		b.login("ada@example.com")

		n := 0
		for _, rt := range a.echo.Routes() {
			if !strings.Contains(rt.Path, ":account") {
				continue
			}
			path := strings.NewReplacer(":account", fmt.Sprint(other.ID), ":user", fmt.Sprint(bob.ID),
				":lead", fmt.Sprint(otherLead.ID), ":key", fmt.Sprint(otherKey.ID),
				":dataset", fmt.Sprint(otherDataset.ID), ":event", fmt.Sprint(otherEvents[0].ID)).Replace(rt.Path)
			var r resp
			switch rt.Method {
			case http.MethodGet:
				r = b.get(path)
			case http.MethodPost:
				r = b.post(path, url.Values{"name": {"Hacked"}, "role": {"viewer"}, "email": {"ada@example.com"}, "timezone": {"UTC"}, "currency": {"USD"}})
			default:
				continue
			}
			n++
			if r.status != http.StatusNotFound {
				t.Errorf("%s %s = %d; want 404", rt.Method, path, r.status)
			}
			if strings.Contains(r.body, "Beta") {
				t.Errorf("%s %s leaks the other account's name", rt.Method, path)
			}
		}
		if n < 5 {
			t.Errorf("checked %d account routes; the router should have more", n)
		}
		// The same routes under ada's own account, naming the other
		// account's lead, dataset, event, key and member: each resource
		// lookup is scoped by account too, not only the account check.
		for _, rt := range a.echo.Routes() {
			if !strings.Contains(rt.Path, ":account/") {
				continue
			}
			if !strings.Contains(rt.Path, ":lead") && !strings.Contains(rt.Path, ":dataset") && !strings.Contains(rt.Path, ":event") &&
				!strings.Contains(rt.Path, ":key") && !strings.Contains(rt.Path, ":user") {
				continue
			}
			path := strings.NewReplacer(":account", fmt.Sprint(own.ID), ":user", fmt.Sprint(bob.ID),
				":lead", fmt.Sprint(otherLead.ID), ":key", fmt.Sprint(otherKey.ID),
				":dataset", fmt.Sprint(otherDataset.ID), ":event", fmt.Sprint(otherEvents[0].ID)).Replace(rt.Path)
			var r resp
			switch rt.Method {
			case http.MethodGet:
				r = b.get(path)
			case http.MethodPost:
				r = b.post(path, url.Values{"name": {"Hacked"}, "role": {"viewer"}, "stage": {"junk"}, "pixel_id": {"1234567"},
					"mode": {"dry_run"}, "ldu": {"off"}})
			default:
				continue
			}
			if r.status != http.StatusNotFound {
				t.Errorf("own account, other's resource: %s %s = %d; want 404", rt.Method, path, r.status)
			}
		}
		got, _ := s.AccountBySlug(t.Context(), "beta")
		if got.Name != "Beta" {
			t.Errorf("other account renamed to %q", got.Name)
		}
		if _, err := s.AccountForUser(t.Context(), ada.ID, other.ID); err == nil {
			t.Error("ada became a member of beta")
		}
		if l, _ := s.Lead(t.Context(), other.ID, otherLead.ID); l.Junk || l.Stage != "" {
			t.Errorf("other account's lead changed: %+v", l)
		}
		if ks, _ := s.IngestKeys(t.Context(), other.ID); ks[0].RevokedAt != nil {
			t.Error("other account's key was revoked")
		}
		if d, _ := s.Dataset(t.Context(), other.ID, otherDataset.ID); d.Name != "Beta pixel" {
			t.Errorf("other account's dataset renamed to %q", d.Name)
		}
		if e, _ := s.Event(t.Context(), other.ID, otherEvents[0].ID); e.Status != models.EventFailed {
			t.Errorf("other account's event changed to %s", e.Status)
		}
		wantStatus(t, "non-numeric account id", b.get("/accounts/abc"), http.StatusNotFound)
		wantStatus(t, "unknown account id", b.get("/accounts/999999"), http.StatusNotFound)
	})
}

func TestAdminUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		a.user("ada@example.com", true)
		a.user("bob@example.com", false)
		b := a.browser()
		b.login("ada@example.com")

		r := b.post("/admin/users", url.Values{"email": {"BOB@example.com"}, "password": {"password123"}})
		if r.status != http.StatusUnprocessableEntity || r.text("error-email") == "" {
			t.Errorf("duplicate user = %d %q", r.status, r.text("error-email"))
		}
		r = b.post("/admin/users", url.Values{"email": {"cy@example.com"}, "password": {"password123"}, "admin": {"1"}})
		wantStatus(t, "create user", r, http.StatusSeeOther)
		if u, err := s.UserByEmail(t.Context(), "cy@example.com"); err != nil || !u.IsAdmin {
			t.Errorf("created user = %+v, %v; want admin", u, err)
		}
		bb := a.browser()
		bb.login("bob@example.com")
		wantStatus(t, "non-admin users page", bb.get("/admin/users"), http.StatusForbidden)
	})
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newApp(t, s)
	b := a.browser()
	wantStatus(t, "healthz", b.get("/healthz"), http.StatusOK)
	s.Close()
	wantStatus(t, "healthz with the database closed", b.get("/healthz"), http.StatusServiceUnavailable)
}

func TestPanicBecomes500(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	a.echo.GET("/boom", func(echoCtx echoContext) error { panic("boom") })
	r := a.browser().get("/boom")
	wantStatus(t, "panicking handler", r, http.StatusInternalServerError)
	if !r.has("error-page") {
		t.Error("want the error page")
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	a := newApp(t, storetest.New(t))
	b := a.browser()
	a.user("ada@example.com", false)
	r := b.get("/login")
	href, _ := r.doc.Find(`link[rel="stylesheet"]`).Last().Attr("href")
	res := b.get(href)
	wantStatus(t, "stylesheet "+href, res, http.StatusOK)
	if !strings.Contains(res.header.Get("Cache-Control"), "immutable") {
		t.Errorf("Cache-Control = %q; want long-lived immutable", res.header.Get("Cache-Control"))
	}
}
