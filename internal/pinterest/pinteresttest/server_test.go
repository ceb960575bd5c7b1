package pinteresttest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/pinterest/pinteresttest"
)

const hash = "7904116daabb1a0dcb3941026d296ffb1d1ee8bbe4e8ae789254af5874c625ab"

// answer is any body of the fake: a 200's results or a refusal.
type answer struct {
	pinteresttest.Results
	Code    int                    `json:"code"`
	Message string                 `json:"message"`
	Details *pinteresttest.Results `json:"details"`
}

// post sends body to account's events with token (none when "") and
// query, and reads the answer.
func post(t *testing.T, s *pinteresttest.Server, token, account, query, body string) (int, answer) {
	t.Helper()
	url := s.URL + pinteresttest.Path(account) + query
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("X-Pinterest-Rid") == "" {
		t.Error("no X-Pinterest-Rid header")
	}
	var a answer
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		t.Fatalf("answer %d: %v", res.StatusCode, err)
	}
	return res.StatusCode, a
}

// event is a valid event with fields added (each starting with a comma) or,
// for a field already set, replaced: JSON keeps the last of a repeated key.
func event(fields string) string {
	return `{"event_name":"lead","action_source":"web","event_time":1764582000,"event_id":"ls_1",` +
		`"user_data":{"em":["` + hash + `"]}` + fields + `}`
}

func body(events ...string) string { return `{"data":[` + strings.Join(events, ",") + `]}` }

// Whole requests are refused with Pinterest's status and code, and not
// recorded.
func TestServerRefusesRequests(t *testing.T) {
	s := pinteresttest.New(t)
	many := make([]string, pinteresttest.MaxBatch+1)
	for i := range many {
		many[i] = event("")
	}
	for _, tt := range []struct {
		name, token, account, body string
		status, code               int
		message                    string
	}{
		{"no token", "", pinteresttest.AdAccount, body(event("")), http.StatusUnauthorized, pinteresttest.CodeAuthFailed, "Authentication failed."},
		{"another token", "nope", pinteresttest.AdAccount, body(event("")), http.StatusUnauthorized, pinteresttest.CodeAuthFailed, "Authentication failed."},
		{"another ad account", pinteresttest.Token, "42", body(event("")), http.StatusForbidden, pinteresttest.CodeNotPermitted, "not permitted"},
		{"no events", pinteresttest.Token, pinteresttest.AdAccount, body(), http.StatusBadRequest, pinteresttest.CodeInvalid, "1 to 1000"},
		{"no data", pinteresttest.Token, pinteresttest.AdAccount, `{}`, http.StatusBadRequest, pinteresttest.CodeInvalid, "1 to 1000"},
		{"too many events", pinteresttest.Token, pinteresttest.AdAccount, body(many...), http.StatusBadRequest, pinteresttest.CodeInvalid, "not 1001"},
		{"not JSON", pinteresttest.Token, pinteresttest.AdAccount, `{"data":`, http.StatusBadRequest, pinteresttest.CodeInvalid, "Invalid request body"},
		{"an event that is no object", pinteresttest.Token, pinteresttest.AdAccount, body(`"lead"`), http.StatusBadRequest, pinteresttest.CodeInvalid, "Invalid request body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, a := post(t, s, tt.token, tt.account, "", tt.body)
			if status != tt.status || a.Code != tt.code || !strings.Contains(a.Message, tt.message) {
				t.Errorf("answer %d %+v; want %d, code %d, a message with %q", status, a, tt.status, tt.code, tt.message)
			}
		})
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests recorded; want none", n)
	}
}

