package web_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/internal/crm/crmtest"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// hookReply is a decoded answer of POST /hooks/<kind>/<token>.
type hookReply struct {
	status   int
	Received int `json:"received"`
	Stored   int `json:"stored"`
	Ignored  int `json:"ignored"`
	// Attention counts the changes stored that cannot become stage
	// changes as sent.
	Attention int `json:"needs_attention"`
	Error     struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// postHook posts body to path with the headers given in pairs.
func (a *app) postHook(path string, body []byte, header ...string) hookReply {
	a.t.Helper()
	req, _ := http.NewRequestWithContext(a.t.Context(), http.MethodPost, a.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("post hook: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := hookReply{status: res.StatusCode, raw: string(b)}
	if err := json.Unmarshal(b, &r); err != nil {
		a.t.Fatalf("hook reply is not JSON (%d): %s", res.StatusCode, b)
	}
	return r
}

// connection stores a connection of acc with its secrets sealed as the
// connection pages seal them.
func (a *app) connection(acc models.Account, kind crm.Kind, name, secret, apiToken string) models.CRMConnection {
	a.t.Helper()
	c := models.CRMConnection{AccountID: acc.ID, Kind: string(kind), Name: name, Token: store.NewCRMToken()}
	if secret != "" {
		c.SecretSealed = a.box.Seal(secret, crm.SecretLabel(c.Token))
	}
	if apiToken != "" {
		c.APITokenSealed = a.box.Seal(apiToken, crm.APITokenLabel(c.Token))
	}
	if err := a.store.CreateCRMConnection(a.t.Context(), &c); err != nil {
		a.t.Fatal(err)
	}
	return c
}

// postHubSpot posts body to c's hook signed with HubSpot's v3 signature at
// the app's clock.
func (a *app) postHubSpot(c models.CRMConnection, secret string, body []byte) hookReply {
	a.t.Helper()
	path := "/hooks/hubspot/" + c.Token
	ts := strconv.FormatInt(a.clock().UnixMilli(), 10)
	sig := crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, body, ts)
	return a.postHook(path, body, "X-HubSpot-Signature-v3", sig, "X-HubSpot-Request-Timestamp", ts)
}

func (a *app) deliveries(acc models.Account, c models.CRMConnection) []models.CRMDelivery {
	a.t.Helper()
	ds, err := a.store.CRMDeliveries(a.t.Context(), acc.ID, c.ID, 0, 100)
	if err != nil {
		a.t.Fatal(err)
	}
	return ds
}

// The hook answers what the contract says, and stores nothing it refuses.
func TestHookAnswers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("crm", "US")
		const secret = "hs-client-secret"
		c := a.connection(acc, crm.HubSpot, "Sales", secret, "api-token")
		body := crmtest.HubSpotDealStage(62515, "987654321", "closedwon", a.clock().Add(-time.Minute))
		path := "/hooks/hubspot/" + c.Token
		ts := strconv.FormatInt(a.clock().UnixMilli(), 10)
		good := crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, body, ts)

		refused := []struct {
			name   string
			path   string
			body   []byte
			header []string
			status int
		}{
			{"unknown kind", "/hooks/salesforce/" + c.Token, body, nil, http.StatusNotFound},
			{"unknown token", "/hooks/hubspot/" + strings.Repeat("a", 52), body, nil, http.StatusNotFound},
			{"token of another kind", "/hooks/pipedrive/" + c.Token, body, nil, http.StatusNotFound},
			{"40,000-character token", "/hooks/hubspot/" + strings.Repeat("x", 40000), body, nil, http.StatusNotFound},
			{"no signature", path, body, nil, http.StatusUnauthorized},
			{"wrong signature", path, body, []string{"X-HubSpot-Signature-v3", base64.StdEncoding.EncodeToString(make([]byte, 32)),
				"X-HubSpot-Request-Timestamp", ts}, http.StatusUnauthorized},
			{"tampered body", path, append([]byte(nil), bytes.Replace(body, []byte("closedwon"), []byte("closedlost"), 1)...),
				[]string{"X-HubSpot-Signature-v3", good, "X-HubSpot-Request-Timestamp", ts}, http.StatusUnauthorized},
			{"stale timestamp", path, body, []string{"X-HubSpot-Signature-v3",
				crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, body, strconv.FormatInt(a.clock().Add(-6*time.Minute).UnixMilli(), 10)),
				"X-HubSpot-Request-Timestamp", strconv.FormatInt(a.clock().Add(-6*time.Minute).UnixMilli(), 10)}, http.StatusUnauthorized},
			{"over 1 MiB", path, bytes.Repeat([]byte(" "), 1<<20+1), nil, http.StatusRequestEntityTooLarge},
		}
		for _, tt := range refused {
			r := a.postHook(tt.path, tt.body, tt.header...)
			if r.status != tt.status || r.Error.Code == "" {
				t.Errorf("%s: %d %s; want %d with a JSON error", tt.name, r.status, r.raw, tt.status)
			}
		}
		if ds := a.deliveries(acc, c); len(ds) != 0 {
			t.Fatalf("refused deliveries stored %d rows", len(ds))
		}

		// A GET (HubSpot workflows may send one) must be signed too; a PUT
		// is a 405 naming POST.
		res, err := http.Get(a.srv.URL + path + "?hs_object_id=1&dealstage=closedwon")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("unsigned GET = %d; want 401", res.StatusCode)
		}
		put, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, a.srv.URL+path, bytes.NewReader(body))
		if res, err = http.DefaultClient.Do(put); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(res.Header.Get("Allow"), "POST") {
			t.Errorf("PUT = %d Allow %q; want 405 naming POST", res.StatusCode, res.Header.Get("Allow"))
		}

		// Signed but not JSON: 400.
		junk := []byte("not json")
		if r := a.postHook(path, junk, "X-HubSpot-Signature-v3", crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, junk, ts),
			"X-HubSpot-Request-Timestamp", ts); r.status != http.StatusBadRequest {
			t.Errorf("signed junk = %d %s; want 400", r.status, r.raw)
		}

		// Signed but not UTF-8: 400, nothing stored.
		bad := bytes.Replace(body, []byte("closedwon"), []byte{'c', 0xff, 'w'}, 1)
		sig := crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, bad, ts)
		if r := a.postHook(path, bad, "X-HubSpot-Signature-v3", sig, "X-HubSpot-Request-Timestamp", ts); r.status != http.StatusBadRequest {
			t.Errorf("not UTF-8 = %d %s; want 400", r.status, r.raw)
		}

		// Good: stored once, however often HubSpot sends it.
		for i, want := range []int{1, 0, 0} {
			r := a.postHook(path, body, "X-HubSpot-Signature-v3", good, "X-HubSpot-Request-Timestamp", ts)
			if r.status != http.StatusOK || r.Received != 1 || r.Stored != want {
				t.Errorf("delivery %d = %d %s; want 200 with 1 received, %d stored", i+1, r.status, r.raw, want)
			}
		}
		ds := a.deliveries(acc, c)
		if len(ds) != 1 || ds[0].CRMStageID != "closedwon" || ds[0].ObjectID != "987654321" || ds[0].Status != models.DeliveryWaiting {
			t.Fatalf("deliveries = %+v; want one waiting closedwon of deal 987654321", ds)
		}
		var stored, sent any
		if err := json.Unmarshal([]byte(ds[0].Body), &stored); err != nil {
			t.Fatalf("stored body is not JSON: %v", err)
		}
		var arr []any
		_ = json.Unmarshal(body, &arr)
		sent = arr[0]
		if fmt.Sprint(stored) != fmt.Sprint(sent) {
			t.Errorf("stored body = %v; want the event as sent %v", stored, sent)
		}

		// Signed JSON with a NUL in the stage: stored without its ids, for
		// a person to look at (HubSpot would not retry a 400).
		nul := bytes.Replace(body, []byte("closedwon"), []byte(`closed\u0000won`), 1)
		sig = crm.SignHubSpotV3(secret, http.MethodPost, a.srv.URL+path, nul, ts)
		if r := a.postHook(path, nul, "X-HubSpot-Signature-v3", sig, "X-HubSpot-Request-Timestamp", ts); r.status != http.StatusOK ||
			r.Stored != 1 || r.Attention != 1 {
			t.Errorf("NUL in stage = %d %s; want 200 with 1 stored, needing attention", r.status, r.raw)
		}
		if ds = a.deliveries(acc, c); len(ds) != 2 || ds[0].CRMStageID != "" || ds[0].ObjectID != "" {
			t.Errorf("deliveries = %+v; want the NUL one stored without its ids", ds)
		}

		// Only HubSpot's hooks take a GET.
		gen := a.connection(acc, crm.Generic, "Zapier", "zap-secret", "")
		if res, err = http.Get(a.srv.URL + "/hooks/generic/" + gen.Token + "?stage=won&email=a@example.com"); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET to a generic hook = %d; want 405", res.StatusCode)
		}

		// A connection whose secret env var was not set answers 503 naming it.
		env := models.CRMConnection{AccountID: acc.ID, Kind: string(crm.Pipedrive), Name: "From file", SecretEnv: "PIPEDRIVE_HOOK_PASSWORD"}
		if err := s.CreateCRMConnection(t.Context(), &env); err != nil {
			t.Fatal(err)
		}
		if r := a.postHook("/hooks/pipedrive/"+env.Token, []byte(`{}`)); r.status != http.StatusServiceUnavailable ||
			!strings.Contains(r.Error.Message, "PIPEDRIVE_HOOK_PASSWORD") {
			t.Errorf("no secret = %d %s; want 503 naming PIPEDRIVE_HOOK_PASSWORD", r.status, r.raw)
		}
	})
}

