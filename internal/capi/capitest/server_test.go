package capitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi/capitest"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const hash = "8830eedd6c6b5ea97d181563a349476ca1bb25ace1f94b5c5e48d9cad727941b"

func newServer(t *testing.T) *capitest.Server {
	t.Helper()
	s := capitest.New(t)
	s.Now = func() time.Time { return now }
	return s
}

// event is a valid system_generated event; change edits it.
func event(id string, change func(e map[string]any)) map[string]any {
	e := map[string]any{
		"event_name": "Lead", "event_time": now.Add(-time.Hour).Unix(), "event_id": id,
		"action_source": "system_generated", "user_data": map[string]any{"em": []string{hash}},
	}
	if change != nil {
		change(e)
	}
	return e
}

type reply struct {
	Status         int
	EventsReceived int                  `json:"events_received"`
	Messages       []string             `json:"messages"`
	FBTraceID      string               `json:"fbtrace_id"`
	Error          *capitest.GraphError `json:"error"`
}

// post sends a JSON body with the token as a query parameter.
func post(t *testing.T, s *capitest.Server, pixel string, body any) reply {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, s, http.MethodPost, "/v24.0/"+pixel+"/events?access_token="+capitest.Token, "application/json", raw)
}

func do(t *testing.T, s *capitest.Server, method, path, contentType string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("reply %d %q: %v", res.StatusCode, raw, err)
	}
	r.Status = res.StatusCode
	return r
}

func batch(events ...map[string]any) map[string]any {
	return map[string]any{"data": events, "partner_agent": "leadsignal"}
}

func TestAccepts(t *testing.T) {
	s := newServer(t)
	r := post(t, s, "1", map[string]any{"data": []any{event("a", nil), event("b", nil)}, "test_event_code": "T1"})
	if r.Status != 200 || r.EventsReceived != 2 || r.Messages == nil || r.FBTraceID == "" || r.Error != nil {
		t.Fatalf("reply = %+v; want 200 with 2 events", r)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].TestEventCode != "T1" || reqs[0].Status != 200 || reqs[0].Time != now ||
		fmt.Sprint(reqs[0].EventIDs()) != "[a b]" || reqs[0].Token != capitest.Token || reqs[0].PixelID != "1" {
		t.Errorf("Requests = %+v", reqs)
	}
	if n, ok := reqs[0].Events[0]["event_time"].(json.Number); !ok || n.String() != fmt.Sprint(now.Add(-time.Hour).Unix()) {
		t.Errorf("event_time recorded as %#v; want the json.Number", reqs[0].Events[0]["event_time"])
	}
	if s.EventsReceived() != 2 {
		t.Errorf("EventsReceived = %d", s.EventsReceived())
	}
}

func TestAcceptsForms(t *testing.T) {
	s := newServer(t)
	data, _ := json.Marshal([]any{event("a", nil)})

	form := url.Values{"data": {string(data)}, "access_token": {capitest.Token}, "test_event_code": {"T2"}}
	r := do(t, s, http.MethodPost, "/v24.0/1/events", "application/x-www-form-urlencoded", []byte(form.Encode()))
	if r.Status != 200 || r.EventsReceived != 1 {
		t.Errorf("url-encoded form: %+v", r)
	}

	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("data", string(data))
	_ = mw.WriteField("access_token", capitest.Token)
	_ = mw.Close()
	r = do(t, s, http.MethodPost, "/v24.0/1/events", mw.FormDataContentType(), b.Bytes())
	if r.Status != 200 || r.EventsReceived != 1 {
		t.Errorf("multipart form (Meta's curl -F): %+v", r)
	}
	if got := s.Requests()[0].TestEventCode; got != "T2" {
		t.Errorf("test_event_code = %q; want T2", got)
	}

	// The token may also be a JSON body field.
	raw, _ := json.Marshal(map[string]any{"data": []any{event("a", nil)}, "access_token": capitest.Token})
	if r := do(t, s, http.MethodPost, "/v24.0/1/events", "application/json", raw); r.Status != 200 {
		t.Errorf("token in JSON body: %+v", r)
	}
}

