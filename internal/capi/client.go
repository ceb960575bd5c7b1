package capi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/leadsignal/leadsignal/internal/destination"
	"github.com/leadsignal/leadsignal/models"
)

// Defaults of a Target and of the Client.
const (
	DefaultBaseURL = "https://graph.facebook.com"
	DefaultVersion = "v24.0"
	// DefaultTimeout bounds one request of the zero Client. Meta suggests
	// 1500 ms (Meta's documentation: the request) for single real-time events; a 1000-event batch is about
	// 1 MB to upload and process, so this leaves room for that while a hung
	// connection still frees the dispatcher quickly. A resend after a
	// timeout is harmless: Meta deduplicates on event_id.
	DefaultTimeout = destination.DefaultTimeout
	// MaxBatch is the most events one request may carry (Meta's documentation: the request).
	MaxBatch = 1000
	// PartnerAgent identifies leadsignal in every request (Meta's documentation: the request).
	PartnerAgent = "leadsignal"
	// MaxLoggedBody is how much of Meta's reply Response.Body keeps.
	MaxLoggedBody = destination.MaxLoggedBody
	// maxReadBody is how much of a reply is read at all; Meta's are tiny.
	maxReadBody = 1 << 20
)

// Target is where a batch goes and with which credentials.
type Target struct {
	BaseURL       string // default DefaultBaseURL
	Version       string // default DefaultVersion
	PixelID       string
	Token         string
	AppSecret     string // when set, requests carry appsecret_proof
	TestEventCode string // when set, events go to the Test Events tool
}

// NewTarget is where a dataset's events go: its pixel and API version (else
// defaultVersion), the given secrets, and its test_event_code only when the
// dataset is in test mode, so a live dataset never sends to Test Events.
func NewTarget(baseURL, defaultVersion string, d models.Dataset, token, appSecret string) Target {
	t := Target{BaseURL: baseURL, Version: d.APIVersion, PixelID: d.PixelID, Token: token, AppSecret: appSecret}
	if t.Version == "" {
		t.Version = defaultVersion
	}
	if d.Mode == models.ModeTest {
		t.TestEventCode = d.TestEventCode
	}
	return t
}

// endpoint is the events URL without credentials (safe to log).
func (t Target) endpoint() string {
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	v := t.Version
	if v == "" {
		v = DefaultVersion
	}
	return base + "/" + url.PathEscape(v) + "/" + url.PathEscape(t.PixelID) + "/events"
}

// AppSecretProof is Graph's appsecret_proof: the hex HMAC-SHA256 of the
// access token keyed with the app secret.
func AppSecretProof(token, appSecret string) string {
	m := hmac.New(sha256.New, []byte(appSecret))
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// Client posts batches to the Graph API. The zero value is ready to use.
type Client struct {
	// HTTP is the client requests go through; nil means one with
	// DefaultTimeout. Redirects are never followed (they would carry the
	// token elsewhere), whatever its CheckRedirect says.
	HTTP *http.Client
}

func (c *Client) httpClient() *http.Client {
	if c == nil {
		return destination.HTTPClient(nil)
	}
	return destination.HTTPClient(c.HTTP)
}

// Response is Meta's answer to one request.
type Response struct {
	HTTPStatus     int
	EventsReceived int
	FBTraceID      string
	Messages       []string
	// Body is the raw reply for the send log: the token scrubbed, valid
	// UTF-8, cut to MaxLoggedBody bytes.
	Body []byte
	// Err is set when the body is a Graph error.
	Err *GraphError
}

// OK reports whether Meta accepted the batch: a 2xx without a Graph error.
// It says nothing about matching (Meta's documentation: responses and errors).
func (r Response) OK() bool { return r.HTTPStatus/100 == 2 && r.Err == nil }

// Retryable reports whether the same batch may succeed later (Meta's documentation: responses and errors): HTTP 5xx
// or 429, or a retryable Graph error, but never a 2804xxx or 190 error.
func (r Response) Retryable() bool {
	if r.Err != nil {
		if r.Err.permanent() {
			return false
		}
		if r.Err.Retryable() {
			return true
		}
	}
	return r.HTTPStatus >= 500 || r.HTTPStatus == http.StatusTooManyRequests
}

// GraphError is a Graph API error body's "error" object.
type GraphError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title"`
	UserMsg     string `json:"error_user_msg"`
	FBTraceID   string `json:"fbtrace_id"`
}

