package capitest

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/capi"
)

// Defaults of a new Server.
const (
	Token   = "test-token"
	Version = "v24.0"
	// FutureSkew is how far ahead of Now an event_time may be by default.
	FutureSkew = time.Minute
	// MaxBatch is the most events a request may carry.
	MaxBatch = 1000
)

// Graph error codes and subcodes the fake answers with.
const (
	CodeInvalidParameter = 100
	CodeToken            = 190
	CodeNoToken          = 104
	CodeUnknownPath      = 2500

	SubcodeTooOld              = 2804003 // event_time older than 7 days
	SubcodeNoValue             = 2804009 // Purchase without value
	SubcodeInvalid             = 2804001 // every other invalid event (meaning not published)
	SubcodeMessagingEventType  = 2804066 // event name business_messaging does not take
	SubcodeNoObject            = 33      // unknown pixel or no permission
	SubcodeTokenExpired        = 463
	maxBody                    = 16 << 20
	maxEventAge                = 7 * 24 * time.Hour
	defaultContentTypeResponse = "application/json; charset=UTF-8"
)

// GraphError is the "error" object of a Graph error body.
type GraphError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode,omitempty"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title,omitempty"`
	UserMsg     string `json:"error_user_msg,omitempty"`
	FBTraceID   string `json:"fbtrace_id"`
}

// Failure is how FailNext makes a request fail.
type Failure struct {
	// Status is the HTTP status of the answer.
	Status int
	// Error is sent as {"error": ...} when its Code is set; otherwise the
	// body is plain text, as from a proxy.
	Error GraphError
	// Hang answers nothing until the request's context ends (the client
	// gives up) or the server closes.
	Hang bool
	// Reset closes the connection without an answer (TCP RST).
	Reset bool
}

// Ready-made failures.
var (
	// ServerError is an HTTP 500 with a body that is no Graph error.
	ServerError = Failure{Status: http.StatusInternalServerError}
	// Throttle is Graph's "User request limit reached" (17), transient.
	Throttle = Failure{Status: http.StatusBadRequest, Error: GraphError{
		Message: "(#17) User request limit reached", Type: "OAuthException", Code: 17, IsTransient: true,
	}}
	// ThrottleAdAccount is the ads-management rate limit (80004), transient.
	ThrottleAdAccount = Failure{Status: http.StatusBadRequest, Error: GraphError{
		Message: "(#80004) There have been too many calls to this ad-account.", Type: "OAuthException",
		Code: 80004, Subcode: 2446079, IsTransient: true,
	}}
	// Transient is Graph's temporary "unexpected error" (2), transient.
	Transient = Failure{Status: http.StatusInternalServerError, Error: GraphError{
		Message: "An unexpected error has occurred. Please retry your request later.", Type: "OAuthException",
		Code: 2, IsTransient: true,
	}}
	// Hang never answers.
	Hang = Failure{Hang: true}
	// Reset drops the connection.
	Reset = Failure{Reset: true}
)

// Request is one request the fake received, as it understood it.
type Request struct {
	Time           time.Time // the Server's Now when it arrived
	Version        string
	PixelID        string
	Token          string
	AppSecretProof string
	TestEventCode  string
	PartnerAgent   string
	ContentType    string
	// Events are the decoded events (numbers as json.Number).
	Events []map[string]any
	// Status is the HTTP status answered; 0 for Hang and Reset.
	Status int
	// Error is the Graph error answered, if any.
	Error *GraphError
}

// EventIDs lists the request's event ids in order.
func (r Request) EventIDs() []string {
	ids := make([]string, len(r.Events))
	for i, e := range r.Events {
		ids[i], _ = e["event_id"].(string)
	}
	return ids
}

// Server is the fake. Set its fields before the requests that depend on them.
type Server struct {
	*httptest.Server

	// Tokens are the access tokens Meta knows; others get 190/463.
	Tokens map[string]bool
	// Pixels, when non-nil, are the pixels that exist; others get 100/33.
	Pixels map[string]bool
	// AppSecret, when set, makes appsecret_proof required and checked.
	AppSecret string
	// Now is the clock of the 7-day and the future checks.
	Now func() time.Time
	// FutureSkew is how far ahead of Now an event_time may be.
	FutureSkew time.Duration
	// Discard keeps requests from being recorded (benchmarks); they are
	// still checked and counted.
	Discard bool

	mu       sync.Mutex
	requests []Request
	received int
	failures []Failure
	rejected map[string]bool
	traces   int
	recorded int
	// recordedCh is closed, and replaced, when a request is recorded.
	recordedCh chan struct{}
	done       chan struct{}
}

// Unreachable is an address on this machine that refuses connections, as
// Meta's does in an outage: a port just given back by a listener.
func Unreachable(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// New starts a fake that knows the token "test-token", accepts any pixel and
// uses the real clock. It is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		Tokens:     map[string]bool{Token: true},
		Now:        time.Now,
		FutureSkew: FutureSkew,
		rejected:   map[string]bool{},
		recordedCh: make(chan struct{}),
		done:       make(chan struct{}),
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.done) // release hanging handlers, or Close would wait for them
		s.Close()
	})
	return s
}

// Target is where a capi.Client reaches this fake for pixelID, with the
// default token and the Server's AppSecret.
func (s *Server) Target(pixelID string) capi.Target {
	return capi.Target{BaseURL: s.URL, Version: Version, PixelID: pixelID, Token: Token, AppSecret: s.AppSecret}
}

// FailNext makes the next n requests fail as f says, whatever they carry.
func (s *Server) FailNext(n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, f)
	}
}

// RejectEventIDs makes every batch that contains one of ids fail with 400
// (100/SubcodeInvalid), as Meta refuses a batch for one bad event.
func (s *Server) RejectEventIDs(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.rejected[id] = true
	}
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// EventsReceived is the number of events in accepted batches.
func (s *Server) EventsReceived() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// WaitRequests waits until the fake has received n requests (counted
// when it has checked them, before it answers; Discard does not matter),
// and fails the test when that has not happened within 10 s.
func (s *Server) WaitRequests(t testing.TB, n int) {
	t.Helper()
	s.wait(t, func() (bool, string) {
		return s.recorded >= n, fmt.Sprintf("%d requests; want %d", s.recorded, n)
	})
}

// WaitEvents waits until EventsReceived is at least n, and fails the test
// when that has not happened within 10 s.
func (s *Server) WaitEvents(t testing.TB, n int) {
	t.Helper()
	s.wait(t, func() (bool, string) {
		return s.received >= n, fmt.Sprintf("%d events received; want %d", s.received, n)
	})
}

// wait waits until ok, asked under s.mu at each recorded request, holds.
func (s *Server) wait(t testing.TB, ok func() (bool, string)) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		done, state := ok()
		recorded := s.recordedCh
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-recorded:
		case <-timeout.C:
			t.Fatalf("capitest: waited 10 s in vain: %s", state)
		}
	}
}

// refusal is an error answer.
type refusal struct {
	status int
	err    GraphError
}

func refuse(status, code, subcode int, typ, msg, title, userMsg string) *refusal {
	return &refusal{status: status, err: GraphError{
		Message: msg, Type: typ, Code: code, Subcode: subcode, UserTitle: title, UserMsg: userMsg,
	}}
}

// invalidEvent is a 100 refusal of the batch for one event.
func invalidEvent(subcode int, title, msg string) *refusal {
	return refuse(http.StatusBadRequest, CodeInvalidParameter, subcode, "OAuthException", "Invalid parameter", title, msg)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := s.Now()
	s.traces++
	trace := fmt.Sprintf("FakeTrace%07d", s.traces)
	s.mu.Unlock()

	req := Request{Time: now, ContentType: r.Header.Get("Content-Type")}
	rf := s.parse(r, &req)

	s.mu.Lock()
	var fail *Failure
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		fail = &f
	}
	s.mu.Unlock()

	switch {
	case fail != nil:
		s.fail(w, r, req, *fail, trace)
		return
	case rf == nil:
		rf = s.check(now, &req)
	}
	if rf != nil {
		rf.err.FBTraceID = trace
		req.Status, req.Error = rf.status, &rf.err
		s.record(req, 0)
		writeJSON(w, rf.status, trace, map[string]any{"error": rf.err})
		return
	}
	req.Status = http.StatusOK
	s.record(req, len(req.Events))
	writeJSON(w, http.StatusOK, trace, map[string]any{
		"events_received": len(req.Events), "messages": []string{}, "fbtrace_id": trace,
	})
}

func (s *Server) record(req Request, received int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received += received
	if !s.Discard {
		s.requests = append(s.requests, req)
	}
	s.recorded++
	close(s.recordedCh)
	s.recordedCh = make(chan struct{})
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, req Request, f Failure, trace string) {
	req.Status = f.Status
	if f.Hang || f.Reset {
		req.Status = 0
	}
	if f.Error.Code != 0 {
		e := f.Error
		e.FBTraceID = trace
		req.Error = &e
	}
	s.record(req, 0)
	switch {
	case f.Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case f.Reset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("capitest: connection cannot be hijacked")
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			panic("capitest: hijack: " + err.Error())
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST, not FIN
		}
		_ = conn.Close()
	case req.Error != nil:
		writeJSON(w, f.Status, trace, map[string]any{"error": req.Error})
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, http.StatusText(f.Status)+"\n")
	}
}

func writeJSON(w http.ResponseWriter, status int, trace string, v any) {
	w.Header().Set("Content-Type", defaultContentTypeResponse)
	w.Header().Set("X-Fb-Trace-Id", trace)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// parse reads the path, the credentials and the body into req. The body may
// be JSON ({"data": [...], ...}) or a form whose data field holds the JSON
// array, as in Meta's curl example; credentials may also be query
// parameters.
func (s *Server) parse(r *http.Request, req *Request) *refusal {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 3 || parts[2] != "events" || !strings.HasPrefix(parts[0], "v") {
		return refuse(http.StatusBadRequest, CodeUnknownPath, 0, "OAuthException", "Unknown path components: "+r.URL.Path, "", "")
	}
	req.Version, req.PixelID = parts[0], parts[1]
	if r.Method != http.MethodPost {
		return refuse(http.StatusBadRequest, CodeInvalidParameter, SubcodeNoObject, "GraphMethodException",
			"Unsupported "+strings.ToLower(r.Method)+" request.", "", "")
	}
	q := r.URL.Query()
	req.Token, req.AppSecretProof, req.TestEventCode = q.Get("access_token"), q.Get("appsecret_proof"), q.Get("test_event_code")

	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException", "cannot read body: "+err.Error(), "", "")
	}
	var fields struct {
		Data           []map[string]any `json:"data"`
		TestEventCode  string           `json:"test_event_code"`
		PartnerAgent   string           `json:"partner_agent"`
		AccessToken    string           `json:"access_token"`
		AppSecretProof string           `json:"appsecret_proof"`
	}
	mt, _, _ := mime.ParseMediaType(req.ContentType)
	if mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data" {
		form, err := parseForm(r, mt, raw)
		if err != nil {
			return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException", "(#100) bad form: "+err.Error(), "", "")
		}
		fields.TestEventCode, fields.PartnerAgent = form.Get("test_event_code"), form.Get("partner_agent")
		fields.AccessToken, fields.AppSecretProof = form.Get("access_token"), form.Get("appsecret_proof")
		raw = []byte(form.Get("data"))
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := decode(raw, &fields.Data); err != nil {
				return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException",
					"(#100) param data must be an array of event objects: "+err.Error(), "", "")
			}
		}
	} else if len(bytes.TrimSpace(raw)) > 0 {
		// One pass over the body: a 1000-event batch is about 1 MB.
		if err := decode(raw, &fields); err != nil {
			return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException",
				"(#100) The request body is not valid JSON or data is not an array of event objects: "+err.Error(), "", "")
		}
	}
	req.PartnerAgent = fields.PartnerAgent
	req.Token = cmp.Or(req.Token, fields.AccessToken)
	req.AppSecretProof = cmp.Or(req.AppSecretProof, fields.AppSecretProof)
	req.TestEventCode = cmp.Or(req.TestEventCode, fields.TestEventCode)
	req.Events = fields.Data
	if fields.Data == nil {
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException", "(#100) The parameter data is required", "", "")
	}
	return nil
}

// check answers what Meta would, in Meta's order: token, app secret proof,
// pixel, batch, then each event.
func (s *Server) check(now time.Time, req *Request) *refusal {
	s.mu.Lock()
	tokens, pixels, secret, skew := s.Tokens, s.Pixels, s.AppSecret, s.FutureSkew
	var rejected []string
	for _, id := range req.EventIDs() {
		if s.rejected[id] {
			rejected = append(rejected, id)
		}
	}
	s.mu.Unlock()

	switch {
	case req.Token == "":
		return refuse(http.StatusBadRequest, CodeNoToken, 0, "OAuthException", "An access token is required to request this resource.", "", "")
	case !tokens[req.Token]:
		return refuse(http.StatusBadRequest, CodeToken, SubcodeTokenExpired, "OAuthException",
			"Error validating access token: Session has expired.", "", "")
	case secret != "" && req.AppSecretProof == "":
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "GraphMethodException",
			"API calls from the server require an appsecret_proof argument", "", "")
	case secret != "" && !hmac.Equal([]byte(req.AppSecretProof), []byte(proof(req.Token, secret))):
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "GraphMethodException",
			"Invalid appsecret_proof provided in the API argument", "", "")
	case pixels != nil && !pixels[req.PixelID]:
		return refuse(http.StatusBadRequest, CodeInvalidParameter, SubcodeNoObject, "GraphMethodException",
			fmt.Sprintf("Unsupported post request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", req.PixelID), "", "")
	case len(req.Events) == 0:
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException", "(#100) The parameter data is required", "", "")
	case len(req.Events) > MaxBatch:
		return refuse(http.StatusBadRequest, CodeInvalidParameter, 0, "OAuthException",
			fmt.Sprintf("(#100) param data must be an array of maximum %d elements.", MaxBatch), "", "")
	case len(rejected) > 0:
		return invalidEvent(SubcodeInvalid, "Rejected Event", "The fake was told to reject event_id "+rejected[0]+".")
	}
	for i, e := range req.Events {
		if rf := checkEvent(e, now, skew); rf != nil {
			rf.err.UserMsg = fmt.Sprintf("%s (event %d of the batch)", rf.err.UserMsg, i)
			return rf
		}
	}
	return nil
}

// decode reads JSON keeping numbers as json.Number, so event_time can be
// checked to be an integer and a 17-digit lead_id keeps its digits.
func decode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// parseForm reads a url-encoded or multipart form body.
func parseForm(r *http.Request, mt string, raw []byte) (url.Values, error) {
	if mt == "application/x-www-form-urlencoded" {
		return url.ParseQuery(string(raw))
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err := r.ParseMultipartForm(maxBody); err != nil {
		return nil, err
	}
	return url.Values(r.MultipartForm.Value), nil
}

func proof(token, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

var actionSources = map[string]bool{
	"website": true, "app": true, "email": true, "phone_call": true, "chat": true,
	"physical_store": true, "system_generated": true, "business_messaging": true, "other": true,
}

var messagingEvents = map[string]bool{
	"LeadSubmitted": true, "QualifiedLead": true, "Purchase": true, "AddToCart": true,
	"InitiateCheckout": true, "ViewContent": true, "OrderCreated": true, "OrderShipped": true,
	"OrderDelivered": true, "OrderCanceled": true, "OrderReturned": true, "CartAbandoned": true,
	"RatingProvided": true, "ReviewProvided": true,
}

// checkEvent refuses one event the way Meta refuses the batch for it.
func checkEvent(e map[string]any, now time.Time, skew time.Duration) *refusal {
	name, _ := e["event_name"].(string)
	if name == "" {
		return invalidEvent(SubcodeInvalid, "Missing Event Name", "event_name is required.")
	}
	n, ok := e["event_time"].(json.Number)
	t, err := n.Int64()
	if !ok || err != nil || t <= 0 {
		return invalidEvent(SubcodeInvalid, "Invalid Event Time", "event_time must be a Unix timestamp in seconds.")
	}
	if now.Sub(time.Unix(t, 0)) > maxEventAge {
		return invalidEvent(SubcodeTooOld, "Event Timestamp Too Old",
			"The timestamp for this event is too far in the past. Events need to be sent from your server within 7 days of when they occurred.")
	}
	if time.Unix(t, 0).Sub(now) > skew {
		return invalidEvent(SubcodeInvalid, "Event Timestamp In Future", "The timestamp for this event is in the future.")
	}
	action, _ := e["action_source"].(string)
	if !actionSources[action] {
		return invalidEvent(SubcodeInvalid, "Invalid Action Source", fmt.Sprintf("action_source %q is not a valid value.", action))
	}
	ud, ok := e["user_data"].(map[string]any)
	if !ok {
		return invalidEvent(SubcodeInvalid, "Missing User Data", "user_data is required.")
	}
	for _, k := range []string{"em", "ph"} {
		if v, ok := ud[k]; ok && !allHashed(v) {
			return invalidEvent(SubcodeInvalid, "Unhashed Customer Information",
				fmt.Sprintf("user_data.%s must be SHA-256 hashed.", k))
		}
	}
	switch action {
	case "website":
		if u, _ := e["event_source_url"].(string); u == "" {
			return invalidEvent(SubcodeInvalid, "Missing Event Source URL", "event_source_url is required for website events.")
		}
		if ua, _ := ud["client_user_agent"].(string); ua == "" {
			return invalidEvent(SubcodeInvalid, "Missing User Agent", "client_user_agent is required for website events.")
		}
	case "business_messaging":
		if ch, _ := e["messaging_channel"].(string); ch == "" {
			return invalidEvent(SubcodeInvalid, "Missing Messaging Channel", "messaging_channel is required for business_messaging events.")
		}
		if !messagingEvents[name] {
			return invalidEvent(SubcodeMessagingEventType, "Messaging Event Invalid Event Type",
				fmt.Sprintf("%q is not a business messaging event.", name))
		}
	}
	if name == "Purchase" {
		cd, _ := e["custom_data"].(map[string]any)
		if _, ok := cd["value"].(json.Number); !ok {
			return invalidEvent(SubcodeNoValue, "Missing Value", "Purchase events need custom_data.value.")
		}
		if c, _ := cd["currency"].(string); c == "" {
			return invalidEvent(SubcodeInvalid, "Missing Currency", "Purchase events need custom_data.currency.")
		}
	}
	return nil
}

// allHashed reports whether v is a SHA-256 hex string or a non-empty list of them.
func allHashed(v any) bool {
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
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
