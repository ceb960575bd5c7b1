package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// apiReply is a decoded ingest API answer.
type apiReply struct {
	status int
	LeadID int64 `json:"lead_id"`
	Junk   bool  `json:"junk"`
	// JunkReasons are the signal names.
	JunkReasons []string          `json:"junk_reasons"`
	Outcome     string            `json:"outcome"`
	Events      []json.RawMessage `json:"events"`
	Error       struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
	raw string
}

func (a *app) postLead(key, body string, header ...string) apiReply {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(a.t.Context(), http.MethodPost, a.srv.URL+"/api/v1/leads", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("post lead: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := apiReply{status: res.StatusCode, raw: string(b)}
	if err := json.Unmarshal(b, &r); err != nil {
		a.t.Fatalf("reply is not JSON (%d): %s", res.StatusCode, b)
	}
	return r
}

// ingestAccount makes an account with a default country and a key.
func (a *app) ingestAccount(slug, country string) (models.Account, string) {
	a.t.Helper()
	owner := a.user(slug+"-owner@example.com", false)
	acc := a.account(slug, owner)
	acc.DefaultCountry = country
	if _, err := a.store.UpdateAccountSettings(a.t.Context(), acc); err != nil {
		a.t.Fatal(err)
	}
	_, secret, err := a.store.CreateIngestKey(a.t.Context(), acc.ID, "website")
	if err != nil {
		a.t.Fatal(err)
	}
	return acc, secret
}

func (a *app) leadCount(acc models.Account) int64 {
	a.t.Helper()
	n, err := a.store.CountLeads(a.t.Context(), acc.ID, store.LeadFilter{}, 1_000_000)
	if err != nil {
		a.t.Fatal(err)
	}
	return n
}

const goodLead = `{"external_id":"form-1","email":" Jane.Doe@Example.COM ","phone":"(415) 692-4281",
	"first_name":"Jane","last_name":"Doe","city":"San Francisco","state":"California","zip":"94107-1234",
	"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0 (Test)","fbclid":"IwAR_AbC123",
	"event_source_url":"https://example.com/quote","fill_seconds":34.5,"message":"Need a quote for a new roof",
	"created_at":"2026-12-01T10:00:00Z","fields":{"budget":"5000","callback":true}}`

func TestIngestCreatesLead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")

		r := a.postLead(key, goodLead, "X-Forwarded-For", "10.9.9.9", "User-Agent", "server-side-client/1.0")
		if r.status != http.StatusCreated || r.LeadID == 0 || r.Junk || r.Outcome != "created" {
			t.Fatalf("create lead = %d %s", r.status, r.raw)
		}
		if r.Events == nil || len(r.JunkReasons) != 0 {
			t.Errorf("reply %s: want events [] and junk_reasons []", r.raw)
		}
		l, err := s.Lead(t.Context(), acc.ID, r.LeadID)
		if err != nil {
			t.Fatal(err)
		}
		// The visitor's IP and agent come from the body, never from the
		// server that called us.
		if l.ClientIP != "203.0.113.7" || l.ClientUserAgent != "Mozilla/5.0 (Test)" {
			t.Errorf("lead ip %q agent %q; want the body's", l.ClientIP, l.ClientUserAgent)
		}
		var keys normalize.Keys
		if err := json.Unmarshal([]byte(l.MatchKeys), &keys); err != nil {
			t.Fatal(err)
		}
		if keys.Email.Normalized != "jane.doe@example.com" || keys.Email.Hash != normalize.Hash("jane.doe@example.com") {
			t.Errorf("em = %+v", keys.Email)
		}
		// No country code in the phone: the account's default country (US) applies.
		if keys.Phone.Normalized != "14156924281" || l.PhoneE164 != "14156924281" {
			t.Errorf("ph = %+v (e164 column %q); want 14156924281", keys.Phone, l.PhoneE164)
		}
		if keys.State.Normalized != "ca" || keys.Zip.Normalized != "94107" {
			t.Errorf("st %+v zp %+v; want ca and 94107", keys.State, keys.Zip)
		}
		// fbc rebuilt from fbclid with the capture time in ms.
		if keys.FBC != "fb.1.1796119200000.IwAR_AbC123" || !keys.FBCRebuilt {
			t.Errorf("fbc = %q rebuilt %v", keys.FBC, keys.FBCRebuilt)
		}
		if l.EmailHash != keys.Email.Hash || l.PhoneHash != keys.Phone.Hash {
			t.Error("hash columns must match the match keys")
		}
		if !strings.Contains(l.Fields, `"callback":"true"`) {
			t.Errorf("custom fields = %s", l.Fields)
		}
	})
}

