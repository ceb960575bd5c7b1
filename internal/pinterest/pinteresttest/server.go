package pinteresttest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Defaults of a new Server.
const (
	// Token is the conversion token the fake takes.
	Token = "pinterest-test-token"
	// AdAccount is the only ad account the token may send to.
	AdAccount = "549755885175"
	// MaxBatch is the most events a request may carry.
	MaxBatch = 1000
)

// Codes of Pinterest's error bodies.
const (
	CodeAuthFailed   = 2    // 401: a wrong or missing token
	CodeRateLimited  = 8    // 429: retry later
	CodeNotPermitted = 29   // 403: an ad account the token may not send to
	CodeSomeFailed   = 953  // 422: some or all events failed; details lists each one
	CodeInvalid      = 4196 // 400: the request is invalid as a whole
	CodeRampedDown   = 4197 // 503: the endpoint takes no traffic for now
)

// Event statuses of an answer.
const (
	StatusProcessed = "processed"
	StatusFailed    = "failed"
)

// maxBody bounds a request body: 1,000 events of a few KB.
const maxBody = 16 << 20

// Path is the events endpoint of an ad account.
func Path(adAccount string) string { return "/v5/ad_accounts/" + adAccount + "/events" }

// Error is the body of a refusal: Pinterest's {code, message}, with
// Details for code 953.
type Error struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Details *Results `json:"details,omitempty"`
}

// Results is the body of a 200 and the details of a 422: each event's
// status, in request order.
type Results struct {
	NumEventsReceived  int           `json:"num_events_received"`
	NumEventsProcessed int           `json:"num_events_processed"`
	Events             []EventStatus `json:"events"`
}

// EventStatus is what became of one event.
type EventStatus struct {
	Status         string `json:"status"`
	ErrorMessage   string `json:"error_message"`
	WarningMessage string `json:"warning_message"`
}

// Request is a request the fake checked event by event: its events as sent
// and what became of each.
type Request struct {
	AdAccount string
	Test      bool
	Data      []map[string]any
	Statuses  []EventStatus
}

// Processed are the request's events that were processed, in order.
func (r Request) Processed() []map[string]any {
	var out []map[string]any
	for i, e := range r.Data {
		if r.Statuses[i].Status == StatusProcessed {
			out = append(out, e)
		}
	}
	return out
}

// Server is a running fake.
type Server struct {
	URL string

	mu        sync.Mutex
	failures  []int
	echoToken bool
	requests  []Request
	tests     []Request
	seq       int
}

// New starts a fake that takes Token for AdAccount; it stops when the test
// ends.
func New(t testing.TB) *Server {
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v5/ad_accounts/{id}/events", s.serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// FailNext fails the next n requests with the HTTP status and Pinterest's
// body for it (401 code 2, 403 code 29, 429 code 8, 503 code 4197, ...).
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, status)
	}
}

// EchoToken makes every later answer repeat the token its request sent, in
// its messages: a client must scrub it from what it logs and shows.
// Pinterest never does this; it proves that the client would.
func (s *Server) EchoToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.echoToken = true
}

// Requests are the requests the fake checked event by event, test requests
// aside, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TestRequests are the ?test=true requests the fake checked event by
// event, in order: Pinterest answers them alike but records nothing.
func (s *Server) TestRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.tests...)
}

// Events are the processed events of Requests, in order.
func (s *Server) Events() []map[string]any {
	var out []map[string]any
	for _, r := range s.Requests() {
		out = append(out, r.Processed()...)
	}
	return out
}

// EventsReceived counts the processed events of Requests.
func (s *Server) EventsReceived() int { return len(s.Events()) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seq++
	w.Header().Set("X-Pinterest-Rid", "fake-"+strconv.Itoa(s.seq))
	fail := 0
	if len(s.failures) > 0 {
		fail = s.failures[0]
		s.failures = s.failures[1:]
	}
	echo := s.echoToken
	s.mu.Unlock()

	sent := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	say := func(msg string) string {
		if echo {
			return msg + " (token " + sent + ")"
		}
		return msg
	}
	refuse := func(status, code int, msg string) {
		writeJSON(w, status, Error{Code: code, Message: say(msg)})
	}
	if fail != 0 {
		code, msg := failure(fail)
		refuse(fail, code, msg)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		refuse(http.StatusUnauthorized, CodeAuthFailed, "Authentication failed.")
		return
	}
	account := r.PathValue("id")
	if account != AdAccount {
		refuse(http.StatusForbidden, CodeNotPermitted, "You are not permitted to access that resource.")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		refuse(http.StatusBadRequest, CodeInvalid, "The request body could not be read.")
		return
	}
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		refuse(http.StatusBadRequest, CodeInvalid, "Invalid request body: "+err.Error())
		return
	}
	if n := len(body.Data); n == 0 || n > MaxBatch {
		refuse(http.StatusBadRequest, CodeInvalid, fmt.Sprintf("data must hold 1 to %d events, not %d.", MaxBatch, n))
		return
	}

	req := Request{AdAccount: account, Test: r.URL.Query().Get("test") == "true", Data: body.Data}
	res := Results{NumEventsReceived: len(body.Data)}
	for _, e := range body.Data {
		st := EventStatus{Status: StatusProcessed}
		if msg := checkEvent(e); msg != "" {
			st = EventStatus{Status: StatusFailed, ErrorMessage: say(msg)}
		} else {
			res.NumEventsProcessed++
			if echo {
				st.WarningMessage = say("processed")
			}
		}
		req.Statuses = append(req.Statuses, st)
	}
	res.Events = req.Statuses
	s.mu.Lock()
	if req.Test {
		s.tests = append(s.tests, req)
	} else {
		s.requests = append(s.requests, req)
	}
	s.mu.Unlock()

	if res.NumEventsProcessed == res.NumEventsReceived {
		writeJSON(w, http.StatusOK, res)
		return
	}
	writeJSON(w, http.StatusUnprocessableEntity, Error{Code: CodeSomeFailed,
		Message: say("The action could not be processed properly due to some or all data provided being invalid."),
		Details: &res})
}

