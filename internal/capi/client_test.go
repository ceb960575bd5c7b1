package capi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
	"github.com/leadsignal/leadsignal/internal/capi/capitest"
)

// secretToken has characters that URL encoding changes, so both its raw and
// its escaped form must be kept out of errors.
const secretToken = "EAAB/secret+token=42&x"

func newFake(t *testing.T) *capitest.Server {
	t.Helper()
	s := capitest.New(t)
	s.Now = func() time.Time { return now }
	s.Tokens[secretToken] = true
	return s
}

func target(s *capitest.Server) capi.Target {
	tg := s.Target("1234567890")
	tg.Token = secretToken
	return tg
}

// events builds n valid events, marshalled as the dispatcher stores them.
func events(t testing.TB, n int) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, n)
	for i := range out {
		l, k := lead()
		l.ID = int64(i + 1)
		l.ExternalID = nil
		e := capi.Build(capi.BuildInput{Account: account, Dataset: dataset, Lead: l, Keys: k, Event: leadEvent(l, "Lead")})
		if err := capi.Validate(e, now); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = raw
	}
	return out
}

func eventID(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	e, err := capi.ParseEvent(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e.EventID
}

// noSecret fails when s carries the token in any form.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{secretToken, url.QueryEscape(secretToken), "secret+token"} {
		if strings.Contains(s, sec) {
			t.Errorf("%s carries the token: %s", what, s)
		}
	}
}

func TestSendSuccess(t *testing.T) {
	s := newFake(t)
	tg := target(s)
	tg.TestEventCode = "TEST123"
	evs := events(t, 3)
	resp, err := new(capi.Client).Send(t.Context(), tg, evs)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !resp.OK() || resp.Retryable() || resp.HTTPStatus != 200 || resp.EventsReceived != 3 || resp.Err != nil {
		t.Errorf("Send = %+v; want 200 with 3 events received", resp)
	}
	if resp.FBTraceID == "" || resp.Messages == nil || !strings.Contains(string(resp.Body), `"events_received":3`) {
		t.Errorf("Send = %+v (body %s); want trace id, messages and the body", resp, resp.Body)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("fake got %d requests; want 1", len(reqs))
	}
	r := reqs[0]
	if r.Token != secretToken || r.TestEventCode != "TEST123" || r.PartnerAgent != "leadsignal" ||
		r.PixelID != "1234567890" || r.Version != "v24.0" || r.AppSecretProof != "" || len(r.Events) != 3 {
		t.Errorf("fake saw %+v", r)
	}
	if got := r.EventIDs()[1]; got != eventID(t, evs[1]) {
		t.Errorf("second event id = %s; want %s", got, eventID(t, evs[1]))
	}
	if s.EventsReceived() != 3 {
		t.Errorf("EventsReceived = %d; want 3", s.EventsReceived())
	}
}