func TestIngestIdempotentAndPartialUpgrade(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")

		first := a.postLead(key, goodLead)
		again := a.postLead(key, goodLead)
		if again.status != http.StatusOK || again.LeadID != first.LeadID || again.Outcome != "existing" {
			t.Errorf("same external_id = %d %s; want 200 with lead %d", again.status, again.raw, first.LeadID)
		}
		if n := a.leadCount(acc); n != 1 {
			t.Errorf("%d leads after a resend; want 1", n)
		}

		p := a.postLead(key, `{"external_id":"v-9","email":"sam@example.com","partial":true}`)
		if p.status != http.StatusCreated {
			t.Fatalf("partial = %d %s", p.status, p.raw)
		}
		full := a.postLead(key, `{"external_id":"v-9","email":"sam@example.com","phone":"+44 20 7946 0958","first_name":"Sam","fill_seconds":20}`)
		if full.status != http.StatusOK || full.LeadID != p.LeadID || full.Outcome != "upgraded" {
			t.Fatalf("complete after partial = %d %s", full.status, full.raw)
		}
		l, _ := s.Lead(t.Context(), acc.ID, p.LeadID)
		if l.Partial || l.FirstName != "Sam" || l.PhoneE164 != "442079460958" {
			t.Errorf("upgraded lead = partial %v name %q phone %q", l.Partial, l.FirstName, l.PhoneE164)
		}
		// The earlier partial lead of the same person is not a duplicate.
		if full.Junk {
			t.Errorf("upgrade flagged junk: %v", full.JunkReasons)
		}
	})
}

func TestIngestConcurrentDoublePost(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		var wg sync.WaitGroup
		ids := make([]int64, 6)
		for i := range ids {
			wg.Go(func() {
				r := a.postLead(key, `{"external_id":"race-1","email":"race@example.com"}`)
				if r.status != http.StatusCreated && r.status != http.StatusOK {
					t.Errorf("post %d = %d %s", i, r.status, r.raw)
				}
				ids[i] = r.LeadID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Errorf("concurrent posts answered leads %v; want one", ids)
				break
			}
		}
		if n := a.leadCount(acc); n != 1 {
			t.Errorf("%d leads; want 1", n)
		}
	})
}

func TestIngestJunk(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")

		r := a.postLead(key, `{"email":"bot@example.com","honeypot":"http://spam","fill_seconds":0.4}`)
		if r.status != http.StatusCreated || !r.Junk || strings.Join(r.JunkReasons, ",") != "too_fast,honeypot" {
			t.Errorf("bot lead = %d %s; want junk too_fast,honeypot", r.status, r.raw)
		}
		if n := a.leadCount(acc); n != 1 {
			t.Errorf("junk lead not stored: %d leads", n)
		}
		a.postLead(key, `{"email":"again@example.com"}`)
		r = a.postLead(key, `{"email":"AGAIN@example.com "}`)
		if !r.Junk || strings.Join(r.JunkReasons, ",") != "duplicate" {
			t.Errorf("same person twice = %s; want duplicate", r.raw)
		}
		r = a.postLead(key, `{"email":"x@mailinator.com"}`)
		if !r.Junk || strings.Join(r.JunkReasons, ",") != "disposable_email" {
			t.Errorf("disposable email = %s", r.raw)
		}

		// A disabled signal does not fire.
		acc.JunkSettings = `{"honeypot":{"enabled":false}}`
		if err := s.UpdateJunkSettings(t.Context(), acc.ID, acc.JunkSettings); err != nil {
			t.Fatal(err)
		}
		r = a.postLead(key, `{"email":"trap@example.com","honeypot":"x"}`)
		if r.Junk {
			t.Errorf("disabled honeypot still fired: %s", r.raw)
		}
	})
}