// failure is Pinterest's code and message for an HTTP status FailNext asks
// for; code 0 and the status text for one Pinterest documents no body for.
func failure(status int) (int, string) {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalid, "Invalid request."
	case http.StatusUnauthorized:
		return CodeAuthFailed, "Authentication failed."
	case http.StatusForbidden:
		return CodeNotPermitted, "You are not permitted to access that resource."
	case http.StatusTooManyRequests:
		return CodeRateLimited, "You have exceeded your rate limit. Try again later."
	case http.StatusServiceUnavailable:
		return CodeRampedDown, "The endpoint has been ramped down and is currently not accepting any traffic."
	}
	return 0, http.StatusText(status)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// eventNames are the event names of Pinterest's API reference.
var eventNames = map[string]bool{
	"add_payment_info": true, "add_to_cart": true, "add_to_wishlist": true, "app_install": true,
	"checkout": true, "custom": true, "initiate_checkout": true, "lead": true, "page_visit": true,
	"search": true, "signup": true, "subscribe": true, "view_category": true, "view_content": true,
	"watch_video": true,
}

var actionSources = map[string]bool{"app_android": true, "app_ios": true, "web": true, "offline": true}

// hashedFields are the user_data fields Pinterest takes as lists of
// SHA-256 hashes.
var hashedFields = []string{"em", "hashed_maids", "ph", "external_id", "fn", "ln", "ct", "st", "zp", "country", "ge", "db"}

// checkEvent says why Pinterest would fail one event, "" when it would
// process it.
func checkEvent(e map[string]any) string {
	switch name, _ := e["event_name"].(string); {
	case name == "":
		return "event_name is required."
	case !eventNames[name]:
		return fmt.Sprintf("event_name %q is not one of Pinterest's event names.", name)
	}
	if src, _ := e["action_source"].(string); !actionSources[src] {
		return "action_source is required and must be one of app_android, app_ios, web or offline."
	}
	t, ok := e["event_time"].(float64)
	switch {
	case !ok:
		return "event_time is required."
	case t != math.Trunc(t) || t <= 0:
		return "Invalid event_timestamp parameter. It must be a Unix time in seconds."
	case t > 1e11:
		return "Invalid event_timestamp parameter. Given timestamp is in milliseconds, not seconds."
	}
	if id, _ := e["event_id"].(string); id == "" {
		return "event_id is required."
	}
	if v, ok := e["opt_out"]; ok {
		if _, isBool := v.(bool); !isBool {
			return "opt_out must be a boolean."
		}
	}
	ud, ok := e["user_data"].(map[string]any)
	if !ok {
		return "user_data is required."
	}
	for _, f := range hashedFields {
		if v, ok := ud[f]; ok && !hashedList(v) {
			return "user_data." + f + " must be a list of SHA-256 hashes in lowercase hex."
		}
	}
	ip, _ := ud["client_ip_address"].(string)
	ua, _ := ud["client_user_agent"].(string)
	if ud["em"] == nil && ud["hashed_maids"] == nil && (ip == "" || ua == "") {
		return "user_data needs em, hashed_maids, or both client_ip_address and client_user_agent."
	}
	cd, ok := e["custom_data"]
	if !ok {
		return ""
	}
	custom, ok := cd.(map[string]any)
	if !ok {
		return "custom_data must be an object."
	}
	if v, ok := custom["value"]; ok {
		s, isString := v.(string)
		if !isString {
			return "custom_data.value must be a string."
		}
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "custom_data.value must be a number written as a string."
		}
	}
	if v, ok := custom["currency"]; ok {
		if s, _ := v.(string); !isCurrency(s) {
			return "custom_data.currency must be an ISO 4217 code of 3 upper-case letters."
		}
	}
	return ""
}

// hashedList reports whether v is a non-empty list of SHA-256 hashes in
// lowercase hex.
func hashedList(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, x := range list {
		if s, ok := x.(string); !ok || len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
			return false
		}
	}
	return true
}

func isCurrency(s string) bool {
	return len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}
