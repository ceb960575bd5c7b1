package tiktoktest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/tiktok/tiktoktest"
)

const hash = "d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69"

// post sends body with token and reads the answer.
func post(t *testing.T, s *tiktoktest.Server, token, body string) (int, tiktoktest.Answer) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+tiktoktest.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Access-Token", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a tiktoktest.Answer
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			t.Fatalf("answer: %v", err)
		}
	}
	return res.StatusCode, a
}

func event(fields string) string {
	return `{"event":"Lead","event_time":1764582000,"event_id":"ls_1","user":{"email":["` + hash + `"],"ip":"203.0.113.7"}` + fields + `}`
}

func body(events ...string) string {
	return `{"event_source":"web","event_source_id":"C4K2PIXEL","data":[` + strings.Join(events, ",") + `]}`
}

// The fake takes what TikTok takes and refuses the rest with TikTok's
// codes, at HTTP 200, recording only what it took.
func TestServer(t *testing.T) {
	s := tiktoktest.New(t)
	many := make([]string, tiktoktest.MaxBatch+1)
	for i := range many {
		many[i] = event("")
	}
	for _, tt := range []struct {
		name, token, body string
		code              int
		message           string
	}{
		{"a lead", tiktoktest.Token, body(event(`,"properties":{"value":250,"currency":"USD"}`)), tiktoktest.CodeOK, "OK"},
		{"a phone as one string", tiktoktest.Token, body(`{"event":"Lead","event_time":1764582000,"user":{"phone":"` + hash + `"}}`), tiktoktest.CodeOK, "OK"},
		{"no token", "", body(event("")), tiktoktest.CodeNoPermission, "Access-Token"},
		{"another token", "nope", body(event("")), tiktoktest.CodeNoPermission, "Access-Token"},
		{"no pixel", tiktoktest.Token, `{"event_source":"web","data":[` + event("") + `]}`, tiktoktest.CodeInvalidParameter, "event_source_id"},
		{"no event", tiktoktest.Token, body(`{"event_time":1764582000}`), tiktoktest.CodeInvalidParameter, "Batch.0.event"},
		{"no time", tiktoktest.Token, body(`{"event":"Lead"}`), tiktoktest.CodeInvalidParameter, "Batch.0.event_time"},
		{"milliseconds", tiktoktest.Token, body(`{"event":"Lead","event_time":1764582000000}`), tiktoktest.CodeInvalidParameter, "milliseconds"},
		{"a plain email", tiktoktest.Token, body(event(""), `{"event":"Lead","event_time":1764582000,"user":{"email":["jane@example.com"]}}`),
			tiktoktest.CodeInvalidParameter, "Batch.1.user.email"},
		{"an upper-case hash", tiktoktest.Token, body(`{"event":"Lead","event_time":1764582000,"user":{"external_id":["` + strings.ToUpper(hash) + `"]}}`),
			tiktoktest.CodeInvalidParameter, "user.external_id"},
		{"a value as a string", tiktoktest.Token, body(event(`,"properties":{"value":"250"}`)), tiktoktest.CodeInvalidParameter, "properties.value"},
		{"too many", tiktoktest.Token, body(many...), tiktoktest.CodeInvalidParameter, "between 1 and 1000"},
		{"none", tiktoktest.Token, body(), tiktoktest.CodeInvalidParameter, "data"},
		{"not JSON", tiktoktest.Token, `{"data":`, tiktoktest.CodeInvalidParameter, "not JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, a := post(t, s, tt.token, tt.body)
			if status != http.StatusOK || a.Code != tt.code || !strings.Contains(a.Message, tt.message) || a.RequestID == "" {
				t.Errorf("answer %d %+v; want HTTP 200, code %d, a message with %q", status, a, tt.code, tt.message)
			}
		})
	}
	if got := len(s.Requests()); got != 2 || s.EventsReceived() != 2 || s.Requests()[0].EventIDs()[0] != "ls_1" {
		t.Errorf("accepted %d requests, %d events; want the two good ones", got, s.EventsReceived())
	}
}

// It fails on demand, with a code or an HTTP status, then takes requests
// again.
func TestServerFailNext(t *testing.T) {
	s := tiktoktest.New(t)
	s.FailNext(1, tiktoktest.Failure{Code: tiktoktest.CodeTooManyRequests})
	s.FailNext(1, tiktoktest.Failure{Status: http.StatusBadGateway})
	if _, a := post(t, s, tiktoktest.Token, body(event(""))); a.Code != tiktoktest.CodeTooManyRequests {
		t.Errorf("first answer %+v; want 40100", a)
	}
	if status, _ := post(t, s, tiktoktest.Token, body(event(""))); status != http.StatusBadGateway {
		t.Errorf("second answer %d; want 502", status)
	}
	if _, a := post(t, s, tiktoktest.Token, body(event(""))); a.Code != tiktoktest.CodeOK {
		t.Errorf("third answer %+v; want OK", a)
	}
	if n := s.EventsReceived(); n != 1 {
		t.Errorf("%d events received; want the third request's", n)
	}
	if status, _ := post(t, s, tiktoktest.Token, fmt.Sprintf(`{"event_source":"%s"}`, "web")); status != http.StatusOK {
		t.Errorf("a bad body answered HTTP %d; TikTok answers 200", status)
	}
}
