package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

const siteOrigin = "https://www.northwind.example"

// collect calls the collect API with the site key key as a page of origin
// would (no Origin when origin is ""), from the visitor's address ip.
func (a *app) collect(method, path, key, origin, ip, body string, header ...string) (apiReply, http.Header) {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(a.t.Context(), method, a.srv.URL+path+"?key="+key, strings.NewReader(body))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("User-Agent", "Mozilla/5.0 (Visitor)")
	req.Header.Set("X-Forwarded-For", ip)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("collect: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := apiReply{status: res.StatusCode, raw: string(b)}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r); err != nil {
			a.t.Fatalf("reply is not JSON (%d): %s", res.StatusCode, b)
		}
	}
	return r, res.Header
}

func siteKey(t *testing.T, s *store.Store, acc models.Account, origins ...string) models.SiteKey {
	t.Helper()
	k, err := s.CreateSiteKey(t.Context(), acc.ID, "Website", origins, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The collect API answers pages of the site key's origins only, with CORS
// for them alone; it takes the visitor's address and user agent from the
// request, refuses what the browser may not set, and captures as the
// leads API does: a partial lead, then the same lead completed.
func TestCollect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		k := siteKey(t, s, f.acc, siteOrigin)

		// Preflight: the allowed origin gets CORS, another none.
		r, h := f.a.collect(http.MethodOptions, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.7", "",
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
		if r.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != siteOrigin ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("preflight = %d %v; want 204 with CORS for %s", r.status, h, siteOrigin)
		}
		for _, origin := range []string{"https://evil.example", "https://www.northwind.example.evil.example", "http://www.northwind.example", "null", ""} {
			r, h := f.a.collect(http.MethodOptions, "/api/v1/collect", k.Key, origin, "198.51.100.7", "")
			if r.status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight from %q = %d, ACAO %q; want 403 without CORS", origin, r.status, h.Get("Access-Control-Allow-Origin"))
			}
		}

		body := `{"external_id":"ls_0123456789abcdef0123456789abcdef","email":"jane@example.com","partial":true,
			"event_source_url":"https://www.northwind.example/quote?gclid=G1&fbclid=IwAR9","fill_seconds":3.5}`
		r, h = f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.7", body)
		if r.status != http.StatusCreated || h.Get("Access-Control-Allow-Origin") != siteOrigin {
			t.Fatalf("partial lead = %d %s, ACAO %q", r.status, r.raw, h.Get("Access-Control-Allow-Origin"))
		}
		l, err := s.Lead(t.Context(), f.acc.ID, r.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Partial || l.ClientIP != "198.51.100.7" || l.ClientUserAgent != "Mozilla/5.0 (Visitor)" || l.FBCLID != "IwAR9" {
			t.Errorf("lead: partial %v, ip %q, ua %q, fbclid %q; want partial, the request's address and user agent, the URL's fbclid",
				l.Partial, l.ClientIP, l.ClientUserAgent, l.FBCLID)
		}
		complete := strings.Replace(body, `"partial":true`, `"partial":false,"phone":"(415) 692-4281"`, 1)
		again, _ := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.7", complete)
		if again.status != http.StatusOK || again.LeadID != r.LeadID || again.Outcome != "upgraded" {
			t.Errorf("complete lead = %d %s; want 200, lead %d upgraded", again.status, again.raw, r.LeadID)
		}
		if l, _ := s.Lead(t.Context(), f.acc.ID, r.LeadID); l.Partial {
			t.Error("the lead is still partial")
		}
		// The page posts the complete lead again (a retried fetch): the
		// same lead, nothing new.
		replay, _ := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.7", complete)
		if replay.status != http.StatusOK || replay.LeadID != r.LeadID || replay.Outcome == "upgraded" || replay.Outcome == "created" {
			t.Errorf("replayed complete lead = %d %s; want 200 with lead %d as it is", replay.status, replay.raw, r.LeadID)
		}
		got, _ := s.SiteKey(t.Context(), f.acc.ID, k.ID)
		if got.Origins[0].LastSeenAt == nil {
			t.Error("the origin's last use is not noted")
		}

		refusals := []struct {
			what, key, origin, body string
			status                  int
			code                    string
		}{
			{"another origin", k.Key, "https://evil.example", `{"email":"x@example.com"}`, http.StatusForbidden, "origin_not_allowed"},
			{"no origin", k.Key, "", `{"email":"x@example.com"}`, http.StatusForbidden, "origin_not_allowed"},
			{"an unknown key", "pk_aaaaaaaaaaaaaaaaaaaaaaaaaa", siteOrigin, `{"email":"x@example.com"}`, http.StatusUnauthorized, "invalid_key"},
			{"no key", "", siteOrigin, `{"email":"x@example.com"}`, http.StatusUnauthorized, "invalid_key"},
			{"a 40,000-character key", strings.Repeat("k", 40000), siteOrigin, `{"email":"x@example.com"}`, http.StatusUnauthorized, "invalid_key"},
			{"the visitor's address", k.Key, siteOrigin, `{"email":"x@example.com","client_ip_address":"1.2.3.4"}`, http.StatusBadRequest, "not_allowed"},
			{"a user agent", k.Key, siteOrigin, `{"email":"x@example.com","client_user_agent":"bot"}`, http.StatusBadRequest, "not_allowed"},
			{"a capture time", k.Key, siteOrigin, `{"email":"x@example.com","created_at":"2026-01-01T00:00:00Z"}`, http.StatusBadRequest, "not_allowed"},
			{"17 KiB", k.Key, siteOrigin, `{"email":"x@example.com","message":"` + strings.Repeat("x", 17<<10) + `"}`, http.StatusRequestEntityTooLarge, "body_too_large"},
			{"a NUL byte", k.Key, siteOrigin, `{"email":"x\u0000@example.com"}`, http.StatusBadRequest, "invalid_character"},
			{"no contact key", k.Key, siteOrigin, `{"first_name":"Jane"}`, http.StatusUnprocessableEntity, "no_contact_key"},
		}
		for i, tt := range refusals {
			r, h := f.a.collect(http.MethodPost, "/api/v1/collect", tt.key, tt.origin, fmt.Sprintf("198.51.100.%d", 20+i), tt.body)
			if r.status != tt.status || r.Error.Code != tt.code {
				t.Errorf("%s = %d %s; want %d %s", tt.what, r.status, r.raw, tt.status, tt.code)
			}
			if tt.status != http.StatusBadRequest && tt.status != http.StatusRequestEntityTooLarge && tt.status != http.StatusUnprocessableEntity &&
				h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s answers with CORS %q", tt.what, h.Get("Access-Control-Allow-Origin"))
			}
		}
		if n := f.a.leadCount(f.acc); n != 1 {
			t.Errorf("%d leads; want the one", n)
		}

		// A site key reaches only the collect API.
		if r := f.a.postLead(k.Key, `{"email":"z@example.com"}`); r.status != http.StatusUnauthorized {
			t.Errorf("a site key on /api/v1/leads = %d; want 401", r.status)
		}
		if r, _ := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, strings.Repeat("o", 40000), "198.51.100.9", `{"email":"z@example.com"}`); len(r.raw) > 1000 {
			t.Errorf("a 40,000-character origin is echoed back: %d bytes", len(r.raw))
		}
		// A revoked key stops at once.
		if err := s.RevokeSiteKey(t.Context(), f.acc.ID, k.ID, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if r, _ := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "198.51.100.8", `{"email":"y@example.com"}`); r.status != http.StatusUnauthorized {
			t.Errorf("a revoked key = %d; want 401", r.status)
		}
	})
}

