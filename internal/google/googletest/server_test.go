package googletest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/google/googletest"
)

const hash = "d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69"

// errorBody is Google's REST error body as the fake writes it.
type errorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Metadata map[string]string `json:"metadata"`
		} `json:"details"`
	} `json:"error"`
}

func (b errorBody) reason() string {
	for _, d := range b.Error.Details {
		if d.Reason != "" {
			return d.Reason
		}
	}
	return ""
}

// token exchanges the fake's refresh token, with the form's fields
// replaced by those of change.
func token(t *testing.T, s *googletest.Server, change url.Values) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {googletest.ClientID},
		"client_secret": {googletest.ClientSecret}, "refresh_token": {googletest.RefreshToken}}
	for k, v := range change {
		form[k] = v
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.TokenURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("token answer: %v", err)
	}
	return res.StatusCode, body
}

// ingest posts body with the bearer token and reads Google's answer.
func ingest(t *testing.T, s *googletest.Server, bearer, body string) (int, errorBody, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+googletest.IngestPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var eb errorBody
	var ok struct {
		RequestID string `json:"requestId"`
	}
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&ok); err != nil {
			t.Fatalf("answer: %v", err)
		}
	} else if err := json.NewDecoder(res.Body).Decode(&eb); err != nil {
		t.Fatalf("error answer: %v", err)
	}
	return res.StatusCode, eb, ok.RequestID
}

func accessToken(t *testing.T, s *googletest.Server) string {
	t.Helper()
	status, body := token(t, s, nil)
	tok, _ := body["access_token"].(string)
	if status != http.StatusOK || tok == "" || body["expires_in"] != float64(googletest.ExpiresIn) {
		t.Fatalf("token answer %d %v", status, body)
	}
	return tok
}

const lead = `{"destinationReferences":["111111111"],"transactionId":"ls_1","eventTimestamp":"2026-12-01T09:00:00Z",` +
	`"eventSource":"WEB","userData":{"userIdentifiers":[{"emailAddress":"` + hash + `"}]}}`

// event is lead with its fields replaced: replace pairs old and new text.
func event(replace ...string) string {
	return strings.NewReplacer(replace...).Replace(lead)
}

func request(extra string, events ...string) string {
	return `{"destinations":[{"reference":"111111111","operatingAccount":{"accountType":"GOOGLE_ADS","accountId":"` +
		googletest.OperatingAccount + `"},"productDestinationId":"111111111"}],"encoding":"HEX"` + extra +
		`,"events":[` + strings.Join(events, ",") + `]}`
}

// The token endpoint gives access tokens for the fake's client and refresh
// token, refuses the rest as Google does, and counts every exchange.
func TestServerToken(t *testing.T) {
	s := googletest.New(t)
	for _, tt := range []struct {
		name   string
		change url.Values
		status int
		code   string
	}{
		{"wrong grant", url.Values{"grant_type": {"authorization_code"}}, 400, "unsupported_grant_type"},
		{"wrong client", url.Values{"client_id": {"other"}}, 401, "invalid_client"},
		{"wrong secret", url.Values{"client_secret": {"other"}}, 401, "invalid_client"},
		{"wrong refresh token", url.Values{"refresh_token": {"other"}}, 400, "invalid_grant"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := token(t, s, tt.change)
			if status != tt.status || body["error"] != tt.code {
				t.Errorf("token answer %d %v; want %d %s", status, body, tt.status, tt.code)
			}
		})
	}
	accessToken(t, s)
	s.RevokeRefreshToken()
	if status, body := token(t, s, nil); status != 400 || body["error_description"] != "Token has been expired or revoked." {
		t.Errorf("revoked: %d %v", status, body)
	}
	if n := s.Exchanges(); n != 6 {
		t.Errorf("%d exchanges; want 6", n)
	}
}

