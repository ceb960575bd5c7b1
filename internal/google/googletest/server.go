// Package googletest is a fake of Google's Data Manager API
// (POST /v1/events:ingest) and of Google's OAuth token endpoint for tests,
// in the manner of tiktoktest: it refuses what Google refuses (the Data
// Manager API's ErrorReason values: bad hashes, missing fields, too many
// events, identifiers or destinations, an account or conversion action
// that is not its own), can fail on demand, and records what it accepted.
//
// As Google does, it fails fast: one bad event refuses the whole request
// with HTTP 400 and a REST error body whose google.rpc.ErrorInfo detail
// names the reason and, in its metadata, the index of the event.
package googletest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Credentials and accounts the fake takes. The secrets hold characters
// that URL and form encoding change, so that a client must scrub every
// form of them.
const (
	ClientID     = "googletest.apps.googleusercontent.com"
	ClientSecret = "GOCSPX-googletest/secret+42"
	RefreshToken = "1//googletest-refresh/token+42&x"
	// OperatingAccount is the Google Ads account events may go to.
	OperatingAccount = "1234567890"
	// LoginAccount is the manager account that may reach it.
	LoginAccount = "9876543210"
	// ExpiresIn is the lifetime, in seconds, of the access tokens it gives.
	ExpiresIn = 3599
)

// ConversionActions are the conversion actions of OperatingAccount.
var ConversionActions = []string{"111111111", "222222222"}

// Paths and limits of the API.
const (
	TokenPath       = "/token"
	IngestPath      = "/v1/events:ingest"
	MaxBatch        = 2000
	MaxDestinations = 10
	MaxIdentifiers  = 10
)

// maxBody bounds a request body: 2,000 events of about a KB, with room.
const maxBody = 16 << 20

// Server is a running fake.
type Server struct {
	// URL is the base URL of the API, a client's BaseURL.
	URL string
	// TokenURL is the token endpoint.
	TokenURL string

	mu            sync.Mutex
	access        map[string]bool // access tokens given and still valid
	revoked       bool
	echo          bool
	exchanges     int
	failures      []failure
	tokenFailures []int
	accepted      []Request
	validated     []Request
	seq           int
}

type failure struct {
	status int
	reason string
}

// New starts a fake; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{access: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc(TokenPath, s.serveToken)
	mux.HandleFunc(IngestPath, s.serveIngest)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.TokenURL = srv.URL + TokenPath
	return s
}

// FailNext fails the next n ingest requests with the HTTP status and a
// Google-shaped body: 429 RESOURCE_EXHAUSTED, 500 INTERNAL, 503
// UNAVAILABLE, 504 DEADLINE_EXCEEDED, 400 INVALID_ARGUMENT, ...
func (s *Server) FailNext(n, status int) { s.FailNextWith(n, status, "") }

// FailNextWith fails the next n ingest requests with the HTTP status and
// an ErrorInfo of the reason, such as 400 with
// DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED.
func (s *Server) FailNextWith(n, status int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status, reason})
	}
}

// FailTokenNext fails the next n token requests with the HTTP status.
func (s *Server) FailTokenNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.tokenFailures = append(s.tokenFailures, status)
	}
}

// RevokeRefreshToken makes the token endpoint refuse RefreshToken with
// invalid_grant, as Google does once a person revokes the app's access.
func (s *Server) RevokeRefreshToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// ExpireAccessTokens makes every access token given so far invalid, as if
// Google had revoked them before they expired.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// EchoSecrets makes every error message quote the credentials of its
// request, which Google's never do, so that a test can prove a client
// keeps them out of what it logs and shows.
func (s *Server) EchoSecrets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.echo = true
}

// Exchanges counts the requests to the token endpoint.
func (s *Server) Exchanges() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges
}

// Requests are the ingest requests the fake accepted, in order, without
// the validateOnly ones.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.accepted...)
}

// ValidateOnlyRequests are the validateOnly requests the fake found valid,
// in order: Google validates them and ingests nothing.
func (s *Server) ValidateOnlyRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.validated...)
}

// Events are the events of the accepted requests, in order.
func (s *Server) Events() []Event {
	var out []Event
	for _, r := range s.Requests() {
		out = append(out, r.Events...)
	}
	return out
}