func (e *GraphError) Error() string {
	var b strings.Builder
	b.WriteString("graph error ")
	b.WriteString(strconv.Itoa(e.Code))
	if e.Subcode != 0 {
		b.WriteString("/")
		b.WriteString(strconv.Itoa(e.Subcode))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.UserTitle != "" {
		b.WriteString(": ")
		b.WriteString(e.UserTitle)
	}
	if e.UserMsg != "" {
		b.WriteString(": ")
		b.WriteString(e.UserMsg)
	}
	return b.String()
}

// TokenInvalid reports whether the access token is invalid or expired (190):
// the dataset must wait for a person to save a new one.
func (e *GraphError) TokenInvalid() bool { return e.Code == 190 }

// Throttled reports whether Meta is rate limiting (4, 17, 32, 613, 80003,
// 80004): retry with backoff.
func (e *GraphError) Throttled() bool {
	switch e.Code {
	case 4, 17, 32, 613, 80003, 80004:
		return true
	}
	return false
}

// permanent is the never-retry list of Meta's documentation: any 2804xxx subcode (an invalid
// event) and 190 (token).
func (e *GraphError) permanent() bool {
	return e.TokenInvalid() || e.Subcode >= 2804000 && e.Subcode <= 2804999
}

// Retryable reports whether the same request may succeed later (Meta's documentation: responses and errors):
// is_transient, throttling, or a temporary server code (1, 2, 341, 368,
// 5000). A 2804xxx subcode or a 190 is never retryable, even when Meta marks
// it transient.
func (e *GraphError) Retryable() bool {
	if e.permanent() {
		return false
	}
	if e.IsTransient || e.Throttled() {
		return true
	}
	switch e.Code {
	case 1, 2, 341, 368, 5000:
		return true
	}
	return false
}

// Send POSTs one batch to {BaseURL}/{Version}/{PixelID}/events: a JSON body
// {"data": [...], "test_event_code": ..., "partner_agent": "leadsignal"},
// with access_token (and appsecret_proof when t.AppSecret is set) as query
// parameters, the way Meta documents (Meta's documentation: the request). Each event must be one JSON
// object, as json.Marshal of a ServerEvent gives.
//
// A transport error (timeout, reset, cancelled ctx) returns (Response{},
// err); err wraps the cause (errors.Is(err, context.DeadlineExceeded) works)
// and never contains the token. An HTTP answer returns (resp, nil) even for
// 4xx and 5xx, with resp.Err set when the body is a Graph error.
func (c *Client) Send(ctx context.Context, t Target, events []json.RawMessage) (Response, error) {
	if err := checkBatch(t, events); err != nil {
		return Response{}, err
	}
	body := batchBody(t, events)
	q := url.Values{"access_token": {t.Token}}
	if t.AppSecret != "" {
		q.Set("appsecret_proof", AppSecretProof(t.Token, t.AppSecret))
	}
	endpoint := t.endpoint()
	secrets := []string{t.Token, q.Get("appsecret_proof")}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return Response{}, destination.Scrubbed("capi: post "+endpoint, err, secrets)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := c.httpClient().Do(req)
	if err != nil {
		return Response{}, destination.Scrubbed("capi: post "+endpoint, err, secrets)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxReadBody))
	if err != nil {
		return Response{}, destination.Scrubbed("capi: read reply of "+endpoint, err, secrets)
	}
	return parseResponse(res, raw, secrets), nil
}

func checkBatch(t Target, events []json.RawMessage) error {
	switch {
	case strings.TrimSpace(t.PixelID) == "":
		return errors.New("capi: no pixel id")
	case t.Token == "":
		return errors.New("capi: no access token")
	}
	return destination.CheckBatch("capi", events, MaxBatch)
}

// batchBody writes the request body around the ready-made events, so a
// 1000-event batch is not decoded and encoded again.
func batchBody(t Target, events []json.RawMessage) []byte {
	n := 64 + len(t.TestEventCode)
	for _, e := range events {
		n += len(e) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.WriteString(`{"data":`)
	destination.WriteEvents(b, events)
	if t.TestEventCode != "" {
		code, _ := json.Marshal(t.TestEventCode)
		b.WriteString(`,"test_event_code":`)
		b.Write(code)
	}
	b.WriteString(`,"partner_agent":"` + PartnerAgent + `"}`)
	return b.Bytes()
}

func parseResponse(res *http.Response, raw []byte, secrets []string) Response {
	r := Response{HTTPStatus: res.StatusCode, Body: destination.LogBody(raw, secrets)}
	var body struct {
		EventsReceived int         `json:"events_received"`
		Messages       []string    `json:"messages"`
		FBTraceID      string      `json:"fbtrace_id"`
		Error          *GraphError `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil {
		r.EventsReceived, r.Messages, r.FBTraceID = body.EventsReceived, body.Messages, body.FBTraceID
		for i := range r.Messages {
			r.Messages[i] = destination.Scrub(r.Messages[i], secrets)
		}
		if e := body.Error; e != nil && (e.Code != 0 || e.Message != "") {
			for _, s := range []*string{&e.Message, &e.Type, &e.UserTitle, &e.UserMsg} {
				*s = destination.Scrub(*s, secrets)
			}
			r.Err = e
			if r.FBTraceID == "" {
				r.FBTraceID = e.FBTraceID
			}
		}
	}
	if r.FBTraceID == "" {
		r.FBTraceID = res.Header.Get("X-Fb-Trace-Id")
	}
	return r
}