func TestSendFullBatch(t *testing.T) {
	s := newFake(t)
	evs := events(t, 1)
	batch := make([]json.RawMessage, capi.MaxBatch)
	for i := range batch {
		batch[i] = evs[0]
	}
	resp, err := new(capi.Client).Send(t.Context(), target(s), batch)
	if err != nil || resp.EventsReceived != capi.MaxBatch {
		t.Fatalf("Send(1000) = %+v, %v", resp, err)
	}
	if _, err := new(capi.Client).Send(t.Context(), target(s), append(batch, evs[0])); err == nil {
		t.Error("Send(1001) = nil error; want refused before sending")
	}
	if len(s.Requests()) != 1 {
		t.Errorf("fake got %d requests; want 1", len(s.Requests()))
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	s := newFake(t)
	evs := events(t, 1)
	tests := []struct {
		name   string
		change func(*capi.Target) []json.RawMessage
	}{
		{"no events", func(*capi.Target) []json.RawMessage { return nil }},
		{"no pixel", func(tg *capi.Target) []json.RawMessage { tg.PixelID = ""; return evs }},
		{"no token", func(tg *capi.Target) []json.RawMessage { tg.Token = ""; return evs }},
		{"not an object", func(*capi.Target) []json.RawMessage { return []json.RawMessage{[]byte(`[1]`)} }},
		{"empty event", func(*capi.Target) []json.RawMessage { return []json.RawMessage{nil} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := target(s)
			batch := tt.change(&tg)
			if _, err := new(capi.Client).Send(t.Context(), tg, batch); err == nil {
				t.Error("Send = nil error")
			}
		})
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("fake got %d requests; want none", n)
	}
}

func TestSendGraphErrors(t *testing.T) {
	tests := []struct {
		name          string
		setup         func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage
		wantStatus    int
		wantCode      int
		wantSubcode   int
		tokenInvalid  bool
		throttled     bool
		retryable     bool
		wantTransient bool
	}{
		{
			name: "expired token",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.Tokens = map[string]bool{"other": true}
				return evs
			},
			wantStatus: 400, wantCode: 190, wantSubcode: 463, tokenInvalid: true,
		},
		{
			name: "event older than 7 days",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.Now = func() time.Time { return now.Add(8 * 24 * time.Hour) }
				return evs
			},
			wantStatus: 400, wantCode: 100, wantSubcode: 2804003,
		},
		{
			name: "unknown pixel",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.Pixels = map[string]bool{"1": true}
				return evs
			},
			wantStatus: 400, wantCode: 100, wantSubcode: 33,
		},
		{
			name: "rejected event",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.RejectEventIDs(eventIDOf(evs[1]))
				return evs
			},
			wantStatus: 400, wantCode: 100, wantSubcode: capitest.SubcodeInvalid,
		},
		{
			name: "throttled",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.FailNext(1, capitest.Throttle)
				return evs
			},
			wantStatus: 400, wantCode: 17, throttled: true, retryable: true, wantTransient: true,
		},
		{
			name: "ad account throttle",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.FailNext(1, capitest.ThrottleAdAccount)
				return evs
			},
			wantStatus: 400, wantCode: 80004, wantSubcode: 2446079, throttled: true, retryable: true, wantTransient: true,
		},
		{
			name: "transient",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.FailNext(1, capitest.Transient)
				return evs
			},
			wantStatus: 500, wantCode: 2, retryable: true, wantTransient: true,
		},
		{
			name: "invalid event marked transient is still permanent",
			setup: func(s *capitest.Server, tg *capi.Target, evs []json.RawMessage) []json.RawMessage {
				s.FailNext(1, capitest.Failure{Status: 500, Error: capitest.GraphError{
					Message: "Invalid parameter", Code: 100, Subcode: 2804019, IsTransient: true}})
				return evs
			},
			wantStatus: 500, wantCode: 100, wantSubcode: 2804019, wantTransient: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFake(t)
			tg := target(s)
			evs := tt.setup(s, &tg, events(t, 3))
			resp, err := new(capi.Client).Send(t.Context(), tg, evs)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			e := resp.Err
			if resp.HTTPStatus != tt.wantStatus || e == nil || e.Code != tt.wantCode || e.Subcode != tt.wantSubcode {
				t.Fatalf("Send = %+v (err %+v); want %d with %d/%d", resp, e, tt.wantStatus, tt.wantCode, tt.wantSubcode)
			}
			if e.TokenInvalid() != tt.tokenInvalid || e.Throttled() != tt.throttled || e.Retryable() != tt.retryable ||
				resp.Retryable() != tt.retryable || e.IsTransient != tt.wantTransient {
				t.Errorf("TokenInvalid %v Throttled %v Retryable %v/%v IsTransient %v; want %v %v %v %v",
					e.TokenInvalid(), e.Throttled(), e.Retryable(), resp.Retryable(), e.IsTransient,
					tt.tokenInvalid, tt.throttled, tt.retryable, tt.wantTransient)
			}
			if resp.OK() || resp.EventsReceived != 0 || resp.FBTraceID == "" || e.FBTraceID != resp.FBTraceID {
				t.Errorf("Send = %+v; want not OK, no events, the trace id", resp)
			}
			noSecret(t, "error", e.Error())
			noSecret(t, "body", string(resp.Body))
			if s.EventsReceived() != 0 {
				t.Errorf("fake accepted %d events", s.EventsReceived())
			}
		})
	}
}

func eventIDOf(raw json.RawMessage) string {
	e, _ := capi.ParseEvent(raw)
	return e.EventID
}

func TestSendSplitAfterRejection(t *testing.T) {
	s := newFake(t)
	evs := events(t, 4)
	bad := eventID(t, evs[2])
	s.RejectEventIDs(bad)
	c := new(capi.Client)
	resp, err := c.Send(t.Context(), target(s), evs)
	if err != nil || resp.HTTPStatus != 400 || resp.Retryable() {
		t.Fatalf("Send(with bad) = %+v, %v; want a 400 not to retry", resp, err)
	}
	for _, half := range [][]json.RawMessage{evs[:2], evs[2:]} {
		resp, err := c.Send(t.Context(), target(s), half)
		if err != nil {
			t.Fatal(err)
		}
		if wantOK := !strings.Contains(string(half[0])+string(half[1]), bad); resp.OK() != wantOK {
			t.Errorf("half OK = %v; want %v", resp.OK(), wantOK)
		}
	}
	if s.EventsReceived() != 2 {
		t.Errorf("EventsReceived = %d; want 2", s.EventsReceived())
	}
}

