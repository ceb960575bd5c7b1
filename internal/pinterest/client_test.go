package pinterest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/internal/normalize"
	"github.com/leadsignal/leadsignal/internal/pinterest"
	"github.com/leadsignal/leadsignal/internal/pinterest/pinteresttest"
	"github.com/leadsignal/leadsignal/models"
)

var target = destination.Target{AccountID: pinteresttest.AdAccount, Token: pinteresttest.Token}

// prepared is the lead's event id as Prepare makes it, named name; it
// fails the test when Prepare refuses it.
func prepared(t *testing.T, id, name string) json.RawMessage {
	t.Helper()
	body, err := pinterest.Prepare(input(func(_ *models.Lead, _ *normalize.Input, b *capi.BuildInput) {
		b.Event.EventID = id
	}), name)
	if err != nil {
		t.Fatalf("Prepare(%s): %v", id, err)
	}
	return body
}

// phoneOnly is an event Pinterest fails: Prepare refuses it, and it is sent
// anyway to see how the client reads the failure.
func phoneOnly(t *testing.T) json.RawMessage {
	t.Helper()
	body, err := pinterest.Prepare(input(func(_ *models.Lead, in *normalize.Input, _ *capi.BuildInput) {
		in.Email, in.ClientIP, in.UserAgent = "", "", ""
	}), "lead")
	if err == nil {
		t.Fatal("Prepare took a phone-only lead")
	}
	return body
}

func TestSendAccepted(t *testing.T) {
	s := pinteresttest.New(t)
	c := &pinterest.Client{BaseURL: s.URL}
	a, err := c.Send(t.Context(), target, []json.RawMessage{prepared(t, "ls_1", "lead"), prepared(t, "ls_2", "checkout")})
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPStatus != http.StatusOK || a.Verdict != destination.Accepted || a.Received != 2 || a.Refused != nil ||
		a.Message != "" || a.RequestID == "" || !strings.Contains(string(a.Body), `"processed"`) {
		t.Errorf("answer %+v; want 200 Accepted, 2 received, none refused", a)
	}
	events := s.Events()
	if len(events) != 2 || events[0]["event_id"] != "ls_1" || events[1]["event_name"] != "checkout" {
		t.Errorf("the fake processed %v; want ls_1 and ls_2", events)
	}
	if n := len(s.TestRequests()); n != 0 {
		t.Errorf("%d test requests; want none", n)
	}
}