// One address may post a form session's requests, not a flood: past the
// limit it gets 429 with Retry-After, and other visitors go on.
func TestCollectRateLimit(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	k := siteKey(t, s, f.acc, siteOrigin)
	limited := 0
	for i := range 40 {
		body := fmt.Sprintf(`{"email":"v%d@example.com","partial":true}`, i)
		r, h := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "203.0.113.9", body)
		if r.status == http.StatusTooManyRequests {
			limited++
			if h.Get("Retry-After") == "" || r.Error.Code != "rate_limited" {
				t.Errorf("429 without Retry-After or its code: %v %s", h, r.raw)
			}
		}
	}
	if limited == 0 {
		t.Error("40 leads at once from one address were all taken")
	}
	if r, _ := f.a.collect(http.MethodPost, "/api/v1/collect", k.Key, siteOrigin, "203.0.113.10", `{"email":"other@example.com"}`); r.status != http.StatusCreated {
		t.Errorf("another visitor = %d %s; want 201", r.status, r.raw)
	}
}

// The config names the pixels whose Lead a lead sends, for the page's
// pixel; it answers the allowed origins only.
func TestCollectConfig(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	k := siteKey(t, s, f.acc, siteOrigin)
	r, h := f.a.collect(http.MethodGet, "/api/v1/collect/config", k.Key, siteOrigin, "198.51.100.7", "")
	var c struct {
		Pixels []string `json:"pixels"`
	}
	if err := json.Unmarshal([]byte(r.raw), &c); err != nil || r.status != http.StatusOK {
		t.Fatalf("config = %d %s", r.status, r.raw)
	}
	if len(c.Pixels) != 1 || c.Pixels[0] != f.d.PixelID || h.Get("Access-Control-Allow-Origin") != siteOrigin {
		t.Errorf("config = %s, ACAO %q; want the pixel %s", r.raw, h.Get("Access-Control-Allow-Origin"), f.d.PixelID)
	}
	if r, h := f.a.collect(http.MethodGet, "/api/v1/collect/config", k.Key, "https://evil.example", "198.51.100.7", ""); r.status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("config from another origin = %d, ACAO %q", r.status, h.Get("Access-Control-Allow-Origin"))
	}
}