func TestSendServerError(t *testing.T) {
	s := newFake(t)
	s.FailNext(1, capitest.ServerError)
	resp, err := new(capi.Client).Send(t.Context(), target(s), events(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.HTTPStatus != 500 || resp.Err != nil || !resp.Retryable() || resp.OK() {
		t.Errorf("Send = %+v; want a retryable 500 without Graph error", resp)
	}
	// The next request goes through.
	resp, err = new(capi.Client).Send(t.Context(), target(s), events(t, 1))
	if err != nil || !resp.OK() {
		t.Errorf("Send after failure = %+v, %v", resp, err)
	}
}

func TestSendHang(t *testing.T) {
	s := newFake(t)
	s.FailNext(2, capitest.Hang)

	c := &capi.Client{HTTP: &http.Client{Timeout: 100 * time.Millisecond}}
	resp, err := c.Send(t.Context(), target(s), events(t, 1))
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Send with client timeout = %+v, %v; want a timeout", resp, err)
	}
	if resp.HTTPStatus != 0 || resp.Body != nil {
		t.Errorf("Send = %+v; want the zero Response", resp)
	}
	noSecret(t, "timeout error", err.Error())

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = new(capi.Client).Send(ctx, target(s), events(t, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send with ctx deadline = %v; want context.DeadlineExceeded", err)
	}
	noSecret(t, "deadline error", err.Error())
	if !strings.Contains(err.Error(), "/v24.0/1234567890/events") {
		t.Errorf("error %q; want it to name the endpoint", err)
	}
}

func TestSendReset(t *testing.T) {
	s := newFake(t)
	s.FailNext(1, capitest.Reset)
	_, err := new(capi.Client).Send(t.Context(), target(s), events(t, 1))
	if err == nil {
		t.Fatal("Send over a reset connection = nil error")
	}
	noSecret(t, "reset error", err.Error())
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		noSecret(t, "wrapped error", e.Error())
	}
}

func TestSendAppSecretProof(t *testing.T) {
	s := newFake(t)
	s.AppSecret = "app-secret"
	tg := target(s)
	tg.Token = capitest.Token

	// Worked out by hand: HMAC-SHA256 keyed with the app secret over the token.
	m := hmac.New(sha256.New, []byte("app-secret"))
	m.Write([]byte("test-token"))
	want := hex.EncodeToString(m.Sum(nil))
	if want != "5957479463cc188aeb65506273f5d217f084495eda7bd8b32b8b6de4a5b33e7d" {
		t.Fatalf("test vector itself is wrong: %s", want)
	}
	if got := capi.AppSecretProof("test-token", "app-secret"); got != want {
		t.Errorf("AppSecretProof = %s; want %s", got, want)
	}

	resp, err := new(capi.Client).Send(t.Context(), tg, events(t, 1))
	if err != nil || !resp.OK() {
		t.Fatalf("Send with proof = %+v, %v", resp, err)
	}
	if got := s.Requests()[0].AppSecretProof; got != want {
		t.Errorf("fake saw appsecret_proof %s; want %s", got, want)
	}

	tg.AppSecret = "wrong"
	resp, err = new(capi.Client).Send(t.Context(), tg, events(t, 1))
	if err != nil || resp.Err == nil || resp.Err.Code != 100 || resp.Retryable() {
		t.Errorf("Send with wrong proof = %+v, %v; want 100, not retryable", resp, err)
	}
	tg.AppSecret = ""
	resp, _ = new(capi.Client).Send(t.Context(), tg, events(t, 1))
	if resp.Err == nil || !strings.Contains(resp.Err.Message, "appsecret_proof") {
		t.Errorf("Send without proof = %+v; want an appsecret_proof error", resp)
	}
}

func TestSendScrubsTokenEchoedByMeta(t *testing.T) {
	s := newFake(t)
	// Graph echoes a malformed token in its message; nothing we keep may.
	s.FailNext(1, capitest.Failure{Status: 400, Error: capitest.GraphError{
		Message: "Malformed access token " + secretToken, Type: "OAuthException", Code: 190,
		UserMsg: "token " + url.QueryEscape(secretToken) + " is bad",
	}})
	resp, err := new(capi.Client).Send(t.Context(), target(s), events(t, 1))
	if err != nil || resp.Err == nil {
		t.Fatalf("Send = %+v, %v", resp, err)
	}
	noSecret(t, "Graph error", resp.Err.Error())
	noSecret(t, "body", string(resp.Body))
	if !resp.Err.TokenInvalid() || !strings.Contains(resp.Err.Message, "[redacted]") {
		t.Errorf("Err = %+v; want a 190 with the token redacted", resp.Err)
	}
}

func TestSendCutsLongBody(t *testing.T) {
	s := newFake(t)
	s.FailNext(1, capitest.Failure{Status: 400, Error: capitest.GraphError{
		Message: strings.Repeat("é", 5000), Type: "OAuthException", Code: 1,
	}})
	resp, err := new(capi.Client).Send(t.Context(), target(s), events(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) > capi.MaxLoggedBody || len(resp.Body) < capi.MaxLoggedBody-4 {
		t.Errorf("len(Body) = %d; want just under %d", len(resp.Body), capi.MaxLoggedBody)
	}
	if !strings.HasSuffix(string(resp.Body), "é") {
		t.Errorf("Body ends %q; want it cut between characters", resp.Body[len(resp.Body)-4:])
	}
	if resp.Err == nil || len(resp.Err.Message) != 10000 {
		t.Errorf("Err = %v; want the whole message parsed", resp.Err)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	var hits int
	other := http.NewServeMux()
	other.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	srv := newHTTPServer(t, other)
	tg := capi.Target{BaseURL: srv, PixelID: "1", Token: secretToken}
	resp, err := new(capi.Client).Send(t.Context(), tg, events(t, 1))
	if err != nil || resp.HTTPStatus != http.StatusTemporaryRedirect || hits != 1 {
		t.Errorf("Send = %+v, %v after %d hits; want the 307 itself", resp, err, hits)
	}
}

func TestGraphErrorRules(t *testing.T) {
	tests := []struct {
		e                              capi.GraphError
		tokenInvalid, throttled, retry bool
		wantText                       string
	}{
		{capi.GraphError{Code: 190, Subcode: 460, IsTransient: true}, true, false, false, "graph error 190/460"},
		{capi.GraphError{Code: 100, Subcode: 2804003, Message: "Invalid parameter", UserTitle: "Event Timestamp Too Old"}, false, false, false,
			"graph error 100/2804003: Invalid parameter: Event Timestamp Too Old"},
		{capi.GraphError{Code: 100, Subcode: 33}, false, false, false, "graph error 100/33"},
		{capi.GraphError{Code: 100, IsTransient: true}, false, false, true, "graph error 100"},
		{capi.GraphError{Code: 4}, false, true, true, "graph error 4"},
		{capi.GraphError{Code: 32}, false, true, true, "graph error 32"},
		{capi.GraphError{Code: 613}, false, true, true, "graph error 613"},
		{capi.GraphError{Code: 80003}, false, true, true, "graph error 80003"},
		{capi.GraphError{Code: 1}, false, false, true, "graph error 1"},
		{capi.GraphError{Code: 341}, false, false, true, "graph error 341"},
		{capi.GraphError{Code: 368}, false, false, true, "graph error 368"},
		{capi.GraphError{Code: 5000}, false, false, true, "graph error 5000"},
		{capi.GraphError{Code: 200}, false, false, false, "graph error 200"},
	}
	for _, tt := range tests {
		t.Run(tt.wantText, func(t *testing.T) {
			e := tt.e
			if e.TokenInvalid() != tt.tokenInvalid || e.Throttled() != tt.throttled || e.Retryable() != tt.retry {
				t.Errorf("%+v: TokenInvalid %v Throttled %v Retryable %v; want %v %v %v",
					e, e.TokenInvalid(), e.Throttled(), e.Retryable(), tt.tokenInvalid, tt.throttled, tt.retry)
			}
			if !strings.HasPrefix(e.Error(), tt.wantText) {
				t.Errorf("Error() = %q; want prefix %q", e.Error(), tt.wantText)
			}
		})
	}
	// A 5xx is retryable unless the Graph error says never.
	if !(capi.Response{HTTPStatus: 503}).Retryable() || !(capi.Response{HTTPStatus: 429}).Retryable() {
		t.Error("5xx/429 Response not retryable")
	}
	if (capi.Response{HTTPStatus: 500, Err: &capi.GraphError{Code: 190}}).Retryable() {
		t.Error("500 with 190 retryable")
	}
	if (capi.Response{HTTPStatus: 400, Err: &capi.GraphError{Code: 100}}).Retryable() {
		t.Error("400 with 100 retryable")
	}
}

func newHTTPServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkSend is the client and the fake together on full batches: the
// ceiling a dispatcher draining to capitest can reach.
func BenchmarkSend(b *testing.B) {
	s := capitest.New(b)
	s.Now = func() time.Time { return now }
	s.Discard = true
	one := events(b, 1)[0]
	batch := make([]json.RawMessage, capi.MaxBatch)
	for i := range batch {
		batch[i] = one
	}
	c := new(capi.Client)
	b.SetBytes(int64(len(one) * capi.MaxBatch))
	for b.Loop() {
		resp, err := c.Send(b.Context(), s.Target("1"), batch)
		if err != nil || !resp.OK() {
			b.Fatalf("Send = %+v, %v", resp, err)
		}
	}
	b.ReportMetric(float64(b.N*capi.MaxBatch)/b.Elapsed().Seconds(), "events/s")
}
