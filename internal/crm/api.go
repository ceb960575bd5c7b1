package crm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/internal/name"
)

// The CRMs' API addresses in production; tests point the clients at fakes
// (crmtest).
const (
	HubSpotAPIURL   = "https://api.hubapi.com"
	PipedriveAPIURL = "https://api.pipedrive.com"
)

// maxResponse caps what is read of an API's answer.
const maxResponse = 1 << 20

// defaultHTTP is the clients' HTTP client when they are given none. It
// does not follow redirects: the token header would follow them.
var defaultHTTP = &http.Client{
	Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// APIError is a CRM API call that failed. Its message never holds the
// token.
type APIError struct {
	// Status is the HTTP status; 0 when no answer came.
	Status int
	// Temporary is true when trying again later may work: a network
	// error or timeout, 429, or 5xx.
	Temporary bool
	Msg       string
	err       error
}

// Error is the message.
func (e *APIError) Error() string { return e.Msg }

// Unwrap is the network error, if any (context.Canceled when the call
// was cancelled).
func (e *APIError) Unwrap() error { return e.err }

// api is what the CRM clients share: one GET of JSON with a token.
type api struct {
	baseURL, defaultURL string
	client              *http.Client
	// token is the secret; auth sets it on a request.
	token string
	auth  func(r *http.Request)
	// errorMessage reads the CRM's own reason from an error body.
	errorMessage func(body []byte) string
}

// get GETs path (which starts with "/" and is already escaped) into v.
// what names the object for a 404 ("deal 12").
func (a api) get(ctx context.Context, path, what string, v any) error {
	base := strings.TrimRight(a.baseURL, "/")
	if base == "" {
		base = a.defaultURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return &APIError{Msg: "bad API address: " + a.scrub(err.Error())}
	}
	req.Header.Set("Accept", "application/json")
	a.auth(req)
	client := a.client
	if client == nil {
		client = defaultHTTP
	}
	resp, err := client.Do(req)
	if err != nil {
		return &APIError{Temporary: true, Msg: "GET " + path + ": " + a.scrub(err.Error()), err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return &APIError{Status: resp.StatusCode, Temporary: true, Msg: "GET " + path + ": reading the answer: " + a.scrub(err.Error()), err: err}
	}
	if resp.StatusCode/100 != 2 {
		return a.statusError(resp.StatusCode, path, what, body)
	}
	if len(body) > maxResponse {
		return &APIError{Status: resp.StatusCode, Msg: fmt.Sprintf("GET %s: the answer is over %d bytes", path, maxResponse)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &APIError{Status: resp.StatusCode, Msg: "GET " + path + ": the answer is not the JSON expected: " + a.scrub(err.Error())}
	}
	return nil
}

func (a api) statusError(status int, path, what string, body []byte) *APIError {
	e := &APIError{Status: status, Temporary: status == http.StatusTooManyRequests || status >= 500}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		e.Msg = fmt.Sprintf("the API token was refused (%d)", status)
	case http.StatusNotFound:
		e.Msg = fmt.Sprintf("%s is not there (404)", what)
	case http.StatusTooManyRequests:
		e.Msg = "rate limited (429)"
	default:
		e.Msg = fmt.Sprintf("GET %s: %d %s", path, status, http.StatusText(status))
	}
	if a.errorMessage != nil {
		if m := a.errorMessage(body); m != "" {
			// Scrubbed first: a cut through the token would leave its
			// start, which scrub no longer finds.
			e.Msg += ": " + name.Cut(a.scrub(m), 200)
		}
	}
	return e
}

// scrub takes the token out of s, should an error echo it.
func (a api) scrub(s string) string {
	if a.token == "" {
		return s
	}
	return strings.ReplaceAll(s, a.token, "[token]")
}

// errorField reads {"<field>": "..."} from an error body.
func errorField(field string) func([]byte) string {
	return func(body []byte) string {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			return ""
		}
		var s string
		if json.Unmarshal(m[field], &s) != nil {
			return ""
		}
		return strings.TrimSpace(s)
	}
}

// errNoID is returned for an empty id, which would name a list.
var errNoID = errors.New("no id to look up")