// The generic hook takes a signature or a bearer secret, and reads its
// fields through the connection's mapping.
func TestHookGeneric(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("crm", "US")
		const secret = "generic-secret"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		c.Fields = `{"email":"contact.email","stage":"deal.stage","change_id":"id"}`
		if err := s.SaveCRMConnection(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
		path := "/hooks/generic/" + c.Token
		body := []byte(`{"id":"chg-1","contact":{"email":"jane@example.com"},"deal":{"stage":"won"}}`)
		sig := crm.SignGeneric(secret, a.clock(), body)
		if r := a.postHook(path, body, "X-Leadsignal-Signature", sig); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("signed = %d %s; want 200 stored 1", r.status, r.raw)
		}
		body2 := []byte(`{"id":"chg-2","contact":{"email":"jane@example.com"},"deal":{"stage":"booked"}}`)
		if r := a.postHook(path, body2, "Authorization", "Bearer "+secret); r.status != http.StatusOK || r.Stored != 1 {
			t.Fatalf("bearer = %d %s; want 200 stored 1", r.status, r.raw)
		}
		if r := a.postHook(path, body2, "Authorization", "Bearer wrong"); r.status != http.StatusUnauthorized {
			t.Errorf("wrong bearer = %d; want 401", r.status)
		}
		old := a.clock().Add(-10 * time.Minute)
		if r := a.postHook(path, body, "X-Leadsignal-Signature", crm.SignGeneric(secret, old, body)); r.status != http.StatusUnauthorized {
			t.Errorf("replayed old signature = %d; want 401", r.status)
		}
		ds := a.deliveries(acc, c)
		if len(ds) != 2 || ds[0].Key != "change:chg-2" || ds[0].CRMStageID != "booked" || ds[1].CRMStageID != "won" {
			t.Errorf("deliveries = %+v; want chg-2 (booked) then chg-1 (won)", ds)
		}
	})
}