// Each event Pinterest would fail fails alone, with a 422 (code 953) that
// lists every event's status in order.
func TestServerFailsEvents(t *testing.T) {
	for _, tt := range []struct {
		name, event, message string
	}{
		{"no event_name", event(`,"event_name":""`), "event_name is required"},
		{"an unknown event_name", event(`,"event_name":"Lead"`), "not one of Pinterest's event names"},
		{"no action_source", event(`,"action_source":null`), "action_source"},
		{"an unknown action_source", event(`,"action_source":"website"`), "action_source"},
		{"no event_time", event(`,"event_time":null`), "event_time is required"},
		{"event_time not an integer", event(`,"event_time":1764582000.5`), "Unix time in seconds"},
		{"event_time as a string", event(`,"event_time":"1764582000"`), "event_time is required"},
		{"event_time in milliseconds", event(`,"event_time":1764582000000`), "milliseconds"},
		{"no event_id", event(`,"event_id":""`), "event_id is required"},
		{"opt_out not a boolean", event(`,"opt_out":"false"`), "opt_out"},
		{"no user_data", event(`,"user_data":null`), "user_data is required"},
		{"a phone alone", event(`,"user_data":{"ph":["` + hash + `"]}`), "user_data needs em"},
		{"an IP address alone", event(`,"user_data":{"client_ip_address":"203.0.113.7"}`), "user_data needs em"},
		{"a plain email", event(`,"user_data":{"em":["alex@example.com"]}`), "user_data.em"},
		{"an email as a string", event(`,"user_data":{"em":"` + hash + `"}`), "user_data.em"},
		{"an empty email list", event(`,"user_data":{"em":[]}`), "user_data.em"},
		{"an upper-case hash", event(`,"user_data":{"em":["` + hash + `"],"ph":["` + strings.ToUpper(hash) + `"]}`), "user_data.ph"},
		{"an unhashed country", event(`,"user_data":{"em":["` + hash + `"],"country":["us"]}`), "user_data.country"},
		{"custom_data not an object", event(`,"custom_data":[]`), "custom_data must be an object"},
		{"a value as a number", event(`,"custom_data":{"value":250,"currency":"USD"}`), "custom_data.value must be a string"},
		{"a value that is no number", event(`,"custom_data":{"value":"lots"}`), "custom_data.value"},
		{"a lower-case currency", event(`,"custom_data":{"value":"250.00","currency":"usd"}`), "custom_data.currency"},
		{"a currency that is no code", event(`,"custom_data":{"value":"250.00","currency":"DOLLAR"}`), "custom_data.currency"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := pinteresttest.New(t)
			status, a := post(t, s, pinteresttest.Token, pinteresttest.AdAccount, "", body(event(""), tt.event))
			if status != http.StatusUnprocessableEntity || a.Code != pinteresttest.CodeSomeFailed || a.Details == nil {
				t.Fatalf("answer %d %+v; want 422, code 953 with details", status, a)
			}
			d := a.Details
			if d.NumEventsReceived != 2 || d.NumEventsProcessed != 1 || len(d.Events) != 2 ||
				d.Events[0].Status != pinteresttest.StatusProcessed || d.Events[1].Status != pinteresttest.StatusFailed ||
				!strings.Contains(d.Events[1].ErrorMessage, tt.message) {
				t.Errorf("details %+v; want event 0 processed, event 1 failed with %q", d, tt.message)
			}
			if n := s.EventsReceived(); n != 1 {
				t.Errorf("%d events received; want the good one", n)
			}
		})
	}
}

// What Pinterest takes is processed and recorded, test requests apart.
func TestServerProcesses(t *testing.T) {
	s := pinteresttest.New(t)
	for _, tt := range []struct{ name, event string }{
		{"an email", event("")},
		{"the IP address with the user agent", event(`,"user_data":{"client_ip_address":"203.0.113.7","client_user_agent":"Mozilla/5.0","click_id":"dj0y"}`)},
		{"a valued offline event", event(`,"action_source":"offline","event_name":"checkout","opt_out":false,` +
			`"custom_data":{"value":"250.00","currency":"USD","order_id":"ls_1","opt_out_type":"LDP"}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, a := post(t, s, pinteresttest.Token, pinteresttest.AdAccount, "", body(tt.event))
			if status != http.StatusOK || a.NumEventsReceived != 1 || a.NumEventsProcessed != 1 ||
				len(a.Events) != 1 || a.Events[0].Status != pinteresttest.StatusProcessed {
				t.Errorf("answer %d %+v; want 200 with the event processed", status, a)
			}
		})
	}
	if status, _ := post(t, s, pinteresttest.Token, pinteresttest.AdAccount, "?test=true", body(event(""), event(""))); status != http.StatusOK {
		t.Errorf("test request answered %d; want 200", status)
	}
	if n, tests := s.EventsReceived(), s.TestRequests(); n != 3 || len(s.Requests()) != 3 || len(tests) != 1 ||
		!tests[0].Test || len(tests[0].Data) != 2 {
		t.Errorf("%d events, %d requests and test requests %+v; want 3, 3 and one test request of 2", n, len(s.Requests()), tests)
	}
	if id := s.Events()[0]["event_id"]; id != "ls_1" {
		t.Errorf("first event id %v; want ls_1", id)
	}
}

// It fails on demand with Pinterest's body for the status, then takes
// requests again.
func TestServerFailNext(t *testing.T) {
	s := pinteresttest.New(t)
	s.FailNext(2, http.StatusTooManyRequests)
	s.FailNext(1, http.StatusServiceUnavailable)
	s.FailNext(1, http.StatusInternalServerError)
	for _, want := range []struct{ status, code int }{
		{http.StatusTooManyRequests, pinteresttest.CodeRateLimited},
		{http.StatusTooManyRequests, pinteresttest.CodeRateLimited},
		{http.StatusServiceUnavailable, pinteresttest.CodeRampedDown},
		{http.StatusInternalServerError, 0},
		{http.StatusOK, 0},
	} {
		if status, a := post(t, s, pinteresttest.Token, pinteresttest.AdAccount, "", body(event(""))); status != want.status || a.Code != want.code {
			t.Errorf("answer %d %+v; want %d with code %d", status, a, want.status, want.code)
		}
	}
	if n := s.EventsReceived(); n != 1 {
		t.Errorf("%d events received; want the last request's", n)
	}
}

// EchoToken puts the token the request sent in the answer's messages.
func TestServerEchoToken(t *testing.T) {
	s := pinteresttest.New(t)
	s.EchoToken()
	_, a := post(t, s, "secret-ish", pinteresttest.AdAccount, "", body(event("")))
	if !strings.Contains(a.Message, "secret-ish") {
		t.Errorf("message %q; want the token echoed", a.Message)
	}
}