func TestRefusesRequests(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(s *capitest.Server)
		method      string
		path        string
		body        string
		wantCode    int
		wantSubcode int
	}{
		{"GET", nil, http.MethodGet, "/v24.0/1/events?access_token=test-token", "", 100, 33},
		{"bad path", nil, http.MethodPost, "/v24.0/1/stats?access_token=test-token", `{"data":[]}`, 2500, 0},
		{"no token", nil, http.MethodPost, "/v24.0/1/events", `{"data":[{}]}`, 104, 0},
		{"unknown token", nil, http.MethodPost, "/v24.0/1/events?access_token=nope", `{"data":[{}]}`, 190, 463},
		{"unknown pixel", func(s *capitest.Server) { s.Pixels = map[string]bool{"2": true} },
			http.MethodPost, "/v24.0/1/events?access_token=test-token", `{"data":[{}]}`, 100, 33},
		{"no proof", func(s *capitest.Server) { s.AppSecret = "shh" },
			http.MethodPost, "/v24.0/1/events?access_token=test-token", `{"data":[{}]}`, 100, 0},
		{"wrong proof", func(s *capitest.Server) { s.AppSecret = "shh" },
			http.MethodPost, "/v24.0/1/events?access_token=test-token&appsecret_proof=abc", `{"data":[{}]}`, 100, 0},
		{"no data", nil, http.MethodPost, "/v24.0/1/events?access_token=test-token", `{}`, 100, 0},
		{"empty data", nil, http.MethodPost, "/v24.0/1/events?access_token=test-token", `{"data":[]}`, 100, 0},
		{"data not events", nil, http.MethodPost, "/v24.0/1/events?access_token=test-token", `{"data":"x"}`, 100, 0},
		{"not JSON", nil, http.MethodPost, "/v24.0/1/events?access_token=test-token", `{"data":`, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			if tt.setup != nil {
				tt.setup(s)
			}
			r := do(t, s, tt.method, tt.path, "application/json", []byte(tt.body))
			if r.Status != 400 || r.Error == nil || r.Error.Code != tt.wantCode || r.Error.Subcode != tt.wantSubcode {
				t.Errorf("reply = %+v (error %+v); want 400 %d/%d", r, r.Error, tt.wantCode, tt.wantSubcode)
			}
			if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Status != 400 || reqs[0].Error == nil {
				t.Errorf("Requests = %+v; want the refusal recorded", reqs)
			}
		})
	}
}

