package web_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/internal/crmsync"
	"github.com/leadsignal/leadsignal/internal/decide"
	"github.com/leadsignal/leadsignal/internal/dispatch"
	"github.com/leadsignal/leadsignal/internal/google/googletest"
	"github.com/leadsignal/leadsignal/internal/password"
	"github.com/leadsignal/leadsignal/internal/pinterest/pinteresttest"
	"github.com/leadsignal/leadsignal/internal/platform"
	"github.com/leadsignal/leadsignal/internal/seal"
	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/web"
)

// app is a running server on a real database with a controllable clock.
type app struct {
	t     *testing.T
	store *store.Store
	echo  *echo.Echo
	srv   *httptest.Server
	mu    sync.Mutex
	now   time.Time
	// meta is the fake Graph API; dispatcher sends to it.
	meta       *capitest.Server
	box        *seal.Box
	dispatcher *dispatch.Dispatcher
	// hubspot and pipedrive are the fake CRM APIs (tokens hubspotToken and
	// pipedriveToken); crm is the worker of the CRM deliveries, on the
	// app's clock: tests run it with work.
	hubspot   *crmtest.HubSpotFake
	pipedrive *crmtest.PipedriveFake
	crm       *crmsync.Worker
	// tiktok, pinterest and google are the other destinations' fake
	// platforms, which the dispatcher and the test buttons send to.
	tiktok    *tiktoktest.Server
	pinterest *pinteresttest.Server
	google    *googletest.Server
}

// The fake CRM APIs' tokens.
const (
	hubspotToken   = "hs-private-app-token"
	pipedriveToken = "pd-api-token"
)

// drain runs the dispatcher until nothing is due.
func (a *app) drain() {
	a.t.Helper()
	if _, err := a.dispatcher.Drain(a.t.Context()); err != nil {
		a.t.Fatalf("dispatch: %v", err)
	}
}