// Deliveries posted at the same time are stored together, and each is
// told truly whether its change was new: the same change posted by 16
// clients at once is stored once, 16 different ones each once.
func TestHookConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("crm", "US")
		const secret = "gen-secret"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		path := "/hooks/generic/" + c.Token
		post := func(bodies func(i int) string) int {
			replies := make(chan hookReply, 16)
			for i := range 16 {
				go func() {
					body := []byte(bodies(i))
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a.srv.URL+path, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+secret)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						replies <- hookReply{}
						return
					}
					defer res.Body.Close()
					r := hookReply{status: res.StatusCode}
					_ = json.NewDecoder(res.Body).Decode(&r)
					replies <- r
				}()
			}
			stored := 0
			for range 16 {
				r := <-replies
				if r.status != http.StatusOK {
					t.Errorf("concurrent post = %d; want 200", r.status)
				}
				stored += r.Stored
			}
			return stored
		}
		if n := post(func(int) string { return `{"email":"a@example.com","stage":"won","change_id":"same"}` }); n != 1 {
			t.Errorf("the same change from 16 clients: %d stored in all; want 1", n)
		}
		if n := post(func(i int) string {
			return fmt.Sprintf(`{"email":"a@example.com","stage":"won","change_id":"c-%d"}`, i)
		}); n != 16 {
			t.Errorf("16 different changes: %d stored; want 16", n)
		}
		if ds := a.deliveries(acc, c); len(ds) != 17 {
			t.Errorf("deliveries stored = %d; want 17", len(ds))
		}
	})
}