// The events go out as they are, around {"data":[...]}, to the ad
// account's path with the token as a Bearer token.
func TestSendRequest(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"num_events_received":2,"num_events_processed":2,"events":[]}`)
	}))
	t.Cleanup(srv.Close)
	c := &pinterest.Client{BaseURL: srv.URL + "/"}
	tgt := target
	tgt.Test = true
	_, err := c.Send(t.Context(), tgt, []json.RawMessage{json.RawMessage(` {"event_id":"a", "x":1} `), json.RawMessage(`{"event_id":"b"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"data":[{"event_id":"a", "x":1},{"event_id":"b"}]}`; string(body) != want {
		t.Errorf("body %s; want %s", body, want)
	}
	if got.Method != http.MethodPost || got.URL.Path != pinteresttest.Path(pinteresttest.AdAccount) || got.URL.RawQuery != "test=true" {
		t.Errorf("request %s %s; want POST %s?test=true", got.Method, got.URL, pinteresttest.Path(pinteresttest.AdAccount))
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+pinteresttest.Token {
		t.Errorf("Authorization %q; want the Bearer token", h)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q; want application/json", ct)
	}
}

// Pinterest processes the good events of a batch and answers 422 with
// each event's status: the batch is taken, the failed events refused.
func TestSendSomeFailed(t *testing.T) {
	s := pinteresttest.New(t)
	c := &pinterest.Client{BaseURL: s.URL}
	millis := json.RawMessage(strings.Replace(string(prepared(t, "ls_4", "lead")), `"event_time":1764582000,`, `"event_time":1764582000000,`, 1))
	events := []json.RawMessage{prepared(t, "ls_1", "lead"), phoneOnly(t), prepared(t, "ls_3", "lead"), millis}
	a, err := c.Send(t.Context(), target, events)
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPStatus != http.StatusUnprocessableEntity || a.Verdict != destination.Accepted || a.Received != 4 ||
		!strings.HasPrefix(a.Message, "Pinterest 422 (code 953): ") {
		t.Errorf("answer %+v; want 422 Accepted with 4 received", a)
	}
	if len(a.Refused) != 2 || !strings.Contains(a.Refused[1], "user_data") || !strings.Contains(a.Refused[3], "milliseconds") {
		t.Errorf("refused %v; want events 1 (no email) and 3 (milliseconds)", a.Refused)
	}
	if n := s.EventsReceived(); n != 2 {
		t.Errorf("the fake processed %d events; want 2", n)
	}
}

func TestSendAnswers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fail    int // FailNext's status; 0 for none
		target  destination.Target
		verdict destination.Verdict
		message string
	}{
		{"a wrong token", 0, destination.Target{AccountID: pinteresttest.AdAccount, Token: "nope"},
			destination.AuthRefused, "Pinterest 401 (code 2): Authentication failed."},
		{"another ad account", 0, destination.Target{AccountID: "1", Token: pinteresttest.Token},
			destination.Refused, "Pinterest 403 (code 29): You are not permitted to access that resource."},
		{"authentication failed", http.StatusUnauthorized, target, destination.AuthRefused, "Pinterest 401 (code 2): Authentication failed."},
		{"not permitted", http.StatusForbidden, target, destination.Refused, "Pinterest 403 (code 29): "},
		{"invalid", http.StatusBadRequest, target, destination.EventRefused, "Pinterest 400 (code 4196): "},
		{"rate limited", http.StatusTooManyRequests, target, destination.Unavailable, "Pinterest 429 (code 8): "},
		{"ramped down", http.StatusServiceUnavailable, target, destination.Unavailable, "Pinterest 503 (code 4197): "},
		{"a server error", http.StatusBadGateway, target, destination.Unavailable, "Pinterest 502: Bad Gateway"},
		{"a 422 without details", http.StatusUnprocessableEntity, target, destination.EventRefused, "Pinterest 422: "},
		{"another 4xx", http.StatusNotFound, target, destination.Refused, "Pinterest 404: Not Found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := pinteresttest.New(t)
			if tt.fail != 0 {
				s.FailNext(1, tt.fail)
			}
			c := &pinterest.Client{BaseURL: s.URL}
			a, err := c.Send(t.Context(), tt.target, []json.RawMessage{prepared(t, "ls_1", "lead")})
			if err != nil {
				t.Fatal(err)
			}
			if a.Verdict != tt.verdict || !strings.HasPrefix(a.Message, tt.message) || a.Refused != nil || a.Received != 0 {
				t.Errorf("answer %+v; want verdict %d, message %q", a, tt.verdict, tt.message)
			}
			if n := s.EventsReceived(); n != 0 {
				t.Errorf("the fake processed %d events; want none", n)
			}
		})
	}
}

// A test request is checked and answered alike, and never recorded.
func TestSendTest(t *testing.T) {
	s := pinteresttest.New(t)
	c := &pinterest.Client{BaseURL: s.URL}
	tgt := target
	tgt.Test = true
	a, err := c.Send(t.Context(), tgt, []json.RawMessage{prepared(t, "ls_1", "lead"), phoneOnly(t)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Verdict != destination.Accepted || len(a.Refused) != 1 || a.Refused[1] == "" {
		t.Errorf("answer %+v; want event 1 refused", a)
	}
	if tests := s.TestRequests(); len(s.Requests()) != 0 || len(tests) != 1 || len(tests[0].Processed()) != 1 {
		t.Errorf("%d requests, test requests %+v; want one test request", len(s.Requests()), tests)
	}
}

// The token never reaches the send log, the messages or an error, even
// when the reply repeats it.
func TestSendScrubsToken(t *testing.T) {
	s := pinteresttest.New(t)
	s.EchoToken()
	c := &pinterest.Client{BaseURL: s.URL}
	bad := target
	bad.Token = "a-wrong/token+with&more"
	for _, tt := range []struct {
		name   string
		target destination.Target
		events []json.RawMessage
	}{
		{"processed", target, []json.RawMessage{prepared(t, "ls_1", "lead")}},
		{"some failed", target, []json.RawMessage{prepared(t, "ls_1", "lead"), phoneOnly(t)}},
		{"a wrong token", bad, []json.RawMessage{prepared(t, "ls_1", "lead")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Send(t.Context(), tt.target, tt.events)
			if err != nil {
				t.Fatal(err)
			}
			all := string(a.Body) + a.Message
			for _, m := range a.Refused {
				all += m
			}
			if strings.Contains(all, tt.target.Token) || !strings.Contains(string(a.Body), destination.Redacted) {
				t.Errorf("the answer shows the token, or the fake did not echo it: %s", all)
			}
		})
	}

	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tt := range []struct {
		name string
		url  string
		ctx  context.Context
		is   error
	}{
		{"no server", srv.URL, t.Context(), nil},
		{"a cancelled request", s.URL, ctx, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &pinterest.Client{BaseURL: tt.url}
			_, err := c.Send(tt.ctx, target, []json.RawMessage{prepared(t, "ls_1", "lead")})
			if err == nil || strings.Contains(err.Error(), pinteresttest.Token) || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Send: %v; want an error without the token (wrapping %v)", err, tt.is)
			}
		})
	}
}

// A redirect is not followed: it would carry the token elsewhere.
func TestSendNoRedirect(t *testing.T) {
	s := pinteresttest.New(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	c := &pinterest.Client{BaseURL: redirect.URL, HTTP: &http.Client{}}
	a, err := c.Send(t.Context(), target, []json.RawMessage{prepared(t, "ls_1", "lead")})
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPStatus != http.StatusTemporaryRedirect || a.Verdict != destination.Refused || len(s.Requests()) != 0 {
		t.Errorf("answer %+v, %d requests at the fake; want the 307 refused, nothing sent on", a, len(s.Requests()))
	}
}

// A batch Pinterest cannot take is refused before it is sent.
func TestSendRefusedLocally(t *testing.T) {
	s := pinteresttest.New(t)
	c := &pinterest.Client{BaseURL: s.URL}
	one := []json.RawMessage{prepared(t, "ls_1", "lead")}
	many := make([]json.RawMessage, pinterest.MaxBatch+1)
	for i := range many {
		many[i] = prepared(t, "ls_"+strconv.Itoa(i), "lead")
	}
	for _, tt := range []struct {
		name   string
		target destination.Target
		events []json.RawMessage
		want   string
	}{
		{"no ad account", destination.Target{AccountID: " ", Token: pinteresttest.Token}, one, "no ad account id"},
		{"no token", destination.Target{AccountID: pinteresttest.AdAccount}, one, "no conversion token"},
		{"a NUL in the token", destination.Target{AccountID: pinteresttest.AdAccount, Token: "ab\x00c"}, one, "control character"},
		{"no events", target, nil, "no events"},
		{"too many events", target, many, "1001 events in one batch, at most 1000"},
		{"an event that is no object", target, []json.RawMessage{one[0], json.RawMessage(`["lead"]`)}, "event 1 is not a JSON object"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Send(t.Context(), tt.target, tt.events)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Send: %v; want an error with %q", err, tt.want)
			}
		})
	}
	if n := len(s.Requests()) + len(s.TestRequests()); n != 0 {
		t.Errorf("%d requests reached the fake; want none", n)
	}
}

// Every name EventName gives is one Pinterest takes.
func TestSendEventNames(t *testing.T) {
	s := pinteresttest.New(t)
	c := &pinterest.Client{BaseURL: s.URL}
	var events []json.RawMessage
	for _, ours := range []string{"Lead", "CompleteRegistration", "Subscribe", "Purchase", "Search", "ViewContent",
		"AddToCart", "InitiateCheckout", "AddPaymentInfo", "AddToWishlist", "PageView", "Schedule"} {
		events = append(events, prepared(t, "ls_"+ours, pinterest.EventName(ours)))
	}
	a, err := c.Send(t.Context(), target, events)
	if err != nil {
		t.Fatal(err)
	}
	if a.Verdict != destination.Accepted || a.Refused != nil || s.EventsReceived() != len(events) {
		t.Errorf("answer %+v; want all %d events processed", a, len(events))
	}
}