// The ingest endpoint takes what Google takes and refuses the rest, fast:
// the whole request, with the reason and the event's index.
func TestServerIngest(t *testing.T) {
	s := googletest.New(t)
	tok := accessToken(t, s)
	many := make([]string, googletest.MaxBatch+1)
	for i := range many {
		many[i] = lead
	}
	elevenIDs := strings.Repeat(`{"emailAddress":"`+hash+`"},`, 10) + `{"phoneNumber":"` + hash + `"}`
	tenDests := strings.Repeat(`{"reference":"r","operatingAccount":{"accountType":"GOOGLE_ADS","accountId":"1234567890"},"productDestinationId":"111111111"},`, 10)
	for _, tt := range []struct {
		name, bearer, body string
		status             int
		reason             string
		index              string
	}{
		{"a lead", tok, request("", lead, event(`111111111"]`, `111111111"],"conversionValue":250,"currency":"USD"`)), 200, "", ""},
		{"a click id alone", tok, request("", event(`"userData":{"userIdentifiers":[{"emailAddress":"`+hash+`"}]}`, `"adIdentifiers":{"gclid":"G"}`)), 200, "", ""},
		{"an address", tok, request("", event(`{"emailAddress":"`+hash+`"}`,
			`{"address":{"givenName":"`+hash+`","familyName":"`+hash+`","regionCode":"US","postalCode":"94107"}}`)), 200, "", ""},
		{"no token", "", request("", lead), 401, "CREDENTIALS_MISSING", ""},
		{"a wrong token", "ya29.other", request("", lead), 401, "ACCESS_TOKEN_EXPIRED", ""},
		{"another account", tok, strings.Replace(request("", lead), googletest.OperatingAccount, "1111111111", 1), 403, "PERMISSION_DENIED", ""},
		{"another conversion action", tok, strings.Replace(request("", lead), `"productDestinationId":"111111111"`, `"productDestinationId":"333"`, 1),
			400, "INVALID_CONVERSION_ACTION_ID", ""},
		{"too many events", tok, request("", many...), 400, "TOO_MANY_EVENTS", ""},
		{"too many destinations", tok, strings.Replace(request("", lead), `"destinations":[`, `"destinations":[`+tenDests, 1), 400, "TOO_MANY_DESTINATIONS", ""},
		{"no encoding", tok, strings.Replace(request("", lead), `,"encoding":"HEX"`, "", 1), 400, "REQUIRED_FIELD_MISSING", ""},
		{"a plain email", tok, request("", lead, event(hash, "jane@example.com")), 400, "INVALID_SHA256_FORMAT", "1"},
		{"an upper-case hash", tok, request("", event(hash, strings.ToUpper(hash))), 400, "INVALID_SHA256_FORMAT", "0"},
		{"too many identifiers", tok, request("", event(`{"emailAddress":"`+hash+`"}`, elevenIDs)), 400, "TOO_MANY_USER_IDENTIFIERS", "0"},
		{"no identifier", tok, request("", lead, lead, event(`{"emailAddress":"`+hash+`"}`, "")), 400, "NO_IDENTIFIERS_PROVIDED", "2"},
		{"both braids", tok, request("", event(`111111111"]`, `111111111"],"adIdentifiers":{"gbraid":"B","wbraid":"W"}`)), 400, "INVALID_EVENT", "0"},
		{"a bad currency", tok, request("", event(`111111111"]`, `111111111"],"conversionValue":1,"currency":"usd"`)), 400, "INVALID_CURRENCY_CODE", "0"},
		{"no transaction id", tok, request("", event(`"transactionId":"ls_1",`, "")), 400, "REQUIRED_FIELD_MISSING", "0"},
		{"no timestamp", tok, request("", event(`"eventTimestamp":"2026-12-01T09:00:00Z",`, "")), 400, "REQUIRED_FIELD_MISSING", "0"},
		{"a Unix timestamp", tok, request("", event(`2026-12-01T09:00:00Z`, "1764579600")), 400, "INVALID_FORMAT", "0"},
		{"an unknown reference", tok, request("", event(`["111111111"]`, `["222222222"]`)), 400, "INVALID_DESTINATION", "0"},
		{"a lower-case region", tok, request("", event(`{"emailAddress":"`+hash+`"}`,
			`{"address":{"givenName":"`+hash+`","familyName":"`+hash+`","regionCode":"us","postalCode":"94107"}}`)), 400, "INVALID_COUNTRY_CODE", "0"},
		{"an unknown field", tok, request("", event(`"eventSource"`, `"event_source"`)), 400, "INVALID_ARGUMENT", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, eb, id := ingest(t, s, tt.bearer, tt.body)
			if status != tt.status || eb.reason() != tt.reason {
				t.Fatalf("answer %d %+v; want %d %s", status, eb, tt.status, tt.reason)
			}
			if status == 200 {
				if id == "" {
					t.Error("no requestId")
				}
				return
			}
			if eb.Error.Code != status || eb.Error.Status == "" || eb.Error.Message == "" {
				t.Errorf("error %+v; want Google's shape", eb.Error)
			}
			if got := eb.Error.Details[0].Metadata["eventIndex"]; got != tt.index {
				t.Errorf("eventIndex %q; want %q", got, tt.index)
			}
		})
	}
	if n, events := len(s.Requests()), s.EventsReceived(); n != 3 || events != 4 || s.Events()[1].ConversionValue == nil {
		t.Errorf("accepted %d requests, %d events; want the 3 good ones, 4 events", n, events)
	}
}

