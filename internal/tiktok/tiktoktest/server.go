// Package tiktoktest is a fake of TikTok's Events API 2.0
// (POST /open_api/v1.3/event/track/) for tests, in the manner of
// capitest's fake of Meta's Graph API: it refuses what TikTok refuses
// (docs/destinations.md), can fail on demand, and records what it
// accepted.
//
// As TikTok does, it answers errors with HTTP 200 and a non-zero "code" in
// the body: a client must read the body of every answer.
package tiktoktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Defaults of a new Server.
const (
	Token = "tiktok-test-token"
	// Path is the Events API 2.0 endpoint.
	Path = "/open_api/v1.3/event/track/"
	// MaxBatch is the most events a request may carry.
	MaxBatch = 1000
)

// Codes of TikTok's answers (destinations.md).
const (
	CodeOK               = 0
	CodeNoPermission     = 40001 // a wrong or missing token, or a pixel it may not use
	CodeInvalidParameter = 40002 // a body TikTok refuses; the whole batch is refused
	CodeTooManyRequests  = 40100 // retry with backoff
)

// maxBody bounds a request body: 1,000 events of a few KB.
const maxBody = 16 << 20

// Answer is the body of every answer.
type Answer struct {
	Code      int            `json:"code"`
	Message   string         `json:"message"`
	RequestID string         `json:"request_id"`
	Data      map[string]any `json:"data"`
}

// Request is an accepted request: its body as sent.
type Request struct {
	EventSource   string           `json:"event_source"`
	EventSourceID string           `json:"event_source_id"`
	TestEventCode string           `json:"test_event_code"`
	Data          []map[string]any `json:"data"`
}

// EventIDs are the event_id of the request's events, in order.
func (r Request) EventIDs() []string {
	ids := make([]string, len(r.Data))
	for i, e := range r.Data {
		ids[i], _ = e["event_id"].(string)
	}
	return ids
}

// Failure is how the Server fails a request on demand: an answer code
// with HTTP 200, as TikTok answers, or an HTTP status of its own.
type Failure struct {
	Code   int
	Status int
}

// Server is a running fake.
type Server struct {
	URL string

	mu       sync.Mutex
	token    string
	failures []Failure
	accepted []Request
	seq      int
}

// New starts a fake that takes Token; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{token: Token}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// FailNext fails the next n requests with f.
func (s *Server) FailNext(n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, f)
	}
}

// Requests are the requests the fake accepted, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.accepted...)
}

// EventsReceived counts the events of the accepted requests.
func (s *Server) EventsReceived() int {
	n := 0
	for _, r := range s.Requests() {
		n += len(r.Data)
	}
	return n
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("fake-%d", s.seq)
	var fail *Failure
	if len(s.failures) > 0 {
		fail = &s.failures[0]
		s.failures = s.failures[1:]
	}
	token := s.token
	s.mu.Unlock()

	answer := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Answer{Code: code, Message: msg, RequestID: id, Data: map[string]any{}})
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != Path:
		http.NotFound(w, r)
		return
	case fail != nil && fail.Status != 0:
		w.WriteHeader(fail.Status)
		return
	case fail != nil:
		answer(fail.Code, "failed on demand")
		return
	case r.Header.Get("Access-Token") != token:
		answer(CodeNoPermission, "No permission to operate pixel code: the Access-Token header is missing or not this pixel's")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		answer(CodeInvalidParameter, "the body could not be read")
		return
	}
	var req Request
	if err := json.Unmarshal(raw, &req); err != nil {
		answer(CodeInvalidParameter, "the body is not JSON: "+err.Error())
		return
	}
	if msg := check(req); msg != "" {
		answer(CodeInvalidParameter, msg)
		return
	}
	s.mu.Lock()
	s.accepted = append(s.accepted, req)
	s.mu.Unlock()
	answer(CodeOK, "OK")
}

// check says why TikTok would refuse the whole request, "" when it would
// take it.
func check(req Request) string {
	switch {
	case req.EventSource != "web" && req.EventSource != "crm" && req.EventSource != "offline" && req.EventSource != "app":
		return fmt.Sprintf("event_source: %q is none of web, app, offline or crm", req.EventSource)
	case req.EventSourceID == "":
		return "event_source_id: Missing data for required field."
	case len(req.Data) == 0:
		return "data: Missing data for required field."
	case len(req.Data) > MaxBatch:
		return fmt.Sprintf("data: Length must be between 1 and %d.", MaxBatch)
	}
	for i, e := range req.Data {
		if msg := checkEvent(e); msg != "" {
			return fmt.Sprintf("Batch.%d.%s", i, msg)
		}
	}
	return ""
}

// checkEvent says what TikTok refuses of one event.
func checkEvent(e map[string]any) string {
	if name, _ := e["event"].(string); name == "" {
		return "event: Missing data for required field."
	}
	t, ok := e["event_time"].(float64)
	switch {
	case !ok:
		return "event_time: Missing data for required field."
	case t != float64(int64(t)) || t <= 0:
		return "event_time: Not a valid integer."
	case t >= 1e11:
		return "event_time: must be a Unix time in seconds, not milliseconds."
	}
	user, _ := e["user"].(map[string]any)
	for _, field := range []string{"email", "phone", "external_id"} {
		if v, ok := user[field]; ok && !hashed(v) {
			return "user." + field + ": must be a SHA-256 of the normalised value, 64 hexadecimal characters."
		}
	}
	if props, ok := e["properties"].(map[string]any); ok {
		if v, ok := props["value"]; ok {
			if _, num := v.(float64); !num {
				return "properties.value: Not a valid number."
			}
		}
	}
	return ""
}

// hashed reports whether v is a SHA-256 in lowercase hex, or a list of
// them (TikTok takes both; destinations.md).
func hashed(v any) bool {
	switch v := v.(type) {
	case string:
		return isSHA256(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); !ok || !isSHA256(s) {
				return false
			}
		}
		return len(v) > 0
	}
	return false
}

func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
