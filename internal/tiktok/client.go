package tiktok

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/leadsignal/leadsignal/internal/destination"
)

// Defaults and limits of the Client.
const (
	DefaultBaseURL = "https://business-api.tiktok.com"
	// Path is the Events API 2.0 endpoint, for web, offline and CRM events.
	Path = "/open_api/v1.3/event/track/"
	// MaxBatch is the most events a request may carry.
	MaxBatch = 1000
	// DefaultTimeout bounds one request of a Client without its own HTTP
	// client, as capi's does Meta's.
	DefaultTimeout = destination.DefaultTimeout
	maxReadBody    = 1 << 20
)

// TikTok's answer codes (docs/destinations.md). TikTok answers errors
// with HTTP 200 and one of these in the body.
const (
	CodeOK               = 0
	CodeOKToo            = 20001 // taken, with a warning
	CodeNoPermission     = 40001 // a wrong token, or a pixel it may not use
	CodeInvalidParameter = 40002 // one bad event refuses the whole batch
	CodeTooManyRequests  = 40100
)

// Client posts batches to TikTok's Events API. The zero value is ready.
type Client struct {
	// BaseURL is TikTok's API; DefaultBaseURL when "".
	BaseURL string
	// HTTP is the client requests go through; one with DefaultTimeout when
	// nil. Redirects are never followed: they would carry the token away.
	HTTP *http.Client
}

// Send posts events (each as Prepare made it) to t's pixel or event set.
func (c *Client) Send(ctx context.Context, t destination.Target, events []json.RawMessage) (destination.Answer, error) {
	if strings.TrimSpace(t.AccountID) == "" {
		return destination.Answer{}, &destination.Unsendable{Reason: "no pixel code or event set id"}
	}
	if err := destination.CheckToken("access token", t.Token); err != nil {
		return destination.Answer{}, err
	}
	if err := destination.CheckBatch("tiktok", events, MaxBatch); err != nil {
		return destination.Answer{}, err
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	endpoint := base + Path
	secrets := []string{t.Token}
	body, err := requestBody(t, events)
	if err != nil {
		return destination.Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("tiktok: post "+endpoint, err, secrets)
	}
	req.Header.Set("Access-Token", t.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := destination.HTTPClient(c.HTTP).Do(req)
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("tiktok: post "+endpoint, err, secrets)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxReadBody))
	if err != nil {
		return destination.Answer{}, destination.Scrubbed("tiktok: read reply of "+endpoint, err, secrets)
	}
	return answer(res.StatusCode, raw, len(events), secrets), nil
}

// requestBody writes the request around the ready-made events, so a batch
// is not decoded and encoded again.
func requestBody(t destination.Target, events []json.RawMessage) ([]byte, error) {
	source := t.EventSource
	if source == "" {
		source = "web"
	}
	head := map[string]string{"event_source": source, "event_source_id": strings.TrimSpace(t.AccountID)}
	if t.Test && t.TestEventCode != "" {
		head["test_event_code"] = t.TestEventCode
	}
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(h[:len(h)-1])
	b.WriteString(`,"data":`)
	destination.WriteEvents(&b, events)
	b.WriteString("}")
	return b.Bytes(), nil
}

// answer reads TikTok's reply: its code decides, whatever the HTTP status
// (TikTok answers errors with 200), when the body has one.
func answer(status int, raw []byte, sent int, secrets []string) destination.Answer {
	a := destination.Answer{HTTPStatus: status, Body: destination.LogBody(raw, secrets)}
	var body struct {
		Code      *int   `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Code == nil {
		switch {
		case status == http.StatusTooManyRequests || status >= 500:
			a.Verdict = destination.Unavailable
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			a.Verdict = destination.AuthRefused
		default:
			a.Verdict = destination.Refused
		}
		a.Message = fmt.Sprintf("TikTok HTTP %d", status)
		return a
	}
	a.RequestID = body.RequestID
	code := *body.Code
	a.Message = fmt.Sprintf("TikTok %d: %s", code, destination.Scrub(body.Message, secrets))
	switch {
	case status/100 != 2 && (status == http.StatusTooManyRequests || status >= 500):
		a.Verdict = destination.Unavailable
	case code == CodeOK || code == CodeOKToo:
		a.Verdict, a.Received, a.Message = destination.Accepted, sent, ""
	case code == CodeTooManyRequests:
		a.Verdict = destination.Unavailable
	case code == CodeNoPermission:
		a.Verdict = destination.AuthRefused
	case code == CodeInvalidParameter:
		a.Verdict = destination.EventRefused
	case code >= 50000:
		// TikTok's server errors.
		a.Verdict = destination.Unavailable
	default:
		a.Verdict = destination.Refused
	}
	return a
}