// validateOnly requests are validated and kept apart; FailNext fails
// requests with Google-shaped bodies, then they pass again.
func TestServerValidateOnlyAndFailNext(t *testing.T) {
	s := googletest.New(t)
	tok := accessToken(t, s)
	if status, _, _ := ingest(t, s, tok, request(`,"validateOnly":true`, lead)); status != 200 {
		t.Errorf("validateOnly answered %d", status)
	}
	if status, eb, _ := ingest(t, s, tok, request(`,"validateOnly":true`, event(hash, "x"))); status != 400 || eb.reason() != "INVALID_SHA256_FORMAT" {
		t.Errorf("an invalid validateOnly request answered %d %+v", status, eb)
	}
	if len(s.ValidateOnlyRequests()) != 1 || len(s.Requests()) != 0 {
		t.Errorf("%d validateOnly, %d requests; want 1, 0", len(s.ValidateOnlyRequests()), len(s.Requests()))
	}
	for _, tt := range []struct {
		status int
		want   string
	}{{429, "RESOURCE_EXHAUSTED"}, {503, "UNAVAILABLE"}, {500, "INTERNAL"}, {504, "DEADLINE_EXCEEDED"}} {
		s.FailNext(1, tt.status)
		if status, eb, _ := ingest(t, s, tok, request("", lead)); status != tt.status || eb.Error.Status != tt.want {
			t.Errorf("FailNext(%d): answer %d %+v; want %s", tt.status, status, eb, tt.want)
		}
	}
	s.ExpireAccessTokens()
	if status, _, _ := ingest(t, s, tok, request("", lead)); status != 401 {
		t.Errorf("an expired token answered %d", status)
	}
	tok = accessToken(t, s)
	s.EchoSecrets()
	s.FailNextWith(1, 400, "DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED")
	status, eb, _ := ingest(t, s, tok, request("", lead))
	if status != 400 || eb.reason() != "DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED" || !strings.Contains(eb.Error.Message, tok) {
		t.Errorf("FailNextWith: %d %+v; want the reason and the echoed token", status, eb)
	}
	if status, _, _ := ingest(t, s, tok, request("", lead)); status != 200 || s.EventsReceived() != 1 {
		t.Errorf("after the failures: %d, %d events", status, s.EventsReceived())
	}
}