// EventsReceived counts the events of the accepted requests.
func (s *Server) EventsReceived() int { return len(s.Events()) }

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	parseErr := r.ParseForm()
	s.mu.Lock()
	s.exchanges++
	var fail int
	if len(s.tokenFailures) > 0 {
		fail, s.tokenFailures = s.tokenFailures[0], s.tokenFailures[1:]
	}
	revoked, echo := s.revoked, s.echo
	s.mu.Unlock()

	refuse := func(status int, code, description string) {
		if echo {
			description += fmt.Sprintf(" [client_secret %s, refresh_token %s]",
				r.PostForm.Get("client_secret"), r.PostForm.Get("refresh_token"))
		}
		writeJSON(w, status, map[string]string{"error": code, "error_description": description})
	}
	switch {
	case fail != 0:
		refuse(fail, "internal_failure", "failed on demand")
	case parseErr != nil:
		refuse(http.StatusBadRequest, "invalid_request", "the body is not a form")
	case r.PostForm.Get("grant_type") != "refresh_token":
		refuse(http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
	case r.PostForm.Get("client_id") != ClientID || r.PostForm.Get("client_secret") != ClientSecret:
		refuse(http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
	case r.PostForm.Get("refresh_token") != RefreshToken || revoked:
		refuse(http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
	default:
		s.mu.Lock()
		s.seq++
		tok := "ya29.googletest-access/" + strconv.Itoa(s.seq)
		s.access[tok] = true
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": ExpiresIn,
			"token_type": "Bearer", "scope": "https://www.googleapis.com/auth/datamanager"})
	}
}

func (s *Server) serveIngest(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	auth := r.Header.Get("Authorization")
	tok, bearer := strings.CutPrefix(auth, "Bearer ")
	s.mu.Lock()
	s.seq++
	id := "googletest-request-" + strconv.Itoa(s.seq)
	var fail *failure
	if len(s.failures) > 0 {
		fail = &s.failures[0]
		s.failures = s.failures[1:]
	}
	valid, echo := bearer && s.access[tok], s.echo
	s.mu.Unlock()

	refuse := func(f refusal) {
		if echo {
			f.message += " [Authorization: " + auth + "]"
		}
		writeError(w, f)
	}
	switch {
	case fail != nil:
		refuse(refusal{status: fail.status, reason: fail.reason, index: -1, message: "failed on demand"})
		return
	case auth == "":
		refuse(refusal{status: http.StatusUnauthorized, reason: "CREDENTIALS_MISSING", domain: "googleapis.com", index: -1,
			message: "Request is missing required authentication credential. Expected OAuth 2 access token."})
		return
	case !valid:
		refuse(refusal{status: http.StatusUnauthorized, reason: "ACCESS_TOKEN_EXPIRED", domain: "googleapis.com", index: -1,
			message: "Request had invalid authentication credentials. Expected OAuth 2 access token."})
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		refuse(refusal{status: http.StatusBadRequest, reason: "INVALID_ARGUMENT", index: -1,
			message: "Request payload size exceeds the limit: " + strconv.Itoa(maxBody) + " bytes."})
		return
	}
	req, f := decode(raw)
	if f == nil {
		f = check(req)
	}
	if f != nil {
		refuse(*f)
		return
	}
	s.mu.Lock()
	if req.ValidateOnly {
		s.validated = append(s.validated, req)
	} else {
		s.accepted = append(s.accepted, req)
	}
	s.mu.Unlock()
	if req.ValidateOnly {
		// validateOnly returns only errors, not results.
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"requestId": id})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// grpcStatus is the canonical status Google names with an HTTP status.
func grpcStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusInternalServerError:
		return "INTERNAL"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "UNKNOWN"
}

// defaultReason is the ErrorInfo reason of a failure on demand.
func defaultReason(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusInternalServerError:
		return "INTERNAL_ERROR"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	}
	return ""
}

// writeError writes Google's REST error body:
// {"error":{"code","message","status","details":[ErrorInfo, BadRequest]}}.
func writeError(w http.ResponseWriter, f refusal) {
	if f.reason == "" {
		f.reason = defaultReason(f.status)
	}
	if f.domain == "" {
		f.domain = "datamanager.googleapis.com"
	}
	var details []any
	if f.reason != "" {
		info := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": f.reason, "domain": f.domain}
		if f.index >= 0 {
			info["metadata"] = map[string]string{"eventIndex": strconv.Itoa(f.index)}
		}
		details = append(details, info)
	}
	if f.field != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]string{{"field": f.field, "description": f.message}}})
	}
	writeJSON(w, f.status, map[string]any{"error": map[string]any{
		"code": f.status, "message": f.message, "status": grpcStatus(f.status), "details": details}})
}