func TestRefusesBatchForOneBadEvent(t *testing.T) {
	tests := []struct {
		name        string
		change      func(e map[string]any)
		wantSubcode int
		wantTitle   string
	}{
		{"no event_name", func(e map[string]any) { delete(e, "event_name") }, capitest.SubcodeInvalid, "Missing Event Name"},
		{"no event_time", func(e map[string]any) { delete(e, "event_time") }, capitest.SubcodeInvalid, "Invalid Event Time"},
		{"event_time in ms is in the future", func(e map[string]any) { e["event_time"] = now.UnixMilli() }, capitest.SubcodeInvalid, "Event Timestamp In Future"},
		{"event_time as text", func(e map[string]any) { e["event_time"] = "1764590400" }, capitest.SubcodeInvalid, "Invalid Event Time"},
		{"older than 7 days", func(e map[string]any) { e["event_time"] = now.Add(-7*24*time.Hour - time.Second).Unix() }, capitest.SubcodeTooOld, "Event Timestamp Too Old"},
		{"2 minutes ahead", func(e map[string]any) { e["event_time"] = now.Add(2 * time.Minute).Unix() }, capitest.SubcodeInvalid, "Event Timestamp In Future"},
		{"no action_source", func(e map[string]any) { delete(e, "action_source") }, capitest.SubcodeInvalid, "Invalid Action Source"},
		{"unknown action_source", func(e map[string]any) { e["action_source"] = "crm" }, capitest.SubcodeInvalid, "Invalid Action Source"},
		{"no user_data", func(e map[string]any) { delete(e, "user_data") }, capitest.SubcodeInvalid, "Missing User Data"},
		{"unhashed em", func(e map[string]any) { e["user_data"] = map[string]any{"em": []string{"joe@example.com"}} }, capitest.SubcodeInvalid, "Unhashed Customer Information"},
		{"unhashed ph string", func(e map[string]any) { e["user_data"] = map[string]any{"ph": "12062072008"} }, capitest.SubcodeInvalid, "Unhashed Customer Information"},
		{"website without url", func(e map[string]any) {
			e["action_source"] = "website"
			e["user_data"] = map[string]any{"em": []string{hash}, "client_user_agent": "UA"}
		}, capitest.SubcodeInvalid, "Missing Event Source URL"},
		{"website without user agent", func(e map[string]any) {
			e["action_source"], e["event_source_url"] = "website", "https://x.example"
		}, capitest.SubcodeInvalid, "Missing User Agent"},
		{"Purchase without value", func(e map[string]any) {
			e["event_name"], e["custom_data"] = "Purchase", map[string]any{"currency": "USD"}
		}, capitest.SubcodeNoValue, "Missing Value"},
		{"Purchase without currency", func(e map[string]any) {
			e["event_name"], e["custom_data"] = "Purchase", map[string]any{"value": 1}
		}, capitest.SubcodeInvalid, "Missing Currency"},
		{"business_messaging Lead", func(e map[string]any) {
			e["action_source"], e["messaging_channel"] = "business_messaging", "whatsapp"
		}, capitest.SubcodeMessagingEventType, "Messaging Event Invalid Event Type"},
		{"business_messaging without channel", func(e map[string]any) {
			e["action_source"], e["event_name"] = "business_messaging", "LeadSubmitted"
		}, capitest.SubcodeInvalid, "Missing Messaging Channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			r := post(t, s, "1", batch(event("good", nil), event("bad", tt.change)))
			if r.Status != 400 || r.Error == nil || r.Error.Code != 100 || r.Error.Subcode != tt.wantSubcode ||
				r.Error.UserTitle != tt.wantTitle || r.Error.IsTransient {
				t.Errorf("reply = %+v (error %+v); want 400 100/%d %q", r, r.Error, tt.wantSubcode, tt.wantTitle)
			}
			if s.EventsReceived() != 0 {
				t.Errorf("EventsReceived = %d; want the whole batch refused", s.EventsReceived())
			}
		})
	}
	// The same events pass when valid.
	s := newServer(t)
	ok := []map[string]any{
		event("w", func(e map[string]any) {
			e["action_source"], e["event_source_url"] = "website", "https://x.example"
			e["user_data"] = map[string]any{"client_user_agent": "UA", "client_ip_address": "203.0.113.7"}
		}),
		event("p", func(e map[string]any) {
			e["event_name"], e["custom_data"] = "Purchase", map[string]any{"value": 0, "currency": "USD"}
		}),
		event("m", func(e map[string]any) {
			e["action_source"], e["event_name"], e["messaging_channel"] = "business_messaging", "LeadSubmitted", "whatsapp"
		}),
		event("exactly 7 days", func(e map[string]any) { e["event_time"] = now.Add(-7 * 24 * time.Hour).Unix() }),
		event("skew", func(e map[string]any) { e["event_time"] = now.Add(time.Minute).Unix() }),
	}
	if r := post(t, s, "1", batch(ok...)); r.Status != 200 || r.EventsReceived != len(ok) {
		t.Errorf("valid batch: %+v (error %+v)", r, r.Error)
	}
}

func TestBatchLimit(t *testing.T) {
	s := newServer(t)
	evs := make([]map[string]any, capitest.MaxBatch+1)
	for i := range evs {
		evs[i] = event(fmt.Sprint(i), nil)
	}
	if r := post(t, s, "1", batch(evs...)); r.Status != 400 || r.Error == nil || r.Error.Code != 100 {
		t.Errorf("1001 events: %+v", r)
	}
	if r := post(t, s, "1", batch(evs[:capitest.MaxBatch]...)); r.Status != 200 || r.EventsReceived != capitest.MaxBatch {
		t.Errorf("1000 events: %+v", r)
	}
}