func newApp(t *testing.T, s *store.Store) *app {
	t.Helper()
	a := &app{t: t, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	// One clock for everything the app dates and checks: the store's writes
	// and queue, the decider, the dispatcher and Meta's fake. Events dated
	// by the app's clock must not pass Meta's 7 days as the calendar moves
	// on.
	// The test's own store is switched too, so what a test writes through
	// it is dated alike.
	*s = *s.WithClock(a.clock)
	a.store = s
	a.meta = capitest.New(t)
	a.meta.Now = a.clock
	box, err := seal.New(bytes.Repeat([]byte{4}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a.box = box
	a.tiktok, a.pinterest, a.google = tiktoktest.New(t), pinteresttest.New(t), googletest.New(t)
	platforms := platform.Senders(platform.URLs{TikTok: a.tiktok.URL, Pinterest: a.pinterest.URL, Google: a.google.URL, GoogleToken: a.google.TokenURL})
	a.dispatcher = dispatch.New(dispatch.Options{Store: s, Sender: &capi.Client{}, Platforms: platforms, Box: box, Log: testLogger(),
		GraphURL: a.meta.URL, DefaultVersion: capitest.Version, Now: a.clock})
	a.hubspot = crmtest.NewHubSpot(t, hubspotToken)
	a.pipedrive = crmtest.NewPipedrive(t, pipedriveToken)
	a.crm = crmsync.New(crmsync.Options{Store: s, Decider: decide.New(s, nil, nil), Box: box, Log: testLogger(),
		HubSpotAPIURL: a.hubspot.URL(), PipedriveAPIURL: a.pipedrive.URL(), Now: a.clock})
	a.echo = web.New(web.Options{
		Store:           s,
		Log:             testLogger(),
		SessionHashKey:  bytes.Repeat([]byte{1}, 32),
		SessionBlockKey: bytes.Repeat([]byte{2}, 32),
		Now:             a.clock,
		Box:             box,
		Sender:          &capi.Client{},
		Platforms:       platforms,
		GraphURL:        a.meta.URL,
		APIVersion:      capitest.Version,
		CRM:             web.CRMOptions{HubSpotAPIURL: a.hubspot.URL(), PipedriveAPIURL: a.pipedrive.URL()},
	})
	a.srv = httptest.NewServer(a.echo)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *app) clock() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now
}

func (a *app) advance(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.now = a.now.Add(d)
}

// passwordHash is the hash of "password123", made once: bcrypt takes its
// tens of milliseconds on purpose, and tests create hundreds of users.
var passwordHash = sync.OnceValues(func() (string, error) { return password.Hash("password123") })

// user creates a user with the password "password123".
func (a *app) user(email string, admin bool) models.User {
	a.t.Helper()
	h, err := passwordHash()
	if err != nil {
		a.t.Fatal(err)
	}
	u, err := a.store.CreateUser(a.t.Context(), email, h, admin)
	if err != nil {
		a.t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

func (a *app) account(slug string, owner models.User) models.Account {
	a.t.Helper()
	acc, err := a.store.CreateAccount(a.t.Context(), models.Account{Slug: slug, Name: strings.ToUpper(slug[:1]) + slug[1:], Timezone: "UTC", Currency: "USD"}, owner.ID)
	if err != nil {
		a.t.Fatalf("create account %s: %v", slug, err)
	}
	return acc
}

// browser is a cookie-keeping client that never follows redirects, so
// tests see each answer.
type browser struct {
	t    *testing.T
	app  *app
	c    *http.Client
	csrf string
}

func (a *app) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: a.t, app: a, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// resp is a finished response with its body read.
type resp struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (r resp) location() string { return r.header.Get("Location") }

// text returns the text of the first element with this data-testid.
func (r resp) text(testid string) string {
	return strings.TrimSpace(r.doc.Find(`[data-testid="` + testid + `"]`).First().Text())
}

func (r resp) has(testid string) bool {
	return r.doc.Find(`[data-testid="`+testid+`"]`).Length() > 0
}

func (r resp) inputValue(name string) string {
	v, _ := r.doc.Find(`[name="` + name + `"]`).First().Attr("value")
	return v
}

func (b *browser) do(req *http.Request) resp {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(body))
	r := resp{status: res.StatusCode, header: res.Header, body: string(body), doc: doc}
	// Keep the latest CSRF token the server rendered, as a browser would.
	if v, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value"); ok {
		b.csrf = v
	}
	return r
}

func (b *browser) get(path string) resp {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodGet, b.app.srv.URL+path, nil)
	return b.do(req)
}

// post submits a form with the current CSRF token (unless the values set
// _csrf themselves).
func (b *browser) post(path string, v url.Values) resp {
	b.t.Helper()
	return b.postWith(path, v, nil)
}

func (b *browser) postWith(path string, v url.Values, header http.Header) resp {
	b.t.Helper()
	if v == nil {
		v = url.Values{}
	}
	if _, ok := v["_csrf"]; !ok {
		v.Set("_csrf", b.csrf)
	}
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.app.srv.URL+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	return b.do(req)
}

// login logs in through the form and fails the test if it does not work.
func (b *browser) login(email string) {
	b.t.Helper()
	b.get("/login")
	r := b.post("/login", url.Values{"email": {email}, "password": {"password123"}})
	if r.status != http.StatusSeeOther {
		b.t.Fatalf("login %s: status %d; body %s", email, r.status, r.body)
	}
	b.get("/accounts") // pick up the new session's CSRF token
}

func wantStatus(t *testing.T, what string, r resp, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d; want %d\n%s", what, r.status, want, r.body)
	}
}

type echoContext = echo.Context

func itoa(n int64) string { return fmt.Sprint(n) }

func (b *browser) getWith(path string, header http.Header) resp {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodGet, b.app.srv.URL+path, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	return b.do(req)
}

// testLogger discards logs unless LEADSIGNAL_TEST_LOG=1.
func testLogger() *slog.Logger {
	if os.Getenv("LEADSIGNAL_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