func TestIngestBadInput(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, key := a.ingestAccount("acme", "US")
		tests := []struct {
			name   string
			body   string
			status int
			code   string
			field  string
		}{
			{"malformed", `{"email":`, 400, "malformed_json", ""},
			{"not an object", `["a"]`, 400, "malformed_json", ""},
			{"trailing data", `{"email":"a@example.com"} {}`, 400, "malformed_json", ""},
			{"wrong type", `{"email":"a@example.com","fill_seconds":"fast"}`, 400, "wrong_type", "fill_seconds"},
			{"unknown key", `{"emial":"a@example.com"}`, 400, "unknown_field", "emial"},
			{"too large", `{"email":"a@example.com","message":"` + strings.Repeat("x", 65<<10) + `"}`, 400, "body_too_large", ""},
			{"bad created_at", `{"email":"a@example.com","created_at":"yesterday"}`, 400, "invalid_created_at", "created_at"},
			{"empty", ``, 400, "empty_body", ""},
			{"no contact key", `{"first_name":"Jane","city":"Paris"}`, 422, "no_contact_key", ""},
			{"meta lead id", `{"meta_lead_id":"12345","source":"instant_form"}`, 422, "invalid_field", "meta_lead_id"},
			{"source", `{"email":"a@example.com","source":"fax"}`, 422, "invalid_field", "source"},
			{"nested custom field", `{"email":"a@example.com","fields":{"a":{"b":1}}}`, 422, "invalid_field", "fields.a"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := a.postLead(key, tt.body)
				if r.status != tt.status || r.Error.Code != tt.code || r.Error.Field != tt.field || r.Error.Message == "" {
					t.Errorf("= %d %s; want %d code %q field %q", r.status, r.raw, tt.status, tt.code, tt.field)
				}
			})
		}
		if n := a.leadCount(acc); n != 0 {
			t.Errorf("refused requests stored %d leads", n)
		}

		ok := a.postLead(key, `{"meta_lead_id":"123456789012345","source":"instant_form"}`)
		if ok.status != http.StatusCreated {
			t.Errorf("15-digit meta_lead_id = %d %s", ok.status, ok.raw)
		}
	})
}

func TestIngestAuth(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newApp(t, s)
	acc, key := a.ingestAccount("acme", "US")
	for name, k := range map[string]string{"missing": "", "unknown": "lsk_nope"} {
		r := a.postLead(k, `{"email":"a@example.com"}`)
		if r.status != http.StatusUnauthorized || r.Error.Code == "" {
			t.Errorf("%s key = %d %s; want 401", name, r.status, r.raw)
		}
	}
	ks, _ := s.IngestKeys(t.Context(), acc.ID)
	if err := s.RevokeIngestKey(t.Context(), acc.ID, ks[0].ID, a.clock()); err != nil {
		t.Fatal(err)
	}
	if r := a.postLead(key, `{"email":"a@example.com"}`); r.status != http.StatusUnauthorized {
		t.Errorf("revoked key = %d; want 401", r.status)
	}
	if n := a.leadCount(acc); n != 0 {
		t.Errorf("%d leads stored without a valid key", n)
	}
	// Each key writes only to its own account.
	other, otherKey := a.ingestAccount("beta", "DE")
	r := a.postLead(otherKey, `{"email":"b@example.com"}`)
	if l, err := s.Lead(t.Context(), other.ID, r.LeadID); err != nil || l.AccountID != other.ID {
		t.Errorf("lead of beta's key: %+v, %v", l, err)
	}
	if _, err := s.Lead(t.Context(), acc.ID, r.LeadID); err == nil {
		t.Error("beta's lead is visible in acme")
	}
	_ = fmt.Sprint()
}