func TestRejectEventIDs(t *testing.T) {
	s := newServer(t)
	s.RejectEventIDs("x2", "x9")
	if r := post(t, s, "1", batch(event("x1", nil), event("x2", nil))); r.Status != 400 || r.Error.Subcode != capitest.SubcodeInvalid {
		t.Errorf("batch with x2: %+v", r)
	}
	if r := post(t, s, "1", batch(event("x1", nil), event("x3", nil))); r.Status != 200 {
		t.Errorf("batch without rejected ids: %+v", r)
	}
}

func TestFailNext(t *testing.T) {
	s := newServer(t)
	s.FailNext(2, capitest.Throttle)
	s.FailNext(1, capitest.Transient)
	s.FailNext(1, capitest.ServerError)
	wantCodes := []int{17, 17, 2}
	for i, want := range wantCodes {
		r := post(t, s, "1", batch(event("a", nil)))
		if r.Error == nil || r.Error.Code != want || !r.Error.IsTransient {
			t.Errorf("request %d: %+v; want transient %d", i, r.Error, want)
		}
	}
	// The plain 500 has no Graph body.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/v24.0/1/events?access_token=test-token", strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 || bytes.Contains(body, []byte(`"error"`)) {
		t.Errorf("ServerError = %d %q; want a plain 500", res.StatusCode, body)
	}
	if r := post(t, s, "1", batch(event("a", nil))); r.Status != 200 {
		t.Errorf("after the failures: %+v", r)
	}
	// A failure applies even to a request that would be refused.
	s.FailNext(1, capitest.Failure{Status: 503, Error: capitest.GraphError{Code: 1, Message: "down"}})
	if r := do(t, s, http.MethodPost, "/v24.0/1/events", "application/json", []byte(`{}`)); r.Status != 503 || r.Error.Code != 1 {
		t.Errorf("custom failure: %+v", r)
	}
	if got := len(s.Requests()); got != 6 {
		t.Errorf("recorded %d requests; want 6", got)
	}
}

func TestHangEndsWithTheClient(t *testing.T) {
	s := newServer(t)
	s.FailNext(1, capitest.Hang)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v24.0/1/events?access_token=test-token", strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatal("hang answered")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want the client's deadline", err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Status != 0 {
		t.Errorf("Requests = %+v; want the hung one recorded with status 0", reqs)
	}
}

func TestHangReleasedOnClose(t *testing.T) {
	// A request nobody cancels must not keep the test from ending: the
	// cleanup releases it. Run in a subtest so its cleanup runs here.
	var s *capitest.Server
	done := make(chan error, 1)
	t.Run("hang", func(t *testing.T) {
		s = newServer(t)
		s.FailNext(1, capitest.Hang)
		go func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
				s.URL+"/v24.0/1/events?access_token=test-token", strings.NewReader(`{}`))
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				res.Body.Close()
			}
			done <- err
		}()
		s.WaitRequests(t, 1)
	})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hanging request outlived the server")
	}
}

func TestReset(t *testing.T) {
	s := newServer(t)
	s.FailNext(1, capitest.Reset)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/v24.0/1/events?access_token=test-token", strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatal("reset answered")
	}
	if r := post(t, s, "1", batch(event("a", nil))); r.Status != 200 {
		t.Errorf("after reset: %+v", r)
	}
}

func TestDiscard(t *testing.T) {
	s := newServer(t)
	s.Discard = true
	post(t, s, "1", batch(event("a", nil), event("b", nil)))
	if len(s.Requests()) != 0 || s.EventsReceived() != 2 {
		t.Errorf("Discard: %d requests kept, %d events; want 0, 2", len(s.Requests()), s.EventsReceived())
	}
}

func TestTarget(t *testing.T) {
	s := newServer(t)
	s.AppSecret = "shh"
	tg := s.Target("77")
	if tg.BaseURL != s.URL || tg.PixelID != "77" || tg.Token != capitest.Token || tg.AppSecret != "shh" || tg.Version != capitest.Version {
		t.Errorf("Target = %+v", tg)
	}
}
